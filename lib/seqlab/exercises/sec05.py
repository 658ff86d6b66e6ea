"""第 1.5 节练习的自动检查。"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Callable
from functools import cache

import torch

from seqlab import attention
from seqlab.exercises import call, call_tracing_torch, checker, expect, expect_tensor, fail, op_name
from seqlab.measure import peak_memory_bytes

# 1.5.1 里不许调用的现成实现：名字里（按 “.” 与 “::” 切开的任何一段）含有这些词的运算，
# 包括 softmin、log_softmax、torch._softmax、aten::_softmax 与 PyTorch 的各种注意力内核。
# seqlab.attention 里的函数也调用 torch.softmax，所以用库来答题同样会被认出来。
# F.cross_entropy、nll 与 gumbel 采样在一次调用里先做 log_softmax：exp(−交叉熵) 就是现成的 softmax 权重，也算。
# PyTorch 编码器层的融合内核（torch._transformer_encoder_layer_fwd）里也有注意力，也算。
READY_MADE = ("softmax", "softmin", "attention", "cross_entropy", "nll", "gumbel", "transformer")
# 借自动求导得到 softmax（logsumexp 的梯度就是 softmax）同样不算自己写：按名字的一整段匹配。
# 反向模式（grad、backward）与前向模式（对偶数：make_dual / unpack_dual 及其带下划线的内部版本）都算。
AUTOGRAD = ("grad", "backward", "vjp", "jvp", "jacrev", "jacfwd", "linearize", "hessian",
            "make_dual", "_make_dual", "_make_dual_copy", "unpack_dual", "_unpack_dual", "_fw_primal", "_fw_primal_copy")


def _ready_made(calls) -> list[str]:
    """运算记录里名字含有 ``READY_MADE`` 中某个词的那些运算（只取名字里的那一段）。"""
    return sorted({part for name in calls for part in re.split(r"\.|::", name)
                   if any(word in part.lower() for word in READY_MADE)})


@checker(
    "1.5.1",
    "从零写出自注意力",
    objective="由 X 和三个投影矩阵算出 Q、K、V、分数矩阵、按行 softmax 和输出",
    difficulty=2,
    minutes=15,
)
def check_self_attention(self_attention):
    """学生函数 ``self_attention(X, W_Q, W_K, W_V) -> (S, d_v)`` 的输出；按行 softmax 自己写，而且数值稳定。"""
    g = torch.Generator().manual_seed(15)
    # 最后一组把 W_Q 放大：分数超过 1000，直接求 exp 会溢出成 inf，只有先减去每行最大值才算得出来
    for S, d, d_k, d_v, scale in [(5, 6, 4, 3, 1.0), (1, 4, 4, 4, 1.0), (9, 8, 2, 5, 1.0), (6, 5, 3, 2, 60.0)]:
        X = torch.randn(S, d, generator=g, dtype=torch.float64)
        W_Q, W_K, W_V = (torch.randn(d, n, generator=g, dtype=torch.float64) for n in (d_k, d_k, d_v))
        W_Q = W_Q * scale
        # 参照答案在调用学生函数之前算好，学生拿到的是副本：原地改动（例如清零）传入的张量骗不过检查
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        want, weights = attention.scaled_dot_product_attention(Q, K, V)
        got, trace = call_tracing_torch(self_attention, X.clone(), W_Q.clone(), W_K.clone(), W_V.clone())
        ready = _ready_made(trace.calls)
        if ready:
            fail(
                f"你的函数调用了现成的 {'、'.join(ready)}。这道题要自己写出按行 softmax："
                "先减去每行的最大值，再求 exp，再除以这一行的和（seqlab.attention 里的函数也调用了 torch.softmax）。"
            )
        autograd = trace.used(*AUTOGRAD)
        if autograd:
            fail(
                "你的函数用了自动求导（" + "、".join(autograd) + "）。logsumexp 的梯度恰好就是 softmax，"
                "可这等于借 PyTorch 替你写了 softmax。请直接写出按行 softmax：减去每行最大值、求 exp、除以这一行的和。"
            )
        got = expect_tensor(got, "返回值")
        if got.shape == weights.shape and got.shape != want.shape:
            fail(
                f"你返回的形状是 {tuple(got.shape)}，像是权重矩阵；题目要的是输出 softmax(QKᵀ/√d_k) V，形状 {tuple(want.shape)}。"
            )
        expect(
            got.shape == want.shape,
            f"S = {S}、d_v = {d_v} 时输出应是 {tuple(want.shape)}，你的是 {tuple(got.shape)}。",
        )
        got = got.detach().double()
        if not torch.isfinite(got).all():
            fail(
                f"分数很大时（这一组里绝对值最大的分数是 {float((Q @ K.T).abs().max() / math.sqrt(d_k)):.0f}），你的输出里出现了 "
                "inf 或 NaN。直接求 exp，大分数会上溢成 inf，inf/inf 是 NaN；只减去整个矩阵的最大值也不行："
                "分数偏小的那些行，exp 会全部下溢成 0，0/0 还是 NaN。每一行要减去这一行自己的最大值。"
            )
        unscaled = torch.softmax(Q @ K.T, dim=-1) @ V
        if S > 1 and torch.allclose(got, unscaled, atol=1e-6) and not torch.allclose(unscaled, want, atol=1e-6):
            fail("结果和没有除以 √d_k 的版本一致：别忘了把分数缩放 1/√d_k。")
        columns = torch.softmax(Q @ K.T / math.sqrt(d_k), dim=0) @ V
        if S > 1 and torch.allclose(got, columns, atol=1e-6):
            fail("softmax 的方向反了：每个 Query（一行）对所有 Key 归一化，应当沿最后一维（每一行）求和。")
        expect(
            torch.allclose(got, want, atol=1e-6),
            f"S = {S} 时输出与库函数不一致（最大差 {(got - want).abs().max():.3g}）。"
            "顺序是 Q = X W_Q、K = X W_K、V = X W_V → 分数 Q Kᵀ / √d_k → 按行 softmax → 乘 V。",
        )
    return (
        "与 seqlab.attention.scaled_dot_product_attention 的结果一致（包括 S = 1 这种只有自己可读的情形），"
        "分数很大时也没有溢出：减去每行最大值不改变 softmax，却让最大的那一项变成 e⁰ = 1。"
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


def _length(S) -> int:
    """学生传来的长度：Python 或 NumPy 的整数（任何有 ``__index__`` 的非布尔值），转成 ``int``。"""
    if isinstance(S, bool) or not hasattr(type(S), "__index__"):
        fail(f"长度必须是正整数，你传入的是 {S!r}。")
    length = operator.index(S)
    if length < 1:
        fail(f"长度必须是正整数，你传入的是 {S!r}。")
    return length


def attention_peak(S) -> int:
    """实测：宽度 16 的一层自注意力对长度 ``S`` 的输入做一次前向，PyTorch 新分配内存的峰值（字节）。"""
    S = _length(S)
    if S > 4096:
        fail(f"长度 {S} 太长了：这道题的答案远小于 4096，请从小的长度开始倍增。")
    return _attention_peak(S)


@cache
def _attention_peak(S: int) -> int:
    """``attention_peak`` 的实测部分，按长度缓存（``S`` 已经是 1 到 4096 之间的 ``int``）。"""
    X = torch.randn(S, PEAK_WIDTH, generator=torch.Generator().manual_seed(S))
    layer = _attention_layer()  # 先建好这一层：它的参数不该算进任何一次测量（不管先测哪个长度）
    with torch.no_grad():
        return peak_memory_bytes(lambda: layer(X))


MAX_MEASUREMENTS = 40


def _counted(which: str) -> tuple[Callable[[object], int], itertools.count, list[int]]:
    """交给学生的 ``measure``：一个普通的函数，不带测量函数本身或计数之类的属性。测量次数记在 ``itertools.count`` 里
    （只能往上数，不能清零），问过的长度记在列表里；检查自己留着这两样的引用，事后核对二者是否一致。
    真正的测量函数按名字从 ``_MEASURES`` 里取，不放进这个函数的闭包。"""
    tally, asked = itertools.count(1), []

    def measure(S):
        S = _length(S)
        asked.append(S)
        if next(tally) > MAX_MEASUREMENTS:
            fail(
                f"你已经测了 {MAX_MEASUREMENTS} 次还没停下。一个一个长度地试太慢了："
                "先把 S 不断翻倍，直到超出预算，再在最后一段里二分。"
            )
        return _MEASURES[which](S)

    return measure, tally, asked


def _synthetic_peak(S: int) -> int:
    """一条和公式对不上、但随 S 单调增长的“内存曲线”：用来确认答案来自测量，而不是公式。"""
    return 1000 + 3 * S * S + 50 * S


_MEASURES: dict[str, Callable[[int], int]] = {"synthetic": _synthetic_peak, "attention": attention_peak}


@checker(
    "1.5.2",
    "多长的序列会超出内存预算",
    objective="用实测的内存分配找出第一个超出预算的长度：先倍增、再二分，并与公式的估计对照",
    difficulty=2,
    minutes=15,
)
def check_first_length_over(first_length_over):
    """学生函数 ``first_length_over(measure, budget_bytes) -> int``：使 ``measure(S) > budget_bytes`` 的最小 ``S``。"""
    for which, budget, what in [
        ("synthetic", 50_000, "人造的内存曲线（1000 + 3S² + 50S）"),
        ("attention", 256 * 1024, "实测的自注意力峰值内存"),
    ]:
        measure = _MEASURES[which]
        counted, tally, asked = _counted(which)
        got = call(first_length_over, counted, budget)
        # 次数只能往上数：问过的长度比次数少（删掉了记录）或多（添了假记录），都说明记录被改动过
        n_measured = next(tally) - 1
        expect(
            len(asked) == n_measured,
            f"在{what}上你调用了 {n_measured} 次 measure，可是记下的长度有 {len(asked)} 个：测量的记录被改动过。"
            "只通过调用 measure(S) 来测量，别去改动它。",
        )
        if isinstance(got, bool) or not isinstance(got, int) and not hasattr(got, "__index__"):
            fail(f"应返回一个整数长度，你返回的是 {type(got).__name__}：{got!r}。")
        got = int(got)  # NumPy 的整数也行
        expect(got >= 1, f"长度至少是 1，你返回的是 {got}。")
        expect(n_measured > 0, f"在{what}上你一次也没有调用 measure：答案要来自测量。")
        over, under = measure(got), measure(got - 1) if got > 1 else 0
        expect(
            over > budget,
            f"在{what}上，S = {got} 时测得 {over:,} 字节，并没有超出预算 {budget:,}：答案还要再长一些。",
        )
        expect(
            under <= budget,
            f"在{what}上，S = {got - 1} 时测得 {under:,} 字节，已经超出预算 {budget:,}：你要找的是**第一个**超出的长度。",
        )
        # 答案对了还不够：要说 S 是第一个超出的，就得亲眼看到 S 超出、S − 1 没超出
        unseen = [S for S in (got, got - 1) if S >= 1 and S not in asked]
        expect(
            not unseen,
            f"在{what}上你返回了 S = {got}，可是没有测过 S = {'、'.join(map(str, unseen))}。"
            "要断定它是第一个超出预算的长度，S 本身和 S − 1 都必须测过：答案要来自测量，而不是事先知道的数。",
        )
    formula = 2 * got * got * 4
    return (
        f"预算 256 KiB 时，第一个放不下的长度是 S = {got}，用了 {n_measured} 次测量。"
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
    """学生函数 ``mask_future(scores) -> (T, S)``：``scores`` 的 T 个 Query 是长度 S 的序列里最后 T 个位置，
    把每个 Query 的未来位置换成 ``-inf``，其余不变；返回新矩阵，不改动传入的 ``scores``。"""
    g = torch.Generator().manual_seed(3)
    for T, S in [(1, 1), (4, 4), (7, 7), (3, 7), (1, 5), (5, 9)]:
        scores = torch.randn(T, S, generator=g)
        original, given = scores.clone(), scores.clone()
        got = expect_tensor(call(mask_future, given), "返回值")
        expect(
            torch.equal(given, original),
            "你改动了传入的分数矩阵（例如原地赋值或 masked_fill_）。题目要的是返回一个新矩阵，原来的分数别的地方可能还要用。",
        )
        expect(tuple(got.shape) == (T, S), f"形状应该不变：({T}, {S})，你的是 {tuple(got.shape)}。")
        # 第 i 个 Query 在整个序列里的位置是 S − T + i，它可以读 j ≤ S − T + i 的 Key
        allowed = torch.arange(S)[None, :] <= torch.arange(T)[:, None] + (S - T)
        square = torch.ones(T, S, dtype=torch.bool).tril()  # 忘了偏移：把第 i 行当成第 i 个位置
        masked = torch.isinf(got) & (got < 0)
        if T < S and torch.equal(masked, ~square):
            fail(
                f"T = {T} 个 Query、S = {S} 个 Key 时，你挡住的是 j > i：把第 i 行当成了序列里的第 i 个位置。"
                f"这 {T} 个 Query 是序列里最后 {T} 个位置，第 i 行（从 0 数）其实是第 S − T + i 个位置。"
            )
        own = torch.arange(S)[None, :] == torch.arange(T)[:, None] + (S - T)  # 每个 Query 自己所在的位置
        if S > 1 and torch.equal(masked, ~allowed | own):
            fail("对角线也被挡住了：一个位置可以读它自己，只有它后面的位置要屏蔽。")
        if S > 1 and masked.any() and not masked[~allowed].any():
            fail("方向反了：你挡住的是过去的位置。因果掩码挡住的是未来，也就是每个 Query 所在位置右边的 Key。")
        expect(torch.equal(got[allowed], original[allowed]), f"T = {T}、S = {S} 时，允许读取的格子应当保持原来的分数。")
        expect(
            bool(torch.all(got[~allowed] == float("-inf"))),
            f"T = {T}、S = {S} 时，每个 Query 右边（未来）的分数都应是 -inf（float('-inf')）。",
        )
        weights = torch.softmax(got, dim=-1)
        expect(bool(torch.all(torch.isfinite(weights))), "softmax 之后出现了 NaN：有没有哪一行被整行挡住？")
        expect(bool(torch.all(weights[~allowed] == 0)), "softmax 之后，未来位置的权重应当恰好是 0。")
    return (
        "-inf 经过 softmax 变成恰好为 0 的权重。T = S 时挡住的就是对角线右上方；"
        "T < S 时，第 i 个 Query 是序列里的第 S − T + i 个位置，它前面已经算过的 S − T 个位置它全都能读。"
    )


def _sequential_scan(lam: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """参照答案：h_t = λ_t ⊙ h_{t-1} + u_t，h_0 = 0，一步接一步。"""
    h, out = torch.zeros_like(u[0]), []
    for lam_t, u_t in zip(lam, u):
        h = lam_t * h + u_t
        out.append(h)
    return torch.stack(out)


def _window_scans(lam: torch.Tensor, u: torch.Tensor, rounds: int) -> list[torch.Tensor]:
    """暴力展开的参照：第 r 项是“只合成最近 2^r 步”的结果，
    ``Σ_{t-2^r < s ≤ t} (λ_{s+1} ⊙ ⋯ ⊙ λ_t) ⊙ u_s``（r = 0 就是 u 本身）。不用倍增，直接按定义求和。"""
    S = lam.shape[0]
    # P[t, s] = λ_{s+1} ⊙ ⋯ ⊙ λ_t（s ≤ t；s = t 时是空积 1）；形状 (S, S, d)
    P = torch.zeros(S, S, *lam.shape[1:], dtype=lam.dtype)
    for t in range(S):
        if t:
            P[t, :t] = P[t - 1, :t] * lam[t]  # 比上一行多乘一个 λ_t
        P[t, t] = 1
    lag = torch.arange(S)[:, None] - torch.arange(S)[None, :]  # t - s
    out = []
    for r in range(rounds + 1):
        window = ((lag >= 0) & (lag < 2**r)).to(lam.dtype)
        out.append(torch.einsum("ts...,ts,s...->t...", P, window, u))
    return out


# 1.5.4 里允许的运算：逐元素的乘、加（减）与比较，切片、拼接、平移，新建、复制张量，以及查看形状、类型。
# 按下标取行（index_select、gather、take_along_dim）、翻转（flip）、转置与重复（t、transpose、permute、repeat……）也只搬数据，同样允许。
# 用的是“允许清单”而不是“禁止清单”：求和、累积和 / 积、exp / log、矩阵乘法之类都不在清单上，
# 它们能绕开倍增，直接写出闭式解（比如广播出 (S, S, d) 的系数再沿一维求和）。
SCAN_ALLOWED = frozenset({
    # 逐元素的算术与比较
    "mul", "mul_", "multiply", "__mul__", "__rmul__", "__imul__", "add", "add_", "__add__", "__radd__", "__iadd__",
    "sub", "sub_", "subtract", "__sub__", "__rsub__", "__isub__", "neg", "__neg__", "addcmul", "addcmul_", "where",
    "ge", "gt", "le", "lt", "eq", "ne", "__ge__", "__gt__", "__le__", "__lt__", "__eq__", "__ne__",
    "__and__", "__or__", "__invert__", "logical_and", "logical_or", "logical_not", "masked_fill", "masked_fill_",
    # 切片、拼接、平移与形状
    "__getitem__", "__setitem__", "cat", "concat", "concatenate", "stack", "vstack", "roll", "pad", "narrow",
    "select", "split", "chunk", "unbind", "view", "reshape", "unsqueeze", "squeeze", "expand", "expand_as",
    "t", "transpose", "permute", "movedim", "moveaxis", "swapaxes", "swapdims", "repeat", "tile",
    "view_as", "reshape_as", "contiguous", "index_select", "gather", "take_along_dim", "flip",
    # 新建与复制
    "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "new_zeros", "new_ones",
    "new_full", "new_empty", "arange", "tensor", "as_tensor", "clone", "detach", "copy_", "fill_", "zero_",
    # 类型与形状信息
    "to", "double", "float", "type_as", "bool", "size", "dim", "numel", "__len__", "__iter__", "__index__",
    "__bool__", "__int__", "__float__", "item", "tolist", "__get__", "__repr__", "__format__",
})


def _rounds(S: int) -> int:
    return (S - 1).bit_length()  # ⌈log₂ S⌉，S = 1 时为 0


@checker(
    "1.5.4",
    "线性递推的并行扫描",
    objective="用倍增扫描在 ⌈log₂ S⌉ 轮内算出 $h_t=λ_t⊙h_{t-1}+u_t$，并与逐步循环比对",
    difficulty=3,
    minutes=25,
)
def check_linear_scan(linear_scan):
    """学生函数 ``linear_scan(lam, u) -> history``：``history[r]`` 是做完 r 轮之后的 ``u``（形状 ``(S, d)``），
    ``history[0]`` 是输入的 ``u``，``history[-1]`` 是全部的 ``h``。可以原地修改 ``lam``、``u``。"""
    g = torch.Generator().manual_seed(54)
    for S, d in [(1, 3), (2, 2), (5, 4), (8, 1), (13, 3), (256, 2)]:
        lam = torch.rand(S, d, generator=g, dtype=torch.float64) * 1.2
        u = torch.randn(S, d, generator=g, dtype=torch.float64)
        history, trace = call_tracing_torch(linear_scan, lam.clone(), u.clone())
        other = sorted({op_name(n) for n in trace.calls} - SCAN_ALLOWED)
        if other:
            fail(
                f"你的函数调用了 {'、'.join(other)}。这道题每一轮只许用逐元素的乘、加（减）与比较，"
                "以及切片、按下标取行（index_select、gather）、翻转、转置、拼接、平移（torch.roll、F.pad）和新建、复制、重复张量：求和、累积和 / 积、exp / log 或矩阵乘法"
                "都能绕开倍增、一步写出闭式解，却不是倍增扫描。"
            )
        if isinstance(history, tuple):
            history = list(history)
        expect(
            isinstance(history, list) and history,
            f"应返回一个列表 history：history[0] 是输入的 u，之后每一轮追加一项。你返回的是 {type(history).__name__}。",
        )
        history = [expect_tensor(item, f"history[{r}]") for r, item in enumerate(history)]  # 一律换成普通张量
        for r, item in enumerate(history):
            expect(
                tuple(item.shape) == (S, d),
                f"S = {S}、d = {d} 时 history[{r}] 的形状应是 {(S, d)}，你的是 {tuple(item.shape)}。",
            )
        rounds, depth = len(history) - 1, _rounds(S)
        expect(
            rounds == depth,
            f"S = {S} 时倍增扫描要做 ⌈log₂ S⌉ = {depth} 轮，history 应有 {depth + 1} 项（连同开头的 u），你的有 {len(history)} 项。",
        )
        want, final = _window_scans(lam, u, depth), _sequential_scan(lam, u)
        got = [item.detach().double() for item in history]
        if depth >= 1 and all(torch.equal(x, got[-1]) for x in got) and not torch.equal(want[0], want[-1]):
            fail(
                "history 里每一项都一样：你记下的很可能是同一个张量，后面的轮次又原地改了它。"
                "原地修改时，存进 history 的每一项（包括开头的 history[0]）都要是当时的副本（.clone()）。"
            )
        expect(
            torch.equal(got[0], u),
            "history[0] 应当是输入的 u（还没有做任何合并）。如果你原地修改了 u，history[0] 要存它开始时的副本（u.clone()），"
            "否则它会跟着后面的轮次一起变。",
        )
        for r in range(1, depth + 1):
            if not torch.allclose(got[r], want[r], atol=1e-9, rtol=1e-9):
                span = 2**r
                fail(
                    f"S = {S} 时第 {r} 轮之后的 u 不对（最大差 {(got[r] - want[r]).abs().max():.3g}）。"
                    f"这一轮之后，位置 t 应当代表从 t − {span - 1} 到 t 这 {span} 步合成的仿射变换（不足 {span} 步就从第 1 步开始）。"
                    "检查合并规则：把 h ↦ λ_t ⊙ (λ_{t−Δ} ⊙ h + u_{t−Δ}) + u_t 展开，看看新的 u_t 和新的 λ_t 各是什么；"
                    "还要注意同一轮里 u 要用**旧的** λ 来算。"
                )
        expect(
            torch.allclose(got[-1], final, atol=1e-9, rtol=1e-9),
            f"S = {S} 时最后的 h 与逐步循环的结果不一致（最大差 {(got[-1] - final).abs().max():.3g}）。",
        )
        budget = 24 * depth + 24
        if trace.count > budget:
            fail(
                f"S = {S} 时你的函数调用了 {trace.count} 次张量运算，远多于 {depth} 轮扫描需要的数目："
                "看起来还是在一个位置一个位置地循环。每一轮应当用切片一次处理所有位置。"
            )
    return (
        "每一轮的中间结果都对：第 r 轮之后，位置 t 手里是最近 2^r 步合成的仿射变换。"
        "S = 256 时只要 8 轮，而逐步循环要 256 步——每一轮里的乘加全部可以同时做。"
    )


def _tiled_pairs(S: int, block: int) -> int:
    """参照答案：因果掩码下，分块内核跳过整块都在对角线右上方的块之后，还要算的配对数。
    逐个块行地数：第 r 个块行（行 r·c … 行末）要算到它的对角块为止的所有列。"""
    total = 0
    for start in range(0, S, block):
        stop = min(start + block, S)  # 这个块行的行是 [start, stop)，它的对角块的列也止于 stop
        total += (stop - start) * stop
    return total


def _whole_number(value, what: str) -> int:
    """学生给出的个数必须是整数（Python 或 NumPy 的整数，或者恰好是整数的浮点数），不许悄悄截断。"""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__index__"):
        fail(f"{what}应该是一个整数，你给的是 {type(value).__name__}：{value!r}。")
    if hasattr(value, "numel") or hasattr(value, "ndim"):  # 张量或 NumPy 数组：取出那一个数，再按数的规矩判
        if (value.numel() if hasattr(value, "numel") else value.size) != 1:
            fail(f"{what}应该是一个整数，你给的是含有多个数的 {type(value).__name__}。")
        value = value.item()
    if isinstance(value, float):
        if not value.is_integer():
            fail(f"{what}应该是一个整数，你给的是 {value!r}。")
        value = int(value)
    return int(value)


COST_KEYS = ("pairs", "causal_pairs", "tiled_pairs", "score_bytes")


@checker(
    "1.5.6",
    "数一数配对、分块和内存",
    objective="对给定的 S 算出配对数、因果掩码下有用的配对数、分块内核实际要算的配对数，以及分数矩阵的内存",
    difficulty=2,
    minutes=20,
)
def check_attention_cost(attention_cost):
    """学生函数 ``attention_cost(S, block, batch, heads, layers, n_byte) -> dict``，键见 ``COST_KEYS``。"""
    cases = [
        (1, 1, 1, 1, 1, 4), (7, 2, 2, 4, 3, 2), (8, 4, 8, 12, 12, 4), (10, 4, 1, 1, 1, 4),
        (5, 16, 1, 2, 1, 2), (4096, 1, 1, 1, 1, 4), (1000, 128, 4, 8, 6, 2), (100_000, 64, 8, 12, 12, 2),
    ]
    for S, block, batch, heads, layers, n_byte in cases:
        got = call(attention_cost, S, block, batch, heads, layers, n_byte)
        if not isinstance(got, dict):
            fail(f"应返回一个字典，键是 {', '.join(COST_KEYS)}；你返回的是 {type(got).__name__}。")
        missing = [key for key in COST_KEYS if key not in got]
        expect(not missing, f"字典里缺少这些键：{', '.join(missing)}。")
        value = {key: _whole_number(got[key], f"S = {S} 时的 {key} ") for key in COST_KEYS}
        where = f"S = {S}、块大小 ℓ = {block}"
        expect(value["pairs"] == S * S, f"{where} 时，不加掩码的配对数应是 S² = {S * S:,}，你的是 {value['pairs']:,}。")
        causal = S * (S + 1) // 2
        if value["causal_pairs"] == S * (S - 1) // 2 and S > 0:
            fail(f"{where} 时你的有用配对数是 S(S−1)/2：别漏了对角线，每个位置也读它自己。")
        expect(
            value["causal_pairs"] == causal,
            f"{where} 时，因果掩码下有用的配对数应是 {causal:,}，你的是 {value['causal_pairs']:,}。",
        )
        tiled = _tiled_pairs(S, block)
        if value["tiled_pairs"] != tiled:
            hint = ""
            if value["tiled_pairs"] == S * S and tiled != S * S:
                hint = "你没有跳过任何块：整块都在对角线右上方的块，分块内核根本不算。"
            elif value["tiled_pairs"] == causal and tiled != causal:
                hint = "你只数了有用的配对；对角线上的块要整块算完，块里被挡住的格子也算了一遍。"
            elif S % block:
                hint = "S 不是块大小 ℓ 的整数倍时，最后一个块行、块列都不满 ℓ。"
            fail(f"{where} 时，分块内核要算 {tiled:,} 个配对，你的是 {value['tiled_pairs']:,}。{hint}")
        memory = batch * heads * layers * S * S * n_byte
        expect(
            value["score_bytes"] == memory,
            f"{where}、B = {batch}、n_h = {heads}、L = {layers}、每个数 {n_byte} 字节时，朴素实现的分数矩阵占 {memory:,} 字节，"
            f"你的是 {value['score_bytes']:,}。因果掩码不省这块内存：方阵照样整块存下。",
        )
    S, block = 100_000, 64
    extra = _tiled_pairs(S, block) / (S * (S + 1) // 2) - 1
    return (
        f"S = {S:,}、ℓ = {block} 时，分块内核只比有用的配对多算 {extra:.2%}，却几乎省下了一半的 S²；"
        "而朴素实现的分数矩阵照样要存整个方阵。"
    )
