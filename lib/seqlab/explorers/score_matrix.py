"""第 1.5 节的探索器：O(S²) 的分数矩阵。

选长度 ``S`` 和是否加因果掩码，看一句话的 ``S × S`` 分数矩阵 ``Q Kᵀ / √d_k``、要打分的 query–key
配对数（``S²`` 或 ``S(S+1)/2``），以及在你选的 batch × heads × layers × dtype 下分数矩阵要占多少内存。
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
from seqlab.errors import DEFAULT_BUDGET_BYTES, InputError, MemoryBudgetError, format_bytes
from seqlab.explorers import Explorer, register
from seqlab.figures import PALETTE, stepped_figure
from seqlab.measure import ScalingResult
from seqlab.runtime import single_thread

S_MAX = 256  # 实时面热力图的最大长度
SENTENCE = "奖杯放不进这个箱子，因为它太大了。"  # 前 16 个字正好是一句完整的话
STATIC_LENGTHS = (4, 8, 16, 32, 64, 128, 512)  # 最后一个超出预算：静态面也演示“拒绝并报出估算值”
STATIC_CONFIG = {"batch": 8, "heads": 12, "layers": 12, "dtype": "float32"}  # 静态面“请求”的配置
# 静态面内存图里作对照的另外两组配置：只差一个常数倍，在对数坐标上是平行线
REFERENCE_CONFIGS = (
    {"batch": 8, "heads": 12, "layers": 12, "dtype": "float16"},
    {"batch": 1, "heads": 1, "layers": 1, "dtype": "float32"},
)
CURVE_LENGTHS = np.unique(np.logspace(0, 17, 69, base=2).round().astype(int))  # 1 … 131072
D_MODEL = 16
SCORE_RANGE = 3.0  # 颜色条的范围 ±3：随机层的分数标准差约为 1
CHAR_TICKS_UP_TO = 16  # S 不超过这个数时，坐标轴上写出每个字
SCORE_COLORS = "RdBu_r"


@lru_cache(maxsize=1)
def _text() -> str:
    """热力图用的文字：先是正文的例句，再接本书语料，取前 S 个字。"""
    return SENTENCE + "".join(corpus.book_corpus()[:40])


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


def sentence_scores(S: int, causal: bool) -> tuple[str, np.ndarray]:
    """前 ``S`` 个字的分数矩阵 ``Q Kᵀ / √d_k``，形状 ``(S, S)``；被掩码挡住的格子是 NaN（图上留白）。"""
    text = _text()[:S]
    vectors, layer = _layer()
    X = torch.stack([vectors[ch] for ch in text])
    with torch.no_grad(), single_thread():
        Q, K = X @ layer.W_Q, X @ layer.W_K
        scores = Q @ K.T / np.sqrt(Q.shape[-1])
    W = scores.numpy().astype(np.float32)
    if causal:
        W[~attention.causal_mask(S).numpy()] = np.nan
    return text, W


@dataclass
class ScoreState:
    S: int
    causal: bool
    text: str
    scores: np.ndarray  # (S, S)，挡住的格子是 NaN
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
    """先检查输入、估算内存（超预算抛 ``MemoryBudgetError``），再算一句话的分数矩阵。"""
    estimate = attention.check_score_memory(
        S, batch=batch, heads=heads, layers=layers, dtype=dtype, budget=budget
    )
    if S > max_S:
        raise InputError(f"热力图最多画 S = {max_S}（{max_S}² 个格子），你选的是 S = {S}。")
    text, W = sentence_scores(S, bool(causal))
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


# ---------------------------------------------------------------- 图的部件
def _colorbar(x: float, y: float, length: float) -> dict:
    return {
        "title": {"text": "分数", "side": "top"},
        "x": x,
        "y": y,
        "len": length,
        "thickness": 12,
        "yanchor": "middle",
        "tickvals": [-3, -2, -1, 0, 1, 2, 3],
    }


def _heatmap_1d(state: ScoreState, *, xaxis="x", yaxis="y", colorbar: dict | None = None) -> go.Heatmap:
    """实时面用：只画允许读取的格子，z、x、y 都是一维数组（每个配对一个元素）。

    一维的数值数组在控件里以二进制传输，S = 256 时也很快；因果掩码下正好 S(S+1)/2 个元素。
    """
    i, j = np.nonzero(~np.isnan(state.scores))
    return go.Heatmap(
        z=state.scores[i, j],
        x=(j + 1).astype(np.int16),
        y=(i + 1).astype(np.int16),
        xaxis=xaxis,
        yaxis=yaxis,
        **_heat_style(colorbar),
    )


def _heatmap_2d(state: ScoreState, *, xaxis: str, yaxis: str, colorbar: dict | None = None) -> go.Heatmap:
    """静态面用：二维 float32 数组（挡住的格子是 NaN），网页里以二进制保存，体积最小。"""
    return go.Heatmap(
        z=state.scores, x0=1, dx=1, y0=1, dy=1, xaxis=xaxis, yaxis=yaxis, **_heat_style(colorbar)
    )


def _heat_style(colorbar: dict | None) -> dict:
    return {
        "zmin": -SCORE_RANGE,
        "zmax": SCORE_RANGE,
        "zmid": 0.0,
        "colorscale": SCORE_COLORS,
        "showscale": colorbar is not None,
        "colorbar": colorbar or {},
        "showlegend": False,
        "hovertemplate": "Query 位置 %{y} 读 Key 位置 %{x}<br>分数 = %{z:.2f}<extra></extra>",
    }


def _axis_ticks(state: ScoreState) -> dict:
    """S 不大时在坐标上写出每个位置的字；S 大时只标数字。"""
    if state.S <= CHAR_TICKS_UP_TO:
        return {
            "tickmode": "array",
            "tickvals": list(range(1, state.S + 1)),
            "ticktext": list(state.text),
            "tickangle": 0,
        }
    return {"tickmode": "auto", "tickvals": None, "ticktext": None, "tickangle": 0}


def _byte_ticks(lo: float, hi: float) -> dict:
    """对数坐标上的字节刻度：取 2 的整数次幂，写成 KiB、MiB、GiB……（与正文的单位一致）。"""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    ks = [k for k in range(0, 61) if lo <= 2**k <= hi]
    step = max(1, -(-len(ks) // 6))  # 最多六个刻度
    if step > 1 and step % 10:  # 刻度优先落在 1 KiB、1 MiB 这样整齐的地方
        step = 10 if step > 5 else (5 if step > 2 else 2)
    ks = [k for k in ks if k % step == 0] or ks[:1]
    return {"tickvals": [2**k for k in ks], "ticktext": [f"{2 ** (k % 10)} {units[k // 10]}" for k in ks]}


def _memory_curve(config: dict) -> list[int]:
    return [attention.score_bytes(int(s), **config) for s in CURVE_LENGTHS]


def _config_label(config: dict) -> str:
    return f"{config['batch']} × {config['heads']} 头 × {config['layers']} 层 × {config['dtype']}"


def _memory_traces(
    state: ScoreState, *, xaxis="x2", yaxis="y2", references: bool = False
) -> list[go.Scatter]:
    """内存曲线：预算以上的“拒绝区”、预算线、所选配置的曲线与当前 S 的点（可选：两条对照曲线）。"""
    config = {"batch": state.batch, "heads": state.heads, "layers": state.layers, "dtype": state.dtype}
    x_end = int(CURVE_LENGTHS[-1])
    top = 2.0**60
    traces = [
        go.Scatter(
            x=[1, x_end, x_end, 1],
            y=[state.budget, state.budget, top, top],
            fill="toself",
            mode="none",
            fillcolor="rgba(181,72,93,0.12)",
            name="超出预算：拒绝",
            hoverinfo="skip",
            xaxis=xaxis,
            yaxis=yaxis,
        ),
        go.Scatter(
            x=[1, x_end],
            y=[state.budget] * 2,
            mode="lines",
            name=f"预算 {format_bytes(state.budget)}",
            line={"color": PALETTE[3], "dash": "dash", "width": 1.5},
            hoverinfo="skip",
            xaxis=xaxis,
            yaxis=yaxis,
        ),
    ]
    if references:
        for ref, dash in zip(REFERENCE_CONFIGS, ("dot", "dashdot")):
            traces.append(
                go.Scatter(
                    x=CURVE_LENGTHS,
                    y=_memory_curve(ref),
                    mode="lines",
                    name=_config_label(ref),
                    line={"color": "rgba(128,128,128,0.9)", "dash": dash, "width": 1.5},
                    hovertemplate="S = %{x}<br>%{y:.3s}B<extra>" + _config_label(ref) + "</extra>",
                    xaxis=xaxis,
                    yaxis=yaxis,
                )
            )
    over = state.bytes > state.budget
    traces += [
        go.Scatter(
            x=CURVE_LENGTHS,
            y=_memory_curve(config),
            mode="lines",
            name=_config_label(config),
            line={"color": PALETTE[0], "width": 2.5},
            hovertemplate="S = %{x}<br>%{y:.3s}B<extra>" + _config_label(config) + "</extra>",
            xaxis=xaxis,
            yaxis=yaxis,
        ),
        go.Scatter(
            x=[state.S],
            y=[state.bytes],
            mode="markers",
            name=f"S = {state.S}：{format_bytes(state.bytes)}",
            marker={
                "size": 12,
                "color": PALETTE[3] if over else PALETTE[1],
                "symbol": "x" if over else "circle",
                "line": {"width": 1, "color": "white"},
            },
            hovertemplate="S = %{x}<br>%{y:.3s}B<extra></extra>",
            xaxis=xaxis,
            yaxis=yaxis,
        ),
    ]
    return traces


def _memory_axes(
    layout: dict, xname: str, yname: str, domain_x, domain_y, anchor_x: str, anchor_y: str
) -> None:
    layout[xname] = {
        "type": "log",
        "domain": domain_x,
        "anchor": anchor_y,
        "range": [0, np.log10(float(CURVE_LENGTHS[-1]))],
        "title": {"text": "序列长度 S", "standoff": 4},
        "dtick": 1,
        "exponentformat": "none",
    }
    layout[yname] = {
        "type": "log",
        "domain": domain_y,
        "anchor": anchor_x,
        "range": [0, np.log10(2.0**52)],
        "title": {"text": "分数矩阵的内存"},
        **_byte_ticks(2**10, 2**52),
    }


def _pairs_title(state: ScoreState) -> str:
    mask = "因果掩码" if state.causal else "无掩码"
    formula = "S(S+1)/2" if state.causal else "S²"
    return f"S = {state.S}，{mask}：{formula} = {state.pairs:,} 个 query–key 配对"


# ---------------------------------------------------------------- 探索器
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
            f"{_pairs_title(state)}。分数矩阵（{_config_label(vars(state))}）约 {format_bytes(state.bytes)}；"
            f"在 {format_bytes(state.budget)} 的预算内，这组配置最长只能到 S = {state.max_S:,}。"
        )

    def figure(self, state: ScoreState) -> go.Figure:
        """实时面：左边是所选掩码下的分数矩阵，右边是所选配置的内存曲线。"""
        fig = go.Figure([_heatmap_1d(state, colorbar=_colorbar(0.455, 0.5, 0.8)), *_memory_traces(state)])
        layout = {
            "xaxis": {
                "domain": [0.0, 0.43],
                "anchor": "y",
                "constrain": "domain",
                "side": "bottom",
                "title": {"text": "Key 位置 j（被读取）"},
                **_axis_ticks(state),
            },
            "yaxis": {
                "domain": [0.0, 1.0],
                "anchor": "x",
                "autorange": "reversed",
                "scaleanchor": "x",
                "constrain": "domain",
                "title": {"text": "Query 位置 i（读取方）"},
                **_axis_ticks(state),
            },
        }
        # 右图从 0.70 开始：左图的色条（x = 0.455，连同刻度）和右图的纵轴标题之间留出空隙，互不重叠
        _memory_axes(layout, "xaxis2", "yaxis2", [0.70, 1.0], [0.0, 1.0], "x2", "y2")
        fig.update_layout(
            layout,
            title={"text": _pairs_title(state)},
            height=480,
            margin={"l": 70, "r": 20, "t": 70, "b": 60},
            legend={
                "x": 0.71,
                "y": 1.0,
                "xanchor": "left",
                "yanchor": "top",
                "bgcolor": "rgba(128,128,128,0.08)",
                "font": {"size": 11},
            },
        )
        return fig

    def update(self, fig: go.Figure, state: ScoreState) -> None:
        """只替换数据数组、标题与刻度（不重建图），S = 256 时也在几十毫秒内完成。"""
        new = _heatmap_1d(state)
        heat = fig.data[0]
        heat.z, heat.x, heat.y = new.z, new.x, new.y
        for old, trace in zip(fig.data[1:], _memory_traces(state)):
            old.update(x=trace.x, y=trace.y, name=trace.name, marker=trace.marker, hovertemplate=trace.hovertemplate)
        fig.layout.title.text = _pairs_title(state)
        fig.layout.xaxis.update(_axis_ticks(state))
        fig.layout.yaxis.update(_axis_ticks(state))

    def static_figure(self) -> go.Figure:
        """静态面：一个滑块选 S。上面并排两块分数矩阵（无掩码 / 因果掩码），下面是内存曲线；
        最后一档超出预算，图里只剩拒绝的说明和估算值。"""
        return stepped_figure(
            [(f"S = {S}", _static_state(S)) for S in STATIC_LENGTHS], prefix="长度 ", active=2
        )


HEAT_Y = [0.53, 1.0]  # 静态面上一行（两块热力图）的纵向范围
MEM_Y = [0.0, 0.36]  # 下一行（内存曲线）


def _static_state(S: int) -> go.Figure:
    config_label = _config_label(STATIC_CONFIG)
    axes = {
        "xaxis": {
            "domain": [0.0, 0.42],
            "anchor": "y",
            "constrain": "domain",
            "title": {"text": "Key 位置 j"},
        },
        "yaxis": {
            "domain": HEAT_Y,
            "anchor": "x",
            "autorange": "reversed",
            "scaleanchor": "x",
            "constrain": "domain",
            "title": {"text": "Query 位置 i"},
        },
        "xaxis2": {
            "domain": [0.5, 0.92],
            "anchor": "y2",
            "constrain": "domain",
            "title": {"text": "Key 位置 j"},
        },
        "yaxis2": {
            "domain": HEAT_Y,
            "anchor": "x2",
            "autorange": "reversed",
            "scaleanchor": "x2",
            "constrain": "domain",
        },
    }
    _memory_axes(axes, "xaxis3", "yaxis3", [0.0, 0.6], MEM_Y, "x3", "y3")

    def heading(text: str, x: float, y: float, **kw) -> dict:
        return {
            "text": text,
            "x": x,
            "y": y,
            "xref": "paper",
            "yref": "paper",
            "showarrow": False,
            "xanchor": "center",
            "yanchor": "bottom",
            "font": {"size": 13},
            **kw,
        }

    try:
        full = score_state(S, False, **STATIC_CONFIG)
        causal = score_state(S, True, **STATIC_CONFIG)
    except MemoryBudgetError as err:
        estimate = attention.score_bytes(S, **STATIC_CONFIG)
        state = ScoreState(
            S,
            False,
            "",
            np.zeros((0, 0)),
            attention.pair_count(S),
            budget=err.budget_bytes,
            bytes=estimate,
            max_S=attention.max_length_within(err.budget_bytes, **STATIC_CONFIG),
            **STATIC_CONFIG,
        )
        fig = go.Figure(_memory_traces(state, xaxis="x3", yaxis="y3", references=True))
        for name in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            axes[name]["visible"] = False
        notes = [
            heading(
                f"<b>请求被拒绝</b>：S = {S} 时，{config_label} 的分数矩阵<br>"
                f"估计要 <b>{format_bytes(estimate)}</b>，超过 {format_bytes(err.budget_bytes)} 的预算。<br>"
                "探索器在分配内存之前就停下，只报告估算值；<br>"
                f"这组配置在预算内最长只能到 S = {state.max_S:,}。",
                0.5,
                0.62,
                font={"size": 14},
                align="center",
                bordercolor=PALETTE[3],
                borderwidth=1.5,
                borderpad=10,
            ),
        ]
        title = f"S = {S}：{S * S:,} 个配对，分数矩阵约 {format_bytes(estimate)}，超出预算"
    else:
        state = full
        fig = go.Figure(
            [
                _heatmap_2d(full, xaxis="x", yaxis="y"),
                _heatmap_2d(causal, xaxis="x2", yaxis="y2", colorbar=_colorbar(0.95, 0.75, 0.5)),
                *_memory_traces(full, xaxis="x3", yaxis="y3", references=True),
            ]
        )
        for name in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
            axes[name].update(_axis_ticks(full), visible=True)
        notes = [
            heading(f"无掩码：S² = {full.pairs:,} 个配对", 0.21, 1.0, yshift=4),
            heading(f"因果掩码：S(S+1)/2 = {causal.pairs:,} 个", 0.71, 1.0, yshift=4),
        ]
        title = f"S = {S}：{config_label} 的分数矩阵约 {format_bytes(full.bytes)}"
    fig.update_layout(
        axes,
        title={"text": title, "y": 0.985, "yanchor": "top"},
        annotations=notes,
        height=760,
        margin={"l": 70, "r": 20, "t": 80, "b": 40},
        legend={
            "x": 0.64,
            "y": MEM_Y[1],
            "xanchor": "left",
            "yanchor": "top",
            "bgcolor": "rgba(128,128,128,0.08)",
            "font": {"size": 11},
        },
    )
    return fig


# ---------------------------------------------------------------- 正文里的两张图
def scaling_figure(result: ScalingResult, fit_from: int = 0) -> go.Figure:
    """实测的用时与峰值内存（对数—对数坐标），图例里写上拟合的斜率。"""
    slopes = result.slopes(fit_from)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("前向计算的 CPU 时间", "峰值内存（PyTorch 分配）"),
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
    fig.update_yaxes(type="log", dtick=1, exponentformat="none", title_text="毫秒", row=1, col=1)
    peaks = result.attention_peak + result.rnn_peak
    fig.update_yaxes(type="log", row=1, col=2, **_byte_ticks(min(peaks) / 2, max(peaks) * 2))
    first = result.lengths[fit_from]
    fig.update_layout(
        title=f"本机实测（d = {result.d_model}，batch 1，单线程；斜率用 S ≥ {first} 的点拟合）",
        height=440,
        margin={"t": 90},
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
