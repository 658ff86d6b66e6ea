"""第 1.6 节正文里 KV cache 的图：单步解码的代价随上下文长度、逐步生成时每一步的代价、缓存占的内存。

数据来自 ``seqlab.measure`` 的度量函数，这里只画图；计时的点带四分位距的误差线（见 ``figures.decoding``）。
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.decoding import error_bars, spread
from seqlab.figures.style import PALETTE
from seqlab.measure import StepCost


def decode_cost_figure(contexts: list[int], rows: list[dict[str, Any]], d_model: int) -> go.Figure:
    """单步解码代价随上下文长度 T_kv 的变化（对数坐标）：左边实测用时，右边数出的矩阵乘法浮点运算数。

    ``rows[i]`` 是 ``measure.decode_step_cost`` 在 ``contexts[i]`` 上的结果。
    """
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12, subplot_titles=("CPU 时间（本机实测）", "浮点运算数（计数）"))
    series = [
        ("recompute", "无缓存：整段重算", PALETTE[1]),
        ("cache", "有 KV cache", PALETTE[0]),
    ]
    for key, name, color in series:
        spreads = [spread(r[f"samples_{key}"]) for r in rows]
        line = {"name": name, "mode": "lines+markers", "line": {"color": color}, "legendgroup": key}
        fig.add_trace(
            go.Scatter(x=contexts, y=[m for m, _, _ in spreads], error_y=error_bars(spreads, 1.2), **line,
                       hovertemplate=f"T = %{{x}}<br>中位数 %{{y:.3s}} ms<extra>{name}</extra>"),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(x=contexts, y=[r[f"flops_{key}"] for r in rows], showlegend=False, **line,
                       hovertemplate=f"T = %{{x}}<br>%{{y:.3s}} FLOP<extra>{name}</extra>"),
            row=1,
            col=2,
        )
    fig.update_xaxes(type="log", title_text="上下文长度 T<sub>kv</sub>", tickvals=contexts)
    fig.update_yaxes(type="log", exponentformat="SI", dtick=1)
    fig.update_yaxes(title_text="CPU 时间（毫秒）", row=1, col=1)
    fig.update_yaxes(title_text="FLOP", row=1, col=2)
    fig.update_layout(
        title=f"生成下一个 token 的代价随上下文长度 T<sub>kv</sub> 的变化（d = {d_model}，单线程）",
        height=420,
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def step_cost_figure(costs: list[StepCost]) -> go.Figure:
    """沿一次生成的每一步：左边数出的运算量与搬运的字节，右边本机实测的 CPU 时间（只显示）。"""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14,
                        subplot_titles=("每一步的浮点运算数与搬运的字节（计数）", "每一步的 CPU 时间（本机实测）"))
    x = [c.index for c in costs]
    series: list[tuple[str, list[float], str, str, int]] = [
        ("浮点运算（有缓存）", [c.cache.flops for c in costs], PALETTE[0], "solid", 1),
        ("浮点运算（每步重算）", [c.recompute.flops for c in costs], PALETTE[1], "solid", 1),
        ("字节（有缓存）", [c.cache.bytes_moved for c in costs], PALETTE[0], "dot", 1),
        ("字节（每步重算）", [c.recompute.bytes_moved for c in costs], PALETTE[1], "dot", 1),
        ("CPU 毫秒（有缓存）", [1e3 * c.seconds_cache for c in costs], PALETTE[0], "solid", 2),
        ("CPU 毫秒（每步重算）", [1e3 * c.seconds_recompute for c in costs], PALETTE[1], "solid", 2),
    ]
    for name, y, color, dash, col in series:
        fig.add_trace(go.Scatter(x=x, y=y, name=name, mode="lines+markers", line={"color": color, "dash": dash},
                                 hovertemplate=f"第 %{{x}} 步<br>{name}：%{{y:,.3g}}<extra></extra>"), row=1, col=col)
    fig.update_yaxes(type="log", title_text="次数 / 字节", row=1, col=1)
    fig.update_yaxes(title_text="毫秒", rangemode="tozero", row=1, col=2)
    fig.update_xaxes(title_text="第几步（0 = Prefill）")
    fig.update_layout(height=460, legend={"orientation": "h", "y": -0.25}, margin={"b": 130})
    return fig


def kv_memory_figure(contexts: list[int], formula: list[int], real: list[int]) -> go.Figure:
    """KV cache 的字节数随上下文长度：公式（线）与真实缓存张量的 ``.nbytes``（点）。"""
    fig = go.Figure([
        go.Scatter(x=contexts, y=formula, mode="lines", name="公式 2 × 层数 × T<sub>kv</sub> × d<sub>model</sub> × 4 字节",
                   line={"color": PALETTE[0]}, hovertemplate="T = %{x}：%{y:,} 字节<extra>公式</extra>"),
        go.Scatter(x=contexts, y=real, mode="markers", name="真实缓存张量的 nbytes",
                   marker={"color": PALETTE[1], "size": 9}, hovertemplate="T = %{x}：%{y:,} 字节<extra>实测</extra>"),
    ])
    fig.update_layout(xaxis_title="上下文长度 T<sub>kv</sub>（token）", yaxis_title="KV cache（字节）", height=400,
                      legend={"orientation": "h", "y": -0.25}, margin={"b": 110})
    return fig
