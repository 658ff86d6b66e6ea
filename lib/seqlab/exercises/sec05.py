"""第 1.5 节练习的自动检查。"""

from __future__ import annotations

import math
from functools import cache

import torch

from seqlab import attention
from seqlab.exercises import call, call_tracing_torch, checker, expect, expect_tensor, fail
from seqlab.measure import peak_memory_bytes


@checker(
    "1.5.1",
    "从零写出自注意力",
    objective="由 X 和三个投影矩阵算出 Q、K、V、分数矩阵、按行 softmax 和输出",
    difficulty=2,
    minutes=15,
)
def check_self_attention(self_attention):
    """学生函数 ``self_attention(X, W_Q, W_K, W_V) -> (S, d_v)`` 的输出。"""
    g = torch.Generator().manual_seed(15)
    for S, d, d_k, d_v in [(5, 6, 4, 3), (1, 4, 4, 4), (9, 8, 2, 5)]:
        X = torch.randn(S, d, generator=g, dtype=torch.float64)
        W_Q, W_K, W_V = (torch.randn(d, n, generator=g, dtype=torch.float64) for n in (d_k, d_k, d_v))
        got = expect_tensor(call(self_attention, X, W_Q, W_K, W_V), "返回值")
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        want, weights = attention.scaled_dot_product_attention(Q, K, V)
        if got.shape == weights.shape and got.shape != want.shape:
            fail(
                f"你返回的形状是 {tuple(got.shape)}，像是权重矩阵；题目要的是输出 softmax(QKᵀ/√d_k) V，形状 {tuple(want.shape)}。"
            )
        expect(
            got.shape == want.shape,
            f"S = {S}、d_v = {d_v} 时输出应是 {tuple(want.shape)}，你的是 {tuple(got.shape)}。",
        )
        unscaled = torch.softmax(Q @ K.T, dim=-1) @ V
        if (
            S > 1
            and torch.allclose(got.double(), unscaled, atol=1e-6)
            and not torch.allclose(unscaled, want, atol=1e-6)
        ):
            fail("结果和没有除以 √d_k 的版本一致：别忘了把分数缩放 1/√d_k。")
        columns = torch.softmax(Q @ K.T / math.sqrt(d_k), dim=0) @ V
        if S > 1 and torch.allclose(got.double(), columns, atol=1e-6):
            fail("softmax 的方向反了：每个 Query（一行）对所有 Key 归一化，应当用 dim=-1。")
        expect(
            torch.allclose(got.double(), want, atol=1e-6),
            f"S = {S} 时输出与库函数不一致（最大差 {(got.double() - want).abs().max():.3g}）。"
            "顺序是 Q = X W_Q、K = X W_K、V = X W_V → 分数 Q Kᵀ / √d_k → 按行 softmax → 乘 V。",
        )
    return (
        "与 seqlab.attention.scaled_dot_product_attention 的结果一致（包括 S = 1 这种只有自己可读的情形）。"
    )


PEAK_WIDTH = 16  # 练习 1.5.2 里那一层自注意力的宽度 d


@cache
def _attention_layer() -> attention.SelfAttention:
    g = torch.Generator().manual_seed(52)
    layer = attention.SelfAttention(PEAK_WIDTH)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return layer


@cache
def attention_peak(S: int) -> int:
    """实测：宽度 16 的一层自注意力对长度 ``S`` 的输入做一次前向，PyTorch 新分配内存的峰值（字节）。"""
    if not isinstance(S, int) or isinstance(S, bool) or S < 1:
        fail(f"长度必须是正整数，你传入的是 {S!r}。")
    if S > 4096:
        fail(f"长度 {S} 太长了：这道题的答案在几百以内，请从小的长度开始倍增。")
    X = torch.randn(S, PEAK_WIDTH, generator=torch.Generator().manual_seed(S))
    with torch.no_grad():
        return peak_memory_bytes(lambda: _attention_layer()(X))


MAX_MEASUREMENTS = 40


class _CountingMeasure:
    """把测量函数包起来，数一数学生调用了几次、问过哪些长度。"""

    def __init__(self, measure):
        self.measure, self.asked = measure, []

    def __call__(self, S):
        self.asked.append(S)
        if len(self.asked) > MAX_MEASUREMENTS:
            fail(
                f"你已经测了 {MAX_MEASUREMENTS} 次还没停下。一个一个长度地试太慢了："
                "先把 S 不断翻倍，直到超出预算，再在最后一段里二分。"
            )
        return self.measure(S)


def _synthetic_peak(S: int) -> int:
    """一条和公式对不上、但随 S 单调增长的“内存曲线”：用来确认答案来自测量，而不是公式。"""
    return 1000 + 3 * S * S + 50 * S


@checker(
    "1.5.2",
    "多长的序列会超出内存预算",
    objective="用实测的内存分配找出第一个超出预算的长度：先倍增、再二分，并与公式的估计对照",
    difficulty=2,
    minutes=15,
)
def check_first_length_over(first_length_over):
    """学生函数 ``first_length_over(measure, budget_bytes) -> int``：使 ``measure(S) > budget_bytes`` 的最小 ``S``。"""
    for measure, budget, what in [
        (_synthetic_peak, 50_000, "人造的内存曲线（1000 + 3S² + 50S）"),
        (attention_peak, 256 * 1024, "实测的自注意力峰值内存"),
    ]:
        counted = _CountingMeasure(measure)
        got = call(first_length_over, counted, budget)
        if not isinstance(got, int) or isinstance(got, bool):
            fail(f"应返回一个整数长度，你返回的是 {type(got).__name__}：{got!r}。")
        expect(got >= 1, f"长度至少是 1，你返回的是 {got}。")
        expect(counted.asked, f"在{what}上你一次也没有调用 measure：答案要来自测量。")
        over, under = measure(got), measure(got - 1) if got > 1 else 0
        expect(
            over > budget,
            f"在{what}上，S = {got} 时测得 {over:,} 字节，并没有超出预算 {budget:,}：答案还要再长一些。",
        )
        expect(
            under <= budget,
            f"在{what}上，S = {got - 1} 时测得 {under:,} 字节，已经超出预算 {budget:,}：你要找的是**第一个**超出的长度。",
        )
    formula = 2 * got * got * 4
    return (
        f"预算 256 KiB 时，第一个放不下的长度是 S = {got}，用了 {len(counted.asked)} 次测量。"
        f"这时实测峰值 {over:,} 字节，比只算分数与权重两个 S×S 矩阵的 {formula:,} 字节多出一截：Q、K、V 与输出也要占地方。"
    )


@checker(
    "1.5.3",
    "给分数矩阵加因果掩码",
    objective="把 j > i 的分数设为 -∞，使每个位置只读自己和前面的位置",
    difficulty=1,
    minutes=10,
)
def check_mask_future(mask_future):
    """学生函数 ``mask_future(scores) -> (S, S)``：把 ``j > i`` 的分数换成 ``-inf``，其余不变。"""
    g = torch.Generator().manual_seed(3)
    for S in (1, 4, 7):
        scores = torch.randn(S, S, generator=g)
        original = scores.clone()
        got = expect_tensor(call(mask_future, scores.clone()), "返回值")
        expect(got.shape == (S, S), f"形状应该不变：({S}, {S})，你的是 {tuple(got.shape)}。")
        allowed = attention.causal_mask(S)
        if S > 1 and torch.isinf(got.diagonal()).any():
            fail("对角线也被挡住了：位置 i 可以读它自己（j = i），只有 j > i 的未来位置要屏蔽。")
        if S > 1 and torch.isinf(got[allowed]).any() and not torch.isinf(got[~allowed]).any():
            fail("方向反了：你挡住的是过去（j < i）。因果掩码挡住的是未来，也就是对角线右上方的格子。")
        expect(torch.equal(got[allowed], original[allowed]), "j ≤ i 的分数应当原样保留。")
        expect(
            bool(torch.all(got[~allowed] == float("-inf"))), "j > i 的每个分数都应是 -inf（float('-inf')）。"
        )
        weights = torch.softmax(got, dim=-1)
        expect(bool(torch.all(torch.isfinite(weights))), "softmax 之后出现了 NaN：有没有哪一行被整行挡住？")
        expect(bool(torch.all(weights[~allowed] == 0)), "softmax 之后，未来位置的权重应当恰好是 0。")
    return "-inf 经过 softmax 变成恰好为 0 的权重：第 i 行只在前 i 个位置上分配注意力，每行仍然和为 1。"


def _sequential_scan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """参照答案：h_t = a_t ⊙ h_{t-1} + b_t，h_0 = 0，一步接一步。"""
    h, out = torch.zeros_like(b[0]), []
    for a_t, b_t in zip(a, b):
        h = a_t * h + b_t
        out.append(h)
    return torch.stack(out)


@checker(
    "1.5.4",
    "线性递推的并行扫描",
    objective="用倍增扫描在 ⌈log₂ S⌉ 轮内算出 $h_t=a_t⊙h_{t-1}+b_t$，并与逐步循环比对",
    difficulty=3,
    minutes=25,
)
def check_linear_scan(linear_scan):
    """学生函数 ``linear_scan(a, b) -> (h, rounds)``：``a, b, h`` 形状 ``(S, d)``，``rounds`` 是扫描的轮数。"""
    g = torch.Generator().manual_seed(54)
    for S, d in [(1, 3), (2, 2), (5, 4), (8, 1), (13, 3), (256, 2)]:
        a = torch.rand(S, d, generator=g, dtype=torch.float64) * 1.2
        b = torch.randn(S, d, generator=g, dtype=torch.float64)
        a_in, b_in = a.clone(), b.clone()
        got, trace = call_tracing_torch(linear_scan, a_in, b_in)
        expect(torch.equal(a_in, a) and torch.equal(b_in, b), "你的函数改动了传进来的 a 或 b：请在副本上计算。")
        expect(isinstance(got, tuple) and len(got) == 2, f"应返回 (h, rounds) 两样东西，你返回了 {type(got).__name__}。")
        h, rounds = got
        h = expect_tensor(h, "h")
        want = _sequential_scan(a, b)
        expect(h.shape == want.shape, f"S = {S}、d = {d} 时 h 的形状应是 {tuple(want.shape)}，你的是 {tuple(h.shape)}。")
        expect(
            torch.allclose(h.double(), want, atol=1e-9, rtol=1e-9),
            f"S = {S} 时 h 与逐步循环的结果不一致（最大差 {(h.double() - want).abs().max():.3g}）。"
            "每一轮里，位置 t 要把“自己这一段”与“前面相隔 k 的那一段”合并：新的 b_t = a_t ⊙ b_{t-k} + b_t，新的 a_t = a_t ⊙ a_{t-k}。",
        )
        depth = math.ceil(math.log2(S)) if S > 1 else 0
        expect(rounds == depth, f"S = {S} 时倍增扫描需要 ⌈log₂ S⌉ = {depth} 轮，你报告了 {rounds!r} 轮。")
        budget = 24 * depth + 24
        if trace.count > budget:
            fail(
                f"S = {S} 时你的函数调用了 {trace.count} 次张量运算，远多于 {depth} 轮扫描需要的数目："
                "看起来还是在一个位置一个位置地循环。每一轮应当用切片一次处理所有位置。"
            )
    return "扫描与循环逐位一致；S = 256 时只要 8 轮，而逐步循环要 256 步——每一轮里的乘加全部可以同时做。"
