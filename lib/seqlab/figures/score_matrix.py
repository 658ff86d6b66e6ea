"""第 1.5 节“O(S²) 的分数矩阵”的图。

实时面：左边是所选掩码下的分数矩阵，右边是所选配置的内存曲线。静态面：一个滑块选 S，上面并排两块分数矩阵
（无掩码 / 因果掩码），下面是内存曲线连同两条对照曲线；超出预算的那一档只剩拒绝的说明和估算值。
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from seqlab.errors import format_bytes
from seqlab.figures.score_memory import config_label, memory_axes, memory_traces
from seqlab.figures.stepped import stepped_figure
from seqlab.figures.style import PALETTE
from seqlab.states.score_matrix import ScoreState, StaticStep

SCORE_RANGE = 3.0  # 颜色条的范围 ±3：随机层的分数标准差约为 1
SCORE_COLORS = "RdBu_r"
CHAR_TICKS_UP_TO = 16  # S 不超过这个数时，坐标轴上写出每个字
HEAT_Y = [0.53, 1.0]  # 静态面上一行（两块热力图）的纵向范围
MEM_Y = [0.0, 0.36]  # 静态面下一行（内存曲线）


# ---------------------------------------------------------------- 热力图的部件
def _colorbar(x: float, y: float, length: float) -> dict:
    return {
        "title": {"text": "分数", "side": "top"},
        "x": x,
        "y": y,
        "len": length,
        "thickness": 12,
        "yanchor": "middle",
        "tickvals": [-3, -2, -1, 0, 1, 2, 3],
    }


def _heat_style(n: str, colorbar: dict | None) -> dict:
    return {
        "xaxis": f"x{n}",
        "yaxis": f"y{n}",
        "zmin": -SCORE_RANGE,
        "zmax": SCORE_RANGE,
        "zmid": 0.0,
        "colorscale": SCORE_COLORS,
        "showscale": colorbar is not None,
        "colorbar": colorbar or {},
        "showlegend": False,
        "hovertemplate": "Query 位置 %{y} 读 Key 位置 %{x}<br>分数 = %{z:.2f}<extra></extra>",
    }


def _heatmap(state: ScoreState, n: str, colorbar: dict | None = None) -> go.Heatmap:
    """二维 float32 数组（挡住的格子是 NaN，图上留白）：网页里与控件里都以二进制保存，体积最小；
    plotly.js 画二维的 z 也比画一维的 x、y、z 快（不必先把每个配对放回格子里），网页实时面每次更新都省下这一步。"""
    return go.Heatmap(z=state.scores, x0=1, dx=1, y0=1, dy=1, **_heat_style(n, colorbar))


def _axis_ticks(state: ScoreState) -> dict:
    """S 不大时在坐标上写出每个位置的字；S 大时只标数字。"""
    if state.S <= CHAR_TICKS_UP_TO:
        return {
            "tickmode": "array",
            "tickvals": list(range(1, state.S + 1)),
            "ticktext": list(state.text),
            "tickangle": 0,
        }
    return {"tickmode": "auto", "tickvals": None, "ticktext": None, "tickangle": 0}


def _heat_axes(n: str, x_domain: list[float], y_domain: list[float], x_title: str, y_title: str) -> dict[str, dict]:
    """第 ``n`` 组坐标轴上的一块热力图：Query 位置 i 向下数，格子是正方形。``y_title`` 为空就不写纵轴标题。"""
    y_axis: dict = {
        "domain": y_domain,
        "anchor": f"x{n}",
        "autorange": "reversed",
        "scaleanchor": f"x{n}",
        "constrain": "domain",
    }
    if y_title:
        y_axis["title"] = {"text": y_title}
    x_axis = {"domain": x_domain, "anchor": f"y{n}", "constrain": "domain", "title": {"text": x_title}}
    return {f"xaxis{n}": x_axis, f"yaxis{n}": y_axis}


def _pairs_title(state: ScoreState) -> str:
    mask = "因果掩码" if state.causal else "无掩码"
    formula = "S(S+1)/2" if state.causal else "S²"
    return f"S = {state.S}，{mask}：{formula} = {state.pairs:,} 个 query–key 配对"


def _legend(x: float, y: float) -> dict:
    return {
        "x": x,
        "y": y,
        "xanchor": "left",
        "yanchor": "top",
        "bgcolor": "rgba(128,128,128,0.08)",
        "font": {"size": 11},
    }


# ---------------------------------------------------------------- 实时面
def caption(state: ScoreState) -> str:
    m = state.memory
    return (
        f"{_pairs_title(state)}。分数矩阵（{config_label(m.curve)}）约 {format_bytes(m.bytes)}；"
        f"在 {format_bytes(m.budget)} 的预算内，这组配置最长只能到 S = {m.max_S:,}。"
    )


def render(state: ScoreState) -> go.Figure:
    """左边是分数矩阵，右边是内存曲线。"""
    fig = go.Figure([_heatmap(state, "", _colorbar(0.455, 0.5, 0.8)), *memory_traces(state.memory, "2")])
    axes = _heat_axes("", [0.0, 0.43], [0.0, 1.0], "Key 位置 j（被读取）", "Query 位置 i（读取方）")
    for axis in axes.values():
        axis.update(_axis_ticks(state))
    # 右图从 0.70 开始：左图的色条（x = 0.455，连同刻度）和右图的纵轴标题之间留出空隙，互不重叠
    axes.update(memory_axes("2", [0.70, 1.0], [0.0, 1.0]))
    fig.update_layout(
        axes,
        title={"text": _pairs_title(state)},
        height=480,
        margin={"l": 70, "r": 20, "t": 70, "b": 60},
        legend=_legend(0.71, 1.0),
    )
    return fig


def _differs(a: Any, b: Any) -> bool:
    return not np.array_equal(a, b) if isinstance(a, np.ndarray) else a != b


def patch(fig: go.Figure, old: ScoreState, new: ScoreState) -> None:
    """只替换数据数组、标题与刻度（不重建图），S = 256 时也在几十毫秒内完成。"""
    fig.data[0].z = new.scores  # 与 _heatmap 画的是同一个数组
    for trace, before, after in zip(fig.data[1:], memory_traces(old.memory, "2"), memory_traces(new.memory, "2")):
        changed = {key: value for key, value in after.items() if _differs(before[key], value)}
        if changed:
            trace.update(changed)
    fig.layout.title.text = _pairs_title(new)
    fig.layout.xaxis.update(_axis_ticks(new))
    fig.layout.yaxis.update(_axis_ticks(new))


# ---------------------------------------------------------------- 静态面
def _heading(text: str, x: float, y: float, **style: object) -> dict:
    return {
        "text": text,
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "showarrow": False,
        "xanchor": "center",
        "yanchor": "bottom",
        "font": {"size": 13},
        **style,
    }


def _compared(full: ScoreState, causal: ScoreState, axes: dict[str, dict]) -> tuple[list, list[dict], str]:
    """不超预算的一档：两块热力图、它们的小标题与整张图的标题。"""
    heat = [_heatmap(full, ""), _heatmap(causal, "2", _colorbar(0.95, 0.75, 0.5))]
    for name in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
        axes[name].update(_axis_ticks(full), visible=True)
    notes = [
        _heading(f"无掩码：S² = {full.pairs:,} 个配对", 0.21, 1.0, yshift=4),
        _heading(f"因果掩码：S(S+1)/2 = {causal.pairs:,} 个", 0.71, 1.0, yshift=4),
    ]
    m = full.memory
    return heat, notes, f"S = {m.S}：{config_label(m.curve)} 的分数矩阵约 {format_bytes(m.bytes)}"


def _refused(step: StaticStep, axes: dict[str, dict]) -> tuple[list, list[dict], str]:
    """超出预算的一档：不画热力图，只写拒绝的说明和估算值。"""
    for name in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
        axes[name]["visible"] = False
    m = step.memory
    note = _heading(
        f"<b>请求被拒绝</b>：S = {m.S} 时，{config_label(m.curve)} 的分数矩阵<br>"
        f"估计要 <b>{format_bytes(m.bytes)}</b>，超过 {format_bytes(m.budget)} 的预算。<br>"
        "探索器在分配内存之前就停下，只报告估算值；<br>"
        f"这组配置在预算内最长只能到 S = {m.max_S:,}。",
        0.5,
        0.62,
        font={"size": 14},
        align="center",
        bordercolor=PALETTE[3],
        borderwidth=1.5,
        borderpad=10,
    )
    return [], [note], f"S = {m.S}：{step.pairs:,} 个配对，分数矩阵约 {format_bytes(m.bytes)}，超出预算"


def _static_step(step: StaticStep) -> go.Figure:
    axes = {
        **_heat_axes("", [0.0, 0.42], HEAT_Y, "Key 位置 j", "Query 位置 i"),
        **_heat_axes("2", [0.5, 0.92], HEAT_Y, "Key 位置 j", ""),
        **memory_axes("3", [0.0, 0.6], MEM_Y),
    }
    if step.full is None or step.causal is None:
        heat, notes, title = _refused(step, axes)
    else:
        heat, notes, title = _compared(step.full, step.causal, axes)
    fig = go.Figure([*heat, *memory_traces(step.memory, "3", step.references)])
    fig.update_layout(
        axes,
        title={"text": title, "y": 0.985, "yanchor": "top"},
        annotations=notes,
        height=760,
        margin={"l": 70, "r": 20, "t": 80, "b": 40},
        legend=_legend(0.64, MEM_Y[1]),
    )
    return fig


def static_face(steps: Sequence[StaticStep], active: int) -> go.Figure:
    """静态面：滑块的每一档是一个长度 S，``active`` 是打开时的那一档。"""
    faces = [(f"S = {step.memory.S}", _static_step(step)) for step in steps]
    return stepped_figure(faces, prefix="长度 ", active=active)
