"""查表的两种做法（第 1.2 节）：按行索引与 one-hot × E 的实测用时与创建的张量。"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.style import PALETTE
from seqlab.measure import LookupTiming


def lookup_cost(timings: Sequence[LookupTiming]) -> go.Figure:
    """``measure.measure_lookup`` 的结果（每个词表大小 V 一次实测，至少一次，token 数 n 都相同）画成左右两个
    子图：左边是用时（毫秒），右边是创建的张量（MiB），横轴纵轴都是对数坐标。"""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("用时", "创建的张量"), horizontal_spacing=0.14)
    Vs = [r.V for r in timings]
    ways = [
        ("按行索引", [r.index_seconds for r in timings], [r.index_bytes for r in timings]),
        ("one-hot × E", [r.matmul_seconds for r in timings], [r.matmul_bytes for r in timings]),
    ]
    for k, (name, seconds, nbytes) in enumerate(ways):
        common = dict(name=name, mode="lines+markers", line=dict(color=PALETTE[k]))
        ms = [s * 1e3 for s in seconds]
        mib = [b / 2**20 for b in nbytes]
        fig.add_trace(go.Scatter(x=Vs, y=ms, hovertemplate="V=%{x}：%{y:.3f} ms<extra></extra>", **common), 1, 1)
        fig.add_trace(
            go.Scatter(x=Vs, y=mib, showlegend=False, hovertemplate="V=%{x}：%{y:.2f} MiB<extra></extra>", **common),
            1,
            2,
        )
    fig.update_xaxes(type="log", dtick=1, title_text="词表大小 V")  # 对数坐标，只标 10 的整数次幂
    fig.update_yaxes(type="log", dtick=1, title_text="毫秒", row=1, col=1)
    fig.update_yaxes(type="log", dtick=1, title_text="MiB", row=1, col=2)
    fig.update_layout(
        height=430,
        margin=dict(t=140),
        title=dict(text=f"查 {timings[0].n} 个 token：索引与 one-hot 乘法（本机实测）", y=0.97),
        legend=dict(orientation="h", x=0.5, xanchor="center", y=1.14, yanchor="bottom"),
    )
    return fig
