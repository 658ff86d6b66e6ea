"""第 1.2 节“三种切分”的图：上面是三行切分结果，下面是这段文字的 token 数与词表大小。"""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.style import PALETTE
from seqlab.states.tokenizer import TokenizerState
from seqlab.tokenize import BPE_SIZES, UNK

# 颜色：相邻 token 交替两种蓝绿色；不是整字的字节碎片用橙色；<unk> 用红色。
COLORS = {"even": PALETTE[0], "odd": PALETTE[6], "partial": PALETTE[1], "unk": PALETTE[3]}


def caption(state: TokenizerState) -> str:
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


def _add_cut_bars(fig: go.Figure) -> None:
    """上图：三行切分各一条横向条形轨迹（轨迹 0–2），数据由 ``patch`` 填入。"""
    for _ in range(3):
        fig.add_trace(
            go.Bar(
                orientation="h",
                textposition="inside",
                insidetextanchor="middle",
                textangle=0,
                textfont={"color": "white", "size": 13},
                marker_line={"color": "white", "width": 1},
                hovertemplate="%{customdata[1]}<br>token：%{customdata[0]}<br>ID = %{customdata[2]}<extra></extra>",
                showlegend=False,
            ),
            row=1,
            col=1,
        )


def _add_length_curves(fig: go.Figure, state: TokenizerState) -> None:
    """下图：这段文字的 BPE 曲线（轨迹 3）、语料平均（4，与文字无关，只在这里画一次）、字 / 词（5）、当前 BPE（6）。"""
    length = {"row": 2, "col": 1}
    fig.add_trace(
        go.Scatter(
            mode="lines+markers",
            name="BPE：这段文字",
            line={"color": PALETTE[1]},
            hovertemplate="词表 %{x}：%{y} 个 token<extra></extra>",
        ),
        **length,
    )
    fig.add_trace(
        go.Scatter(
            x=state.bpe_sizes,
            y=state.corpus_lengths,
            mode="lines",
            name="BPE：语料平均每句",
            line={"color": PALETTE[1], "dash": "dot"},
            hovertemplate="词表 %{x}：平均 %{y:.1f} 个 token<extra></extra>",
        ),
        **length,
    )
    fig.add_trace(
        go.Scatter(
            mode="markers+text",
            name="字 / 词",
            textposition="top center",
            marker={"size": 11, "color": PALETTE[0], "symbol": "diamond"},
            hovertemplate="%{text}：词表 %{x}，%{y} 个 token<extra></extra>",
        ),
        **length,
    )
    fig.add_trace(
        go.Scatter(
            mode="markers",
            name="当前 BPE",
            showlegend=False,
            marker={"size": 18, "color": "rgba(0,0,0,0)", "line": {"color": PALETTE[3], "width": 2}},
            hoverinfo="skip",
        ),
        **length,
    )


def render(state: TokenizerState) -> go.Figure:
    # 上下两张子图：上面是切分结果（需要整个宽度放下每个 token），下面是 token 数与词表大小
    fig = make_subplots(
        rows=2,
        cols=1,
        row_heights=[0.55, 0.45],
        vertical_spacing=0.2,
        subplot_titles=("切分结果（小字是 ID；条太窄时悬停查看）", "这段文字的 token 数与词表大小"),
    )
    _add_cut_bars(fig)
    _add_length_curves(fig, state)
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
    patch(fig, state, state)
    return fig


def patch(fig: go.Figure, old: TokenizerState, new: TokenizerState) -> None:
    """换上 ``new`` 的三行切分、两条与文字有关的曲线、坐标范围和标题（图的骨架不重建）。"""
    for trace, row in zip(fig.data[:3], new.rows):
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
    fig.data[3].update(x=new.bpe_sizes, y=new.bpe_lengths)
    char, word = new.rows[0], new.rows[1]
    fig.data[5].update(x=[char.vocab_size, word.vocab_size], y=[len(char.tokens), len(word.tokens)], text=["字", "词"])
    k = BPE_SIZES.index(new.vocab_size)
    fig.data[6].update(x=[new.bpe_sizes[k]], y=[new.bpe_lengths[k]])
    # 直接改坐标轴属性（比 update_xaxes(row=…, col=…) 快，实时更新时要紧）：上图 xaxis，下图 yaxis2
    fig.layout.xaxis.range = [-0.3, len(new.text) + 0.3]
    # 下图纵轴上方留出约三成空白给图例，图例就不会压住曲线
    top = max([*new.bpe_lengths, len(char.tokens), len(word.tokens), *new.corpus_lengths])
    fig.layout.yaxis2.range = [0, 1.55 * top]
    fig.layout.title = f"「{new.text}」的三种切分"
