"""第 1.5 节正文里实测的用时与峰值内存曲线：自注意力与 RNN 随序列长度 S 的增长。"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.axes import byte_ticks
from seqlab.figures.style import PALETTE
from seqlab.measure import ScalingResult


def scaling_figure(result: ScalingResult, fit_from: int = 0) -> go.Figure:
    """实测的用时与峰值内存（对数—对数坐标），图例里写上拟合的斜率。"""
    slopes = result.slopes(fit_from)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("前向计算的 CPU 时间", "峰值内存（PyTorch 分配）"),
        horizontal_spacing=0.12,
    )
    series = [
        (
            1,
            [t * 1e3 for t in result.attention_seconds],
            "自注意力·用时",
            slopes["attention_time"],
            PALETTE[0],
            "ms",
        ),
        (1, [t * 1e3 for t in result.rnn_seconds], "RNN·用时", slopes["rnn_time"], PALETTE[1], "ms"),
        (2, result.attention_peak, "自注意力·内存", slopes["attention_memory"], PALETTE[0], "B"),
        (2, result.rnn_peak, "RNN·内存", slopes["rnn_memory"], PALETTE[1], "B"),
    ]
    for col, ys, name, slope, color, unit in series:
        fig.add_trace(
            go.Scatter(
                x=result.lengths,
                y=ys,
                name=f"{name}（斜率 {slope:.2f}）",
                mode="lines+markers",
                line={"color": color, "dash": "solid" if col == 1 else "dot"},
                hovertemplate=f"S = %{{x}}<br>%{{y:.3s}}{unit}<extra>{name}</extra>",
            ),
            row=1,
            col=col,
        )
    fig.update_xaxes(type="log", title_text="序列长度 S", tickvals=result.lengths)
    fig.update_yaxes(type="log", dtick=1, exponentformat="none", title_text="毫秒", row=1, col=1)
    peaks = result.attention_peak + result.rnn_peak
    fig.update_yaxes(type="log", row=1, col=2, **byte_ticks(min(peaks) / 2, max(peaks) * 2))
    first = result.lengths[fit_from]
    fig.update_layout(
        title=f"本机实测（d = {result.d_model}，batch 1，单线程；斜率用 S ≥ {first} 的点拟合）",
        height=440,
        margin={"t": 90},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig
