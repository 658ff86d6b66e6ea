"""第 1.6 节“按层、按头看注意力”的图：一个头的注意力热力图，标题里是它的两个分数。"""

from __future__ import annotations

import plotly.graph_objects as go

from seqlab.figures.heatmap import attention_heatmap
from seqlab.states.layer_heads import LayerHeadState


def _title(state: LayerHeadState) -> str:
    s = state.scores
    return (
        f"第 {state.layer} 层 · 第 {state.head} 个头：读前一个字 {s['previous']:.2f}，"
        f"读上次出现的下一格 {s['induction']:.2f}"
    )


def caption(state: LayerHeadState) -> str:
    return (
        f"模型看到「{''.join(state.tokens[1:])}」，每个位置预测的下一个字：「{state.predicted}」；"
        f"第二遍里能推出答案的 {state.graded} 个位置猜对了 {state.correct} 个。"
    )


def render(state: LayerHeadState) -> go.Figure:
    fig = attention_heatmap(state.alpha, state.tokens, state.tokens, title=_title(state))
    fig.update_layout(title={"font": {"size": 14}, "y": 0.98, "yanchor": "top"}, height=560, margin={"t": 130})
    return fig


def patch(fig: go.Figure, old: LayerHeadState, new: LayerHeadState) -> None:
    """只换热力图的数据、刻度和标题（坐标的写法与 ``attention_heatmap`` 相同：序号:字）。"""
    coords = [f"{i}:{ch}" for i, ch in enumerate(new.tokens)]
    heat = fig.data[0]
    heat.z, heat.x, heat.y = new.alpha, coords, coords
    fig.layout.xaxis.update(tickvals=coords, ticktext=new.tokens)
    fig.layout.yaxis.update(tickvals=coords, ticktext=new.tokens)
    fig.layout.title.text = _title(new)
