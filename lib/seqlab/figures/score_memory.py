"""第 1.5 节分数矩阵的内存曲线（对数—对数坐标）：预算以上的“拒绝区”、预算线、各组配置的曲线与当前 S 的点。

实时面和静态面共用；轴的编号（``n``）由调用方给出。轨迹写成普通的字典（``go.Figure`` 收下时校验一次）：
实时面每次更新都要重新生成它们，和上一次的比较之后只改变了的属性，不必每次都构造、校验整条 ``go.Scatter``。
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from seqlab.errors import format_bytes
from seqlab.figures.axes import byte_ticks
from seqlab.figures.style import PALETTE
from seqlab.states.score_matrix import CURVE_LENGTHS, MemoryCurve, MemoryState

TOP = 2.0**60  # “拒绝区”的上沿：远在纵轴范围之上
REFERENCE_DASHES = ("dot", "dashdot")


def config_label(curve: MemoryCurve) -> str:
    return f"{curve.batch} × {curve.heads} 头 × {curve.layers} 层 × {curve.dtype}"


def _budget_traces(memory: MemoryState, on: dict[str, str]) -> list[dict]:
    """预算以上的“拒绝区”与预算线。"""
    x_end = int(CURVE_LENGTHS[-1])
    return [
        {
            "type": "scatter",
            "x": [1, x_end, x_end, 1],
            "y": [memory.budget, memory.budget, TOP, TOP],
            "fill": "toself",
            "mode": "none",
            "fillcolor": "rgba(181,72,93,0.12)",
            "name": "超出预算：拒绝",
            "hoverinfo": "skip",
            **on,
        },
        {
            "type": "scatter",
            "x": [1, x_end],
            "y": [memory.budget] * 2,
            "mode": "lines",
            "name": f"预算 {format_bytes(memory.budget)}",
            "line": {"color": PALETTE[3], "dash": "dash", "width": 1.5},
            "hoverinfo": "skip",
            **on,
        },
    ]


def _curve_trace(curve: MemoryCurve, line: dict, on: dict[str, str]) -> dict:
    label = config_label(curve)
    return {
        "type": "scatter",
        "x": curve.lengths,
        "y": curve.bytes,
        "mode": "lines",
        "name": label,
        "line": line,
        "hovertemplate": "S = %{x}<br>%{y:.3s}B<extra>" + label + "</extra>",
        **on,
    }


def _point_trace(memory: MemoryState, on: dict[str, str]) -> dict:
    """当前 S 的点：超出预算时是红色的叉。"""
    over = memory.bytes > memory.budget
    return {
        "type": "scatter",
        "x": [memory.S],
        "y": [memory.bytes],
        "mode": "markers",
        "name": f"S = {memory.S}：{format_bytes(memory.bytes)}",
        "marker": {
            "size": 12,
            "color": PALETTE[3] if over else PALETTE[1],
            "symbol": "x" if over else "circle",
            "line": {"width": 1, "color": "white"},
        },
        "hovertemplate": "S = %{x}<br>%{y:.3s}B<extra></extra>",
        **on,
    }


def memory_traces(memory: MemoryState, n: str, references: Sequence[MemoryCurve] = ()) -> list[dict]:
    """画在第 ``n`` 组坐标轴上的内存图：拒绝区、预算线、（灰色的对照曲线、）所选配置的曲线、当前 S 的点。"""
    on = {"xaxis": f"x{n}", "yaxis": f"y{n}"}
    grey = [
        _curve_trace(ref, {"color": "rgba(128,128,128,0.9)", "dash": dash, "width": 1.5}, on)
        for ref, dash in zip(references, REFERENCE_DASHES)
    ]
    chosen = _curve_trace(memory.curve, {"color": PALETTE[0], "width": 2.5}, on)
    return [*_budget_traces(memory, on), *grey, chosen, _point_trace(memory, on)]


def memory_axes(n: str, x_domain: list[float], y_domain: list[float]) -> dict[str, dict]:
    """第 ``n`` 组坐标轴：横轴是长度 S，纵轴是字节数，都用对数坐标。"""
    return {
        f"xaxis{n}": {
            "type": "log",
            "domain": x_domain,
            "anchor": f"y{n}",
            "range": [0, np.log10(float(CURVE_LENGTHS[-1]))],
            "title": {"text": "序列长度 S", "standoff": 4},
            "dtick": 1,
            "exponentformat": "none",
        },
        f"yaxis{n}": {
            "type": "log",
            "domain": y_domain,
            "anchor": f"x{n}",
            "range": [0, np.log10(2.0**52)],
            "title": {"text": "分数矩阵的内存"},
            **byte_ticks(2**10, 2**52),
        },
    }
