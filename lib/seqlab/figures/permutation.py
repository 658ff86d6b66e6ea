"""第 1.6 节“打乱 token”的图：左右两张热力图是 ``P·f(X)`` 与 ``f(P·X)``，右边的柱子是两者每行的最大差异。"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.states.permutation import PARTS, ROUNDING, PermutationState

FLOOR = ROUNDING  # 对数坐标画不了 0：记为 0 的差异（舍入误差以内）画在这里（悬停时显示 0）


def _title(state: PermutationState, sep: str = "｜") -> str:
    """图的标题（``sep="<br>"`` 时分两行，窄屏上不会被截断）与实时面的说明文字（一行）。"""
    order = "".join(state.tokens) + " → " + "".join(state.shuffled)
    verdict = "两者相同：置换等变" if state.equivariant else "两者不同：顺序信息进来了"
    gap = f"最大差异 {state.max_gap:.1e}" if state.max_gap else f"最大差异不到 {ROUNDING:g}"
    return f"{PARTS[state.part]}｜{order}{sep}{gap}，{verdict}"


def caption(state: PermutationState) -> str:
    return _title(state)


def _height(state: PermutationState) -> int:
    return max(420, 28 * len(state.tokens) + 240)


def _varying(state: PermutationState) -> list[dict[str, Any]]:
    """三条轨迹里随状态变的属性（顺序就是轨迹的顺序）：两张热力图，一组柱子。"""
    labels = [f"{i}:{ch}" for i, ch in enumerate(state.shuffled)]
    scale = {"y": labels, "zmin": -state.scale, "zmax": state.scale}
    return [
        {"z": state.then_shuffle, **scale},
        {"z": state.shuffle_then, **scale},
        {"x": [max(g, FLOOR) for g in state.gap], "y": labels, "customdata": state.gap},
    ]


def render(state: PermutationState) -> go.Figure:
    fig = make_subplots(
        rows=1,
        cols=3,
        column_widths=[0.34, 0.34, 0.32],
        horizontal_spacing=0.07,
        shared_yaxes=True,
        subplot_titles=("先算再打乱：P·f(X)", "先打乱再算：f(P·X)", "两者之差（每行最大绝对值）"),
    )
    heat = {
        "zmid": 0,
        "colorscale": "RdBu",
        "showscale": False,
        "hovertemplate": "位置 %{y}<br>第 %{x} 维 = %{z:.3f}<extra></extra>",
    }
    then_shuffle, shuffle_then, gap = _varying(state)
    fig.add_trace(go.Heatmap(**then_shuffle, **heat), row=1, col=1)
    fig.add_trace(go.Heatmap(**shuffle_then, **heat), row=1, col=2)
    fig.add_trace(
        go.Bar(**gap, orientation="h", marker_color="#b5485d",
               hovertemplate="位置 %{y}：最大差异 %{customdata:.2e}<extra></extra>"),
        row=1,
        col=3,
    )
    fig.update_yaxes(autorange="reversed", title_text="打乱后的位置", row=1, col=1)
    fig.update_xaxes(title_text="输出的维度", row=1, col=1)
    fig.update_xaxes(title_text="输出的维度", row=1, col=2)
    fig.update_xaxes(
        title_text="最大绝对差（对数坐标）", type="log", range=[-9, 0.5], dtick=3, exponentformat="power", row=1, col=3
    )
    fig.update_layout(
        title={"text": _title(state, "<br>"), "font": {"size": 14}},
        height=_height(state),
        showlegend=False,
        margin={"t": 110},
    )
    return fig


def patch(fig: go.Figure, old: PermutationState, new: PermutationState) -> None:
    """只替换三条轨迹的数据、标题和高度，不重建子图。"""
    for trace, values in zip(fig.data, _varying(new)):
        trace.update(values)
    fig.layout.title.text = _title(new, "<br>")
    fig.layout.height = _height(new)
