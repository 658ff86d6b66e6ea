"""随规模变化的实测：一层自注意力与一层 RNN 的用时、峰值内存与运算量随 ``S`` 的变化（对数—对数斜率），
以及 Embedding 的两种查表做法随 ``V`` 的变化。内存与运算量可以断言；用时随机器负载起伏，只用来显示。"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from seqlab.attention import SelfAttention, check_length
from seqlab.embedding import lookup, lookup_by_matmul, one_hot, onehot_bytes
from seqlab.errors import DEFAULT_BUDGET_BYTES, InputError, guard_memory
from seqlab.measure.counts import counted_flops
from seqlab.measure.timing import peak_memory_bytes, timing_samples
from seqlab.runtime import single_thread


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """在对数—对数坐标上做最小二乘直线拟合，返回斜率（``y ∝ x^斜率``）。"""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("至少需要两个点，且 x、y 个数相同")
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly))
    den = sum((a - mx) ** 2 for a in lx)
    return num / den


@dataclass
class ScalingResult:
    """``measure_scaling`` 的结果：每个长度一行。时间单位秒，内存单位字节。

    用时随机器负载起伏，只用来显示；内存（分配的字节）与运算量（PyTorch 的 ``FlopCounterMode``
    数出来的浮点运算数）与负载无关，可以断言。
    """

    lengths: list[int]
    attention_seconds: list[float]
    rnn_seconds: list[float]
    attention_peak: list[int]
    rnn_peak: list[int]
    attention_flops: list[int]
    rnn_flops: list[int]
    d_model: int

    def slopes(self, fit_from: int = 0) -> dict[str, float]:
        """从第 ``fit_from`` 个长度起拟合四条曲线的对数—对数斜率。"""
        xs = self.lengths[fit_from:]
        return {
            "attention_time": loglog_slope(xs, self.attention_seconds[fit_from:]),
            "rnn_time": loglog_slope(xs, self.rnn_seconds[fit_from:]),
            "attention_memory": loglog_slope(xs, self.attention_peak[fit_from:]),
            "rnn_memory": loglog_slope(xs, self.rnn_peak[fit_from:]),
            "attention_flops": loglog_slope(xs, self.attention_flops[fit_from:]),
            "rnn_flops": loglog_slope(xs, self.rnn_flops[fit_from:]),
        }


def measure_scaling(
    lengths: Sequence[int] = (128, 256, 512, 1024, 2048),
    d_model: int = 64,
    repeats: int = 5,
    seed: int = 0,
    budget: float = DEFAULT_BUDGET_BYTES,
) -> ScalingResult:
    """在本机上实测一层自注意力与一层 RNN 的前向用时和峰值内存随 ``S`` 的变化。

    用时是单线程下这一线程占用的 CPU 时间、``repeats`` 次里最快的一次（见 ``timing_samples``）。
    两者的宽度都是 ``d_model``、batch 为 1、不求梯度。自注意力要物化 ``(S, S)`` 的分数与权重，
    RNN 只保留 ``(S, d_model)`` 的状态序列。运行前先按最大的 ``S`` 估算内存（分数、权重各一份，
    再加线性项），超过 ``budget`` 就拒绝。
    """
    lengths = [check_length(int(S)) for S in lengths]
    S_max = max(lengths)
    estimate = 3 * S_max * S_max * 4 + 8 * S_max * d_model * 4
    guard_memory(f"S = {S_max} 的用时与内存实测", estimate, budget)
    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        attention = SelfAttention(d_model)
        rnn = nn.RNN(d_model, d_model, batch_first=True)
    result = ScalingResult(lengths, [], [], [], [], [], [], d_model)
    with single_thread():  # 单线程：曲线反映算法本身的代价，不受线程调度和其他进程的干扰
        for S in lengths:
            _measure_one(result, attention, rnn, torch.randn(1, S, d_model, generator=g), repeats)
    return result


def _measure_one(result: ScalingResult, attention: SelfAttention, rnn: nn.RNN, X: torch.Tensor, repeats: int):
    def run_attention():
        with torch.no_grad():
            return attention(X)[0]

    def run_rnn():
        with torch.no_grad():
            return rnn(X)[0]

    result.attention_seconds.append(min(timing_samples(run_attention, repeats)))
    result.rnn_seconds.append(min(timing_samples(run_rnn, repeats)))
    result.attention_peak.append(peak_memory_bytes(run_attention))
    result.rnn_peak.append(peak_memory_bytes(run_rnn))
    result.attention_flops.append(counted_flops(run_attention))
    result.rnn_flops.append(counted_flops(run_rnn))


# ---------------------------------------------------------------- Embedding：按行索引与 one-hot 乘法
@dataclass
class LookupTiming:
    """一次实测：``V`` 行、``d`` 列的表，查 ``n`` 个 token。用时取若干次中的最小值（秒）。

    内存是 ``peak_memory_bytes`` 实测的、查一次表期间 PyTorch **新分配**内存的峰值（字节），
    不是按公式推算的：两种做法各运行一次，由分析器记录每一次分配与释放。
    """

    V: int
    n: int
    d: int
    index_seconds: float
    matmul_seconds: float
    index_bytes: int
    matmul_bytes: int


def measure_lookup(
    Vs: Sequence[int],
    *,
    n_tokens: int = 256,
    d: int = 64,
    repeats: int = 3,
    budget: float = DEFAULT_BUDGET_BYTES,
    seed: int = 0,
) -> list[LookupTiming]:
    """对每个 ``V`` 实测“按行索引”（``seqlab.embedding.lookup``）和“one-hot × E”的用时与内存峰值。

    在分配任何东西之前，先对最大的 ``V`` 估算内存（``E`` 本身 + one-hot 矩阵 + 输出），
    超过 ``budget`` 就抛出 ``MemoryBudgetError``，消息里带着估算值。
    """
    if not Vs:
        raise InputError("至少给出一个词表大小 V。")
    if min(Vs) < 1 or n_tokens < 1 or d < 1:
        raise InputError("V、n_tokens、d 都必须是正整数。")
    V_max = max(Vs)
    estimate = (V_max * d + onehot_bytes(n_tokens, V_max) // 4 + 2 * n_tokens * d) * 4
    guard_memory(f"V = {V_max}、{n_tokens} 个 token 的查表实验", estimate, budget)
    g = torch.Generator().manual_seed(seed)
    out = []
    with torch.no_grad(), single_thread():
        for V in Vs:
            E = torch.randn(V, d, generator=g)
            ids = torch.randint(0, V, (n_tokens,), generator=g)
            a, u = lookup(E, ids), one_hot(ids, V)
            b = u @ E
            if not torch.allclose(a, b):
                raise AssertionError("两种查表结果不一致")
            t_index = min(timing_samples(functools.partial(lookup, E, ids), repeats))
            t_matmul = min(timing_samples(functools.partial(lookup_by_matmul, E, ids), repeats))
            peak_index = peak_memory_bytes(functools.partial(lookup, E, ids))
            peak_matmul = peak_memory_bytes(functools.partial(lookup_by_matmul, E, ids))
            out.append(LookupTiming(V, n_tokens, d, t_index, t_matmul, peak_index, peak_matmul))
            del E, u, a, b
    return out
