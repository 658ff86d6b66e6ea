"""第 1.1 节“下一个字”的图：上面是逐位置的条件概率（柱）与累计对数概率（折线），下面是下一个字的候选。"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.states.next_token import NextTokenState


def caption(state: NextTokenState) -> str:
    words = f"{state.order}-gram：log p(句子) = {state.cumulative[-1]:.2f}"
    if state.unknown:
        words += f"；有 {state.unknown} 个字在语料里从没出现过，按〈未知〉处理"
    return words


def _title(state: NextTokenState) -> str:
    return f"「{state.text}」在 {state.order}-gram 模型下"


def _labels(text: str) -> list[str]:
    return [f"{t + 1}·{ch}" for t, ch in enumerate(text)]


def _candidates(state: NextTokenState) -> tuple[list[str], list[float]]:
    return [c for c, _ in state.candidates], [p for _, p in state.candidates]


def render(state: NextTokenState) -> go.Figure:
    # 上下两行：上面是逐位置的条件概率（柱）与累计对数概率（折线，右轴），下面是下一个字的候选。
    # 左右并排时，右轴的标题会和候选图的字挤在一起，书页的正文栏也只有六百多像素宽。
    fig = make_subplots(
        rows=2,
        cols=1,
        row_heights=[0.58, 0.42],
        specs=[[{"secondary_y": True}], [{}]],
        subplot_titles=("每个位置的 p(xₜ | 前文)（柱）与累计 log p（折线）", "读完这句之后，下一个字的候选"),
        vertical_spacing=0.2,
    )
    fig.add_trace(
        go.Bar(name="条件概率", hovertemplate="%{x}<br>p = %{y:.4f}<br>模型最看好：%{customdata}<extra></extra>"),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(name="累计 log p", mode="lines+markers", hovertemplate="到 %{x} 为止 log p = %{y:.2f}<extra></extra>"),
        row=1,
        col=1,
        secondary_y=True,
    )
    fig.add_trace(
        go.Bar(textposition="outside", cliponaxis=False, name="候选", hovertemplate="%{x}：%{y:.4f}<extra></extra>"),
        row=2,
        col=1,
    )
    fig.update_yaxes(title_text="条件概率", range=[0, 1], row=1, col=1, secondary_y=False)
    fig.update_yaxes(title_text="累计 log p", row=1, col=1, secondary_y=True, showgrid=False, tickmode="auto", nticks=6)
    fig.update_yaxes(title_text="概率", range=[0, 1.15], tickvals=[0, 0.5, 1], row=2, col=1)
    fig.update_layout(title={"y": 0.98}, height=620, margin={"t": 90, "l": 70, "r": 70}, showlegend=False)
    patch(fig, state, state)
    return fig


def patch(fig: go.Figure, old: NextTokenState, new: NextTokenState) -> None:
    """只替换数据数组与标题，不重建整张图（实时更新的预算是 50 ms）。"""
    labels = _labels(new.text)
    fig.data[0].update(x=labels, y=new.probs, customdata=new.alternatives)
    fig.data[1].update(x=labels, y=new.cumulative)
    cand, cp = _candidates(new)
    fig.data[2].update(x=cand, y=cp, text=[f"{p:.2f}" for p in cp])
    fig.layout.title.text = _title(new)
