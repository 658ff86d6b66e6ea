"""第 1.2 节的探索器：同一段文字按字、按词（jieba）、按字节级 BPE 切分，以及序列长度与词表大小。"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab import corpus
from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import PALETTE, stepped_figure
from seqlab.tokenize import (
    BPE_SIZES,
    UNK,
    book_bpe,
    book_char_tokenizer,
    book_word_tokenizer,
    corpus_lengths,
    is_whole_chars,
    piece_bytes,
)

MAX_CHARS = 60
DEFAULT_TEXT = "我在苹果公司工作，周末爱吃苹果🍎"
# 颜色：相邻 token 交替两种蓝绿色；不是整字的字节碎片用橙色；<unk> 用红色。
COLORS = {"even": PALETTE[0], "odd": PALETTE[6], "partial": PALETTE[1], "unk": PALETTE[3]}


@dataclass
class Row:
    """一种切分方式的结果。``starts``/``widths`` 以“字”为单位，画图时让三行上下对齐。"""

    label: str
    vocab_size: int
    tokens: list[str]
    ids: list[int]
    starts: list[float]
    widths: list[float]
    kinds: list[str]  # "even" / "odd" / "partial" / "unk"


@dataclass
class TokenizerState:
    text: str
    vocab_size: int
    rows: list[Row]
    bpe_sizes: list[int]  # 各个 BPE 的实际词表大小
    bpe_lengths: list[int]  # 这段文字在各个 BPE 下的 token 数


def _alternate(n: int) -> list[str]:
    return ["even" if k % 2 == 0 else "odd" for k in range(n)]


def _char_row(text: str) -> Row:
    tok = book_char_tokenizer()
    ids = tok.encode(text)
    kinds = ["unk" if i == tok.vocab.unk_id else k for i, k in zip(ids, _alternate(len(ids)))]
    return Row(
        "字", tok.vocab_size, tok.tokenize(text), ids, list(range(len(text))), [1.0] * len(text), kinds
    )


def _word_row(text: str) -> Row:
    tok = book_word_tokenizer()
    words = tok.tokenize(text)
    ids = tok.vocab.encode(words)
    starts, pos = [], 0
    for w in words:
        starts.append(pos)
        pos += len(w)
    kinds = ["unk" if i == tok.vocab.unk_id else k for i, k in zip(ids, _alternate(len(ids)))]
    return Row("词（jieba）", tok.vocab_size, words, ids, starts, [float(len(w)) for w in words], kinds)


def _bpe_row(text: str, vocab_size: int) -> Row:
    """字节级 BPE 的一行：一个汉字占 3 个字节，每个字节算 1/3 个字宽。"""
    tok = book_bpe(vocab_size)
    enc = tok.backend.encode(text)
    # 每个字节在“字”坐标上的宽度
    byte_width = [1.0 / len(ch.encode("utf-8")) for ch in text for _ in ch.encode("utf-8")]
    starts, widths, kinds, pos, b = [], [], [], 0.0, 0
    for k, piece in enumerate(enc.tokens):
        raw = piece_bytes(piece)
        w = sum(byte_width[b : b + len(raw)])
        starts.append(pos)
        widths.append(w)
        kinds.append(("even" if k % 2 == 0 else "odd") if is_whole_chars(raw) else "partial")
        pos += w
        b += len(raw)
    return Row(
        f"BPE（{vocab_size}）", tok.vocab_size, tok.tokenize(text), list(enc.ids), starts, widths, kinds
    )


def tokenizer_state(text: str, vocab_size: int) -> TokenizerState:
    text = clean_text(text, max_chars=MAX_CHARS, what="文本")
    if vocab_size not in BPE_SIZES:
        raise InputError(f"BPE 词表大小只能取 {BPE_SIZES} 之一。")
    rows = [_char_row(text), _word_row(text), _bpe_row(text, vocab_size)]
    sizes = [book_bpe(v).vocab_size for v in BPE_SIZES]
    lengths = [len(book_bpe(v).encode(text)) for v in BPE_SIZES]
    return TokenizerState(text, vocab_size, rows, sizes, lengths)


@lru_cache(maxsize=1)
def corpus_curve() -> tuple[list[int], list[float]]:
    """语料里平均每句的 BPE token 数（按 ``BPE_SIZES``）。"""
    sentences = corpus.book_corpus()
    return [book_bpe(v).vocab_size for v in BPE_SIZES], [
        corpus_lengths(book_bpe(v), sentences) for v in BPE_SIZES
    ]


@register
class TokenizerExplorer(Explorer):
    name = "tokenizer"
    title = "同一段文字的三种切分：字、词、字节级 BPE"
    examples: ClassVar[list[dict[str, Any]]] = [
        {"text": DEFAULT_TEXT, "vocab_size": 300},
        {"text": DEFAULT_TEXT, "vocab_size": 1000},
        {"text": "这本书我已经读过了", "vocab_size": 256},
        {"text": "鲲鹏展翅九万里 hello 😀", "vocab_size": 600},
    ]

    def controls(self):
        return {
            "text": widgets.Text(
                value=DEFAULT_TEXT,
                description="文本",
                continuous_update=False,
                layout=widgets.Layout(width="28em"),
            ),
            "vocab_size": widgets.ToggleButtons(
                options=list(BPE_SIZES), value=300, description="BPE 词表", style={"button_width": "4.2em"}
            ),
        }

    def compute(self, text: str, vocab_size: int) -> TokenizerState:
        return tokenizer_state(text, vocab_size)

    def caption(self, state: TokenizerState) -> str:
        parts = []
        for row in state.rows:
            extra = []
            n_unk = row.kinds.count("unk")
            n_partial = row.kinds.count("partial")
            if n_unk:
                extra.append(f"{n_unk} 个 {UNK}")
            if n_partial:
                extra.append(f"{n_partial} 个不是整字的字节碎片")
            more = f"，其中 {'、'.join(extra)}" if extra else ""
            parts.append(f"{row.label}：{len(row.tokens)} 个 token（词表 {row.vocab_size}）{more}")
        return "；".join(parts) + "。"

    # 图的骨架只建一次；figure() 与 update() 都通过 _fill 填入数据，实时更新时不必重建子图。
    def figure(self, state: TokenizerState) -> go.Figure:
        # 上下两张子图：上面是切分结果（需要整个宽度放下每个 token），下面是 token 数与词表大小
        fig = make_subplots(
            rows=2,
            cols=1,
            row_heights=[0.55, 0.45],
            vertical_spacing=0.2,
            subplot_titles=("切分结果（小字是 ID；条太窄时悬停查看）", "这段文字的 token 数与词表大小"),
        )
        for _ in range(3):
            fig.add_trace(
                go.Bar(
                    orientation="h",
                    textposition="inside",
                    insidetextanchor="middle",
                    textangle=0,
                    textfont={"color": "white", "size": 13},
                    marker_line={"color": "white", "width": 1},
                    hovertemplate="%{customdata[1]}<br>token：%{customdata[0]}<br>ID = %{customdata[2]}"
                    "<extra></extra>",
                    showlegend=False,
                ),
                row=1,
                col=1,
            )
        fig.add_trace(
            go.Scatter(
                mode="lines+markers",
                name="BPE：这段文字",
                line={"color": PALETTE[1]},
                hovertemplate="词表 %{x}：%{y} 个 token<extra></extra>",
            ),
            row=2,
            col=1,
        )
        cx, cy = corpus_curve()
        fig.add_trace(
            go.Scatter(
                x=cx,
                y=cy,
                mode="lines",
                name="BPE：语料平均每句",
                line={"color": PALETTE[1], "dash": "dot"},
                hovertemplate="词表 %{x}：平均 %{y:.1f} 个 token<extra></extra>",
            ),
            row=2,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                mode="markers+text",
                name="字 / 词",
                textposition="top center",
                marker={"size": 11, "color": PALETTE[0], "symbol": "diamond"},
                hovertemplate="%{text}：词表 %{x}，%{y} 个 token<extra></extra>",
            ),
            row=2,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                mode="markers",
                name="当前 BPE",
                showlegend=False,
                marker={"size": 18, "color": "rgba(0,0,0,0)", "line": {"color": PALETTE[3], "width": 2}},
                hoverinfo="skip",
            ),
            row=2,
            col=1,
        )
        fig.update_xaxes(showgrid=False, zeroline=False, title_text="位置（以字为单位）", row=1, col=1)
        fig.update_yaxes(autorange="reversed", row=1, col=1)
        fig.update_xaxes(
            type="log",
            title_text="词表大小 V（对数坐标）",
            tickmode="array",
            tickvals=list(BPE_SIZES),
            range=[math.log10(170), math.log10(2400)],
            row=2,
            col=1,
        )
        fig.update_yaxes(title_text="token 数", row=2, col=1)
        fig.update_layout(
            barmode="overlay",
            height=640,
            uniformtext={"minsize": 9, "mode": "hide"},
            margin={"t": 90},
            # 图例放在下图的右上角：那里曲线已经降得很低，纵轴又留了空白
            legend={"x": 1, "xanchor": "right", "y": 0.36, "yanchor": "top", "bgcolor": "rgba(0,0,0,0)"},
        )
        self._fill(fig, state)
        return fig

    def update(self, fig: go.Figure, state: TokenizerState) -> None:
        self._fill(fig, state)

    def _fill(self, fig, state: TokenizerState) -> None:
        for trace, row in zip(fig.data[:3], state.rows):
            # 纵轴标签带上 token 数；条块里写 token，下面小字写它的 ID（条块太窄时整段隐藏，悬停仍可见）
            label = f"{row.label}<br>{len(row.tokens)} 个 token"
            trace.update(
                y=[label] * len(row.tokens),
                x=row.widths,
                base=row.starts,
                text=[f"{t}<br><span style='font-size:0.75em'>{i}</span>" for t, i in zip(row.tokens, row.ids)],
                customdata=[[t, row.label, i] for t, i in zip(row.tokens, row.ids)],
                marker_color=[COLORS[k] for k in row.kinds],
            )
        fig.data[3].update(x=state.bpe_sizes, y=state.bpe_lengths)
        char, word = state.rows[0], state.rows[1]
        fig.data[5].update(
            x=[char.vocab_size, word.vocab_size], y=[len(char.tokens), len(word.tokens)], text=["字", "词"]
        )
        k = BPE_SIZES.index(state.vocab_size)
        fig.data[6].update(x=[state.bpe_sizes[k]], y=[state.bpe_lengths[k]])
        # 直接改坐标轴属性（比 update_xaxes(row=…, col=…) 快，实时更新时要紧）：左图 xaxis，右图 yaxis2
        fig.layout.xaxis.range = [-0.3, len(state.text) + 0.3]
        # 右图纵轴上方留出约三成空白给图例，图例就不会压住曲线
        top = max(state.bpe_lengths + [len(char.tokens), len(word.tokens)] + list(corpus_curve()[1]))
        fig.layout.yaxis2.range = [0, 1.55 * top]
        fig.layout.title = f"「{state.text}」的三种切分"

    def static_figure(self) -> go.Figure:
        states = [(f"V = {v}", self.figure(tokenizer_state(DEFAULT_TEXT, v))) for v in BPE_SIZES]
        return stepped_figure(states, prefix="BPE 词表大小 ", active=1)
