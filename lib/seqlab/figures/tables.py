"""正文里的 HTML 表格：第 1.6 节 Prefill 与 Decode 的实测、表 1 的实测计数、各模型的测试集困惑度。

数据来自 ``seqlab.measure`` 与各模型的评估函数，这里只排版。
"""

from __future__ import annotations

import statistics

from seqlab.figures.complexity import Counts
from seqlab.figures.decoding import MODE_NAMES, SHORT_NAMES
from seqlab.measure import PrefillDecode


def html_table(header: list[str], rows: list[list[str]], note: str = "") -> str:
    """一张朴素的 HTML 表格（网站与 JupyterLab 都能直接显示；Markdown 表格在网站的输出里不渲染）。"""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    caption = f"<p>{note}</p>" if note else ""
    return f'<table class="seqlab-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{caption}'


def prefill_decode_table(results: list[PrefillDecode]) -> str:
    """实测结果排成一张 HTML 表，每行一种（S, 方式）：CPU 时间、抖动、相对 Prefill 的倍数、墙钟时间、运算量。"""
    header = ["S", "方式", "CPU 时间", "最快–最慢", "相对 Prefill", "墙钟时间", "浮点运算数"]
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
    return html_table(
        header,
        rows,
        f"CPU 时间与墙钟时间都是 {repeats} 次重复的中位数；墙钟时间还包含排队等 CPU 的时间，机器越忙偏得越多。"
        "浮点运算数的单位 M = 10⁶ 次浮点运算，是数出来的，每次都一样。",
    )


def table1_table(counts: Counts, d: int, ns: tuple[int, ...] | None = None) -> str:
    """Vaswani 等（2017）表 1 的三列，公式旁边写上在几个长度 n（默认全部）上实测的计数（HTML 表）。"""
    shown = sorted(ns or counts)
    kinds = [
        ("自注意力", "self_attention", "O(n²·d)（不含投影）", "O(1)", "O(1)"),
        ("循环层（RNN）", "recurrent", "O(n·d²)", "O(n)", "O(n)"),
    ]
    head = "、".join(f"n = {n}" for n in shown)
    header = [
        "层的类型",
        "每层浮点运算数",
        f"实测 FLOP：只数跨位置混合（{head}）",
        f"实测 FLOP：整层（{head}）",
        "串行步数",
        "实测最长依赖链",
        "最长路径",
        "实测 x₁→yₙ 的最短链",
    ]
    rows = []
    for name, key, cost, seq, path in kinds:
        mixing = " / ".join(f"{counts[n][key]['flops_mixing']:,}" for n in shown)
        layer = " / ".join(f"{counts[n][key]['flops_layer']:,}" for n in shown)
        depth = " / ".join(str(counts[n][key]["sequential"]) for n in shown)
        dist = " / ".join(str(counts[n][key]["path"]) for n in shown)
        rows.append([name, cost, mixing, layer, seq, depth, path, dist])
    return html_table(
        header, rows, f"d = {d}；“实测”三列都是数出来的（浮点运算数、计算图里的张量运算个数），不是计时，没有抖动。"
    )


def perplexity_table(ngram: dict[int, float], gpt_ppl: float, gpt_label: str) -> str:
    """测试集困惑度：第 1.1 节的各阶 n-gram 与小 GPT，同一份句子、同一个口径。"""
    rows = [[f"{n}-gram（第 1.1 节）", f"{p:.2f}"] for n, p in ngram.items()] + [[gpt_label, f"{gpt_ppl:.2f}"]]
    return html_table(["模型", "测试集困惑度"], rows, "同一份测试句子、同一个口径：每个字和句尾各算一个 token。")
