"""第 1.2 节的探索器：一句话就是一个矩阵——行是位置，列是特征通道。"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go

from seqlab import train
from seqlab.embedding import ContextVectors, checkpoint_vocab, context_vectors
from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import stepped_figure

MAX_CHARS = 40
SENTENCES = ["我今天吃了一个苹果，又甜又脆", "苹果公司发布了新的手机"]
LAYERS = {"X": "X：输入向量（查表的结果）", "H": "H：上下文层之后"}


@dataclass
class MatrixState:
    cv: ContextVectors
    layer: str  # "X" 或 "H"
    unknown: int  # 不在词表里、按 <unk> 处理的词数

    @property
    def M(self):
        return self.cv.X if self.layer == "X" else self.cv.H


def matrix_state(text: str, layer: str) -> MatrixState:
    text = clean_text(text, max_chars=MAX_CHARS, what="句子")
    if layer not in LAYERS:
        raise InputError("只能选择 X（输入向量）或 H（上下文层之后）。")
    ckpt = train.load("embedding")
    model, vocab = ckpt.model, checkpoint_vocab(ckpt.config)
    cv = context_vectors(model, vocab, text)
    return MatrixState(cv, layer, cv.ids.count(vocab.unk_id))


@register
class XMatrixExplorer(Explorer):
    name = "x_matrix"
    title = "句子矩阵 X ∈ R^(S×d)：一行一个位置，一列一个通道"
    examples: ClassVar[list[dict[str, Any]]] = [
        {"text": SENTENCES[0], "layer": "X"},
        {"text": SENTENCES[0], "layer": "H"},
        {"text": SENTENCES[1], "layer": "X"},
    ]

    def controls(self):
        return {
            "text": widgets.Text(
                value=SENTENCES[0],
                description="句子",
                continuous_update=False,
                layout=widgets.Layout(width="24em"),
            ),
            "layer": widgets.ToggleButtons(
                options=[(v.split("：")[0], k) for k, v in LAYERS.items()], value="X", description="矩阵"
            ),
        }

    def compute(self, text: str, layer: str) -> MatrixState:
        return matrix_state(text, layer)

    def caption(self, state: MatrixState) -> str:
        S, d = state.M.shape
        note = f"；其中 {state.unknown} 个词不在词表里，用 <unk> 的向量" if state.unknown else ""
        return f"{LAYERS[state.layer]}：S = {S} 行（token），d = {d} 列（通道）{note}。"

    def figure(self, state: MatrixState) -> go.Figure:
        fig = go.Figure(
            go.Heatmap(
                colorscale="RdBu",
                zmid=0,
                zmin=-1,
                zmax=1,
                colorbar={"title": "值"},
                hovertemplate="位置 %{customdata}<br>通道 %{x}<br>值 = %{z:.3f}<extra></extra>",
            )
        )
        fig.update_xaxes(title_text="通道 j（特征维度，共 d 个）")
        fig.update_yaxes(title_text="位置 t（token）", autorange="reversed")
        self._fill(fig, state)
        return fig

    def update(self, fig: go.Figure, state: MatrixState) -> None:
        self._fill(fig, state)

    def _fill(self, fig, state: MatrixState) -> None:
        M = state.M
        S, d = M.shape
        ys = [f"{t}·{tok}" for t, tok in enumerate(state.cv.tokens)]
        fig.data[0].update(
            z=M.tolist(),
            x=list(range(d)),
            y=ys,
            customdata=[[f"{t}「{tok}」"] * d for t, tok in enumerate(state.cv.tokens)],
        )
        fig.update_layout(height=max(300, 26 * S + 150), title=f"{LAYERS[state.layer]}　「{state.cv.text}」")

    def static_figure(self) -> go.Figure:
        states = [
            (f"句 {n + 1} · {k}", self.figure(matrix_state(s, k)))
            for n, s in enumerate(SENTENCES)
            for k in LAYERS
        ]
        return stepped_figure(states, label="句子与矩阵")
