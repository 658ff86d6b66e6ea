"""第 1.3 节“雅可比矩阵连乘”的图：左图是梯度范数随距离 r 的变化，右图是距离 r 处乘积的全部奇异值。

乘积超出 float32 表示范围的那一段，图上标出颜色，图上方的一句话给出文字说明。轨迹与装饰在
``jacobian_traces``，静态面的导览在 ``jacobian_tour``。
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.jacobian_traces import LOG10_CLIP, decorations, latin, traces, y_range
from seqlab.states.jacobian import KIND_LABELS, R_MAX, SINGULAR_DECADES, JacobianState

LIVE_HEIGHT, STATIC_HEIGHT = 500, 640  # 图的高度（像素）
LEGEND = {"orientation": "h", "x": 0.0, "y": 1.09, "xanchor": "left", "yanchor": "bottom", "font": {"size": 12}}


def verdict(state: JacobianState) -> str:
    """一句话判断：由 γ·σ_max(W_h) 与 ρ(W_h) 能推出什么（与距离 r 无关）。"""
    sel = state.selected
    g_sigma = sel.gamma_sigma_max
    head = f"ρ(W_h) = {sel.rho_W:.3g}，σₘₐₓ(W_h) = {sel.sigma_max_W:.3g}"
    tail = {
        "decay": f"γσₘₐₓ = {g_sigma:.3g} < 1：梯度必然指数衰减",
        "transient": f"γσₘₐₓ = {g_sigma:.3g} ≥ 1：上界管不住短期增长；ρ < 1 只保证线性时最终衰减",
        "growth": "ρ > 1：线性时 ‖W_hʳ‖₂ ≥ ρʳ，必然增长",
        "critical": "ρ = 1：线性时 ‖W_hʳ‖₂ ≥ 1，不会衰减",
        "uncertain": f"γσₘₐₓ = {g_sigma:.3g} > 1：可能爆炸，但不必然——要看 tanh 饱和多少",
    }[sel.regime]
    if state.phi == "tanh":
        tail += f"（平均 φ′ = {sel.mean_slope:.2f}）"
    return f"{head}；{tail}"


def _fmt(log10_value: float) -> str:
    """把 log10 值写成人读的数：0.001 到 1000 之间直接写，否则写成 a×10^k。"""
    if not math.isfinite(log10_value):
        return "0" if log10_value < 0 else "∞"
    if -3 <= log10_value < 3:
        return f"{10**log10_value:.3g}"
    k = math.floor(log10_value)
    return f"{10 ** (log10_value - k):.2f}×10^{k}"


def caption(state: JacobianState) -> str:
    sel = state.selected
    norms = sel.log10_norm
    r = state.r
    parts = [
        f"{KIND_LABELS[state.matrix]}：{verdict(state)}。",
        f"r = {r} 时 ‖∂hₜ/∂hₜ₋ᵣ‖₂ = {_fmt(float(norms[r - 1]))}，",
        f"上界 (γσₘₐₓ)ʳ = {_fmt(sel.log10_bound[r - 1])}，ρʳ = {_fmt(sel.log10_radius[r - 1])}。",
    ]
    if sel.peak_r is not None:
        parts.append(f"范数先增长，在 r = {sel.peak_r} 处达到峰值 {_fmt(float(norms[sel.peak_r - 1]))} 后才下降。")
    if state.phi == "linear":
        parts.append("线性 φ 的雅可比矩阵就是 W_h，与输入无关。")
    if sel.f32_overflow_r is not None:
        parts.append(
            f"⚠ 溢出：从 r = {sel.f32_overflow_r} 起这个乘积有元素超过 float32 的上限 3.4×10^38，"
            "训练时用 float32 连乘会得到 inf，损失随之变成 NaN；图中曲线把尺度单独记在对数里、逐步缩放算出，给出的是真实数量级。"
        )
    if sel.f32_underflow_r is not None:
        parts.append(
            f"下溢：从 r = {sel.f32_underflow_r} 起乘积的全部元素都小于 float32 的最小正规数 1.2×10^-38，"
            "再往下是精度逐位丧失的次正规数，小于约 1.4×10^-45 才变成 0。"
        )
    if any(sv[0] - sv[-1] > SINGULAR_DECADES - 1e-6 for sv in state.singular.values()):
        parts.append(
            f"右图每类最多画到最大奇异值以下 {SINGULAR_DECADES} 个数量级：更小的奇异值对梯度的大小没有可见的影响，"
            "又越来越受舍入误差左右，画在这条下限上。"
        )
    if any(not -LOG10_CLIP < v < LOG10_CLIP for c in state.curves.values() for v in c.log10_norm.tolist()):
        parts.append(f"有的值超出了 10^±{LOG10_CLIP:.0f}，画在了图的边界上。")
    return "".join(parts)


def _setting(state: JacobianState) -> str:
    return (
        f"{KIND_LABELS[state.matrix]} · φ = {state.phi} · ρ = {state.rho:g}"
        + (f" · β = {state.beta:g}" if state.matrix == "nonnormal" else "")
        + (f" · 输入幅度 {state.input_scale:g}" if state.phi == "tanh" else "")
        + f" · d = {state.d}"
    )


def _title(state: JacobianState, headline: str | None, height: int) -> dict[str, Any]:
    top = headline or _setting(state)
    line = verdict(state).replace("‖W_hʳ‖₂", latin("‖W_hʳ‖₂"))
    return {
        "text": f"<b>{top}</b><br><span style='font-size:12px'>{line}</span>",
        "x": 0.01,
        "xanchor": "left",
        "y": 1 - 28 / height,  # 两行标题的中线离图顶 28 像素
        "yanchor": "middle",
        "yref": "container",
        "font": {"size": 15},
    }


def _subplot_titles(right: str) -> list[dict[str, Any]]:
    titles = (f"梯度范数 {latin('‖∂hₜ/∂hₜ₋ᵣ‖₂')} 随距离 r 的变化", right)
    return [
        {
            "text": t,
            "xref": "paper",
            "yref": "paper",
            "x": x,
            "y": 1.0,
            "xanchor": "center",
            "yanchor": "bottom",
            "yshift": 4,
            "showarrow": False,
            "font": {"size": 13},
        }
        for t, x in zip(titles, (0.29, 0.84))
    ]


def layout(
    state: JacobianState, headline: str | None = None, right: str | None = None, height: int = LIVE_HEIGHT
) -> dict[str, Any]:
    """版面：两行标题（``headline`` 或设置；下面是 ``verdict``）、两个子图的标题与坐标轴、装饰。"""
    shapes, notes = decorations(state)
    return {
        "title": _title(state, headline, height),
        "annotations": _subplot_titles(right or f"r = {state.r} 时乘积的全部奇异值") + notes,
        "shapes": shapes,
        "xaxis": {"title": {"text": "距离 r（步）"}, "range": [0, R_MAX + 1], "domain": [0.0, 0.58]},
        "yaxis": {
            "title": {"text": "梯度范数（对数坐标）"},
            "type": "log",
            "exponentformat": "power",
            "range": y_range(state),
        },
        "xaxis2": {"title": {"text": "序号 k（从大到小）"}, "domain": [0.69, 1.0], "range": [0, state.d + 1]},
        "yaxis2": {
            "title": {"text": "奇异值 σₖ（对数坐标）", "standoff": 4},
            "type": "log",
            "anchor": "x2",
            "exponentformat": "power",
            "autorange": True,
        },
    }


def render(state: JacobianState) -> go.Figure:
    fig = make_subplots(rows=1, cols=2)
    fig.add_traces(traces(state))
    fig.update_layout(layout(state), height=LIVE_HEIGHT, legend=LEGEND, margin={"t": 105, "b": 60, "l": 70, "r": 20})
    return fig


def patch(fig: go.Figure, old: JacobianState, new: JacobianState) -> None:
    """只把变了的属性写进图里（主要是几条曲线的 y 数组），不重建图。"""
    for trace, before, after in zip(fig.data, traces(old), traces(new)):
        changed = {k: v for k, v in after.items() if k != "type" and before.get(k) != v}
        for key in ("x", "y"):  # 数值数组以 numpy 形式交给 plotly：校验快得多，并以二进制传给前端
            if key in changed:
                changed[key] = np.asarray(changed[key], dtype=float)
        if changed:
            trace.update(changed)
    before_layout, after_layout = layout(old), layout(new)
    for key in ("annotations", "shapes"):
        if before_layout[key] != after_layout[key]:
            fig.layout[key] = after_layout[key]
    fig.layout.title.text = after_layout["title"]["text"]
    fig.layout.xaxis2.range = after_layout["xaxis2"]["range"]
    fig.layout.yaxis.range = after_layout["yaxis"]["range"]
