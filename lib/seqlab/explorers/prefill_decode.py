"""第 1.6 节正文里的图与表：Prefill 与 Decode 的实测用时与运算量、时间线、单步解码代价，以及表 1 的实测计数。

这里只有画图和排版，数据来自 ``seqlab.transformer`` 的度量函数；本模块不登记探索器。
凡是计时的图，都同时画出重复测量的抖动（中位数 + 最快到最慢的范围）：用时会随机器忙闲变化，
运算量是数出来的，没有抖动。
"""

from __future__ import annotations

import math
import statistics

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures import PALETTE
from seqlab.measure import PrefillDecode, Span

MODE_NAMES = {
    "prefill": "Prefill：一次前向处理全部位置",
    "decode_cache": "Decode（有 KV cache）：每步一个新 token",
    "decode_recompute": "Decode（无缓存）：每步整段重算",
}
SHORT_NAMES = {"prefill": "Prefill", "decode_cache": "Decode（有 KV cache）", "decode_recompute": "Decode（每步重算）"}
MODE_COLORS = {"prefill": PALETTE[2], "decode_cache": PALETTE[0], "decode_recompute": PALETTE[1]}


def _spread(samples: list[float], scale: float = 1000.0) -> tuple[float, float, float]:
    """``(中位数, 中位数 − 下四分位数, 上四分位数 − 中位数)``，乘上 ``scale``（默认换算成毫秒），给误差线用。

    误差线画四分位距（中间一半的读数落在其中），而不是最快到最慢：机器繁忙时，偶尔一次被别的程序
    打断就会慢上十几毫秒，最慢的那一次说明的是机器有多忙，而不是这段代码要多久。
    """
    med = statistics.median(samples)
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive") if len(samples) > 1 else (med, med, med)
    return med * scale, (med - q1) * scale, (q3 - med) * scale


def _error_bars(spread: list[tuple[float, float, float]], thickness: float = 1.5) -> dict:
    return {"type": "data", "symmetric": False, "array": [hi for _, _, hi in spread],
            "arrayminus": [lo for _, lo, _ in spread], "thickness": thickness, "width": 5}


def _log_range(values: list[float]) -> list[float]:
    """对数坐标的范围：下边留出半个数量级，让最矮的柱子也看得见。"""
    return [math.log10(min(values)) - 0.5, math.log10(max(values)) + 0.15]


def prefill_decode_figure(results: list[PrefillDecode]) -> go.Figure:
    """同样 S 个 token 的三种处理方式：左边实测用时（柱高是中位数，误差线是四分位距），
    右边数出的矩阵乘法运算量。两边都是对数坐标；柱子底部的数字是相对 Prefill 的倍数。"""
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.13,
        subplot_titles=("CPU 时间（本机实测）", "浮点运算数（计数）"),
    )
    groups = [f"S = {r.S}" for r in results]
    repeats = len(results[0].samples["prefill"])
    for mode in MODE_NAMES:
        spread = [_spread(r.samples[mode]) for r in results]
        ratios = [r.seconds[mode] / r.seconds["prefill"] for r in results]
        flop_ratios = [r.flops[mode] / r.flops["prefill"] for r in results]
        fig.add_trace(
            go.Bar(
                x=groups,
                y=[m for m, _, _ in spread],
                error_y=_error_bars(spread),
                name=SHORT_NAMES[mode],
                legendgroup=mode,
                marker_color=MODE_COLORS[mode],
                text=["" if mode == "prefill" else f"{q:.0f}×" for q in ratios],
                customdata=[[1000 * min(r.samples[mode]), 1000 * max(r.samples[mode])] for r in results],
                hovertemplate=(f"{SHORT_NAMES[mode]}<br>%{{x}}：中位数 %{{y:.1f}} ms<br>"
                               f"{repeats} 次里最快 %{{customdata[0]:.1f}}、最慢 %{{customdata[1]:.1f}} ms"
                               "<extra></extra>"),
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Bar(
                x=groups,
                y=[r.flops[mode] for r in results],
                name=SHORT_NAMES[mode],
                legendgroup=mode,
                showlegend=False,
                marker_color=MODE_COLORS[mode],
                text=["" if mode == "prefill" else f"{q:.1f}×" if q < 9.95 else f"{q:.0f}×" for q in flop_ratios],
                hovertemplate=f"{SHORT_NAMES[mode]}<br>%{{x}}：%{{y:.3s}} FLOP<extra></extra>",
            ),
            row=1,
            col=2,
        )
    times = [1000 * t for r in results for v in r.samples.values() for t in v]
    flops = [f for r in results for f in r.flops.values()]
    fig.update_traces(textposition="inside", insidetextanchor="start", textangle=0,
                      textfont={"color": "white", "size": 11})
    fig.update_yaxes(type="log", exponentformat="SI", dtick=1)
    fig.update_yaxes(title_text="CPU 时间（毫秒）", range=_log_range(times), row=1, col=1)
    fig.update_yaxes(title_text="FLOP", range=_log_range(flops), row=1, col=2)
    fig.update_layout(
        title=f"同样 S 个 token 的三种处理方式（单线程；柱高是 {repeats} 次重复的中位数）",
        barmode="group",
        height=430,
        uniformtext={"minsize": 10, "mode": "show"},
        legend={"orientation": "h", "y": -0.14, "x": 0},
    )
    return fig


def _rectangles(spans: list[Span]) -> tuple[list, list]:
    """把若干段画成闭合的矩形轮廓，段与段之间用 None 断开：一条轨迹画一层的全部矩形。"""
    xs, ys = [], []
    for s in spans:
        x0, x1, y0, y1 = s.start, max(s.end, s.start + 1e-3), s.first - 0.42, s.last + 0.42
        xs += [x0, x1, x1, x0, x0, None]
        ys += [y0, y0, y1, y1, y0, None]
    return xs, ys


def timeline_figure(timelines: dict[str, list[Span]], S: int) -> go.Figure:
    """三行时间线，共用同一根时间轴（毫秒）：纵轴是 token 位置，每个矩形是某一层的一次调用覆盖的位置。

    矩形越高，说明一次调用同时处理的位置越多（可以并行）；矩形一个接一个排开，说明只能串行。
    """
    modes = [m for m in MODE_NAMES if m in timelines]
    totals = {m: timelines[m][-1].end for m in modes}
    fig = make_subplots(
        rows=len(modes),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.09,
        subplot_titles=[
            f"{MODE_NAMES[m]}：共 {totals[m]:.1f} ms，{len(timelines[m])} 次层调用" for m in modes
        ],
    )
    n_layers = 1 + max(s.layer for spans in timelines.values() for s in spans)
    for row, mode in enumerate(modes, start=1):
        for layer in range(n_layers):
            xs, ys = _rectangles([s for s in timelines[mode] if s.layer == layer])
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    fill="toself",
                    line={"color": PALETTE[layer], "width": 1},
                    name=f"第 {layer + 1} 层",
                    legendgroup=f"layer{layer}",
                    showlegend=row == 1,
                    hoveron="fills+points",
                    hovertemplate="%{x:.2f} ms<extra>第 " + str(layer + 1) + " 层</extra>",
                ),
                row=row,
                col=1,
            )
        fig.update_yaxes(title_text="位置", range=[S - 0.5, -0.5], row=row, col=1)
    if "prefill" in modes:  # Prefill 的两个矩形很窄，用一个箭头指出来
        end = timelines["prefill"][-1].end
        fig.add_annotation(
            x=end, y=S / 2, ax=60, ay=0, text=f"两层各调用一次，每次覆盖全部 {S} 个位置",
            showarrow=True, arrowhead=2, xanchor="left", row=1, col=1,
        )
    fig.update_xaxes(title_text="本线程的 CPU 时间（毫秒，本机实测；每段取 5 次运行里最快的一次）", row=len(modes), col=1)
    fig.update_layout(
        title=f"同样 {S} 个 token 的三种处理方式：哪些工作能并排做，哪些只能排队",
        height=230 * len(modes) + 140,
        legend={"orientation": "h", "y": -0.12, "x": 0},
    )
    return fig


def decode_cost_figure(contexts: list[int], rows: list[dict[str, float]], d_model: int) -> go.Figure:
    """单步解码代价随上下文长度 T 的变化（对数坐标）：左边实测用时，右边数出的矩阵乘法运算量。"""
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("CPU 时间（本机实测）", "浮点运算数（计数）"),
    )
    series = [
        ("recompute", "无缓存：整段重算", PALETTE[1]),
        ("cache", "有 KV cache", PALETTE[0]),
    ]
    for key, name, color in series:
        spread = [_spread(r[f"samples_{key}"]) for r in rows]
        fig.add_trace(
            go.Scatter(
                x=contexts,
                y=[m for m, _, _ in spread],
                error_y=_error_bars(spread, 1.2),
                name=name,
                mode="lines+markers",
                line={"color": color},
                legendgroup=key,
                hovertemplate=f"T = %{{x}}<br>中位数 %{{y:.3s}} ms<extra>{name}</extra>",
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=contexts,
                y=[r[f"flops_{key}"] for r in rows],
                name=name,
                mode="lines+markers",
                line={"color": color},
                legendgroup=key,
                showlegend=False,
                hovertemplate=f"T = %{{x}}<br>%{{y:.3s}} FLOP<extra>{name}</extra>",
            ),
            row=1,
            col=2,
        )
    fig.update_xaxes(type="log", title_text="上下文长度 T", tickvals=contexts)
    fig.update_yaxes(type="log", exponentformat="SI", dtick=1)
    fig.update_yaxes(title_text="CPU 时间（毫秒）", row=1, col=1)
    fig.update_yaxes(title_text="FLOP", row=1, col=2)
    fig.update_layout(
        title=f"生成下一个 token 的代价随上下文长度 T 的变化（d = {d_model}，单线程）",
        height=420,
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def _html_table(header: list[str], rows: list[list[str]], note: str = "") -> str:
    """一张朴素的 HTML 表格（网站与 JupyterLab 都能直接显示；Markdown 表格在网站的输出里不渲染）。"""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    caption = f"<p>{note}</p>" if note else ""
    return f'<table class="seqlab-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{caption}'


def prefill_decode_table(results: list[PrefillDecode]) -> str:
    """实测结果排成一张 HTML 表，每行一种（S, 方式）：CPU 时间、抖动、相对 Prefill 的倍数、墙钟时间、运算量。"""
    header = ["S", "方式", "CPU 时间", "最快–最慢", "相对 Prefill", "墙钟时间", "运算量"]
    rows = []
    for r in results:
        for m in MODE_NAMES:
            ms = [t * 1000 for t in r.samples[m]]
            rows.append([
                str(r.S),
                SHORT_NAMES[m],
                f"{r.seconds[m] * 1000:.1f} ms",
                f"{min(ms):.1f}–{max(ms):.1f} ms",
                f"{r.seconds[m] / r.seconds['prefill']:.0f}×",
                f"{statistics.median(r.wall[m]) * 1000:.1f} ms",
                f"{r.flops[m] / 1e6:.0f}M",
            ])
    repeats = len(results[0].samples["prefill"])
    return _html_table(
        header,
        rows,
        f"CPU 时间与墙钟时间都是 {repeats} 次重复的中位数；墙钟时间还包含排队等 CPU 的时间，机器越忙偏得越多。"
        "运算量单位 M = 10⁶ 次浮点运算，是数出来的，每次都一样。",
    )


def table1_table(counts: dict[int, dict[str, dict[str, int]]], d: int, ns: tuple[int, ...] | None = None) -> str:
    """Vaswani 等（2017）表 1 的三列，公式旁边写上在几个长度 n（默认全部）上实测的计数（HTML 表）。"""
    ns = sorted(ns or counts)
    kinds = [
        ("自注意力", "self_attention", "O(n²·d)（不含投影）", "O(1)", "O(1)"),
        ("循环层（RNN）", "recurrent", "O(n·d²)", "O(n)", "O(n)"),
    ]
    head = "、".join(f"n = {n}" for n in ns)
    header = [
        "层的类型",
        "每层运算量",
        f"实测 FLOP：只数跨位置混合（{head}）",
        f"实测 FLOP：整层（{head}）",
        "串行步数",
        "实测最长依赖链",
        "最长路径",
        "实测 x₁→yₙ 的最短链",
    ]
    rows = []
    for name, key, cost, seq, path in kinds:
        mixing = " / ".join(f"{counts[n][key]['flops_mixing']:,}" for n in ns)
        layer = " / ".join(f"{counts[n][key]['flops_layer']:,}" for n in ns)
        depth = " / ".join(str(counts[n][key]["sequential"]) for n in ns)
        dist = " / ".join(str(counts[n][key]["path"]) for n in ns)
        rows.append([name, cost, mixing, layer, seq, depth, path, dist])
    return _html_table(
        header, rows, f"d = {d}；“实测”三列都是数出来的（运算次数、计算图里的运算个数），不是计时，没有抖动。"
    )


KINDS = (("self_attention", "自注意力", PALETTE[0]), ("recurrent", "循环层（RNN）", PALETTE[1]))


def table1_figure(counts: dict[int, dict[str, dict[str, int]]], d: int) -> go.Figure:
    """表 1 的三列画成三张图（双对数坐标：直线的斜率就是 n 的指数）。

    点是从库里的模型实际数出来的。第一张图按同一个口径比较两种层：实心点只数跨位置混合
    （虚线是公式 ``4n²d`` 与 ``2nd²``，在 ``n = d/2`` 处相交），空心点数整层（自注意力多了 ``8nd²`` 的投影，
    循环层多了 ``2nd²`` 的 ``W_x x_t``）。
    """
    ns = sorted(counts)
    fig = make_subplots(
        rows=1,
        cols=3,
        horizontal_spacing=0.09,
        subplot_titles=("每层运算量（FLOP）", "必须串行的运算数", "x₁ 到 yₙ 的最短依赖链"),
    )
    formulas = {"self_attention": ("4n²d", lambda n: 4 * n * n * d), "recurrent": ("2nd²", lambda n: 2 * n * d * d)}
    for key, name, color in KINDS:
        label, formula = formulas[key]
        fig.add_trace(
            go.Scatter(
                x=ns, y=[formula(n) for n in ns], mode="lines", line={"color": color, "dash": "dash", "width": 1.5},
                name=f"{name}：公式 {label}", legendgroup=key + "f",
                hovertemplate=f"n = %{{x}}<br>{label} = %{{y:,}}<extra></extra>",
            ),
            row=1, col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=ns, y=[counts[n][key]["flops_layer"] for n in ns], mode="markers",
                marker={"color": color, "size": 8, "symbol": "circle-open", "line": {"width": 2}},
                name=f"{name}：整层（实测）", legendgroup=key + "l",
                hovertemplate=f"n = %{{x}}<br>整层 %{{y:,}}<extra>{name}</extra>",
            ),
            row=1, col=1,
        )
        for col, field in enumerate(("flops_mixing", "sequential", "path"), start=1):
            fig.add_trace(
                go.Scatter(
                    x=ns, y=[counts[n][key][field] for n in ns], mode="markers" if col == 1 else "lines+markers",
                    marker={"color": color, "size": 8}, line={"color": color},
                    name=f"{name}：只数混合（实测）", legendgroup=key, showlegend=col == 1,
                    hovertemplate=f"n = %{{x}}<br>实测 %{{y:,}}<extra>{name}</extra>",
                ),
                row=1, col=col,
            )
    fig.add_vline(x=d / 2, line={"color": "#888888", "dash": "dot", "width": 1}, row=1, col=1)
    fig.add_annotation(x=math.log10(d / 2), y=1, yref="y domain", text=f"n = d/2 = {d // 2}", showarrow=False,
                       xanchor="right", yanchor="top", xshift=-4, row=1, col=1)
    for col, field in ((2, "sequential"), (3, "path")):  # 在两条线的右端标上表 1 里的阶
        for key, shift in (("self_attention", -12), ("recurrent", 12)):
            values = {counts[n][key][field] for n in ns}
            label = f"O(1)：恒为 {values.pop()}" if len(values) == 1 else "O(n)"
            fig.add_annotation(x=math.log10(ns[-1]), y=math.log10(counts[ns[-1]][key][field]), text=label,
                               showarrow=False, xanchor="right", yshift=shift, row=1, col=col)
    fig.update_xaxes(type="log", title_text="序列长度 n", tickvals=ns)
    fig.update_yaxes(type="log", exponentformat="SI", dtick=1)
    fig.update_layout(
        title=f"表 1 的三项：公式与实测（d = {d}，双对数坐标，斜率即 n 的指数）",
        height=510,
        # 图例横排在整张图的最下面（不碰三个子图的横轴标题），为它留出三行的高度
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
        margin={"b": 140},
    )
    return fig
