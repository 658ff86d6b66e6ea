"""第 1.3 节的探索器：雅可比矩阵连乘——梯度为什么会消失或爆炸。

一个 tanh（或线性）RNN 先以随机输入跑 ``BURN_IN + R_MAX`` 步，然后从最后一步 ``t`` 往回，
把 ``J_t J_{t-1} ⋯ J_{t-r+1}`` 一路乘到 ``r = R_MAX``。三类循环矩阵（正交、高斯、非正规）
取**相同的谱半径**一起算，读者选中的那一类画粗线，另外两类画细线作对照。

所有乘积都逐步缩放、把尺度单独记在对数里（``rnn.scaled_products``），求出真实的数量级：曲线从不因为
上溢成 ``inf`` 或下溢成 ``0`` 而断开。乘积超出 float32 表示范围的那一段，图上标出颜色并给出
文字说明——训练中正是在这里，梯度变成 inf、损失变成 NaN。
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from seqlab import rnn
from seqlab.errors import InputError
from seqlab.explorers import Explorer, register
from seqlab.figures import PALETTE
from seqlab.runtime import single_thread

R_MAX = 100  # 图上画到的最大距离
BURN_IN = 20  # 先跑这么多步，让状态离开 h_0 = 0 附近
D_RANGE = (2, 64)
RHO_RANGE = (0.1, 3.0)
BETA_RANGE = (0.0, 10.0)
INPUT_RANGE = (0.0, 4.0)
SEEDS = 10
F32_MAX = float(torch.finfo(torch.float32).max)  # ≈ 3.4e38
F32_TINY = float(torch.finfo(torch.float32).tiny)  # ≈ 1.2e-38，最小的正规数
LOG10_CLIP = 300.0  # 超出 1e±300 的值画在边界上，并在说明里指出
LIVE_HEIGHT, STATIC_HEIGHT = 500, 640  # 图的高度（像素）

KIND_LABELS = {"orthogonal": "正交 ρQ", "gaussian": "高斯随机", "nonnormal": "非正规（若尔当块）"}
KIND_COLORS = {"orthogonal": PALETTE[0], "gaussian": PALETTE[2], "nonnormal": PALETTE[1]}


@dataclass(frozen=True)
class FamilyCurve:
    """一类循环矩阵在一组设置下的全部结果（r = 1 … R_MAX）。"""

    kind: str
    M: torch.Tensor  # (R_MAX, d, d) 乘积的方向，‖M_r‖_F = 1
    log10_c: torch.Tensor  # (R_MAX,) 乘积的尺度
    log10_norm: torch.Tensor  # (R_MAX,) log10 ‖∂h_t/∂h_{t-r}‖_2
    sigma_max_W: float  # σ_max(W_h)
    rho_W: float  # ρ(W_h)
    f32_overflow_r: int | None  # float32 直接连乘第一次出现 inf 的距离
    f32_underflow_r: int | None  # float32 直接连乘第一次整体小于最小正规数的距离
    mean_slope: float  # 平均的 φ'(a_j)：饱和程度


@lru_cache(maxsize=96)
def family_curve(
    kind: str, d: int, rho: float, beta: float, phi: str, input_scale: float, seed: int
) -> FamilyCurve:
    """跑一遍 RNN，求出 ``r = 1 … R_MAX`` 的全部乘积（按参数缓存：只改 r 时不必重算）。"""
    W_h = rnn.recurrent_matrix(kind, d, rho, beta=beta, seed=seed)
    gen = torch.Generator().manual_seed(seed + 7)
    E = torch.randn(BURN_IN + R_MAX, d, generator=gen, dtype=torch.float64)
    model = rnn.ElmanRNN.from_matrices(
        input_scale * torch.eye(d, dtype=torch.float64), W_h, torch.zeros(d, dtype=torch.float64), phi
    )
    with torch.no_grad():
        if phi == "linear":  # 线性时 J_j = W_h，与状态无关，不必真的跑前向
            A = torch.zeros(R_MAX, d, dtype=torch.float64)
        else:
            _, A = model(E, return_preactivations=True)
            A = A[BURN_IN:]  # a_j，j = t-R_MAX+1 … t
        Js = rnn.step_jacobian(A, W_h, phi)  # (R_MAX, d, d)，按时间顺序
        # 尺度 c_r 单独记账，方向 M_r 的范数始终在 1 附近，所以连乘和求奇异值都可以用单精度：
        # 100 步后的相对误差约 1e-5，画在对数轴上看不出来，速度却快一倍。
        M, log10_c = rnn.scaled_products(Js.to(torch.float32))
        log10_norm = rnn.log10_spectral_norms(M, log10_c)
        over, under = _float32_failure(M, log10_c)
        slope = float(rnn.phi_derivative(A, phi).mean())
    return FamilyCurve(
        kind,
        M,
        log10_c,
        log10_norm,
        float(torch.linalg.matrix_norm(W_h, ord=2)),
        rnn.spectral_radius(W_h),
        over,
        under,
        slope,
    )


def _float32_failure(M: torch.Tensor, log10_c: torch.Tensor) -> tuple[int | None, int | None]:
    """float32 从哪个距离起装不下这个乘积：第一次有元素超过 float32 最大值（上溢成 inf），
    以及第一次全部元素都小于最小正规数（下溢）。由精确的数量级 ``c_r · max|M_r|`` 判断。"""
    log10_max = log10_c + torch.log10(M.abs().amax(dim=(1, 2)).to(torch.float64))
    over = torch.nonzero(log10_max > math.log10(F32_MAX))
    under = torch.nonzero(log10_max < math.log10(F32_TINY))
    return (int(over[0]) + 1 if len(over) else None), (int(under[0]) + 1 if len(under) else None)


@dataclass(frozen=True)
class JacobianState:
    matrix: str
    phi: str
    rho: float
    beta: float
    input_scale: float
    r: int
    d: int
    seed: int
    curves: dict[str, FamilyCurve]
    singular: dict[str, list[float]]  # 每一类在距离 r 处乘积的全部奇异值（log10，从大到小）

    @property
    def selected(self) -> FamilyCurve:
        return self.curves[self.matrix]


def _number(value, lo: float, hi: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what}必须是一个数。")
    value = float(value)
    if not math.isfinite(value) or not lo <= value <= hi:
        raise InputError(f"{what}应在 {lo:g} 到 {hi:g} 之间，收到 {value:g}。")
    return value


def _integer(value, lo: int, hi: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise InputError(f"「{what}」必须是整数。")
    if not lo <= int(value) <= hi:
        raise InputError(f"「{what}」应在 {lo} 到 {hi} 之间，收到 {int(value)}。")
    return int(value)


def jacobian_state(
    matrix: str = "nonnormal",
    rho: float = 0.9,
    beta: float = 4.0,
    phi: str = "linear",
    input_scale: float = 0.5,
    r: int = 30,
    d: int = 32,
    seed: int = 0,
) -> JacobianState:
    if matrix not in rnn.KINDS:
        raise InputError(f"矩阵类型只能是 {list(KIND_LABELS.values())} 之一。")
    if phi not in rnn.PHIS:
        raise InputError(f"非线性只能是 {rnn.PHIS} 之一。")
    rho = round(_number(rho, *RHO_RANGE, "谱半径 ρ"), 6)
    beta = round(_number(beta, *BETA_RANGE, "非正规强度 β"), 6)
    input_scale = round(_number(input_scale, *INPUT_RANGE, "输入幅度"), 6)
    r = _integer(r, 1, R_MAX, "距离 r")
    d = _integer(d, *D_RANGE, "状态维度 d")
    seed = _integer(seed, 0, SEEDS - 1, "随机种子")
    with single_thread():
        # 与某一类无关的参数不进缓存键：拖动 β 只重算非正规矩阵，线性 φ 下拖动输入幅度什么也不用重算。
        curves = {
            k: family_curve(
                k, d, rho, beta if k == "nonnormal" else 0.0, phi, input_scale if phi == "tanh" else 0.0, seed
            )
            for k in rnn.KINDS
        }
        singular = {
            k: rnn.log10_singular_values(c.M[r - 1], float(c.log10_c[r - 1])).tolist()
            for k, c in curves.items()
        }
    return JacobianState(matrix, phi, rho, beta, input_scale, r, d, seed, curves, singular)


def _to_plot(log10_values) -> tuple[list[float], bool]:
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


def _fmt(log10_value: float) -> str:
    """把 log10 值写成人读的数：0.001 到 1000 之间直接写，否则写成 a×10^k。"""
    if not math.isfinite(log10_value):
        return "0" if log10_value < 0 else "∞"
    if -3 <= log10_value < 3:
        return f"{10**log10_value:.3g}"
    k = math.floor(log10_value)
    return f"{10 ** (log10_value - k):.2f}×10^{k}"


# 轨迹的固定顺序（实时更新只替换数组；静态图的 r 滑块按这个顺序找到要改的轨迹）
N_NORM = len(rnn.KINDS)  # 0–2：三类矩阵的范数曲线
I_BOUND, I_RADIUS, I_VLINE, I_MARKERS = N_NORM, N_NORM + 1, N_NORM + 2, N_NORM + 3
I_SINGULAR = N_NORM + 4  # 之后三条：三类矩阵在距离 r 处的奇异值
N_TRACES = I_SINGULAR + N_NORM


def _at_r(state: JacobianState, r: int) -> dict[str, list]:
    """随距离 r 变化的那几组数：竖线、三个圆点、三组奇异值。"""
    lo, hi = _y_range(state)
    markers, _ = _to_plot([float(c.log10_norm[r - 1]) for c in state.curves.values()])
    if r == state.r:  # 实时面：jacobian_state 已经算好了
        log10_sv = state.singular
    else:  # 静态面的 r 滑块：其他距离现算（很小的 SVD，单线程最快）
        with single_thread():
            log10_sv = {
                k: rnn.log10_singular_values(c.M[r - 1], float(c.log10_c[r - 1])).tolist()
                for k, c in state.curves.items()
            }
    singular = {k: _to_plot(v)[0] for k, v in log10_sv.items()}
    return {
        "vline": ([r, r], [10.0**lo, 10.0**hi]),
        "markers": ([r] * N_NORM, markers),
        "singular": [(list(range(1, len(v) + 1)), v) for v in singular.values()],
    }


def _traces(state: JacobianState) -> list[dict]:
    """图中全部轨迹，顺序见上面的 ``I_*`` 常数。"""
    rs = list(range(1, R_MAX + 1))
    sel = state.selected
    traces = []
    for kind, curve in state.curves.items():
        y, _ = _to_plot(curve.log10_norm.tolist())
        chosen = kind == state.matrix
        traces.append(
            {
                "type": "scatter",
                "x": rs,
                "y": y,
                "mode": "lines",
                "name": KIND_LABELS[kind] + ("（所选）" if chosen else ""),
                "legendgroup": kind,
                "line": {
                    "color": KIND_COLORS[kind],
                    "width": 3.5 if chosen else 1.6,
                    "dash": "solid" if chosen else "dot",
                },
                "opacity": 1.0 if chosen else 0.6,
                "xaxis": "x",
                "yaxis": "y",
                "hovertemplate": f"{KIND_LABELS[kind]}<br>r = %{{x}}<br>‖∂hₜ/∂hₜ₋ᵣ‖₂ = %{{y:.3g}}<extra></extra>",
            }
        )
    gamma = rnn.PHI_DERIVATIVE_BOUND[state.phi]
    bound, _ = _to_plot([r * math.log10(gamma * sel.sigma_max_W) for r in rs])
    radius, _ = _to_plot([r * math.log10(sel.rho_W) for r in rs])
    for y, name, dash in ((bound, "上界 " + _latin("(γσₘₐₓ)ʳ"), "dash"), (radius, _latin("ρʳ"), "dot")):
        traces.append(
            {
                "type": "scatter",
                "x": rs,
                "y": y,
                "mode": "lines",
                "name": name,
                "xaxis": "x",
                "yaxis": "y",
                "line": {"color": "#8a8a8a", "width": 1.6, "dash": dash},
                "hovertemplate": f"{name}（所选矩阵）<br>r = %{{x}}<br>%{{y:.3g}}<extra></extra>",
            }
        )
    at = _at_r(state, state.r)
    traces.append(
        {
            "type": "scatter",
            "x": at["vline"][0],
            "y": at["vline"][1],
            "mode": "lines",
            "xaxis": "x",
            "yaxis": "y",
            "line": {"color": "#8a8a8a", "width": 1, "dash": "dashdot"},
            "hoverinfo": "skip",
            "showlegend": False,
        }
    )
    kinds = list(state.curves)
    traces.append(
        {
            "type": "scatter",
            "x": at["markers"][0],
            "y": at["markers"][1],
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
    )
    for kind, (x, y) in zip(kinds, at["singular"]):
        chosen = kind == state.matrix
        traces.append(
            {
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
                "line": {
                    "color": KIND_COLORS[kind],
                    "width": 2.5 if chosen else 1.2,
                    "dash": "solid" if chosen else "dot",
                },
                "marker": {"size": 6 if chosen else 3, "color": KIND_COLORS[kind]},
                "hovertemplate": f"{KIND_LABELS[kind]}<br>σ%{{x}} = %{{y:.3g}}<extra></extra>",
            }
        )
    return traces


def _decorations(state: JacobianState) -> tuple[list[dict], list[dict]]:
    """参考线 “= 1” 与 float32 失效区域（形状与注释）。"""
    sel = state.selected
    shapes = [
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
        (sel.f32_underflow_r, "rgba(59,110,165,0.18)", f"从 r = {sel.f32_underflow_r} 起 float32 下溢为 0 →", 0.88, "top"),
    ):
        if r0 is not None:
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


def _latin(text: str) -> str:
    """用西文字体排一小段公式：中文字体里的 ‖ 和 · 是全角的，夹在公式里很难看。"""
    return f"<span style='font-family:DejaVu Sans,Arial,Helvetica,sans-serif'>{text}</span>"


def _subplot_titles(right: str) -> list[dict]:
    titles = (f"梯度范数 {_latin('‖∂hₜ/∂hₜ₋ᵣ‖₂')} 随距离 r 的变化", right)
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


def _setting(state: JacobianState) -> str:
    return (
        f"{KIND_LABELS[state.matrix]} · φ = {state.phi} · ρ = {state.rho:g}"
        + (f" · β = {state.beta:g}" if state.matrix == "nonnormal" else "")
        + (f" · 输入幅度 {state.input_scale:g}" if state.phi == "tanh" else "")
        + f" · d = {state.d}"
    )


def verdict(state: JacobianState) -> str:
    """一句话判断：由 γ·σ_max(W_h) 与 ρ(W_h) 能推出什么（与距离 r 无关）。"""
    sel = state.selected
    gamma = rnn.PHI_DERIVATIVE_BOUND[state.phi]
    g_sigma = gamma * sel.sigma_max_W
    head = f"ρ(W_h) = {sel.rho_W:.3g}，σₘₐₓ(W_h) = {sel.sigma_max_W:.3g}"
    if g_sigma < 1 - 1e-9:
        tail = f"γσₘₐₓ = {g_sigma:.3g} < 1：梯度必然指数衰减"
    elif sel.rho_W < 1 - 1e-9:
        tail = f"γσₘₐₓ = {g_sigma:.3g} ≥ 1：上界管不住短期增长；ρ < 1 只保证线性时最终衰减"
    elif state.phi == "linear":  # 线性时 ‖W_hʳ‖₂ ≥ ρʳ 对每个 r 都成立
        tail = "ρ > 1：线性时 ‖W_hʳ‖₂ ≥ ρʳ，必然增长" if sel.rho_W > 1 + 1e-9 else "ρ = 1：线性时 ‖W_hʳ‖₂ ≥ 1，不会衰减"
    else:
        tail = f"γσₘₐₓ = {g_sigma:.3g} > 1：可能爆炸，但不必然——要看 tanh 饱和多少"
    if state.phi == "tanh":
        tail += f"（平均 φ′ = {sel.mean_slope:.2f}）"
    return f"{head}；{tail}"


def _title(state: JacobianState, headline: str | None, height: int) -> dict:
    top = headline or _setting(state)
    line = verdict(state).replace("‖W_hʳ‖₂", _latin("‖W_hʳ‖₂"))
    return {
        "text": f"<b>{top}</b><br><span style='font-size:12px'>{line}</span>",
        "x": 0.01,
        "xanchor": "left",
        "y": 1 - 28 / height,  # 两行标题的中线离图顶 28 像素
        "yanchor": "middle",
        "yref": "container",
        "font": {"size": 15},
    }


def _y_range(state: JacobianState) -> list[float]:
    """左图纵轴范围（log10）：由三条曲线和 ρ^r 决定，不让很松的上界把曲线压扁。"""
    values = [v for c in state.curves.values() for v in c.log10_norm.tolist()]
    values += [R_MAX * math.log10(state.selected.rho_W), 0.0]
    values = [min(max(v, -LOG10_CLIP), LOG10_CLIP) for v in values]
    lo, hi = min(values), max(values)
    pad = max(0.5, 0.08 * (hi - lo))
    return [lo - pad, hi + pad]


def _layout(
    state: JacobianState, headline: str | None = None, right: str | None = None, height: int = LIVE_HEIGHT
) -> dict:
    shapes, notes = _decorations(state)
    return {
        "title": _title(state, headline, height),
        "annotations": _subplot_titles(right or f"r = {state.r} 时乘积的全部奇异值") + notes,
        "shapes": shapes,
        "xaxis": {"title": {"text": "距离 r（步）"}, "range": [0, R_MAX + 1], "domain": [0.0, 0.58]},
        "yaxis": {
            "title": {"text": "梯度范数（对数坐标）"},
            "type": "log",
            "exponentformat": "power",
            "range": _y_range(state),
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


LEGEND = {"orientation": "h", "x": 0.0, "y": 1.07, "xanchor": "left", "yanchor": "bottom", "font": {"size": 12}}


def jacobian_figure(state: JacobianState) -> go.Figure:
    fig = make_subplots(rows=1, cols=2)
    fig.add_traces(_traces(state))
    fig.update_layout(_layout(state), height=LIVE_HEIGHT, legend=LEGEND, margin={"t": 105, "b": 60, "l": 70, "r": 20})
    return fig


def jacobian_caption(state: JacobianState) -> str:
    sel = state.selected
    norms = sel.log10_norm
    r = state.r
    gamma = rnn.PHI_DERIVATIVE_BOUND[state.phi]
    peak = int(torch.argmax(norms)) + 1
    parts = [
        f"{KIND_LABELS[state.matrix]}：{verdict(state)}。",
        f"r = {r} 时 ‖∂hₜ/∂hₜ₋ᵣ‖₂ = {_fmt(float(norms[r - 1]))}，",
        f"上界 (γσₘₐₓ)ʳ = {_fmt(r * math.log10(gamma * sel.sigma_max_W))}，ρʳ = {_fmt(r * math.log10(sel.rho_W))}。",
    ]
    if 1 < peak < R_MAX and float(norms[peak - 1]) > float(norms[0]) + 0.05:
        parts.append(f"范数先增长，在 r = {peak} 处达到峰值 {_fmt(float(norms[peak - 1]))} 后才下降。")
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
            "这么远的梯度在单精度里几乎等于零。"
        )
    if any(not -LOG10_CLIP < v < LOG10_CLIP for c in state.curves.values() for v in c.log10_norm.tolist()):
        parts.append(f"有的值超出了 10^±{LOG10_CLIP:.0f}，画在了图的边界上。")
    return "".join(parts)


def tour_figure() -> go.Figure:
    """静态面：上面的滑块在 ``TOUR`` 的场景之间切换，下面的滑块改变距离 r（右图与圆点随之变化）。

    场景滑块用 ``update`` 切换可见的轨迹和版面；r 滑块用 ``restyle`` 只改每个场景的竖线、圆点
    与奇异值轨迹的数据，所以两者互不干扰：换场景时 r 保持不变。
    """
    states = [(label, jacobian_state(r=STATIC_R_DEFAULT, **params), headline) for label, params, headline in TOUR]
    fig = make_subplots(rows=1, cols=2)
    n_scenes = len(states)
    for _, state, _ in states:
        fig.add_traces(_traces(state))
    active = 0
    r0 = STATIC_R_DEFAULT
    scene_steps = []
    for k, (label, state, headline) in enumerate(states):
        visible = [i // N_TRACES == k for i in range(n_scenes * N_TRACES)]
        headline = headline.format(over=state.selected.f32_overflow_r)
        layout = _layout(state, headline, "所选距离 r 处乘积的全部奇异值", STATIC_HEIGHT)
        layout["yaxis2"]["autorange"] = True
        scene_steps.append({"label": label, "method": "update", "args": [{"visible": visible}, layout]})
        if k == active:
            fig.update_layout(layout)
            for i, trace in enumerate(fig.data):
                trace.visible = visible[i]
    r_steps = []
    for r in STATIC_R:
        xs, ys, idx = [], [], []
        for k, (_, state, _) in enumerate(states):
            at = _at_r(state, r)
            base = k * N_TRACES
            for i, (x, y) in [(I_VLINE, at["vline"]), (I_MARKERS, at["markers"])] + [
                (I_SINGULAR + j, xy) for j, xy in enumerate(at["singular"])
            ]:
                xs.append(x)
                ys.append(y)
                idx.append(base + i)
        r_steps.append({"label": str(r), "method": "restyle", "args": [{"x": xs, "y": ys}, idx]})
        if r == r0:
            for i, x, y in zip(idx, xs, ys):
                fig.data[i].x, fig.data[i].y = x, y
    fig.update_layout(
        height=STATIC_HEIGHT,
        legend=LEGEND,
        margin={"t": 105, "b": 200, "l": 70, "r": 20},
        sliders=[
            {
                "active": active,
                "steps": scene_steps,
                "currentvalue": {"prefix": "场景 ", "font": {"size": 13}},
                "pad": {"t": 58, "b": 0},
                "y": 0,
                "yanchor": "top",
                "font": {"size": 12},
            },
            {
                "active": STATIC_R.index(r0),
                "steps": r_steps,
                "currentvalue": {"prefix": "距离 r = ", "font": {"size": 13}},
                "pad": {"t": 150, "b": 0},
                "y": 0,
                "yanchor": "top",
                "font": {"size": 12},
            },
        ],
    )
    return fig


@register
class JacobianExplorer(Explorer):
    name = "jacobian_product"
    title = "雅可比矩阵连乘：梯度为什么消失或爆炸"
    examples: ClassVar[list[dict[str, Any]]] = [
        {"matrix": "orthogonal", "rho": 0.9, "phi": "linear", "r": 30},
        {"matrix": "orthogonal", "rho": 1.1, "phi": "linear", "r": 60},
        {"matrix": "nonnormal", "rho": 0.9, "beta": 4.0, "phi": "linear", "r": 10},
        {"matrix": "gaussian", "rho": 1.2, "phi": "tanh", "input_scale": 2.0, "r": 50, "d": 64},
        {"matrix": "orthogonal", "rho": 3.0, "phi": "linear", "r": 100, "d": 64},
    ]

    def controls(self):
        style = {"description_width": "initial"}
        return {
            "matrix": widgets.Dropdown(
                options=[(v, k) for k, v in KIND_LABELS.items()],
                value="nonnormal",
                description="循环矩阵 W_h",
                style=style,
            ),
            "rho": widgets.FloatSlider(
                value=0.9,
                min=RHO_RANGE[0],
                max=RHO_RANGE[1],
                step=0.01,
                description="谱半径 ρ",
                continuous_update=True,
                style=style,
            ),
            "beta": widgets.FloatSlider(
                value=4.0,
                min=BETA_RANGE[0],
                max=BETA_RANGE[1],
                step=0.1,
                description="非正规强度 β",
                continuous_update=True,
                style=style,
            ),
            "phi": widgets.ToggleButtons(
                options=list(rnn.PHIS), value="linear", description="φ", style=style
            ),
            "input_scale": widgets.FloatSlider(
                value=0.5,
                min=INPUT_RANGE[0],
                max=INPUT_RANGE[1],
                step=0.05,
                description="输入幅度（tanh 饱和）",
                style=style,
            ),
            "r": widgets.IntSlider(value=30, min=1, max=R_MAX, description="距离 r", style=style),
            "d": widgets.IntSlider(
                value=32, min=D_RANGE[0], max=D_RANGE[1], description="状态维度 d", style=style
            ),
            "seed": widgets.IntSlider(value=0, min=0, max=SEEDS - 1, description="随机种子", style=style),
        }

    def compute(
        self, matrix="nonnormal", rho=0.9, beta=4.0, phi="linear", input_scale=0.5, r=30, d=32, seed=0
    ) -> JacobianState:
        return jacobian_state(matrix, rho, beta, phi, input_scale, r, d, seed)

    def figure(self, state: JacobianState) -> go.Figure:
        return jacobian_figure(state)

    def caption(self, state: JacobianState) -> str:
        return jacobian_caption(state)

    def update(self, fig: go.Figure, state: JacobianState) -> None:
        """只改变了的属性才写进图里（主要是几条曲线的 y 数组），不重建图。"""
        last = getattr(fig, "_jacobian_last", None)
        traces = _traces(state)
        for i, (trace, new) in enumerate(zip(fig.data, traces)):
            changed = {k: v for k, v in new.items() if last is None or last[0][i].get(k) != v}
            changed.pop("type", None)
            for key in ("x", "y"):  # 数值数组以 numpy 形式交给 plotly：校验快得多，并以二进制传给前端
                if key in changed:
                    changed[key] = np.asarray(changed[key], dtype=float)
            if changed:
                trace.update(changed)
        layout = _layout(state)
        for key in ("annotations", "shapes"):
            if last is None or last[1][key] != layout[key]:
                fig.layout[key] = layout[key]
        fig.layout.title.text = layout["title"]["text"]
        fig.layout.xaxis2.range = layout["xaxis2"]["range"]
        fig.layout.yaxis.range = layout["yaxis"]["range"]
        fig._jacobian_last = (traces, layout)

    def static_figure(self) -> go.Figure:
        return tour_figure()


# 静态面 r 滑块的取值（默认停在 30），以及“导览”：每个场景换一组设置，标题说出该看什么。三类矩阵总是同时画出。
STATIC_R = [1, 2, 3, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100]
STATIC_R_DEFAULT = 30
TOUR = [
    (
        "①衰减",
        {"matrix": "orthogonal", "rho": 0.9, "phi": "linear"},
        "① 线性、正交、ρ = 0.9：范数恰好是 0.9ʳ，对数坐标上是一条下降的直线",
    ),
    (
        "②临界",
        {"matrix": "orthogonal", "rho": 1.0, "phi": "linear"},
        "② 线性、正交、ρ = 1：范数恒为 1，既不消失也不爆炸",
    ),
    (
        "③增长",
        {"matrix": "orthogonal", "rho": 1.1, "phi": "linear"},
        "③ 线性、正交、ρ = 1.1：范数按 1.1ʳ 增长，r = 100 时约 1.4 万倍",
    ),
    (
        "④非正规",
        {"matrix": "nonnormal", "rho": 0.9, "phi": "linear"},
        "④ 同样 ρ = 0.9 的非正规矩阵：先增长到十几倍，再衰减",
    ),
    (
        "⑤高斯",
        {"matrix": "gaussian", "rho": 0.9, "phi": "linear"},
        "⑤ 同样 ρ = 0.9 的高斯随机矩阵：前十来步停在 1 之上，奇异值铺得很开",
    ),
    (
        "⑥ρ=1",
        {"matrix": "nonnormal", "rho": 1.0, "phi": "linear"},
        "⑥ ρ = 1 也不安全：非正规矩阵的范数按 r 线性增长",
    ),
    (
        "⑦ tanh 小",
        {"matrix": "orthogonal", "rho": 1.1, "phi": "tanh", "input_scale": 0.1},
        "⑦ tanh、ρ = 1.1、输入很小：φ′ ≤ 1，范数落到 1.1ʳ 之下",
    ),
    (
        "⑧ tanh 饱和",
        {"matrix": "orthogonal", "rho": 1.1, "phi": "tanh", "input_scale": 2.0},
        "⑧ 同一个矩阵，输入变大使 tanh 饱和：增长变成了衰减",
    ),
    (
        "⑨溢出",
        {"matrix": "orthogonal", "rho": 3.0, "phi": "linear"},
        "⑨ 线性、ρ = 3：从 r = {over} 起 float32 装不下这个乘积",
    ),
]
