"""第 1.6 节“小 GPT 逐步生成”的图：一步一张，三行子图。

1. 这一步的候选：模型分布 ``softmax(logits)`` 的前几名和它们的概率，选中的那个标成另一种颜色；
2. 这一步最后一个位置的 Query 在每层、每个头上对前文的注意力；
3. 每个位置的 Key/Value 这一步是从 KV cache 里读的，还是这一步新算的。
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab import gpt
from seqlab.figures.stepped import stepped_figure
from seqlab.figures.style import ATTENTION_SCALE, PALETTE
from seqlab.states.gpt_steps import GptStepState

CACHED, COMPUTED = 0, 1
CANDIDATE, CHOSEN = PALETTE[0], PALETTE[1]  # 候选的柱子与选中的那一根
KV_SCALE = [[0.0, "#c9d3df"], [0.5, "#c9d3df"], [0.5, PALETTE[1]], [1.0, PALETTE[1]]]


def caption(state: GptStepState) -> str:
    d = state.decoding
    how = f"采样（温度 {d.temperature:g}，top-k = {d.top_k}，种子 {d.seed}）" if d.sample else "贪心"
    words = f"{how}：到第 {state.step.index} 步为止写出「{state.text}」"
    if state.requested > state.last:
        words += f"；这次生成在第 {state.last} 步写出〈终〉就停了，后面没有新的步"
    return words + "。"


def _title(state: GptStepState) -> str:
    s = state.step
    kind = "Prefill" if s.index == 0 else "Decode"
    return (f"第 {s.index} 步（{kind}）：写出「{gpt.show(s.token)}」，概率 {s.chosen_prob:.2f}<br>"
            f"<sup>KV cache 里读 {s.cached} 行，这一步新算 {s.computed} 行</sup>")


def _context_ticks(state: GptStepState) -> dict[str, list[str]]:
    """注意力与 KV cache 两行的 x 轴：每个位置一个刻度，写成那个字。"""
    context = state.step.context
    return {"tickvals": _coords(context), "ticktext": [gpt.show(c) for c in context]}


def _coords(context: list[str]) -> list[str]:
    return [f"{i}:{ch}" for i, ch in enumerate(context)]


def _varying(state: GptStepState) -> list[dict[str, Any]]:
    """三条轨迹里随状态变的属性（顺序就是轨迹的顺序）：候选的柱子、注意力、KV cache。"""
    s = state.step
    coords = _coords(s.context)
    kinds = [COMPUTED if i >= s.cached else CACHED for i in range(len(coords))]
    return [
        {
            "x": [gpt.show(t) for t, _ in s.probs],
            "y": [p for _, p in s.probs],
            "text": [f"{p:.2f}" for _, p in s.probs],
            "marker_color": [CHOSEN if t == s.token else CANDIDATE for t, _ in s.probs],
        },
        {
            "z": [w for layer in s.attention for w in layer],
            "x": coords,
            "y": [f"第 {l + 1} 层·头 {h + 1}" for l, layer in enumerate(s.attention) for h in range(len(layer))],
        },
        {
            "z": [kinds],
            "x": coords,
            "text": [["算" if k == COMPUTED else "读" for k in kinds]],  # 一个字：手机上每格也放得下
            "customdata": [["这一步新算" if k == COMPUTED else "从缓存读" for k in kinds]],
        },
    ]


def render(state: GptStepState) -> go.Figure:
    fig = make_subplots(rows=3, cols=1, row_heights=[0.34, 0.5, 0.16], vertical_spacing=0.14,
                        subplot_titles=("候选（橙色是选中的字）", "Query 对前文的注意力（每层、每个头）",
                                        "Key/Value：从缓存读，还是新算"))
    bar, heat, kv = _varying(state)
    fig.add_trace(go.Bar(**bar, name="模型的分布", textposition="outside", cliponaxis=False,
                         hovertemplate="%{x}：%{y:.3f}<extra>模型的分布</extra>"), row=1, col=1)
    fig.add_trace(go.Heatmap(**heat, zmin=0, zmax=1, colorscale=ATTENTION_SCALE, name="注意力",
                             colorbar={"title": "权重", "len": 0.42, "y": 0.36},
                             hovertemplate="%{y}<br>读 %{x}：%{z:.3f}<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Heatmap(**kv, y=["K、V"], zmin=0, zmax=1, colorscale=KV_SCALE, showscale=False,
                             texttemplate="%{text}", xgap=2, name="KV cache",
                             hovertemplate="%{x}：%{customdata}<extra></extra>"), row=3, col=1)
    for row in (2, 3):
        fig.update_xaxes(tickmode="array", **_context_ticks(state), row=row, col=1)
    fig.update_yaxes(range=[0, 1.2], tickvals=[0, 0.5, 1], title_text="概率", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=2, col=1)
    fig.update_layout(title={"text": _title(state), "y": 0.98, "yanchor": "top", "font": {"size": 14}},
                      height=720, margin={"t": 110, "l": 100}, showlegend=False)
    return fig


def patch(fig: go.Figure, old: GptStepState, new: GptStepState) -> None:
    """只换三条轨迹的数据、两行的 x 轴刻度和标题：三行子图不必每次重建（make_subplots 要几十毫秒）。"""
    for trace, values in zip(fig.data, _varying(new)):
        trace.update(values)
    ticks = _context_ticks(new)
    fig.layout.xaxis2.update(ticks)
    fig.layout.xaxis3.update(ticks)
    fig.layout.title.text = _title(new)


def static_figure(states: Sequence[GptStepState]) -> go.Figure:
    """静态面：预先算好的各步一格滑块（标签是步的序号）。"""
    return stepped_figure([(f"{s.step.index}", render(s)) for s in states], prefix="第几步：")
