"""第 1.4、1.6 节的度量图：翻译模型的逐词准确率随源句长度的变化（数据来自 ``seq2seq.accuracy_by_length``）。"""

from __future__ import annotations

import plotly.graph_objects as go

from seqlab.figures.style import PALETTE


def length_figure(
    curves: dict[str, dict[int, float]], *, title: str, colors: list[int] | None = None
) -> go.Figure:
    """准确率随源句长度变化的折线图：``curves`` 是 ``{图例: {长度: 准确率}}``。

    ``colors`` 是每条曲线在全书调色板里的序号（让同一个模型在几张图里颜色一致）。
    """
    fig = go.Figure()
    for k, (label, acc) in enumerate(curves.items()):
        fig.add_trace(
            go.Scatter(
                x=list(acc),
                y=list(acc.values()),
                mode="lines+markers",
                name=label,
                line={"color": PALETTE[colors[k] if colors else k % len(PALETTE)]},
                hovertemplate=f"{label}<br>长度 %{{x}}：%{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="源句长度（字数）", dtick=3)
    fig.update_yaxes(title_text="逐词准确率（贪心解码）", range=[0, 1.02])
    fig.update_layout(
        title=title, height=420, legend={"x": 0.01, "y": 0.02, "xanchor": "left", "yanchor": "bottom"}
    )
    return fig
