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
from typing import Literal

import torch

from seqlab import rnn
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


@dataclass(frozen=True)
class FamilyCurve:
    """一类循环矩阵在一组设置下的全部结果（r = 1 … R_MAX）。"""

    kind: str
    M: torch.Tensor  # (R_MAX, d, d) 乘积的方向，‖M_r‖_F = 1
    log10_c: torch.Tensor  # (R_MAX,) 乘积的尺度
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
    sigma_max = float(torch.linalg.matrix_norm(W_h, ord=2))
    rho_W = rnn.spectral_radius(W_h)
    gamma_sigma = rnn.PHI_DERIVATIVE_BOUND[phi] * sigma_max
    rs = range(1, R_MAX + 1)
    return FamilyCurve(
        kind=kind,
        M=M,
        log10_c=log10_c,
        log10_norm=log10_norm,
        sigma_max_W=sigma_max,
        rho_W=rho_W,
        gamma_sigma_max=gamma_sigma,
        log10_bound=[r * math.log10(gamma_sigma) for r in rs],
        log10_radius=[r * math.log10(rho_W) for r in rs],
        regime=_regime(gamma_sigma, rho_W, phi),
        peak_r=_transient_peak(log10_norm),
        f32_overflow_r=over,
        f32_underflow_r=under,
        mean_slope=slope,
    )


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


def singular_values(curves: dict[str, FamilyCurve], r: int) -> dict[str, list[float]]:
    """每一类在距离 ``r`` 处乘积的全部奇异值（log10，从大到小；每类 d 个）。很小的 SVD，请在单线程里调用。"""
    return {k: rnn.log10_singular_values(c.M[r - 1], float(c.log10_c[r - 1])).tolist() for k, c in curves.items()}


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
        # 与某一类无关的参数不进缓存键：拖动 β 只重算非正规矩阵，线性 φ 下拖动输入幅度什么也不用重算。
        curves = {
            k: family_curve(
                k, d, rho, beta if k == "nonnormal" else 0.0, phi, input_scale if phi == "tanh" else 0.0, seed
            )
            for k in rnn.KINDS
        }
        singular = singular_values(curves, r)
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
                    [singular_values(state.curves, r) for r in distances],
                )
                for label, headline, state in scenes
            ],
        )
