"""第 1.6 节的探索器：训练好的 2 层 Transformer 在“循环复读”任务上，各层各头的注意力图。

输入一段字，模型看到的是 〈始〉 + 这段字 + 同一段字再来一遍，并在每个位置预测下一个字。
第 1 层里有一个头主要看“前一个字”；第 2 层的头在第二遍里看“当前字上一次出现的位置的下一格”——
那一格本身的字和当前字毫无关系，能匹配上，全靠第 1 层已经把“前一个字是谁”写进了那个位置的表示。
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
import torch

from seqlab import train
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import attention_heatmap, stepped_figure
from seqlab.runtime import single_thread
from seqlab.train import induction

EXAMPLE = "苹果天雨山"


@dataclass
class LayerHeadState:
    segment: str
    layer: int  # 从 1 数
    head: int  # 从 1 数
    tokens: list[str]  # 〈始〉 + 两遍
    alpha: list[list[float]]  # (S, S)
    predicted: str  # 每个位置预测的下一个字
    correct: int  # 第二遍里预测对的个数
    graded: int  # 第二遍里可以推出答案的位置数
    scores: dict[str, float]  # 这个头的 previous / induction 分数


@torch.no_grad()
def layer_head_state(segment: str, layer: int, head: int) -> LayerHeadState:
    segment = clean_text(segment, max_chars=200, what="字段")
    ids = induction.repeat_twice(segment)
    with single_thread():  # 这么小的模型，单线程最快；机器繁忙时多线程反而要等
        logits, weights = train.load("transformer_induction").model(ids, return_weights=True)
    L = len(segment)
    pred = logits[0].argmax(-1)
    target = ids[0, 1:]
    graded = slice(L + 1, 2 * L)  # 第二遍里、当前字已经出现过的位置（最后一个位置之后没有答案）
    tokens = [induction.COPY_VOCAB[i] for i in ids[0].tolist()]
    return LayerHeadState(
        segment=segment,
        layer=layer,
        head=head,
        tokens=tokens,
        alpha=weights[layer - 1][0, head - 1].tolist(),
        predicted="".join(induction.COPY_VOCAB[i] for i in pred.tolist()),
        correct=int((pred[graded] == target[graded]).sum()),
        graded=L - 1,
        scores=induction.head_scores(weights, L)[(layer - 1, head - 1)],
    )


def _title(state: LayerHeadState) -> str:
    s = state.scores
    return (
        f"第 {state.layer} 层 · 第 {state.head} 个头：读前一个字 {s['previous']:.2f}，"
        f"读上次出现的下一格 {s['induction']:.2f}"
    )


def layer_head_figure(state: LayerHeadState) -> go.Figure:
    fig = attention_heatmap(state.alpha, state.tokens, state.tokens, title=_title(state))
    fig.update_layout(
        title={"font": {"size": 14}, "y": 0.98, "yanchor": "top"}, height=560, margin={"t": 130}
    )
    return fig


@register
class LayerHeadsExplorer(Explorer):
    name = "layer_heads"
    title = "2 层 Transformer 的注意力图：按层、按头"
    examples: ClassVar[list[dict]] = [
        {"segment": EXAMPLE, "layer": 1, "head": 1},
        {"segment": EXAMPLE, "layer": 2, "head": 1},
        {"segment": "书读过完吃", "layer": 2, "head": 2},
        {"segment": "花月星云风雪", "layer": 1, "head": 2},
    ]

    def controls(self):
        return {
            "segment": widgets.Text(value=EXAMPLE, description="一段字", continuous_update=False),
            "layer": widgets.ToggleButtons(options=[("第 1 层", 1), ("第 2 层", 2)], value=1),
            "head": widgets.ToggleButtons(options=[("头 1", 1), ("头 2", 2)], value=1),
        }

    def compute(self, segment: str, layer: int, head: int) -> LayerHeadState:
        return layer_head_state(segment, layer, head)

    def caption(self, state: LayerHeadState) -> str:
        return (
            f"模型看到「{''.join(state.tokens[1:])}」，每个位置预测的下一个字：「{state.predicted}」；"
            f"第二遍里能推出答案的 {state.graded} 个位置猜对了 {state.correct} 个。"
        )

    def figure(self, state: LayerHeadState) -> go.Figure:
        return layer_head_figure(state)

    def update(self, fig: go.Figure, state: LayerHeadState) -> None:
        """只换热力图的数据、刻度和标题（坐标的写法与 ``attention_heatmap`` 相同：序号:字）。"""
        coords = [f"{i}:{ch}" for i, ch in enumerate(state.tokens)]
        heat = fig.data[0]
        heat.z, heat.x, heat.y = state.alpha, coords, coords
        fig.layout.xaxis.update(tickvals=coords, ticktext=state.tokens)
        fig.layout.yaxis.update(tickvals=coords, ticktext=state.tokens)
        fig.layout.title.text = _title(state)

    def static_figure(self) -> go.Figure:
        states = [
            (f"第 {layer} 层 · 头 {head}", layer_head_figure(layer_head_state(EXAMPLE, layer, head)))
            for layer in (1, 2)
            for head in (1, 2)
        ]
        return stepped_figure(states, label="层与头")
