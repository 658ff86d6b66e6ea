"""第 1.1 节的探索器：n-gram 语言模型逐位置的条件概率与下一个字的候选。"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as widgets
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab import corpus
from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import stepped_figure
from seqlab.lm import EOS, UNK, book_model

ORDERS = (1, 2, 3, 4)
MAX_CHARS = 120
TOP_K = 8


@dataclass
class NextTokenState:
    text: str
    order: int
    probs: list[float]  # p(x_t | x_{<t})
    cumulative: list[float]  # Σ_{s≤t} log p(x_s | x_{<s})
    candidates: list[tuple[str, float]]  # 文本之后下一个字的前 TOP_K 个候选
    alternatives: list[str]  # 每个位置上模型最看好的几个字（悬停显示）
    unknown: int  # 语料里没见过的字数


def next_token_state(text: str, order: int) -> NextTokenState:
    text = clean_text(text, max_chars=MAX_CHARS, what="句子")
    if order not in ORDERS:
        raise InputError(f"阶数只能取 {ORDERS} 之一。")
    model = book_model(order)
    probs = model.conditionals(text)
    cumulative, running = [], 0.0
    for p in probs:
        running += math.log(p)
        cumulative.append(running)
    alternatives = [
        "、".join(f"{_show(c)} {q:.2f}" for c, q in model.top_next(text[:t], 3)) for t in range(len(text))
    ]
    unknown = sum(1 for ch in text if ch not in model.vocab)
    return NextTokenState(text, order, probs, cumulative, model.top_next(text, TOP_K), alternatives, unknown)


def _labels(text: str) -> list[str]:
    return [f"{t + 1}·{ch}" for t, ch in enumerate(text)]


def _show(token: str) -> str:
    return {EOS: "〈句尾〉", UNK: "〈未知〉"}.get(token, token)


@register
class NextTokenExplorer(Explorer):
    name = "next_token"
    title = "n-gram 语言模型：每个位置的条件概率"
    examples = [
        {"text": corpus.EXAMPLE_PREFIX, "order": 3},
        {"text": corpus.EXAMPLE_PREFIX, "order": 1},
        {"text": "他一口气把那本小说读", "order": 2},
        {"text": "苹果公司发布了新的手机", "order": 3},
    ]

    def controls(self):
        return {
            "text": widgets.Text(value=corpus.EXAMPLE_PREFIX, description="句子", continuous_update=False),
            "order": widgets.ToggleButtons(options=list(ORDERS), value=3, description="阶数 n"),
        }

    def compute(self, text: str, order: int) -> NextTokenState:
        return next_token_state(text, order)

    def caption(self, state: NextTokenState) -> str:
        words = f"{state.order}-gram：log p(句子) = {state.cumulative[-1]:.2f}"
        if state.unknown:
            words += f"；有 {state.unknown} 个字在语料里从没出现过，按〈未知〉处理"
        return words

    def figure(self, state: NextTokenState) -> go.Figure:
        # 上下两行：上面是逐位置的条件概率（柱）与累计对数概率（折线，右轴），下面是下一个字的候选。
        # 左右并排时，右轴的标题会和候选图的字挤在一起，书页的正文栏也只有六百多像素宽。
        fig = make_subplots(
            rows=2,
            cols=1,
            row_heights=[0.58, 0.42],
            specs=[[{"secondary_y": True}], [{}]],
            subplot_titles=(
                "每个位置的 p(xₜ | 前文)（柱）与累计 log p（折线）",
                "读完这句之后，下一个字的候选",
            ),
            vertical_spacing=0.2,
        )
        labels = _labels(state.text)
        fig.add_trace(
            go.Bar(
                x=labels,
                y=state.probs,
                name="条件概率",
                customdata=state.alternatives,
                hovertemplate="%{x}<br>p = %{y:.4f}<br>模型最看好：%{customdata}<extra></extra>",
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=labels,
                y=state.cumulative,
                name="累计 log p",
                mode="lines+markers",
                hovertemplate="到 %{x} 为止 log p = %{y:.2f}<extra></extra>",
            ),
            row=1,
            col=1,
            secondary_y=True,
        )
        cand, cp = self._candidates(state)
        fig.add_trace(
            go.Bar(
                x=cand,
                y=cp,
                text=[f"{p:.2f}" for p in cp],
                textposition="outside",
                cliponaxis=False,
                name="候选",
                hovertemplate="%{x}：%{y:.4f}<extra></extra>",
            ),
            row=2,
            col=1,
        )
        fig.update_yaxes(title_text="条件概率", range=[0, 1], row=1, col=1, secondary_y=False)
        fig.update_yaxes(
            title_text="累计 log p", row=1, col=1, secondary_y=True, showgrid=False, tickmode="auto", nticks=6
        )
        fig.update_yaxes(title_text="概率", range=[0, 1.15], tickvals=[0, 0.5, 1], row=2, col=1)
        fig.update_layout(
            title=dict(text=self._title(state), y=0.98),
            height=620,
            margin=dict(t=90, l=70, r=70),
            showlegend=False,
        )
        return fig

    @staticmethod
    def _title(state: NextTokenState) -> str:
        return f"「{state.text}」在 {state.order}-gram 模型下"

    @staticmethod
    def _candidates(state: NextTokenState) -> tuple[list[str], list[float]]:
        cand, cp = zip(*state.candidates)
        return [_show(c) for c in cand], list(cp)

    def update(self, fig, state: NextTokenState) -> None:
        """只替换数据数组，不重建整张图（实时更新的预算是 50 ms）。"""
        labels = _labels(state.text)
        fig.data[0].update(x=labels, y=state.probs, customdata=state.alternatives)
        fig.data[1].update(x=labels, y=state.cumulative)
        cand, cp = self._candidates(state)
        fig.data[2].update(x=cand, y=cp, text=[f"{p:.2f}" for p in cp])
        fig.layout.title.text = self._title(state)

    def static_figure(self) -> go.Figure:
        states = [(f"n = {n}", self.figure(next_token_state(corpus.EXAMPLE_PREFIX, n))) for n in ORDERS]
        return stepped_figure(states, prefix="阶数 ", active=2)
