"""第 1.5 节练习的自动检查。"""

from __future__ import annotations

import math
from functools import cache

import torch

from seqlab import attention
from seqlab.exercises import call, checker, expect, expect_close, fail


def _as_tensor(value, what: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        fail(f"{what}应该是 torch.Tensor，你返回的是 {type(value).__name__}。")
    return value


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
        got = _as_tensor(call(self_attention, X, W_Q, W_K, W_V), "返回值")
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


@checker(
    "1.5.2",
    "配对数与分数矩阵的内存",
    objective="算出 S² 或 S(S+1)/2 个配对，以及 batch × heads × layers × 字节数下分数矩阵的内存",
    difficulty=1,
    minutes=10,
)
def check_score_cost(score_cost):
    """学生函数 ``score_cost(S, causal, batch, heads, layers, bytes_per_value) -> (配对数, 字节数)``。"""
    cases = [
        (4, False, 1, 1, 1, "float32"),
        (4, True, 1, 1, 1, "float32"),
        (1024, True, 8, 12, 12, "float16"),
        (4096, False, 2, 16, 24, "bfloat16"),
        (7, True, 3, 2, 5, "float64"),
    ]
    for S, causal, batch, heads, layers, dtype in cases:
        nbytes = attention.DTYPE_BYTES[dtype]
        got = call(score_cost, S, causal, batch, heads, layers, nbytes)
        expect(
            isinstance(got, tuple) and len(got) == 2, f"应返回 (配对数, 字节数) 两个数，你返回了 {got!r}。"
        )
        pairs, memory = got
        want_pairs = attention.pair_count(S, causal)
        if causal and pairs == S * S // 2:
            fail(
                f"S = {S} 的因果掩码下你给了 S²/2 = {pairs}：别漏了对角线，位置 i 也读它自己，共 S(S+1)/2 个。"
            )
        if causal and pairs == S * S:
            fail(f"S = {S} 加了因果掩码后，位置 i 只读 j ≤ i：配对数是 S(S+1)/2 = {want_pairs}，不是 S²。")
        expect_close(pairs, want_pairs, f"S = {S}、causal = {causal} 的配对数")
        want_bytes = attention.score_bytes(S, batch=batch, heads=heads, layers=layers, dtype=dtype)
        if causal and math.isclose(float(memory), want_bytes * (S + 1) / (2 * S)):
            fail(
                "你按有效配对数算了内存；题目问的是朴素实现：它把整个 S × S 矩阵都存下来（被屏蔽的格子也占地方）。"
            )
        expect_close(memory, want_bytes, f"S = {S}、{batch} × {heads} 头 × {layers} 层 × {nbytes} 字节的内存")
    return "例如 S = 4096、2 × 16 头 × 24 层、bfloat16 时分数矩阵要 24 GiB——长度翻倍，这个数就变成 4 倍。"


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
        got = _as_tensor(call(mask_future, scores.clone()), "返回值")
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


@cache
def _measured_steps(S: int) -> tuple[int, int]:
    return attention.first_reach(attention.rnn_reach(S)), attention.first_reach(attention.attention_reach(S))


@checker(
    "1.5.4",
    "数一数串行步数",
    objective="说出第 1 个位置的信息到达第 S 个位置要经过几次跨位置传递：RNN 与自注意力各几次",
    difficulty=2,
    minutes=10,
)
def check_path_steps(path_steps):
    """学生函数 ``path_steps(S, kind) -> int``，``kind`` 为 ``"rnn"`` 或 ``"attention"``。"""
    for S in (1, 2, 3, 6, 9):
        rnn_steps, attention_steps = _measured_steps(S)
        got = call(path_steps, S, "rnn")
        if S > 1 and got == S:
            fail(f"S = {S} 时 RNN 你给了 {got}：位置 1 读入 x₁ 不算跨位置传递，从 h₁ 到 h_S 共 S-1 次。")
        expect_close(got, rnn_steps, f"S = {S} 时 RNN 的传递次数（用雅可比矩阵实测为 {rnn_steps}）")
        got = call(path_steps, S, "attention")
        expect_close(got, attention_steps, f"S = {S} 时一层自注意力的传递次数（实测为 {attention_steps}）")
    for S in (100, 4096):
        expect_close(call(path_steps, S, "rnn"), S - 1, f"S = {S} 时 RNN 的传递次数")
        expect_close(call(path_steps, S, "attention"), 1, f"S = {S} 时自注意力的传递次数")
    return "RNN 要 S-1 次、而且一次都省不掉；自注意力 1 次，代价是每一层都要算 S² 个配对。"
