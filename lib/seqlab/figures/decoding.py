"""第 1.6 节正文里的图：同样 S 个 token 的三种处理方式（Prefill、有 KV cache 的 Decode、每步重算的 Decode）。

数据来自 ``seqlab.measure`` 的度量函数，这里只画图。凡是计时的图，都同时画出重复测量的抖动
（中位数 + 四分位距）：用时会随机器忙闲变化，运算量是数出来的，没有抖动。
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.style import PALETTE
from seqlab.measure import PrefillDecode, Span

MODE_NAMES = {
    "prefill": "Prefill：一次前向处理全部位置",
    "decode_cache": "Decode（有 KV cache）：每步一个新 token",
    "decode_recompute": "Decode（无缓存）：每步整段重算",
}
SHORT_NAMES = {"prefill": "Prefill", "decode_cache": "Decode（有 KV cache）", "decode_recompute": "Decode（每步重算）"}
MODE_COLORS = {"prefill": PALETTE[2], "decode_cache": PALETTE[0], "decode_recompute": PALETTE[1]}

Spread = tuple[float, float, float]  # (中位数, 中位数 − 下四分位数, 上四分位数 − 中位数)


def spread(samples: list[float], scale: float = 1000.0) -> Spread:
    """``(中位数, 中位数 − 下四分位数, 上四分位数 − 中位数)``，乘上 ``scale``（默认换算成毫秒），给误差线用。

    误差线画四分位距（中间一半的读数落在其中），而不是最快到最慢：机器繁忙时，偶尔一次被别的程序
    打断就会慢上十几毫秒，最慢的那一次说明的是机器有多忙，而不是这段代码要多久。
    """
    med = statistics.median(samples)
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive") if len(samples) > 1 else (med, med, med)
    return med * scale, (med - q1) * scale, (q3 - med) * scale


def error_bars(spreads: list[Spread], thickness: float = 1.5) -> dict[str, Any]:
    """``spread`` 的结果画成不对称的误差线（plotly 的 ``error_y``）。"""
    return {"type": "data", "symmetric": False, "array": [hi for _, _, hi in spreads],
            "arrayminus": [lo for _, lo, _ in spreads], "thickness": thickness, "width": 5}


def _log_range(values: list[float]) -> list[float]:
    """对数坐标的范围：下边留出半个数量级，让最矮的柱子也看得见。"""
    return [math.log10(min(values)) - 0.5, math.log10(max(values)) + 0.15]


def _ratio_text(ratios: list[float], mode: str, small: str) -> list[str]:
    """柱子底部相对 Prefill 的倍数（Prefill 自己不写）；``small`` 是小于 9.95 倍时的格式。"""
    return ["" if mode == "prefill" else f"{q:{small}}×" if q < 9.95 else f"{q:.0f}×" for q in ratios]


def _time_bars(results: list[PrefillDecode], mode: str) -> go.Bar:
    """一种方式在各个 S 上的 CPU 时间：柱高是中位数，误差线是四分位距，悬停时显示最快与最慢。"""
    spreads = [spread(r.samples[mode]) for r in results]
    repeats = len(results[0].samples["prefill"])
    return go.Bar(
        x=[f"S = {r.S}" for r in results],
        y=[m for m, _, _ in spreads],
        error_y=error_bars(spreads),
        name=SHORT_NAMES[mode],
        legendgroup=mode,
        marker_color=MODE_COLORS[mode],
        text=_ratio_text([r.seconds[mode] / r.seconds["prefill"] for r in results], mode, ".0f"),
        customdata=[[1000 * min(r.samples[mode]), 1000 * max(r.samples[mode])] for r in results],
        hovertemplate=(f"{SHORT_NAMES[mode]}<br>%{{x}}：中位数 %{{y:.1f}} ms<br>"
                       f"{repeats} 次里最快 %{{customdata[0]:.1f}}、最慢 %{{customdata[1]:.1f}} ms"
                       "<extra></extra>"),
    )


def _flop_bars(results: list[PrefillDecode], mode: str) -> go.Bar:
    """一种方式在各个 S 上数出的运算量。"""
    return go.Bar(
        x=[f"S = {r.S}" for r in results],
        y=[r.flops[mode] for r in results],
        name=SHORT_NAMES[mode],
        legendgroup=mode,
        showlegend=False,
        marker_color=MODE_COLORS[mode],
        text=_ratio_text([r.flops[mode] / r.flops["prefill"] for r in results], mode, ".1f"),
        hovertemplate=f"{SHORT_NAMES[mode]}<br>%{{x}}：%{{y:.3s}} FLOP<extra></extra>",
    )


def prefill_decode_figure(results: list[PrefillDecode]) -> go.Figure:
    """同样 S 个 token 的三种处理方式：左边实测用时（柱高是中位数，误差线是四分位距），
    右边数出的矩阵乘法运算量。两边都是对数坐标；柱子底部的数字是相对 Prefill 的倍数。"""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.13, subplot_titles=("CPU 时间（本机实测）", "浮点运算数（计数）"))
    for mode in MODE_NAMES:
        fig.add_trace(_time_bars(results, mode), row=1, col=1)
        fig.add_trace(_flop_bars(results, mode), row=1, col=2)
    times = [1000 * t for r in results for v in r.samples.values() for t in v]
    flops = [float(f) for r in results for f in r.flops.values()]
    fig.update_traces(textposition="inside", insidetextanchor="start", textangle=0,
                      textfont={"color": "white", "size": 11})
    fig.update_yaxes(type="log", exponentformat="SI", dtick=1)
    fig.update_yaxes(title_text="CPU 时间（毫秒）", range=_log_range(times), row=1, col=1)
    fig.update_yaxes(title_text="FLOP", range=_log_range(flops), row=1, col=2)
    fig.update_layout(
        title=f"同样 S 个 token 的三种处理方式（单线程；柱高是 {len(results[0].samples['prefill'])} 次重复的中位数）",
        barmode="group",
        height=430,
        uniformtext={"minsize": 10, "mode": "show"},
        legend={"orientation": "h", "y": -0.14, "x": 0},
    )
    return fig


def _rectangles(spans: list[Span]) -> tuple[list[float | None], list[float | None]]:
    """把若干段画成闭合的矩形轮廓，段与段之间用 None 断开：一条轨迹画一层的全部矩形。"""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for s in spans:
        x0, x1, y0, y1 = s.start, max(s.end, s.start + 1e-3), s.first - 0.42, s.last + 0.42
        xs += [x0, x1, x1, x0, x0, None]
        ys += [y0, y0, y1, y1, y0, None]
    return xs, ys


def _layer_outline(spans: list[Span], layer: int, first_row: bool) -> go.Scatter:
    """一种方式里第 ``layer`` 层的全部调用：每次调用一个填色的矩形。"""
    xs, ys = _rectangles([s for s in spans if s.layer == layer])
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        fill="toself",
        line={"color": PALETTE[layer], "width": 1},
        name=f"第 {layer + 1} 层",
        legendgroup=f"layer{layer}",
        showlegend=first_row,
        hoveron="fills+points",
        hovertemplate="%{x:.2f} ms<extra>第 " + str(layer + 1) + " 层</extra>",
    )


def timeline_figure(timelines: dict[str, list[Span]], S: int) -> go.Figure:
    """三行时间线，共用同一根时间轴（毫秒）：纵轴是 token 位置，每个矩形是某一层的一次调用覆盖的位置。

    矩形越高，说明一次调用同时处理的位置越多（可以并行）；矩形一个接一个排开，说明只能串行。
    """
    modes = [m for m in MODE_NAMES if m in timelines]
    fig = make_subplots(
        rows=len(modes),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.09,
        subplot_titles=[
            f"{MODE_NAMES[m]}：共 {timelines[m][-1].end:.1f} ms，{len(timelines[m])} 次层调用" for m in modes
        ],
    )
    n_layers = 1 + max(s.layer for spans in timelines.values() for s in spans)
    for row, mode in enumerate(modes, start=1):
        for layer in range(n_layers):
            fig.add_trace(_layer_outline(timelines[mode], layer, row == 1), row=row, col=1)
        fig.update_yaxes(title_text="位置", range=[S - 0.5, -0.5], row=row, col=1)
    if "prefill" in modes:  # Prefill 的两个矩形很窄，用一个箭头指出来
        fig.add_annotation(
            x=timelines["prefill"][-1].end, y=S / 2, ax=60, ay=0, text=f"两层各调用一次，每次覆盖全部 {S} 个位置",
            showarrow=True, arrowhead=2, xanchor="left", row=1, col=1,
        )
    fig.update_xaxes(title_text="本线程的 CPU 时间（毫秒，本机实测；每段取 5 次运行里最快的一次）", row=len(modes), col=1)
    fig.update_layout(
        title=f"同样 {S} 个 token 的三种处理方式：哪些工作能并排做，哪些只能排队",
        height=230 * len(modes) + 140,
        legend={"orientation": "h", "y": -0.12, "x": 0},
    )
    return fig
