"""第 1.2 节的探索器：同一个词在两句话里——输入向量相同，经过上下文层后的隐藏状态不同。"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab import train
from seqlab.embedding import ContextVectors, checkpoint_vocab, context_vectors, cosine
from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import PALETTE, stepped_figure

MAX_CHARS = 40
SENTENCES = [
    "苹果公司发布了新的手机",
    "我今天吃了一个苹果，又甜又脆",
    "他在苹果公司工作，负责设计手表",
    "妈妈在市场买了一袋苹果和橘子",
    "苹果公司的电脑卖得很好",
    "我喜欢吃苹果",
    "他昨天去北京出差，晚上才回来",
    "北京的天气很冷",
]
# 静态图里预先算好的几组对照：(句子 A, 句子 B, 要比较的词)
PAIRS = [
    (SENTENCES[0], SENTENCES[1], "苹果"),
    (SENTENCES[2], SENTENCES[3], "苹果"),
    (SENTENCES[4], SENTENCES[2], "苹果"),
    (SENTENCES[1], SENTENCES[5], "苹果"),
    (SENTENCES[6], SENTENCES[7], "北京"),
]
ROWS = ["A：输入 x", "B：输入 x", "A：隐藏状态 h", "B：隐藏状态 h"]


@dataclass
class AppleState:
    word: str
    a: ContextVectors
    b: ContextVectors
    i: int  # 词在 A 里的位置
    j: int  # 词在 B 里的位置
    cos_x: float
    cos_h: float


def _find(word: str, cv: ContextVectors, which: str) -> int:
    if word not in cv.tokens:
        shown = " / ".join(cv.tokens)
        raise InputError(
            f"句子 {which} 的分词结果是「{shown}」，里面没有「{word}」这个 token。请换一个句子或一个词。"
        )
    return cv.tokens.index(word)


def apple_state(sentence_a: str, sentence_b: str, word: str) -> AppleState:
    sentence_a = clean_text(sentence_a, max_chars=MAX_CHARS, what="句子（A）")
    sentence_b = clean_text(sentence_b, max_chars=MAX_CHARS, what="句子（B）")
    word = clean_text(word, max_chars=8, what="要比较的词")
    ckpt = train.load("embedding")
    model, vocab = ckpt.model, checkpoint_vocab(ckpt.config)
    if word not in vocab:
        raise InputError(
            f"「{word}」不在模型的词表里（词表只收了语料中出现过的 {len(vocab)} 个词），"
            "模型没有为它学过向量，只能当作 <unk>。请换一个词，例如「苹果」「北京」「老师」。"
        )
    a = context_vectors(model, vocab, sentence_a)
    b = context_vectors(model, vocab, sentence_b)
    i, j = _find(word, a, "A"), _find(word, b, "B")
    return AppleState(word, a, b, i, j, cosine(a.X[i], b.X[j]), cosine(a.H[i], b.H[j]))


def _mark(cv: ContextVectors, t: int) -> str:
    return "".join(f"【{tok}】" if k == t else tok for k, tok in enumerate(cv.tokens))


@register
class AppleContextExplorer(Explorer):
    name = "apple_context"
    title = "同一个词，两种上下文：输入向量与隐藏状态"
    examples: ClassVar[list[dict[str, Any]]] = [
        {"sentence_a": PAIRS[0][0], "sentence_b": PAIRS[0][1], "word": "苹果"},
        {"sentence_a": PAIRS[1][0], "sentence_b": PAIRS[1][1], "word": "苹果"},
        {"sentence_a": PAIRS[4][0], "sentence_b": PAIRS[4][1], "word": "北京"},
    ]

    def controls(self):
        box = {
            "options": SENTENCES,
            "ensure_option": False,
            "continuous_update": False,
            "layout": widgets.Layout(width="24em"),
        }
        return {
            "sentence_a": widgets.Combobox(value=PAIRS[0][0], description="句子 A", **box),
            "sentence_b": widgets.Combobox(value=PAIRS[0][1], description="句子 B", **box),
            "word": widgets.Text(
                value="苹果",
                description="比较的词",
                continuous_update=False,
                layout=widgets.Layout(width="12em"),
            ),
        }

    def compute(self, sentence_a: str, sentence_b: str, word: str) -> AppleState:
        return apple_state(sentence_a, sentence_b, word)

    def caption(self, state: AppleState) -> str:
        return (
            f"A：{_mark(state.a, state.i)}　B：{_mark(state.b, state.j)}。"
            f"输入向量的余弦相似度 = {state.cos_x:.3f}，上下文层之后 = {state.cos_h:.3f}。"
        )

    def figure(self, state: AppleState) -> go.Figure:
        fig = make_subplots(
            rows=1,
            cols=2,
            column_widths=[0.7, 0.3],
            horizontal_spacing=0.2,
            subplot_titles=("四个向量的各个通道", "余弦相似度（A 对 B）"),
        )
        fig.add_trace(
            go.Heatmap(
                colorscale="RdBu",
                zmid=0,
                zmin=-1,
                zmax=1,
                y=ROWS,
                colorbar={"title": "值", "x": 0.58, "len": 0.9, "thickness": 14},
                hovertemplate="%{y}<br>通道 %{x}<br>值 = %{z:.3f}<extra></extra>",
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Bar(
                x=["输入 x", "隐藏状态 h"],
                marker_color=[PALETTE[0], PALETTE[1]],
                textposition="outside",
                showlegend=False,
                hovertemplate="%{x}：cos = %{y:.3f}<extra></extra>",
            ),
            row=1,
            col=2,
        )
        fig.update_yaxes(autorange="reversed", row=1, col=1)
        fig.update_xaxes(title_text="通道（特征维度）", row=1, col=1)
        fig.update_yaxes(range=[-1.05, 1.25], row=1, col=2)
        fig.update_layout(height=450, margin={"t": 165})
        self._fill(fig, state)
        return fig

    def update(self, fig: go.Figure, state: AppleState) -> None:
        self._fill(fig, state)

    def _fill(self, fig, state: AppleState) -> None:
        a, b, i, j = state.a, state.b, state.i, state.j
        z = [a.X[i].tolist(), b.X[j].tolist(), a.H[i].tolist(), b.H[j].tolist()]
        fig.data[0].update(z=z, x=list(range(len(z[0]))))
        fig.data[1].update(y=[state.cos_x, state.cos_h], text=[f"{state.cos_x:.3f}", f"{state.cos_h:.3f}"])
        # 两句各占一行：正文栏只有约 680 像素宽，放在一行里长句会被裁掉
        fig.layout.title = {
            "text": f"A：{_mark(a, i)}<br>B：{_mark(b, j)}",
            "font": {"size": 15},
            "y": 0.92,
            "yanchor": "top",
        }

    def static_figure(self) -> go.Figure:
        states = [
            (f"{a} ／ {b}" + ("" if w == "苹果" else f"（比较「{w}」）"), self.figure(apple_state(a, b, w)))
            for a, b, w in PAIRS
        ]
        fig = stepped_figure(states, control="dropdown", label="句子对")
        fig.update_layout(updatemenus=[{**fig.layout.updatemenus[0].to_plotly_json(), "x": -0.14, "y": 1.34}])
        return fig
