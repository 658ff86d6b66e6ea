"""第 1.6 节正文里 Vaswani 等（2017）表 1 的图：自注意力与循环层的每层运算量、串行步数、最长路径。

数据是 ``measure.table1_counts`` 从库里的模型实际数出来的计数，这里只画图。
"""

from __future__ import annotations

import math
from collections.abc import Callable

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.style import PALETTE

Counts = dict[int, dict[str, dict[str, int]]]  # 长度 n → 层的类型 → 计数的名字 → 计数
KINDS = (("self_attention", "自注意力", PALETTE[0]), ("recurrent", "循环层（RNN）", PALETTE[1]))


def _formulas(d: int) -> dict[str, tuple[str, Callable[[int], int]]]:
    """只数跨位置混合时两种层的运算量公式：``4n²d`` 与 ``2nd²``。"""
    return {"self_attention": ("4n²d", lambda n: 4 * n * n * d), "recurrent": ("2nd²", lambda n: 2 * n * d * d)}


def _kind_traces(counts: Counts, d: int, key: str, name: str, color: str) -> list[tuple[go.Scatter, int]]:
    """一种层的全部轨迹与它们所在的列：第 1 列的公式（虚线）与整层计数（空心点），三列的实测（实心点）。"""
    ns = sorted(counts)
    label, formula = _formulas(d)[key]
    traces = [
        (go.Scatter(
            x=ns, y=[formula(n) for n in ns], mode="lines", line={"color": color, "dash": "dash", "width": 1.5},
            name=f"{name}：公式 {label}", legendgroup=key + "f",
            hovertemplate=f"n = %{{x}}<br>{label} = %{{y:,}}<extra></extra>",
        ), 1),
        (go.Scatter(
            x=ns, y=[counts[n][key]["flops_layer"] for n in ns], mode="markers",
            marker={"color": color, "size": 8, "symbol": "circle-open", "line": {"width": 2}},
            name=f"{name}：整层（实测）", legendgroup=key + "l",
            hovertemplate=f"n = %{{x}}<br>整层 %{{y:,}}<extra>{name}</extra>",
        ), 1),
    ]
    for col, field in enumerate(("flops_mixing", "sequential", "path"), start=1):
        traces.append((go.Scatter(
            x=ns, y=[counts[n][key][field] for n in ns], mode="markers" if col == 1 else "lines+markers",
            marker={"color": color, "size": 8}, line={"color": color},
            name=f"{name}：只数混合（实测）", legendgroup=key, showlegend=col == 1,
            hovertemplate=f"n = %{{x}}<br>实测 %{{y:,}}<extra>{name}</extra>",
        ), col))
    return traces


def _annotate_orders(fig: go.Figure, counts: Counts, d: int) -> None:
    """第 1 列标出两条公式线的交点 ``n = d/2``；后两列在两条线的右端标上表 1 里的阶。"""
    ns = sorted(counts)
    fig.add_vline(x=d / 2, line={"color": "#888888", "dash": "dot", "width": 1}, row=1, col=1)
    fig.add_annotation(x=math.log10(d / 2), y=1, yref="y domain", text=f"n = d/2 = {d // 2}", showarrow=False,
                       xanchor="right", yanchor="top", xshift=-4, row=1, col=1)
    for col, field in ((2, "sequential"), (3, "path")):
        for key, shift in (("self_attention", -12), ("recurrent", 12)):
            values = {counts[n][key][field] for n in ns}
            label = f"O(1)：恒为 {values.pop()}" if len(values) == 1 else "O(n)"
            fig.add_annotation(x=math.log10(ns[-1]), y=math.log10(counts[ns[-1]][key][field]), text=label,
                               showarrow=False, xanchor="right", yshift=shift, row=1, col=col)


def table1_figure(counts: Counts, d: int) -> go.Figure:
    """表 1 的三列画成三张图（双对数坐标：直线的斜率就是 n 的指数）。

    点是从库里的模型实际数出来的。第一张图按同一个口径比较两种层：实心点只数跨位置混合
    （虚线是公式 ``4n²d`` 与 ``2nd²``，在 ``n = d/2`` 处相交），空心点数整层（自注意力多了 ``8nd²`` 的投影，
    循环层多了 ``2nd²`` 的 ``W_x x_t``）。
    """
    fig = make_subplots(
        rows=1,
        cols=3,
        horizontal_spacing=0.09,
        subplot_titles=("每层浮点运算数（FLOP）", "必须串行的张量运算数", "x₁ 到 yₙ 的最短依赖链"),
    )
    for key, name, color in KINDS:
        for trace, col in _kind_traces(counts, d, key, name, color):
            fig.add_trace(trace, row=1, col=col)
    _annotate_orders(fig, counts, d)
    ns = sorted(counts)
    fig.update_xaxes(type="log", title_text="序列长度 n", tickvals=ns)
    fig.update_yaxes(type="log", exponentformat="SI", dtick=1)
    fig.update_layout(
        title=f"表 1 的三项：公式与实测（d = {d}，双对数坐标，斜率即 n 的指数）",
        height=510,
        # 图例横排在整张图的最下面（不碰三个子图的横轴标题），为它留出三行的高度
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
        margin={"b": 140},
    )
    return fig
