"""第 1.3 节“雅可比矩阵连乘”的图的各个部分：全部轨迹（顺序固定）、参考线与 float32 失效区域。

左图（``x``/``y``）：三类矩阵的梯度范数随距离 r 的变化、所选矩阵的上界 (γσ_max)ʳ 与 ρʳ、距离 r 处的竖线
与三个圆点；右图（``x2``/``y2``）：距离 r 处三类乘积的全部奇异值。两图都是对数纵轴。
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seqlab import rnn
from seqlab.figures.style import PALETTE
from seqlab.states.jacobian import KIND_LABELS, R_MAX, JacobianState

LOG10_CLIP = 300.0  # 超出 1e±300 的值画在边界上，并在说明里指出
KIND_COLORS = {"orthogonal": PALETTE[0], "gaussian": PALETTE[2], "nonnormal": PALETTE[1]}

# 轨迹的固定顺序（实时更新只替换数组；静态图的 r 滑块按这个顺序找到要改的轨迹）
N_NORM = len(rnn.KINDS)  # 0–2：三类矩阵的范数曲线
I_BOUND, I_RADIUS, I_VLINE, I_MARKERS = N_NORM, N_NORM + 1, N_NORM + 2, N_NORM + 3
I_SINGULAR = N_NORM + 4  # 之后三条：三类矩阵在距离 r 处的奇异值
N_TRACES = I_SINGULAR + N_NORM

Trace = dict[str, Any]  # 一条轨迹的 plotly 属性
XY = tuple[list[int], list[float]]


def latin(text: str) -> str:
    """用西文字体排一小段公式：中文字体里的 ‖ 和 · 是全角的，夹在公式里很难看。"""
    return f"<span style='font-family:DejaVu Sans,Arial,Helvetica,sans-serif'>{text}</span>"


def to_plot(log10_values: Sequence[float]) -> tuple[list[float], bool]:
    """log10 值 → 画在对数轴上的数（保留 4 位有效数字，静态图的 JSON 因此小一半）；
    超出 1e±300 的截到边界（并报告）。"""
    clipped = False
    out = []
    for v in log10_values:
        if not v > -LOG10_CLIP or not v < LOG10_CLIP:
            clipped = True
            v = LOG10_CLIP if v >= LOG10_CLIP else -LOG10_CLIP
        out.append(float(f"{10.0**v:.4g}"))
    return out, clipped


def y_range(state: JacobianState) -> list[float]:
    """左图纵轴范围（log10）：由三条曲线和 ρ^r 决定，不让很松的上界把曲线压扁。"""
    values = [v for c in state.curves.values() for v in c.log10_norm.tolist()]
    values += [state.selected.log10_radius[-1], 0.0]
    values = [min(max(v, -LOG10_CLIP), LOG10_CLIP) for v in values]
    lo, hi = min(values), max(values)
    pad = max(0.5, 0.08 * (hi - lo))
    return [lo - pad, hi + pad]


def at_r(state: JacobianState, r: int, singular: dict[str, list[float]]) -> dict[int, XY]:
    """随距离 r 变化的那几条轨迹的数据（轨迹序号 → x, y）：竖线、三个圆点、三组奇异值。

    ``singular`` 是距离 r 处三类乘积的奇异值（log10，状态里算好的）。"""
    ends, _ = to_plot(y_range(state))  # 竖线从纵轴的下端画到上端
    markers, _ = to_plot([float(c.log10_norm[r - 1]) for c in state.curves.values()])
    xy: dict[int, XY] = {I_VLINE: ([r, r], ends), I_MARKERS: ([r] * N_NORM, markers)}
    for j, log10_sv in enumerate(singular.values()):
        y, _ = to_plot(log10_sv)
        xy[I_SINGULAR + j] = (list(range(1, len(y) + 1)), y)
    return xy


def traces(state: JacobianState) -> list[Trace]:
    """图中全部轨迹，顺序见上面的 ``I_*`` 常数。"""
    xy = at_r(state, state.r, state.singular)
    kinds = list(state.curves)
    return [
        *(_norm_trace(state, kind) for kind in kinds),
        *_reference_traces(state),
        _vline_trace(*xy[I_VLINE]),
        _marker_trace(state, *xy[I_MARKERS]),
        *(_singular_trace(state, kind, *xy[I_SINGULAR + j]) for j, kind in enumerate(kinds)),
    ]


def _line(kind: str, chosen: bool, widths: tuple[float, float]) -> dict[str, Any]:
    """一类矩阵的线：所选的粗实线，其余细点线；``widths`` 是（所选，其余）的线宽。"""
    return {"color": KIND_COLORS[kind], "width": widths[0] if chosen else widths[1], "dash": "solid" if chosen else "dot"}


def _norm_trace(state: JacobianState, kind: str) -> Trace:
    y, _ = to_plot(state.curves[kind].log10_norm.tolist())
    chosen = kind == state.matrix
    return {
        "type": "scatter",
        "x": list(range(1, R_MAX + 1)),
        "y": y,
        "mode": "lines",
        "name": KIND_LABELS[kind] + ("（所选）" if chosen else ""),
        "legendgroup": kind,
        "line": _line(kind, chosen, (3.5, 1.6)),
        "opacity": 1.0 if chosen else 0.6,
        "xaxis": "x",
        "yaxis": "y",
        "hovertemplate": f"{KIND_LABELS[kind]}<br>r = %{{x}}<br>‖∂hₜ/∂hₜ₋ᵣ‖₂ = %{{y:.3g}}<extra></extra>",
    }


def _reference_traces(state: JacobianState) -> list[Trace]:
    """所选矩阵的上界 (γσ_max)ʳ 与 ρʳ 两条灰线。"""
    sel = state.selected
    out = []
    for log10_y, name, dash in (
        (sel.log10_bound, "上界 " + latin("(γσₘₐₓ)ʳ"), "dash"),
        (sel.log10_radius, latin("ρʳ"), "dot"),
    ):
        y, _ = to_plot(log10_y)
        out.append(
            {
                "type": "scatter",
                "x": list(range(1, R_MAX + 1)),
                "y": y,
                "mode": "lines",
                "name": name,
                "xaxis": "x",
                "yaxis": "y",
                "line": {"color": "#8a8a8a", "width": 1.6, "dash": dash},
                "hovertemplate": f"{name}（所选矩阵）<br>r = %{{x}}<br>%{{y:.3g}}<extra></extra>",
            }
        )
    return out


def _vline_trace(x: list[int], y: list[float]) -> Trace:
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "xaxis": "x",
        "yaxis": "y",
        "line": {"color": "#8a8a8a", "width": 1, "dash": "dashdot"},
        "hoverinfo": "skip",
        "showlegend": False,
    }


def _marker_trace(state: JacobianState, x: list[int], y: list[float]) -> Trace:
    kinds = list(state.curves)
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "markers",
        "xaxis": "x",
        "yaxis": "y",
        "marker": {
            "size": [13 if k == state.matrix else 8 for k in kinds],
            "color": [KIND_COLORS[k] for k in kinds],
            "line": {"width": 1.5, "color": "rgba(128,128,128,0.9)"},
        },
        "customdata": [KIND_LABELS[k] for k in kinds],
        "hovertemplate": "%{customdata}<br>r = %{x}<br>‖∂hₜ/∂hₜ₋ᵣ‖₂ = %{y:.3g}<extra></extra>",
        "showlegend": False,
    }


def _singular_trace(state: JacobianState, kind: str, x: list[int], y: list[float]) -> Trace:
    chosen = kind == state.matrix
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines+markers",
        "legendgroup": kind,
        "name": KIND_LABELS[kind],
        "showlegend": False,
        "xaxis": "x2",
        "yaxis": "y2",
        "opacity": 1.0 if chosen else 0.55,
        "line": _line(kind, chosen, (2.5, 1.2)),
        "marker": {"size": 6 if chosen else 3, "color": KIND_COLORS[kind]},
        "hovertemplate": f"{KIND_LABELS[kind]}<br>σ%{{x}} = %{{y:.3g}}<extra></extra>",
    }


def decorations(state: JacobianState) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """参考线 “= 1” 与 float32 失效区域（形状与注释）。"""
    sel = state.selected
    shapes: list[dict[str, Any]] = [
        {
            "type": "line",
            "xref": f"{ax} domain",
            "yref": ay,
            "x0": 0,
            "x1": 1,
            "y0": 1,
            "y1": 1,
            "line": {"color": "#999999", "width": 1.2},
        }
        for ax, ay in (("x", "y"), ("x2", "y2"))
    ]
    notes = []
    # 上溢时曲线在右上方，说明写在色块左下；下溢时曲线在右下方，说明写在色块左上。
    for r0, color, text, y, anchor in (
        (sel.f32_overflow_r, "rgba(181,72,93,0.20)", f"从 r = {sel.f32_overflow_r} 起 float32 上溢为 inf →", 0.12, "bottom"),
        (sel.f32_underflow_r, "rgba(59,110,165,0.18)", f"从 r = {sel.f32_underflow_r} 起 float32 下溢（次正规数）→", 0.88, "top"),
    ):
        if r0 is None:
            continue
        shapes.append(
            {
                "type": "rect",
                "xref": "x",
                "yref": "y domain",
                "x0": r0 - 0.5,
                "x1": R_MAX + 0.5,
                "y0": 0,
                "y1": 1,
                "fillcolor": color,
                "line": {"width": 0},
                "layer": "below",
            }
        )
        inside = r0 <= R_MAX // 2  # 色块够宽就把说明写在色块里，否则写在它左边
        notes.append(
            {
                "xref": "x",
                "yref": "y domain",
                "x": r0 + 1 if inside else r0 - 1,
                "y": y,
                "xanchor": "left" if inside else "right",
                "yanchor": anchor,
                "text": text if not inside else text.rstrip(" →"),
                "showarrow": False,
                "font": {"size": 12, "color": "#b5485d"},
            }
        )
    return shapes, notes
