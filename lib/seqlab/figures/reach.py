"""第 1.5 节正文里的“第 1 个位置的信息走到哪儿了”：RNN 每轮只前进一格，一层自注意力一步到位。"""

from __future__ import annotations

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from seqlab.figures.style import PALETTE


def reach_figure(rnn_reach: torch.Tensor, attention_reach: torch.Tensor) -> go.Figure:
    """第 1 个位置的输入影响到了哪些位置：左边 RNN 每轮只前进一格，右边一层自注意力一步到位。"""
    S = rnn_reach.shape[1]
    positions = list(range(1, S + 1))
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.6, 0.4],
        horizontal_spacing=0.12,
        subplot_titles=(f"RNN：k 轮传递之后（到位置 {S} 要 {S - 1} 轮）", "自注意力：一层之后"),
    )
    for col, reach, rows_title in ((1, rnn_reach, "轮"), (2, attention_reach, "层")):
        z = (reach > 1e-12).float().numpy()
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=positions,
                y=list(range(reach.shape[0])),
                customdata=reach.numpy(),
                colorscale=[[0, "rgba(150,150,150,0.15)"], [1, PALETTE[0]]],
                zmin=0,
                zmax=1,
                showscale=False,
                xgap=2,
                ygap=2,
                hovertemplate=f"%{{y}} {rows_title}之后，位置 %{{x}}<br>‖∂/∂x₁‖ = %{{customdata:.3g}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text="位置 t", dtick=1, row=1, col=col)
        if col == 2:
            fig.update_yaxes(tickmode="array", tickvals=[0, 1], ticktext=["输入", "1 层"], row=1, col=col)
        fig.update_yaxes(
            title_text=f"跨位置传递的{rows_title}数", autorange="reversed", dtick=1, row=1, col=col
        )
    fig.update_layout(title="x₁ 的信息到了哪里（蓝色：该位置的表示已经依赖 x₁）", height=380)
    return fig
