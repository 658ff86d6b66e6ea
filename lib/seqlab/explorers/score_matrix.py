"""第 1.5 节的探索器：O(S²) 的分数矩阵。

选长度 ``S`` 和是否加因果掩码，看一句话的 ``S × S`` 注意力权重、要打分的 query–key 配对数
（``S²`` 或 ``S(S+1)/2``），以及在你选的 batch × heads × layers × dtype 下分数矩阵要占多少内存。
超过内存预算的请求在分配之前就被拒绝，并说出估算值。

本模块还提供正文里两张一次性的图：实测的用时 / 峰值内存曲线（``scaling_figure``）和
“第 1 个位置的信息走到哪儿了”（``reach_figure``）。
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from seqlab import attention, corpus
from seqlab.errors import DEFAULT_BUDGET_BYTES, InputError, format_bytes
from seqlab.explorers import Explorer, register
from seqlab.figures import PALETTE, stepped_figure
from seqlab.runtime import single_thread

S_MAX = 256  # 实时面热力图的最大长度
STATIC_LENGTHS = (4, 8, 16, 32, 64)
STATIC_CONFIG = {"batch": 8, "heads": 12, "layers": 12, "dtype": "float32"}  # 静态面的内存曲线用这组配置
CURVE_LENGTHS = np.unique(np.logspace(0, 17, 69, base=2).round().astype(int))  # 1 … 131072
D_MODEL = 16


@lru_cache(maxsize=1)
def _text() -> str:
    """热力图用的“句子”：本书语料的前若干句连起来，取前 S 个字。"""
    return "".join(corpus.book_corpus()[:40])


@lru_cache(maxsize=1)
def _layer() -> tuple[dict[str, torch.Tensor], attention.SelfAttention]:
    """固定种子的随机字向量和一层随机初始化的自注意力：这里看的是矩阵的形状与掩码，不是语义。"""
    g = torch.Generator().manual_seed(5)
    chars = sorted(set(_text()))
    vectors = torch.randn(len(chars), D_MODEL, generator=g)
    with torch.random.fork_rng():
        torch.manual_seed(5)
        layer = attention.SelfAttention(D_MODEL)
    return dict(zip(chars, vectors)), layer


def sentence_weights(S: int, causal: bool) -> tuple[str, np.ndarray]:
    """前 ``S`` 个字的注意力权重 ``(S, S)``；被掩码挡住的格子是 NaN（图上留白）。"""
    text = _text()[:S]
    vectors, layer = _layer()
    X = torch.stack([vectors[ch] for ch in text])
    mask = attention.causal_mask(S) if causal else None
    with torch.no_grad(), single_thread():
        _, A = layer(X, mask)
    W = A.numpy().astype(np.float64)
    if causal:
        W[~mask.numpy()] = np.nan
    return text, W


@dataclass
class ScoreState:
    S: int
    causal: bool
    text: str
    weights: np.ndarray  # (S, S)
    pairs: int
    batch: int
    heads: int
    layers: int
    dtype: str
    bytes: int
    budget: float
    max_S: int  # 这组配置下不超预算的最大长度


def score_state(
    S: int,
    causal: bool,
    batch: int = 1,
    heads: int = 1,
    layers: int = 1,
    dtype: str = "float32",
    budget: float = DEFAULT_BUDGET_BYTES,
    max_S: int = S_MAX,
) -> ScoreState:
    """先检查输入、估算内存（超预算抛 ``MemoryBudgetError``），再算一句话的权重矩阵。"""
    estimate = attention.check_score_memory(
        S, batch=batch, heads=heads, layers=layers, dtype=dtype, budget=budget
    )
    if S > max_S:
        raise InputError(f"热力图最多画 S = {max_S}（{max_S}² 个格子），你选的是 S = {S}。")
    text, W = sentence_weights(S, bool(causal))
    return ScoreState(
        S,
        bool(causal),
        text,
        W,
        attention.pair_count(S, bool(causal)),
        batch,
        heads,
        layers,
        dtype,
        estimate,
        budget,
        attention.max_length_within(budget, batch=batch, heads=heads, layers=layers, dtype=dtype),
    )


def _heatmap(state: ScoreState, *, showscale: bool = True, colorbar_x: float = 1.02) -> go.Heatmap:
    """只画允许读取的格子：z、x、y 都是一维数组（每个配对一个元素），因果掩码下正好 S(S+1)/2 个。

    一维的数值数组在网页和控件里都以二进制传输，S = 256 时也很快。
    """
    i, j = np.nonzero(~np.isnan(state.weights))
    return go.Heatmap(
        z=state.weights[i, j].astype(np.float32),
        x=(j + 1).astype(np.int16),
        y=(i + 1).astype(np.int16),
        zmin=0.0,
        zmax=1.0,
        colorscale="Blues",
        showscale=showscale,
        colorbar={"title": "权重", "len": 0.8, "x": colorbar_x, "thickness": 14},
        hovertemplate="Query 位置 %{y} 读 Key 位置 %{x}<br>权重 = %{z:.3f}<extra></extra>",
    )


def _axis_ticks(state: ScoreState) -> dict:
    """S 不大时在坐标上写出每个位置的字；S 大时只标数字。"""
    if state.S <= 32:
        return {"tickmode": "array", "tickvals": list(range(1, state.S + 1)), "ticktext": list(state.text)}
    return {"tickmode": "auto", "tickvals": None, "ticktext": None}


def _memory_traces(state: ScoreState) -> list[go.Scatter]:
    curve = [
        attention.score_bytes(
            int(s), batch=state.batch, heads=state.heads, layers=state.layers, dtype=state.dtype
        )
        for s in CURVE_LENGTHS
    ]
    return [
        go.Scatter(
            x=CURVE_LENGTHS,
            y=curve,
            mode="lines",
            name="分数矩阵的内存",
            line={"color": PALETTE[0]},
            hovertemplate="S = %{x}<br>%{y:.3s}B<extra></extra>",
        ),
        go.Scatter(
            x=[CURVE_LENGTHS[0], CURVE_LENGTHS[-1]],
            y=[state.budget] * 2,
            mode="lines",
            name="内存预算",
            line={"color": PALETTE[3], "dash": "dash"},
            hoverinfo="skip",
        ),
        go.Scatter(
            x=[state.S],
            y=[state.bytes],
            mode="markers",
            name="当前 S",
            marker={"size": 11, "color": PALETTE[1]},
            hovertemplate="S = %{x}<br>%{y:.3s}B<extra></extra>",
        ),
    ]


def _title(state: ScoreState) -> str:
    mask = "因果掩码" if state.causal else "无掩码"
    formula = "S(S+1)/2" if state.causal else "S²"
    return f"S = {state.S}，{mask}：{formula} = {state.pairs:,} 个 query–key 配对"


def _memory_label(state: ScoreState) -> str:
    return f"{state.batch} × {state.heads} 头 × {state.layers} 层 × {state.dtype}"


def _figure_layout(fig: go.Figure, state: ScoreState) -> None:
    fig.update_xaxes(
        title_text="Key 位置 j（被读取）", constrain="domain", row=1, col=1, **_axis_ticks(state)
    )
    fig.update_yaxes(
        title_text="Query 位置 i（读取方）",
        autorange="reversed",
        scaleanchor="x",
        constrain="domain",
        row=1,
        col=1,
        **_axis_ticks(state),
    )
    fig.update_xaxes(type="log", title_text="序列长度 S", row=1, col=2)
    fig.update_yaxes(type="log", title_text="", exponentformat="SI", ticksuffix="B", row=1, col=2)


@register
class ScoreMatrixExplorer(Explorer):
    name = "score_matrix"
    title = "O(S²) 的分数矩阵：配对数与内存"
    examples: ClassVar[list[dict]] = [
        {"S": 16, "causal": False, "batch": 1, "heads": 8, "layers": 6, "dtype": "float32"},
        {"S": 64, "causal": True, "batch": 8, "heads": 12, "layers": 12, "dtype": "float16"},
        {"S": 256, "causal": False, "batch": 4, "heads": 8, "layers": 6, "dtype": "bfloat16"},
    ]

    def controls(self):
        style = {"description_width": "initial"}
        small = widgets.Layout(width="150px")
        return {
            "S": widgets.IntSlider(value=16, min=2, max=S_MAX, description="长度 S", continuous_update=False),
            "causal": widgets.ToggleButtons(options=[("无掩码", False), ("因果掩码", True)], value=False),
            "batch": widgets.IntText(value=1, description="batch", style=style, layout=small),
            "heads": widgets.IntText(value=8, description="头数", style=style, layout=small),
            "layers": widgets.IntText(value=6, description="层数", style=style, layout=small),
            "dtype": widgets.Dropdown(
                options=list(attention.DTYPE_BYTES),
                value="float32",
                description="dtype",
                layout=widgets.Layout(width="180px"),
            ),
        }

    def compute(self, S, causal, batch, heads, layers, dtype) -> ScoreState:
        return score_state(S, causal, batch, heads, layers, dtype)

    def caption(self, state: ScoreState) -> str:
        return (
            f"{_title(state)}。分数矩阵（{_memory_label(state)}）约 {format_bytes(state.bytes)}；"
            f"在 {format_bytes(state.budget)} 的预算内，这组配置最长只能到 S = {state.max_S:,}。"
        )

    def figure(self, state: ScoreState) -> go.Figure:
        fig = make_subplots(
            rows=1,
            cols=2,
            column_widths=[0.55, 0.45],
            horizontal_spacing=0.14,
            subplot_titles=(
                "一句话的注意力权重（随机初始化的层）",
                f"分数矩阵的内存：{_memory_label(state)}",
            ),
        )
        fig.add_trace(_heatmap(state, colorbar_x=0.47), row=1, col=1)
        for trace in _memory_traces(state):
            fig.add_trace(trace, row=1, col=2)
        _figure_layout(fig, state)
        fig.update_layout(title=_title(state), height=470, legend={"orientation": "h", "x": 0.58, "y": -0.12})
        return fig

    def update(self, fig: go.FigureWidget, state: ScoreState) -> None:
        """只替换数据数组和标题（不重建子图），S = 256 时也在几十毫秒内完成。"""
        new = _heatmap(state, colorbar_x=0.47)
        heat = fig.data[0]
        heat.z, heat.x, heat.y = new.z, new.x, new.y
        for old, trace in zip(fig.data[1:], _memory_traces(state)):
            old.x, old.y = trace.x, trace.y
        fig.layout.title.text = _title(state)
        fig.layout.xaxis.update(_axis_ticks(state))
        fig.layout.yaxis.update(_axis_ticks(state))
        fig.layout.annotations[1].text = f"分数矩阵的内存：{_memory_label(state)}"

    def static_figure(self) -> go.Figure:
        states = []
        for S in STATIC_LENGTHS:
            full = score_state(S, False, **STATIC_CONFIG)
            causal = score_state(S, True, **STATIC_CONFIG)
            fig = make_subplots(
                rows=1,
                cols=3,
                column_widths=[0.32, 0.32, 0.36],
                horizontal_spacing=0.09,
                subplot_titles=(
                    f"无掩码：S² = {full.pairs:,}",
                    f"因果掩码：S(S+1)/2 = {causal.pairs:,}",
                    f"内存：{_memory_label(full)}",
                ),
            )
            fig.add_trace(_heatmap(full, showscale=False), row=1, col=1)
            fig.add_trace(_heatmap(causal, colorbar_x=0.6), row=1, col=2)
            for trace in _memory_traces(full):
                fig.add_trace(trace, row=1, col=3)
            for col, anchor in ((1, "x"), (2, "x2")):
                fig.update_xaxes(
                    title_text="Key 位置 j", constrain="domain", row=1, col=col, **_axis_ticks(full)
                )
                fig.update_yaxes(
                    autorange="reversed",
                    scaleanchor=anchor,
                    constrain="domain",
                    row=1,
                    col=col,
                    **_axis_ticks(full),
                )
            fig.update_yaxes(title_text="Query 位置 i", row=1, col=1)
            fig.update_xaxes(type="log", title_text="序列长度 S", row=1, col=3)
            fig.update_yaxes(type="log", title_text="", exponentformat="SI", ticksuffix="B", row=1, col=3)
            fig.update_layout(
                title=f"S = {S}：分数矩阵约 {format_bytes(full.bytes)}（预算内最长 S = {full.max_S:,}）",
                height=440,
                showlegend=False,
            )
            states.append((f"S = {S}", fig))
        return stepped_figure(states, prefix="长度 ", active=2)


# ---------------------------------------------------------------- 正文里的两张图
def scaling_figure(result: attention.ScalingResult, fit_from: int = 0) -> go.Figure:
    """实测的用时与峰值内存（对数—对数坐标），图例里写上拟合的斜率。"""
    slopes = result.slopes(fit_from)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("前向用时（毫秒）", "峰值内存（PyTorch 分配）"),
        horizontal_spacing=0.12,
    )
    series = [
        (
            1,
            [t * 1e3 for t in result.attention_seconds],
            "自注意力·用时",
            slopes["attention_time"],
            PALETTE[0],
            "ms",
        ),
        (1, [t * 1e3 for t in result.rnn_seconds], "RNN·用时", slopes["rnn_time"], PALETTE[1], "ms"),
        (2, result.attention_peak, "自注意力·内存", slopes["attention_memory"], PALETTE[0], "B"),
        (2, result.rnn_peak, "RNN·内存", slopes["rnn_memory"], PALETTE[1], "B"),
    ]
    for col, ys, name, slope, color, unit in series:
        fig.add_trace(
            go.Scatter(
                x=result.lengths,
                y=ys,
                name=f"{name}（斜率 {slope:.2f}）",
                mode="lines+markers",
                line={"color": color, "dash": "solid" if col == 1 else "dot"},
                hovertemplate=f"S = %{{x}}<br>%{{y:.3s}}{unit}<extra>{name}</extra>",
            ),
            row=1,
            col=col,
        )
    fig.update_xaxes(type="log", title_text="序列长度 S", tickvals=result.lengths)
    fig.update_yaxes(type="log", exponentformat="SI")
    fig.update_yaxes(ticksuffix="B", row=1, col=2)
    first = result.lengths[fit_from]
    fig.update_layout(
        title=f"本机实测（d = {result.d_model}，batch 1，单线程；斜率用 S ≥ {first} 的点拟合）",
        height=430,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def reach_figure(rnn_reach: torch.Tensor, attention_reach: torch.Tensor) -> go.Figure:
    """第 1 个位置的输入影响到了哪些位置：左边 RNN 每轮只前进一格，右边一层自注意力一步到位。"""
    S = rnn_reach.shape[1]
    positions = list(range(1, S + 1))
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.6, 0.4],
        horizontal_spacing=0.12,
        subplot_titles=(f"RNN：k 轮传递之后（到位置 {S} 要 {S - 1} 轮）", "自注意力：一层之后"),
    )
    for col, reach, rows_title in ((1, rnn_reach, "轮"), (2, attention_reach, "层")):
        z = (reach > 1e-12).float().numpy()
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=positions,
                y=list(range(reach.shape[0])),
                customdata=reach.numpy(),
                colorscale=[[0, "rgba(150,150,150,0.15)"], [1, PALETTE[0]]],
                zmin=0,
                zmax=1,
                showscale=False,
                xgap=2,
                ygap=2,
                hovertemplate=f"%{{y}} {rows_title}之后，位置 %{{x}}<br>‖∂/∂x₁‖ = %{{customdata:.3g}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(title_text="位置 t", dtick=1, row=1, col=col)
        if col == 2:
            fig.update_yaxes(tickmode="array", tickvals=[0, 1], ticktext=["输入", "1 层"], row=1, col=col)
        fig.update_yaxes(
            title_text=f"跨位置传递的{rows_title}数", autorange="reversed", dtick=1, row=1, col=col
        )
    fig.update_layout(title="x₁ 的信息到了哪里（蓝色：该位置的表示已经依赖 x₁）", height=380)
    return fig
