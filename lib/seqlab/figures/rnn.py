"""第 1.3 节（循环网络）正文里的几张度量图：串行依赖、梯度能传多远、三种循环层的训练曲线。

要画的数都由笔记本算好传进来（``rnn.graph_depth``、``measure.timing_samples``、``rnn.input_gradient_norms``、
检查点里记下的损失）；这里只画图。
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.style import PALETTE


def _legend_below(y: float) -> dict[str, object]:
    """图下方横排的图例，顶边在绘图区下方 ``y``（绘图区高度的倍数）处。"""
    return dict(orientation="h", x=0, y=y, xanchor="left", yanchor="top")


def serial_dependency(rows: Sequence[tuple[int, Mapping[str, int], Mapping[str, float]]]) -> go.Figure:
    """几种层的最长依赖链（左）与一次前向的用时（右）随序列长度 S 的变化，两轴都是对数坐标。

    ``rows`` 的每一项是 ``(S, 最长依赖链, 用时毫秒)``，后两项都是“层的名字 → 数值”，各项的名字与顺序相同。
    """
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=0.14, subplot_titles=("最长依赖链（运算个数）", "一次前向的用时（毫秒）")
    )
    Ss = [S for S, _, _ in rows]
    for k, name in enumerate(rows[0][1]):
        for col, values in ((1, [depth[name] for _, depth, _ in rows]), (2, [ms[name] for _, _, ms in rows])):
            fig.add_scatter(x=Ss, y=values, mode="lines+markers", name=name, legendgroup=name,
                            showlegend=col == 1, line=dict(color=PALETTE[k]), row=1, col=col)
    fig.update_xaxes(type="log", title="序列长度 S", tickvals=Ss)
    fig.update_yaxes(type="log", exponentformat="power")
    fig.update_layout(title="串行依赖：RNN 的依赖链和用时都随 S 线性增长（本机 CPU，单线程）", height=440,
                      legend=_legend_below(-0.28), margin=dict(t=90, b=110))
    return fig


def gradient_reach(reach: Mapping[str, Iterable[float]]) -> go.Figure:
    """最后一步的状态对早先每个输入的梯度范数，按距离 r = 0, 1, … 排列（对数纵轴）。

    ``reach`` 是“曲线的名字 → 各距离的梯度范数”（``rnn.input_gradient_norms`` 的结果，张量或数的序列都行），
    按（默认初始化，偏向记忆）成对排列：同一对同色，前者点线、后者实线。
    """
    fig = go.Figure()
    for k, (label, norms) in enumerate(reach.items()):
        y = [float(v) for v in norms]
        fig.add_scatter(x=list(range(len(y))), y=y, name=label, mode="lines",
                        line=dict(color=PALETTE[k // 2], dash="solid" if k % 2 else "dot", width=2.5))
    fig.update_xaxes(title="距离 r = S − s（步）")
    fig.update_yaxes(type="log", title="梯度范数（64 条序列的中位数）", exponentformat="power")
    fig.update_layout(title="最后一步的状态 u·h_S 对早先输入 x_s 的梯度范数（未训练的网络）", height=470,
                      legend=_legend_below(-0.22), margin=dict(b=120))
    return fig


def recurrent_loss_curves(losses: Mapping[str, Sequence[float]], *, batch: int, length: int, clip: float) -> go.Figure:
    """几种循环层按截断 BPTT 训练时每一步的交叉熵。

    ``losses`` 是“层的名字 → 每一步的损失”；``batch`` 条流、每段 ``length`` 个字一步，梯度裁剪到 ``clip``。
    """
    fig = go.Figure()
    for k, (label, values) in enumerate(losses.items()):
        fig.add_scatter(y=values, name=label, mode="lines", line=dict(color=PALETTE[k], width=1.5))
    fig.update_xaxes(title=f"训练步数（每步 {batch} 条流 × {length} 个字）")
    fig.update_yaxes(title="交叉熵（nats / 字）", range=[0, 5.8])
    fig.update_layout(title=f"三种循环层的训练曲线（截断 BPTT，梯度裁剪 τ = {clip:g}）", height=380,
                      legend=_legend_below(-0.22), margin=dict(b=90))
    return fig
