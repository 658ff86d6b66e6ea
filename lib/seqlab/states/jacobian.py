"""第 1.3 节“雅可比矩阵连乘”的状态：梯度为什么会消失或爆炸。

一个 tanh（或线性）RNN 先以随机输入跑 ``BURN_IN + R_MAX`` 步，然后从最后一步 ``t`` 往回，
把 ``J_t J_{t-1} ⋯ J_{t-r+1}`` 一路乘到 ``r = R_MAX``。三类循环矩阵（正交、高斯、非正规）
取**相同的谱半径**一起算，读者选中的那一类画粗线，另外两类画细线作对照。

所有乘积都逐步缩放、把尺度单独记在对数里（``rnn.scaled_products``），求出真实的数量级：曲线从不因为
上溢成 ``inf`` 或下溢成 ``0`` 而断开。这里还记下乘积从哪个距离起超出 float32 的表示范围——训练中
正是在这里，梯度变成 inf、损失变成 NaN。

参数的类型与范围由探索器的参数检查（``Explorer.compute``）；这里只计算。
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import torch

from seqlab import rnn, states
from seqlab.runtime import single_thread

R_MAX = 100  # 算到的最大距离
BURN_IN = 20  # 先跑这么多步，让状态离开 h_0 = 0 附近
D_RANGE = (2, 64)
RHO_RANGE = (0.1, 3.0)
BETA_RANGE = (0.0, 10.0)
INPUT_RANGE = (0.0, 4.0)
SEEDS = 10
F32_MAX = float(torch.finfo(torch.float32).max)  # ≈ 3.4e38
F32_TINY = float(torch.finfo(torch.float32).tiny)  # ≈ 1.2e-38，最小的正规数
KIND_LABELS = {"orthogonal": "正交 ρQ", "gaussian": "高斯随机", "nonnormal": "非正规（若尔当块）"}

# 由 γ·σ_max(W_h) 与 ρ(W_h) 能推出什么（与距离 r 无关）：
# decay：γσ_max < 1，必然指数衰减；transient：γσ_max ≥ 1 而 ρ < 1，上界管不住短期增长；
# growth / critical：线性且 ρ > 1 / ρ = 1，‖W_hʳ‖₂ ≥ ρʳ，必然增长 / 不会衰减；
# uncertain：tanh 且 γσ_max ≥ 1、ρ ≥ 1，可能爆炸也可能不（看饱和多少）。
Regime = Literal["decay", "transient", "growth", "critical", "uncertain"]
_TOL = 1e-9  # 判断“< 1”“> 1”时容许的舍入误差


# 状态里的对数值（log10）保留到小数点后 LOG10_DECIMALS 位（相对精度约 2e-10，远细于图上的 4 位有效数字）：
# 数学上恰好是 1 的量（例如正交、ρ = 1 时的每个范数）算出来是 1 ± 1e-16，对数是 ±1e-16 这样的舍入误差；
# 舍入之后两边都是 0，网页与 Python 的状态才逐项一致。
LOG10_DECIMALS = 10
# 右图只画到最大奇异值的 10^-SINGULAR_DECADES 倍：更小的奇异值画在这条线上。双精度连乘与 SVD 的舍入误差约为
# 最大奇异值的 1e-16 倍，奇异值越小，相对误差越大（小 6 个数量级时约 1e-9，小 12 个数量级时约 1e-3，
# 再小就全是舍入误差）；它们对梯度的大小没有可见的影响。截在这里，每个画出的奇异值都有 8 位以上的有效数字。
SINGULAR_DECADES = 6


def _round_log10(values: torch.Tensor) -> torch.Tensor:
    """对数值保留 ``LOG10_DECIMALS`` 位小数（乘以 10 的幂、四舍六入五成双、再除回去；网页上同样的三步）。"""
    scale = 10.0**LOG10_DECIMALS
    return torch.round(values * scale) / scale


@dataclass(frozen=True)
class FamilyCurve:
    """一类循环矩阵在一组设置下的全部结果（r = 1 … R_MAX）。"""

    kind: str
    log10_norm: torch.Tensor  # (R_MAX,) log10 ‖∂h_t/∂h_{t-r}‖_2
    sigma_max_W: float  # σ_max(W_h)
    rho_W: float  # ρ(W_h)
    gamma_sigma_max: float  # γ·σ_max(W_h)，γ = sup|φ′|
    log10_bound: list[float]  # (R_MAX,) 上界 log10 (γσ_max)ʳ
    log10_radius: list[float]  # (R_MAX,) log10 ρʳ
    regime: Regime  # 由 γσ_max 与 ρ 能推出什么（见上面的 Regime）
    peak_r: int | None  # 范数先增长、在这个距离达到峰值后才下降；不是这样时为 None
    f32_overflow_r: int | None  # float32 直接连乘第一次出现 inf 的距离
    f32_underflow_r: int | None  # float32 直接连乘第一次整体小于最小正规数的距离
    mean_slope: float  # 平均的 φ'(a_j)：饱和程度


@dataclass(frozen=True)
class Products:
    """一类矩阵的全部乘积 ``P_r = 10^{log10_c[r-1]} · M_r``（不进状态的 JSON：改变 r 时由它求奇异值）。"""

    M: torch.Tensor  # (R_MAX, d, d) 乘积的方向，‖M_r‖_F = 1
    log10_c: torch.Tensor  # (R_MAX,) 乘积的尺度


# ---------------------------------------------------------------------------
# 可复现的前向：tanh RNN 可能是混沌的——h_0 附近 1e-16 的差别，100 步后可以长成整个数量级。网页实时面要算出
# 同一条轨迹，所以这里的前向只用逐个舍入的加减乘除（numpy 的逐元素运算，不用 BLAS 与数学库），按固定的顺序：
# a_t = u_t + W_h[:, 0] h_0 + W_h[:, 1] h_1 + …（逐项相加），tanh 与 φ′ 由下面的 ``_exp`` 算出。
# 浏览器里的 JavaScript（assets/live/jacobian_product.mjs）做完全相同的运算，得到逐位相同的 a_t。
# tests/test_rnn.py 把它与 rnn.ElmanRNN、torch.tanh、rnn.phi_derivative 对照。
# ---------------------------------------------------------------------------
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # ln 2 = 高位（低 32 位为 0）+ 低位
_INV_LN2 = 1.44269504088896338700e00
_EXP_TERMS = 14  # exp(r) 的泰勒级数取到 r^13/13!：|r| ≤ ln2/2 时截断误差约 5e-18


def _exp(x: np.ndarray) -> np.ndarray:
    """``exp(x)``，``-700 ≤ x ≤ 0``：``x = k ln2 + r``，``exp(x) = 2^k · exp(r)``，``exp(r)`` 用泰勒级数（Horner）。
    相对误差约 2e-16；只用加减乘除、向下取整与乘以 2 的整数次幂（精确），所以 JavaScript 能逐位算出同样的数。"""
    k = np.floor(x * _INV_LN2 + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = np.full_like(r, 1.0 / math.factorial(_EXP_TERMS - 1))
    for n in range(_EXP_TERMS - 2, -1, -1):
        p = p * r + 1.0 / math.factorial(n)
    return np.ldexp(p, k.astype(np.int64))


def _tanh_and_slope(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(tanh(a), φ′(a) = 1/cosh²(a))``，都由 ``t = exp(-2|a|)`` 得到：``tanh = ±(1 - t)/(1 + t)``，
    ``1/cosh² = 4t/(1 + t)²``。``|a| > 350`` 时 ``t`` 取 ``exp(-700)``（这时 tanh 已是 ±1，φ′ 小于 1e-303）。"""
    t = _exp(np.maximum(-2.0 * np.abs(a), -700.0))
    magnitude = (1.0 - t) / (1.0 + t)
    return np.where(a < 0, -magnitude, magnitude), (4.0 * t) / ((1.0 + t) * (1.0 + t))


def reproducible_preactivations(W_h: torch.Tensor, U: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """tanh RNN ``a_t = u_t + W_h h_{t-1}``、``h_t = tanh(a_t)``（``h_0 = 0``）的全部 ``a_t`` 与 ``φ′(a_t)``。

    ``W_h (d, d)``，``U (S, d)`` 是每一步的输入项 ``u_t = W_x e_t + b``；返回两个 ``(S, d)`` 的 float64 张量。
    与 ``rnn.ElmanRNN`` 是同一个公式，只是求和的顺序固定（见上面的说明）。"""
    W = W_h.detach().to(torch.float64).numpy()
    u = U.detach().to(torch.float64).numpy()
    h = np.zeros(W.shape[0])
    A, slopes = np.empty_like(u), np.empty_like(u)
    for t in range(u.shape[0]):
        a = u[t].copy()
        for j in range(W.shape[1]):
            a += W[:, j] * h[j]
        h, slopes[t] = _tanh_and_slope(a)
        A[t] = a
    return torch.from_numpy(A), torch.from_numpy(slopes)


def input_noise(d: int, seed: int) -> torch.Tensor:
    """RNN 的随机输入 ``E``，形状 ``(BURN_IN + R_MAX, d)``，float64。"""
    gen = torch.Generator().manual_seed(seed + 7)
    return torch.randn(BURN_IN + R_MAX, d, generator=gen, dtype=torch.float64)


@lru_cache(maxsize=96)
def family_products(
    kind: str, d: int, rho: float, beta: float, phi: str, input_scale: float, seed: int
) -> tuple[FamilyCurve, Products]:
    """跑一遍 RNN，求出 ``r = 1 … R_MAX`` 的全部乘积（按参数缓存：只改 r 时不必重算）。"""
    W_h = rnn.recurrent_matrix(kind, d, rho, beta=beta, seed=seed)
    if phi == "linear":  # 线性时 J_j = W_h，与状态无关，不必真的跑前向
        slopes = torch.ones(R_MAX, d, dtype=torch.float64)
    else:  # W_x = input_scale · I，b = 0
        _, slopes = reproducible_preactivations(W_h, input_scale * input_noise(d, seed))
        slopes = slopes[BURN_IN:]  # φ'(a_j)，j = t-R_MAX+1 … t
    Js = slopes.unsqueeze(-1) * W_h  # (R_MAX, d, d)，按时间顺序：J_j = diag(φ'(a_j)) W_h（rnn.step_jacobian）
    # 尺度 c_r 单独记账，方向 M_r 的范数始终在 1 附近。用 float64 连乘：网页上的计算同样是 float64，两边才能一致。
    M, log10_c = rnn.scaled_products(Js)
    log10_norm = _round_log10(rnn.log10_spectral_norms(M, log10_c))
    over, under = _float32_failure(M, log10_c)
    # σ_max 保留 12 位有效数字：它常常恰好是整数或 ρ（例如 β = 0 时 W_h = ρI），不同的算法算出它或它旁边的双精度数；
    # 舍入之后两边相同，上界 (γσ_max)ʳ 在 γσ_max = 1 时也恰好是 1。
    sigma_max = float(f"{float(torch.linalg.matrix_norm(W_h, ord=2)):.12g}")
    # ρ(W_h) 由构造恰好是 ρ（rnn.recurrent_matrix；tests/test_rnn.py 用特征值核对）。不用数值特征值：非正规矩阵的
    # 特征值是若尔当块的重根，数值解差 √(ε β) ≈ 1e-8，ρ = 1 时就会被当成 ρ > 1。
    rho_W = rho
    gamma_sigma = rnn.PHI_DERIVATIVE_BOUND[phi] * sigma_max
    rs = range(1, R_MAX + 1)
    curve = FamilyCurve(
        kind=kind,
        log10_norm=log10_norm,
        sigma_max_W=sigma_max,
        rho_W=rho_W,
        gamma_sigma_max=gamma_sigma,
        log10_bound=_round_log10(torch.tensor([r * math.log10(gamma_sigma) for r in rs], dtype=torch.float64)).tolist(),
        log10_radius=_round_log10(torch.tensor([r * math.log10(rho_W) for r in rs], dtype=torch.float64)).tolist(),
        regime=_regime(gamma_sigma, rho_W, phi),
        peak_r=_transient_peak(log10_norm),
        f32_overflow_r=over,
        f32_underflow_r=under,
        mean_slope=float(slopes.mean()),
    )
    return curve, Products(M, log10_c)


def _regime(gamma_sigma: float, rho_W: float, phi: str) -> Regime:
    if gamma_sigma < 1 - _TOL:
        return "decay"
    if rho_W < 1 - _TOL:
        return "transient"
    if phi == "linear":  # 线性时 ‖W_hʳ‖₂ ≥ ρʳ 对每个 r 都成立
        return "growth" if rho_W > 1 + _TOL else "critical"
    return "uncertain"


def _transient_peak(log10_norm: torch.Tensor) -> int | None:
    """范数若先增长（峰值比 r = 1 处高出 log10 0.05 以上）、在 1 < r < R_MAX 处达到峰值，返回峰值的距离。"""
    peak = int(torch.argmax(log10_norm)) + 1
    if 1 < peak < R_MAX and float(log10_norm[peak - 1]) > float(log10_norm[0]) + 0.05:
        return peak
    return None


def _float32_failure(M: torch.Tensor, log10_c: torch.Tensor) -> tuple[int | None, int | None]:
    """float32 从哪个距离起装不下这个乘积：第一次有元素超过 float32 最大值（上溢成 inf），
    以及第一次全部元素都小于最小正规数（下溢）。由精确的数量级 ``c_r · max|M_r|`` 判断。"""
    log10_max = log10_c + torch.log10(M.abs().amax(dim=(1, 2)).to(torch.float64))
    over = torch.nonzero(log10_max > math.log10(F32_MAX))
    under = torch.nonzero(log10_max < math.log10(F32_TINY))
    return (int(over[0]) + 1 if len(over) else None), (int(under[0]) + 1 if len(under) else None)


def singular_values(products: dict[str, Products], r: int) -> dict[str, list[float]]:
    """每一类在距离 ``r`` 处乘积的全部奇异值（log10，从大到小；每类 d 个）。比最大的小 ``SINGULAR_DECADES`` 个
    数量级以上的画在那个下限上（见 ``SINGULAR_DECADES``）。很小的 SVD，请在单线程里调用。"""
    out = {}
    for kind, p in products.items():
        log10_sv = rnn.log10_singular_values(p.M[r - 1], float(p.log10_c[r - 1]))
        out[kind] = _round_log10(log10_sv.clamp_min(float(log10_sv[0]) - SINGULAR_DECADES)).tolist()
    return out


def families(
    d: int, rho: float, beta: float, phi: str, input_scale: float, seed: int
) -> tuple[dict[str, FamilyCurve], dict[str, Products]]:
    """三类矩阵的结果与乘积。与某一类无关的参数不进缓存键：拖动 β 只重算非正规矩阵，线性 φ 下拖动输入幅度什么也不用重算。"""
    both = {
        k: family_products(
            k, d, rho, beta if k == "nonnormal" else 0.0, phi, input_scale if phi == "tanh" else 0.0, seed
        )
        for k in rnn.KINDS
    }
    return {k: c for k, (c, _) in both.items()}, {k: p for k, (_, p) in both.items()}


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


def jacobian_state(
    matrix: str, rho: float, beta: float, phi: str, input_scale: float, r: int, d: int, seed: int
) -> JacobianState:
    # 舍入到 6 位小数：只差末位舍入误差的取值（例如滑块给出的 0.30000000000000004）共用同一份缓存。
    rho, beta, input_scale = round(rho, 6), round(beta, 6), round(input_scale, 6)
    with single_thread():
        curves, products = families(d, rho, beta, phi, input_scale, seed)
        singular = singular_values(products, r)
    return JacobianState(matrix, phi, rho, beta, input_scale, r, d, seed, curves, singular)


@dataclass(frozen=True)
class TourScene:
    """静态面“导览”的一个场景：滑块上的名字、标题，以及这组设置下的状态。"""

    label: str
    headline: str
    state: JacobianState
    singular: list[dict[str, list[float]]]  # 静态面 r 滑块的每个距离处三类乘积的奇异值，与 distances 对齐


@dataclass(frozen=True)
class TourState:
    """静态面：若干个场景，外加 r 滑块的各个取值（``distances``，从小到大）。"""

    distances: list[int]
    scenes: list[TourScene]


def _products(state: JacobianState) -> dict[str, Products]:
    return families(state.d, state.rho, state.beta, state.phi, state.input_scale, state.seed)[1]


def tour_state(distances: Sequence[int], scenes: Sequence[tuple[str, str, JacobianState]]) -> TourState:
    """``scenes`` 是 ``(名字, 标题, 状态)``；标题里的 ``{over}`` 换成所选矩阵 float32 上溢的距离。"""
    with single_thread():
        return TourState(
            list(distances),
            [
                TourScene(
                    label,
                    headline.format(over=state.selected.f32_overflow_r),
                    state,
                    [singular_values(_products(state), r) for r in distances],
                )
                for label, headline, state in scenes
            ],
        )


def web_data(d: int = 32, seed: int = 0) -> dict[str, Any]:
    """网页实时面计算 ``jacobian_state`` 所需的常量（``d``、``seed`` 在网页上固定在默认值）：三类循环矩阵的固定部分
    （正交的 ``Q``；高斯的 ``G`` 与它的谱半径；非正规的 ``N``，见 ``rnn.recurrent_matrix``）、随机输入 ``E``，都是
    float64 原样（``states.packed``）。浏览器由它们对任意 ρ、β 逐位算出同一个 ``W_h``，再算出同样的状态。"""
    G = rnn.gaussian_matrix(d, seed)
    return {
        "Q": states.packed(rnn.orthogonal_matrix(d, seed)),
        "G": states.packed(G),
        "G_radius": rnn.spectral_radius(G),
        "N": states.packed(rnn.nilpotent_part(d, seed)),
        "E": states.packed(input_noise(d, seed)),
        "kinds": list(rnn.KINDS),
        "kind_labels": KIND_LABELS,
        "gamma": rnn.PHI_DERIVATIVE_BOUND,
        "R_MAX": R_MAX,
        "BURN_IN": BURN_IN,
        "F32_MAX": F32_MAX,
        "F32_TINY": F32_TINY,
        "LOG10_DECIMALS": LOG10_DECIMALS,
        "SINGULAR_DECADES": SINGULAR_DECADES,
    }
