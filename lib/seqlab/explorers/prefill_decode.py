"""第 1.6 节正文里的图与表：Prefill 与 Decode 的实测时间线、单步解码代价，以及表 1 的实测计数。

这里只有画图和排版，数据来自 ``seqlab.transformer`` 的度量函数；本模块不登记探索器。
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures import PALETTE
from seqlab.transformer import PrefillDecode, Span

MODE_NAMES = {
    "prefill": "Prefill：一次前向处理全部位置",
    "decode_cache": "Decode（有 KV cache）：每步一个新 token",
    "decode_recompute": "Decode（无缓存）：每步整段重算",
}


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
    fig.update_xaxes(title_text="时间（毫秒，本机实测）", row=len(modes), col=1)
    fig.update_layout(
        title=f"同样 {S} 个 token 的三种处理方式：哪些工作能并排做，哪些只能排队",
        height=250 * len(modes) + 140,
        legend={"orientation": "h", "y": -0.12, "x": 0},
    )
    return fig


def decode_cost_figure(contexts: list[int], rows: list[dict[str, float]], d_model: int) -> go.Figure:
    """单步解码代价随上下文长度 T 的变化（对数坐标）：左边实测用时，右边数出的矩阵乘法运算量。"""
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.12,
        subplot_titles=("生成下一个 token 的用时（实测）", "生成下一个 token 的浮点运算数"),
    )
    series = [
        ("recompute", "无缓存：整段重算", PALETTE[1]),
        ("cache", "有 KV cache", PALETTE[0]),
    ]
    for key, name, color in series:
        for col, (field, scale, unit) in enumerate(
            [(f"seconds_{key}", 1000.0, "ms"), (f"flops_{key}", 1.0, "FLOP")], start=1
        ):
            fig.add_trace(
                go.Scatter(
                    x=contexts,
                    y=[r[field] * scale for r in rows],
                    name=name,
                    mode="lines+markers",
                    line={"color": color},
                    legendgroup=key,
                    showlegend=col == 1,
                    hovertemplate=f"T = %{{x}}<br>%{{y:.3s}} {unit}<extra>{name}</extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(type="log", title_text="上下文长度 T")
    fig.update_yaxes(type="log", exponentformat="SI")
    fig.update_yaxes(title_text="毫秒", row=1, col=1)
    fig.update_yaxes(title_text="FLOP", row=1, col=2)
    fig.update_layout(
        title=f"Decode 一步的代价（d = {d_model}，单线程）",
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
    """实测结果排成一张 HTML 表：用时、相对 Prefill 的倍数、运算量。"""
    header = ["S", "Prefill", "Decode（KV cache）", "Decode（每步重算）", "运算量：Prefill / cache / 重算"]
    rows = []
    for r in results:
        p = r.seconds["prefill"]
        cells = [
            f"{r.seconds[m] * 1000:.1f} ms（{r.seconds[m] / p:.0f}×）"
            for m in ("decode_cache", "decode_recompute")
        ]
        flops = " / ".join(
            f"{r.flops[m] / 1e6:.0f}M" for m in ("prefill", "decode_cache", "decode_recompute")
        )
        rows.append([str(r.S), f"{p * 1000:.1f} ms", *cells, flops])
    return _html_table(header, rows, "括号里是相对 Prefill 用时的倍数；运算量单位 M = 10⁶ 次浮点运算。")


def table1_table(counts: dict[int, dict[str, dict[str, int]]], d: int) -> str:
    """Vaswani 等（2017）表 1 的三列，公式旁边写上在几个长度 n 上实测的计数（HTML 表）。"""
    ns = sorted(counts)
    kinds = [
        ("自注意力", "self_attention", "O(n²·d)", "O(1)", "O(1)"),
        ("循环层（RNN）", "recurrent", "O(n·d²)", "O(n)", "O(n)"),
    ]
    head = "、".join(f"n = {n}" for n in ns)
    header = [
        "层的类型",
        "每层运算量",
        f"实测 FLOP（{head}）",
        "串行步数",
        "实测最长依赖链",
        "最长路径",
        "实测 x₁→yₙ 的最短链",
    ]
    rows = []
    for name, key, cost, seq, path in kinds:
        flops = " / ".join(f"{counts[n][key]['flops']:,}" for n in ns)
        depth = " / ".join(str(counts[n][key]["sequential"]) for n in ns)
        dist = " / ".join(str(counts[n][key]["path"]) for n in ns)
        rows.append([name, cost, flops, seq, depth, path, dist])
    return _html_table(header, rows, f"d = {d}；后面两列“实测”是计算图里的运算个数。")
