"""训练过程的图。"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.style import PALETTE


def clipping_curves(unclipped: Sequence[float], clipped: Sequence[float], *, tau: float = 1.0, title: str = "") -> go.Figure:
    """梯度裁剪实验（第 1.3 节）：不裁剪与裁剪两次训练的损失曲线，左右两个子图。

    ``unclipped``、``clipped`` 是每一步的损失（第 1 步在前）。纵轴都是对数坐标，但各用各的范围：不裁剪的
    损失涨过几十个数量级，和它共用一根轴，裁剪后那几个数量级的下降就被压成一条平线。两次训练的起点相同，
    两个子图都用一条点线标出它，高低仍能对照。横轴各自画到自己训练到的那一步。不裁剪的那次若在最后一步
    溢出成 ``inf`` 或 ``NaN``（对数轴上画不出来），就在那一步画一条竖线并写明。窄屏上网页的脚本把两个子图
    上下叠放。
    """
    runs = [("不裁剪", list(unclipped), PALETTE[1]), (f"裁剪到 τ = {tau:g}", list(clipped), PALETTE[0])]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.13, subplot_titles=[name for name, _, _ in runs])
    for col, (name, losses, color) in enumerate(runs, start=1):
        fig.add_scatter(
            x=list(range(1, len(losses) + 1)),
            y=[v if math.isfinite(v) else None for v in losses],
            name=name,
            mode="lines",
            line=dict(color=color, width=2.5),
            hovertemplate=f"{name}<br>第 %{{x}} 步：损失 %{{y:.3g}}<extra></extra>",
            row=1,
            col=col,
        )
        if losses and math.isfinite(losses[0]):
            fig.add_hline(y=losses[0], line=dict(color="#888888", width=1, dash="dot"), row=1, col=col)
        fig.update_xaxes(title_text="训练步数", row=1, col=col)
        fig.update_yaxes(title_text="均方误差（对数坐标）", type="log", exponentformat="power", row=1, col=col)
    if clipped and math.isfinite(clipped[0]):
        # 对数轴上，注释的 y 要写成 log10（形状的 y 则直接写数值）
        fig.add_annotation(x=1, xref="x2 domain", y=math.log10(clipped[0]), yref="y2", text="起点（两次相同）", showarrow=False,
                           xanchor="right", yanchor="top", font=dict(size=12, color="#777777"))
    blown = next((k for k, v in enumerate(runs[0][1]) if not math.isfinite(v)), None)
    if blown is not None:
        step, value = blown + 1, runs[0][1][blown]
        fig.add_vline(x=step, line=dict(color=PALETTE[3], width=1.5, dash="dash"), row=1, col=1)
        fig.add_annotation(
            x=step, xref="x", y=0.04, yref="y domain", text=f"第 {step} 步<br>损失溢出为 {value}",
            showarrow=False, xanchor="right", yanchor="bottom", align="right", xshift=-4, font=dict(color=PALETTE[3]),
        )
    fig.update_layout(
        title=title,
        height=400,
        showlegend=False,
        margin=dict(t=90),
        meta=dict(alt=(title or "梯度裁剪实验的损失曲线") + f"：两幅子图，一幅不裁剪，一幅裁剪到 τ = {tau:g}；点线是两次共同的起点"
                  + ("；竖线标出不裁剪的那次损失溢出的那一步" if blown is not None else "")),
    )
    return fig
