"""第 1.4、1.6 节“注意力权重”的静态面：上方的下拉菜单选例句，下方的滑块选解码步 t。

图里始终只有三条轨迹（热力图、标准对齐、条形图，见 ``seqlab.figures.attention_weights``）。下拉菜单
换掉三条轨迹的数据，滑块只换条形图的高度；每个例句有自己的滑块（步数随句长而变），下拉菜单只让当前
例句的滑块可见。版面属性一律用 ``"xaxis.range"`` 这样的扁平路径切换——传整个 ``xaxis`` 字典会把
坐标轴的其余设置（位置、对齐方式）一并抹掉。
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from seqlab.figures import attention_weights as figure
from seqlab.states.attention_weights import AttentionState

BOTTOM = figure.BOTTOM_PX + 40  # 为滑块留出位置
HEAT_PX = figure.ROW_PX * 16  # 热力图固定高度：最长的例句每行约 21 像素，最短的每行约 67 像素


def _menu_y(state: AttentionState) -> float:
    return figure.geometry(len(state.output), BOTTOM, HEAT_PX)["menu_y"]


def _layout_args(state: AttentionState) -> dict[str, Any]:
    """切换到 ``state`` 时的版面（扁平路径），下拉菜单跟着图的上边缘走。"""
    args = figure.flat(figure.layout(state, bottom=BOTTOM, heat_px=HEAT_PX))
    args["updatemenus[0].y"] = _menu_y(state)
    return args


def _step_args(state: AttentionState) -> list[Any]:
    """滑块的一步：只换条形图（第 3 条轨迹）与版面。"""
    row = figure.bar(state)
    return [{"y": [list(row.y)], "text": [list(row.text)]}, _layout_args(state), [2]]


def _example_args(first: AttentionState, k: int, n: int) -> list[Any]:
    """下拉菜单的一项：换上第 ``k`` 句（共 ``n`` 句）第 1 步的三条轨迹，只显示它的滑块并拨回第 1 步。"""
    heat, circles, row = figure.heatmap(first), figure.gold(first), figure.bar(first)
    data = {
        "x": [list(heat.x), list(circles.x), list(row.x)],
        "y": [list(heat.y), list(circles.y), list(row.y)],
        "z": [first.alpha, None, None],
        "text": [[list(r) for r in heat.text], None, list(row.text)],
    }
    args = _layout_args(first)
    args.update({f"sliders[{i}].visible": i == k for i in range(n)})
    args[f"sliders[{k}].active"] = 0
    return [data, args, [0, 1, 2]]


def _slider(steps: Sequence[AttentionState], *, visible: bool, active: int) -> dict[str, Any]:
    """一句话的解码步滑块：``steps[t - 1]`` 是第 t 步的状态；``active`` 从 0 数。"""
    return {
        "visible": visible,
        "active": active,
        "steps": [{"label": str(s.step), "method": "update", "args": _step_args(s)} for s in steps],
        "name": "解码步",
        "currentvalue": {"prefix": "解码第 ", "suffix": " 步", "font": {"size": 13}},
        "pad": {"t": 34, "b": 0},
        "len": 1.0,
        "x": 0.0,
        "y": 0.0,
        "yanchor": "top",
        "font": {"size": 11},
    }


def _menu(firsts: Sequence[AttentionState], *, active: int, y: float) -> dict[str, Any]:
    """选例句的下拉菜单：``firsts[k]`` 是第 k 句第 1 步的状态。"""
    return {
        "name": "例句",
        "type": "dropdown",
        "buttons": [
            {"label": f"例句 {k + 1}：{''.join(s.source)}", "method": "update",
             "args": _example_args(s, k, len(firsts))}
            for k, s in enumerate(firsts)
        ],
        "active": active,
        "x": 0.0,
        "xanchor": "left",
        "y": y,
        "yanchor": "top",
        "pad": {"t": 4, "l": 0},
        "font": {"size": 13},
        "showactive": True,
    }


def static_face(sentences: Sequence[Sequence[AttentionState]], shown: tuple[int, int]) -> go.Figure:
    """``sentences[k][t - 1]`` 是第 k 个例句第 t 步的状态（同一个模型）；打开网页时显示
    ``shown = (k, t)``：第 k 句（从 0 数）的第 t 步（从 1 数）。"""
    k0, t0 = shown
    state0 = sentences[k0][t0 - 1]
    fig = figure.render(state0)
    fig.update_layout(figure.layout(state0, bottom=BOTTOM, heat_px=HEAT_PX))
    fig.update_layout(
        title=None,
        margin={"b": BOTTOM},
        height=figure.geometry(len(state0.output), BOTTOM, HEAT_PX)["height"],
        sliders=[
            _slider(steps, visible=k == k0, active=t0 - 1 if k == k0 else 0) for k, steps in enumerate(sentences)
        ],
        updatemenus=[_menu([steps[0] for steps in sentences], active=k0, y=_menu_y(state0))],
    )
    return fig
