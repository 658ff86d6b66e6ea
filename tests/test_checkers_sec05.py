"""第 1.5 节每个练习检查：至少一个错误答案必须被拒绝，至少一个不寻常的正确答案必须被接受。

评分时同一个检查还要经过记录与重放（seqlab.exercises.recording）：最后一组测试确认，靠运算记录与原地修改
判定的两道题（1.5.1、1.5.4），重放后的结论与直接检查相同。
"""

from __future__ import annotations

import json
import math

import pytest
import torch
import torch.nn.functional as F

from seqlab import attention
from seqlab.exercises import recording, sec05


def _passes(check, answer) -> bool:
    result = check(answer)
    return result.passed


# ---------------------------------------------------------------- 1.5.1 从零写出自注意力
def _attention_stable(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T / math.sqrt(K.shape[-1])
    e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True) @ V


def _attention_logsumexp(X, W_Q, W_K, W_V):
    """不寻常但正确：einsum 打分，减去 logsumexp 再求 exp（同样数值稳定），最后转成 float32 返回。"""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = torch.einsum("id,jd->ij", Q, K) / K.shape[-1] ** 0.5
    return (torch.exp(s - torch.logsumexp(s, dim=1, keepdim=True)) @ V).float()


def _scores(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    return Q, K, V, Q @ K.T / math.sqrt(K.shape[-1])


def _attention_global_max(X, W_Q, W_K, W_V):
    """减去整个矩阵的最大值：分数偏小的行 exp 全部下溢成 0，0/0 = NaN。"""
    _, _, V, s = _scores(X, W_Q, W_K, W_V)
    e = torch.exp(s - s.max())
    return e / e.sum(dim=-1, keepdim=True) @ V


def _attention_naive_exp(X, W_Q, W_K, W_V):
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    e = torch.exp(Q @ K.T / math.sqrt(K.shape[-1]))
    return e / e.sum(dim=-1, keepdim=True) @ V


@pytest.mark.parametrize(
    "answer",
    [
        lambda X, W_Q, W_K, W_V: attention.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)[0],  # 用了库
        lambda X, W_Q, W_K, W_V: F.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V),  # 融合实现
        lambda X, W_Q, W_K, W_V: torch.softmax((X @ W_Q) @ (X @ W_K).T / W_K.shape[1] ** 0.5, -1) @ (X @ W_V),
        _attention_naive_exp,  # 不稳定：分数很大时溢出
        lambda X, W_Q, W_K, W_V: _attention_stable(X, W_Q * W_K.shape[1] ** 0.5, W_K, W_V),  # 忘了缩放
        lambda X, W_Q, W_K, W_V: _attention_stable(X, W_Q, W_K, W_V).T @ torch.ones(X.shape[0], 1).double(),
        _attention_global_max,
        # 换个名字的现成 softmax 与注意力内核
        lambda *args: F.softmin(-_scores(*args)[3], dim=-1) @ _scores(*args)[2],
        lambda *args: torch._softmax(_scores(*args)[3], -1, False) @ _scores(*args)[2],
        lambda *args: torch.ops.aten._softmax.default(_scores(*args)[3], -1, False) @ _scores(*args)[2],
        lambda *args: torch.exp(torch.special.log_softmax(_scores(*args)[3], -1)) @ _scores(*args)[2],
        lambda *args: torch.ops.aten._scaled_dot_product_attention_math(*_scores(*args)[:3])[0],
    ],
    ids=["seqlab.attention", "F.sdpa", "torch.softmax", "naive-exp", "unscaled", "wrong-shape", "global-max",
         "softmin", "torch._softmax", "aten._softmax", "exp-log_softmax", "aten-sdpa-math"],
)
def test_self_attention_rejects(answer):
    assert not _passes(sec05.check_self_attention, answer)


def _attention_hidden_softmax(X, W_Q, W_K, W_V):
    """把现成的 softmax 藏进 DisableTorchFunction：运算记录看不见它，分派层看得见。"""
    with torch._C.DisableTorchFunction():
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        return torch.softmax(Q @ K.T / math.sqrt(K.shape[-1]), -1) @ V


def _attention_hidden_sdpa(X, W_Q, W_K, W_V):
    with torch._C.DisableTorchFunction():
        return F.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)


def _attention_grad_of_logsumexp(X, W_Q, W_K, W_V):
    """logsumexp 的梯度就是 softmax：借自动求导替自己写 softmax。"""
    _, _, V, s = _scores(X, W_Q, W_K, W_V)
    s = s.detach().requires_grad_()
    (A,) = torch.autograd.grad(torch.logsumexp(s, -1).sum(), s)
    return A @ V


def _attention_backward_of_logsumexp(X, W_Q, W_K, W_V):
    _, _, V, s = _scores(X, W_Q, W_K, W_V)
    s = s.detach().requires_grad_()
    torch.logsumexp(s, -1).sum().backward()
    return s.grad @ V


def _attention_shrinks_W_Q(X, W_Q, W_K, W_V):
    """原地把传入的 W_Q 缩小 1000 倍，再用会溢出的朴素 exp：参照答案若在调用之后才由同一个 W_Q 算出，
    大分数那一组就不再大，溢出也就测不出来。"""
    W_Q.div_(1000)
    return _attention_naive_exp(X, W_Q, W_K, W_V)


def _attention_zeroes_X(X, W_Q, W_K, W_V):
    """原地把 X 清零再返回全 0。"""
    X.zero_()
    return torch.zeros(X.shape[0], W_V.shape[1], dtype=X.dtype)


def _attention_via_cross_entropy(X, W_Q, W_K, W_V):
    """exp(−交叉熵) 就是 softmax 的权重：F.cross_entropy 在一次调用里先做了 log_softmax。"""
    _, _, V, s = _scores(X, W_Q, W_K, W_V)
    S = s.shape[0]
    nll = torch.nn.functional.cross_entropy(s.repeat_interleave(S, 0), torch.arange(S).repeat(S), reduction="none")
    return torch.exp(-nll).reshape(S, S) @ V


def _attention_via_encoder_layer_kernel(X, W_Q, W_K, W_V):
    """借 PyTorch 编码器层的融合内核：把 X 补三列，让每行均值为 0、方差相同，pre-norm 的 LayerNorm 就只除以一个
    已知的常数；Q/K/V 的权重放进内核，输出投影取单位矩阵、前馈网络取 0，残差减掉输入就是注意力的输出。"""
    S, d = X.shape
    d_k, d_v = W_Q.shape[1], W_V.shape[1]
    E, dt = max(d, d_k, d_v) + 3, X.dtype
    Xp = torch.cat([X, torch.zeros(S, E - 3 - d, dtype=dt)], 1)
    m = -Xp.sum(1, keepdim=True)
    base = (Xp * Xp).sum(1, keepdim=True) + m * m
    C = base.max() + 1.0
    p = ((C - base) / 2).sqrt()
    src = torch.cat([Xp, m, p, -p], 1)
    s = (C / E).sqrt()

    def block(W, scale):
        B = torch.zeros(E, E, dtype=dt)
        B[:d, :W.shape[1]] = W * scale
        return B.T

    qkv = torch.cat([block(W_Q, s * math.sqrt(E) / math.sqrt(d_k)), block(W_K, s), block(W_V, s)], 0)
    ones, zeros = torch.ones(E, dtype=dt), torch.zeros(E, dtype=dt)
    out = torch._transformer_encoder_layer_fwd(
        src[None], E, 1, qkv, torch.zeros(3 * E, dtype=dt), torch.eye(E, dtype=dt), zeros, False, True, 0.0,
        ones, zeros, ones, zeros, torch.zeros(4, E, dtype=dt), torch.zeros(4, dtype=dt), torch.zeros(E, 4, dtype=dt),
        zeros, None, None)[0]
    return (out - src)[:, :d_v]


@pytest.mark.parametrize(
    "answer",
    [_attention_hidden_softmax, _attention_hidden_sdpa, _attention_grad_of_logsumexp, _attention_backward_of_logsumexp,
     _attention_shrinks_W_Q, _attention_zeroes_X, _attention_via_cross_entropy, _attention_via_encoder_layer_kernel],
    ids=["hidden-softmax", "hidden-sdpa", "grad-of-logsumexp", "backward-of-logsumexp", "shrunk-W_Q", "zeroed-X",
         "cross-entropy", "encoder-layer-kernel"],
)
def test_self_attention_rejects_evasions(answer):
    assert not _passes(sec05.check_self_attention, answer)


def test_self_attention_names_autograd():
    message = sec05.check_self_attention(_attention_grad_of_logsumexp).message
    assert "自动求导" in message and "grad" in message


def _attention_numpy(X, W_Q, W_K, W_V):
    """不寻常但正确：整个计算在 NumPy 里做（softmax 同样减去每行最大值），最后用 torch.from_numpy 转回张量。"""
    import numpy as np

    x, wq, wk, wv = (t.numpy() for t in (X, W_Q, W_K, W_V))
    q, k, v = x @ wq, x @ wk, x @ wv
    s = q @ k.T / np.sqrt(k.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return torch.from_numpy(e / e.sum(axis=1, keepdims=True) @ v)


def _attention_float32(X, W_Q, W_K, W_V):
    """不寻常但正确：先转成 float32 再算（误差仍在 1e-6 以内）。"""
    return _attention_stable(X.float(), W_Q.float(), W_K.float(), W_V.float())


@pytest.mark.parametrize(
    "answer", [_attention_stable, _attention_logsumexp, _attention_numpy, _attention_float32],
    ids=["max-shift", "logsumexp-einsum", "numpy", "float32"],
)
def test_self_attention_accepts(answer):
    assert _passes(sec05.check_self_attention, answer)


def test_self_attention_explains_the_global_max_as_underflow():
    message = sec05.check_self_attention(_attention_global_max).message
    assert "下溢" in message and "这一行自己的最大值" in message


def test_self_attention_names_the_ready_made_softmax():
    result = sec05.check_self_attention(lambda X, W_Q, W_K, W_V: torch.softmax(X @ W_Q @ (X @ W_K).T, -1) @ (X @ W_V))
    assert "softmax" in result.message and "现成" in result.message


# ---------------------------------------------------------------- 1.5.2 多长的序列会超出内存预算
def _double_then_bisect(measure, budget):
    hi = 1
    while measure(hi) <= budget:
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if measure(mid) > budget else (mid, hi)
    return hi


def _triple_from_three(measure, budget):
    """不寻常但正确：从 3 开始每次乘 3，再在最后一段里二分；先确认 1、2 是否已经超出。"""
    for s in (1, 2):
        if measure(s) > budget:
            return s
    hi = 3
    while measure(hi) <= budget:
        hi *= 3
    lo = hi // 3
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if measure(mid) > budget else (mid, hi)
    return hi


def _last_under(measure, budget):
    return _double_then_bisect(measure, budget) - 1  # 差一：返回最后一个没超出的


def _from_formula(measure, budget):
    measure(1)  # 测一次装样子，答案却来自 2·S²·4 的公式
    return math.isqrt(budget // 8) + 1


@pytest.mark.parametrize(
    "answer",
    [_last_under, _from_formula, lambda measure, budget: next(s for s in range(1, 10_000) if measure(s) > budget),
     lambda measure, budget: 7],
    ids=["off-by-one", "formula", "linear-search", "constant"],
)
def test_first_length_over_rejects(answer):
    assert not _passes(sec05.check_first_length_over, answer)


def _hard_coded(measure, budget):
    """测一次装样子，答案是事先知道的两个数：S 和 S − 1 都没有测过。"""
    measure(1)
    return {50_000: 120, 256 * 1024: 166}[budget]


def _hard_coded_checked_once(measure, budget):
    """事先知道答案，只确认它超出了预算：S − 1 没有测过，不能断定 S 是第一个。"""
    answer = {50_000: 120, 256 * 1024: 166}[budget]
    measure(answer)
    return answer


def test_first_length_over_rejects_a_known_answer():
    sec05._attention_peak.cache_clear()
    for answer in (_hard_coded, _hard_coded_checked_once):
        result = sec05.check_first_length_over(answer)
        assert not result.passed and "没有测过" in result.message


def _double_then_bisect_numpy(measure, budget):
    """不寻常但正确：返回 NumPy 的整数。"""
    import numpy as np

    return np.int64(_double_then_bisect(measure, budget))


@pytest.mark.parametrize(
    "answer", [_double_then_bisect, _triple_from_three, _double_then_bisect_numpy], ids=["double", "triple", "numpy-int"]
)
def test_first_length_over_accepts(answer):
    assert _passes(sec05.check_first_length_over, answer)


@pytest.mark.parametrize("first", [165, 1, 2048])
def test_attention_peak_does_not_depend_on_which_length_is_measured_first(first):
    """建这一层的内存不能算进第一次测量：不管先测哪个长度，每个长度的读数都一样。"""
    lengths = (1, 2, 164, 165, 166, 2048)
    sec05._attention_peak.cache_clear()
    sec05._attention_layer.cache_clear()
    sec05.attention_peak(first)
    after_first = {S: sec05.attention_peak(S) for S in lengths}
    sec05._attention_peak.cache_clear()
    reversed_order = {S: sec05.attention_peak(S) for S in reversed(lengths)}
    assert after_first == reversed_order
    assert after_first[1] < after_first[2] < after_first[164] < after_first[165] < after_first[166]


def test_a_guess_measured_first_is_still_rejected():
    """先测 165（差一）再确认 164 放得下：答案错了就不能因为测量顺序而通过。"""
    def guess(measure, budget):
        measure(165)
        measure(164)
        return 165 if budget == 256 * 1024 else _double_then_bisect(measure, budget)

    sec05._attention_peak.cache_clear()
    sec05._attention_layer.cache_clear()
    assert not _passes(sec05.check_first_length_over, guess)


# ---------------------------------------------------------------- 1.5.3 给分数矩阵加因果掩码
def _future(scores):
    T, S = scores.shape
    return torch.arange(S)[None, :] > torch.arange(T)[:, None] + (S - T)


def _mask(scores):
    return scores.masked_fill(_future(scores), float("-inf"))


def _mask_additive(scores):
    """不寻常但正确：加上一个 0 / -inf 的加性掩码（x + 0 恰好是 x），用 triu 的对角线偏移表示“最后 T 个位置”。"""
    T, S = scores.shape
    M = torch.zeros(T, S).masked_fill(torch.ones(T, S, dtype=torch.bool).triu(S - T + 1), float("-inf"))
    return scores + M


def _mask_where_clone(scores):
    """不寻常但正确：先复制，再在副本上原地赋值。"""
    out = scores.clone()
    out[_future(scores)] = float("-inf")
    return out


def _mask_in_place(scores):
    """位置对了，却原地改了传进来的矩阵：题目要的是新矩阵。"""
    scores[_future(scores)] = float("-inf")
    return scores


@pytest.mark.parametrize(
    "answer",
    [
        lambda s: s.masked_fill(_future(s) | (torch.arange(s.shape[1])[None, :] == torch.arange(s.shape[0])[:, None]
                                              + s.shape[1] - s.shape[0]), float("-inf")),  # 对角线也挡住
        lambda s: s.masked_fill(~_future(s) & ~(torch.arange(s.shape[1])[None, :] == torch.arange(s.shape[0])[:, None]
                                               + s.shape[1] - s.shape[0]), float("-inf")),  # 方向反了
        lambda s: s.masked_fill(_future(s), -1e9),  # 不是 -inf
        lambda s: s,  # 什么也没挡
        lambda s: s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf")),  # 忘了偏移
        _mask_in_place,
    ],
    ids=["diagonal", "past", "big-negative", "nothing", "no-offset", "in-place"],
)
def test_mask_future_rejects(answer):
    assert not _passes(sec05.check_mask_future, answer)


def test_mask_future_explains_the_missing_offset():
    message = sec05.check_mask_future(lambda s: s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))).message
    assert "S − T + i" in message


@pytest.mark.parametrize("answer", [_mask, _mask_additive, _mask_where_clone], ids=["masked_fill", "additive", "clone"])
def test_mask_future_accepts(answer):
    assert _passes(sec05.check_mask_future, answer)


# ---------------------------------------------------------------- 1.5.4 线性递推的并行扫描
def _scan(a, b):
    history, k = [b], 1
    while k < a.shape[0]:
        b = torch.cat([b[:k], a[k:] * b[:-k] + b[k:]])
        a = torch.cat([a[:k], a[k:] * a[:-k]])
        history.append(b)
        k *= 2
    return history


def _scan_in_place(a, b):
    """不寻常但正确：原地修改 a、b，每轮追加副本，返回元组。"""
    history, k = [b.clone()], 1
    while k < a.shape[0]:
        b[k:] = a[k:] * b[:-k] + b[k:]
        a[k:] = a[k:] * a[:-k]
        history.append(b.clone())
        k *= 2
    return tuple(history)


def _scan_padded(a, b):
    """不寻常但正确：前面补上恒等变换（a = 1，b = 0），每轮对所有位置做同一个更新。"""
    history, k = [b], 1
    while k < a.shape[0]:
        b = a * torch.cat([torch.zeros_like(b[:k]), b[:-k]]) + b
        a = a * torch.cat([torch.ones_like(a[:k]), a[:-k]])
        history.append(b)
        k *= 2
    return history


def _scan_in_place_first_aliased(a, b):
    """原地修改、每轮都存副本，只有 history[0] 忘了复制：它会跟着后面的轮次一起变。"""
    history, k = [b], 1
    while k < a.shape[0]:
        b[k:] = a[k:] * b[:-k] + b[k:]
        a[k:] = a[k:] * a[:-k]
        history.append(b.clone())
        k *= 2
    return history


def test_linear_scan_names_history_0_when_it_was_not_copied():
    message = sec05.check_linear_scan(_scan_in_place_first_aliased).message
    assert "history[0]" in message and "clone" in message


def _scan_alias(a, b):
    history, k = [b], 1
    while k < a.shape[0]:
        b[k:] = a[k:] * b[:-k] + b[k:]
        a[k:] = a[k:] * a[:-k]
        history.append(b)  # 每一项都是同一个张量
        k *= 2
    return history


def _scan_a_first(a, b):
    history, k = [b], 1
    while k < a.shape[0]:
        a = torch.cat([a[:k], a[k:] * a[:-k]])  # 先更新了 a，再用新的 a 算 b
        b = torch.cat([b[:k], a[k:] * b[:-k] + b[k:]])
        history.append(b)
        k *= 2
    return history


def _closed_form(a, b):
    P = torch.cumprod(a, 0)
    h = P * torch.cumsum(b / P, 0)
    return [b] + [h] * (a.shape[0] - 1).bit_length()  # 报告了从没做过的轮次


def _matrix_closed_form(a, b):
    S = a.shape[0]
    log_a = torch.log(a)
    C = torch.ones(S, S, dtype=a.dtype).tril() @ log_a  # 不用 cumsum 的累积和
    M = torch.exp(C[:, None, :] - C[None, :, :]) * torch.ones(S, S, 1, dtype=a.dtype).tril()
    h = torch.einsum("tsd,sd->td", M, b)
    return [b] + [h] * (S - 1).bit_length()


def _loop_with_fake_history(a, b):
    h, prev = [], torch.zeros_like(b[0])
    for t in range(a.shape[0]):
        prev = a[t] * prev + b[t]
        h.append(prev)
    h = torch.stack(h)
    return [b] + [h] * (a.shape[0] - 1).bit_length()


@pytest.mark.parametrize(
    "answer",
    [_scan_alias, _scan_in_place_first_aliased, _scan_a_first, _closed_form, _matrix_closed_form,
     _loop_with_fake_history, lambda a, b: _scan(a, b)[-1]],
    ids=["aliased-history", "aliased-history-0", "a-before-b", "cumprod", "tril-matmul", "loop", "only-h"],
)
def test_linear_scan_rejects(answer):
    assert not _passes(sec05.check_linear_scan, answer)


def _closed_form_every_round(log_products):
    """每一轮都用闭式：P[t, s] = exp(Σ_{s<k≤t} log a_k)，再把窗口里的 P·b 沿 s 求和；``log_products(between, log a)``
    算出那个对数和。没有 cumsum、矩阵乘法或 tril。"""

    def answer(a, b):
        S = a.shape[0]
        idx = torch.arange(S)
        lag = idx[:, None] - idx[None, :]
        between = ((idx[None, None, :] > idx[None, :, None]) & (idx[None, None, :] <= idx[:, None, None])).to(a.dtype)
        P = torch.exp(log_products(between, torch.log(a)))
        history, k = [b.clone()], 1
        while k < S:
            window = ((lag >= 0) & (lag < 2 * k)).to(a.dtype)
            history.append((P * window[..., None] * b[None]).sum(1))
            k *= 2
        return history

    return answer


_broadcast_closed_form = _closed_form_every_round(lambda between, log_a: (between[..., None] * log_a[None, None]).sum(2))
_linear_closed_form = _closed_form_every_round(lambda between, log_a: F.linear(between, log_a.T))  # 对数和改用 F.linear 算


def _hidden_loop(a, b):
    """关于 t 的循环藏进 DisableTorchFunction：运算次数记成 0，分派层却看得见。"""
    with torch._C.DisableTorchFunction():
        S, history, k = a.shape[0], [b.clone()], 1
        while k < S:
            new_b, new_a = b.clone(), a.clone()
            for t in range(k, S):
                new_b[t] = a[t] * b[t - k] + b[t]
                new_a[t] = a[t] * a[t - k]
            a, b = new_a, new_b
            history.append(b)
            k *= 2
        return history


def _scan_zeroes_its_inputs(a, b):
    """把传入的 a、b 原地清零，再报告全 0 的各轮：参照答案若由同一对张量算出，也会是全 0。
    （这道题允许原地修改，所以检查传进来的是副本。）"""
    a.zero_()
    b.zero_()
    return [b.clone() for _ in range((a.shape[0] - 1).bit_length() + 1)]


@pytest.mark.parametrize(
    "answer", [_broadcast_closed_form, _linear_closed_form, _hidden_loop, _scan_zeroes_its_inputs],
    ids=["broadcast-sum", "F.linear", "hidden-loop", "zeroed-inputs"],
)
def test_linear_scan_rejects_evasions(answer):
    assert not _passes(sec05.check_linear_scan, answer)


def test_linear_scan_names_the_operations_outside_the_list():
    message = sec05.check_linear_scan(_broadcast_closed_form).message
    assert all(name in message for name in ("exp", "log", "sum"))


def _scan_roll(a, b):
    """不寻常但正确：torch.roll 整体平移，再用比较得到的掩码挡掉绕回来的前 k 行。"""
    history, k = [b], 1
    S = a.shape[0]
    while k < S:
        m = (torch.arange(S) >= k)[:, None].to(b.dtype)
        b = b + m * a * torch.roll(b, k, 0)
        a = a * (1 - m) + m * a * torch.roll(a, k, 0)
        history.append(b)
        k *= 2
    return history


def _scan_verbose(a, b):
    """不寻常但正确：size()、新建副本再下标赋值、每轮存副本。"""
    S, history, k = a.size(0), [b.clone()], 1
    while k < S:
        new_b, new_a = b.clone(), a.clone()
        new_b[k:] = a[k:] * b[:-k] + b[k:]
        new_a[k:] = a[k:] * a[:-k]
        b, a = new_b, new_a
        history.append(b.clone())
        k *= 2
    return history


def _scan_transposed(a, b):
    """不寻常但正确：转置成 (d, S) 的布局算，再转回来（用 .t() 而不是 .T）。"""
    history, step, S = [b.clone()], 1, a.shape[0]
    lam, u = a.t(), b.t()
    while step < S:
        u = torch.cat([u[:, :step], lam[:, step:] * u[:, :-step] + u[:, step:]], dim=1)
        lam = torch.cat([lam[:, :step], lam[:, step:] * lam[:, :-step]], dim=1)
        history.append(u.t().clone())
        step *= 2
    return history


def _scan_pad(a, b):
    """不寻常但正确：F.pad 在前面补上恒等变换（a = 1，b = 0）。"""
    history, k = [b], 1
    while k < a.shape[0]:
        b = a * F.pad(b[:-k], (0, 0, k, 0)) + b
        a = a * F.pad(a[:-k], (0, 0, k, 0), value=1.0)
        history.append(b)
        k *= 2
    return history


@pytest.mark.parametrize(
    "answer", [_scan, _scan_in_place, _scan_padded, _scan_roll, _scan_verbose, _scan_pad, _scan_transposed],
    ids=["cat", "in-place", "padded", "roll", "verbose", "F.pad", "transposed"],
)
def test_linear_scan_accepts(answer):
    assert _passes(sec05.check_linear_scan, answer)


def test_the_window_reference_agrees_with_the_loop_and_the_scan():
    g = torch.Generator().manual_seed(0)
    for S in (1, 2, 3, 8, 9, 33):
        a = torch.rand(S, 2, generator=g, dtype=torch.float64) * 1.2
        b = torch.randn(S, 2, generator=g, dtype=torch.float64)
        want = sec05._window_scans(a, b, sec05._rounds(S))
        assert torch.allclose(want[-1], sec05._sequential_scan(a, b), atol=1e-12)
        got = _scan(a, b)
        assert len(got) == len(want) and all(torch.allclose(x, y, atol=1e-12) for x, y in zip(got, want))


# ---------------------------------------------------------------- 评分：重放的结论与直接检查相同
@pytest.mark.parametrize(
    ("check", "answer"),
    [
        (sec05.check_self_attention, _attention_stable),
        (sec05.check_self_attention, lambda X, W_Q, W_K, W_V: F.scaled_dot_product_attention(X @ W_Q, X @ W_K, X @ W_V)),
        (sec05.check_linear_scan, _scan_in_place),
        (sec05.check_linear_scan, _scan_alias),
        (sec05.check_linear_scan, _closed_form),
        (sec05.check_mask_future, _mask_in_place),
        (sec05.check_self_attention, _attention_hidden_softmax),
        (sec05.check_self_attention, _attention_grad_of_logsumexp),
        (sec05.check_self_attention, _attention_numpy),
        (sec05.check_linear_scan, _broadcast_closed_form),
        (sec05.check_linear_scan, _hidden_loop),
    ],
    ids=["attention-ok", "attention-fused", "scan-in-place", "scan-alias", "scan-closed", "mask-in-place",
         "attention-hidden", "attention-autograd", "attention-numpy", "scan-broadcast-sum", "scan-hidden-loop"],
)
def test_replayed_verdict_equals_the_direct_check(check, answer):
    direct = check(answer)
    data = json.loads(json.dumps(recording.record(check, [answer])))
    replayed = recording.judge(check, data)
    assert (replayed.passed, replayed.message) == (direct.passed, direct.message)


# ---------------------------------------------------------------- 1.5.6 数一数配对、分块和内存
def _cost(S, block, batch, heads, layers, n_byte, tiled=None):
    if tiled is None:
        tiled = sum((min(s + block, S) - s) * min(s + block, S) for s in range(0, S, block))
    return {"pairs": S * S, "causal_pairs": S * (S + 1) // 2, "tiled_pairs": tiled,
            "score_bytes": batch * heads * layers * S * S * n_byte}


def _cost_closed_form_numpy(S, block, batch, heads, layers, n_byte):
    """不寻常但正确：整块部分用 S(S+c)/2 式的闭式，最后不满的块行单独补上；返回 NumPy 整数与整数值的浮点数。"""
    import numpy as np

    full, rest = divmod(S, block)
    tiled = block * block * full * (full + 1) // 2 + rest * S
    return {"pairs": np.int64(S) ** 2, "causal_pairs": float(S * (S + 1) // 2), "tiled_pairs": np.int64(tiled),
            "score_bytes": np.int64(batch * heads * layers * n_byte) * S * S}


@pytest.mark.parametrize(
    "answer",
    [
        lambda S, c, *rest: _cost(S, c, *rest, tiled=S * S),  # 一块也没跳过
        lambda S, c, *rest: _cost(S, c, *rest, tiled=S * (S + 1) // 2),  # 只数有用的
        lambda S, c, *rest: _cost(S, c, *rest, tiled=S * (S + c) // 2),  # 假定 S 是 c 的整数倍
        lambda S, c, *rest: {**_cost(S, c, *rest), "causal_pairs": S * (S - 1) // 2},  # 漏了对角线
        lambda S, c, b, h, L, n: {**_cost(S, c, b, h, L, n), "score_bytes": b * h * L * S * (S + 1) // 2 * n},  # 掩码省内存
        lambda S, c, *rest: {**_cost(S, c, *rest), "tiled_pairs": _cost(S, c, *rest)["tiled_pairs"] + 0.5},  # 不是整数
        lambda S, c, *rest: tuple(_cost(S, c, *rest).values()),  # 不是字典
        lambda S, c, *rest: {k: torch.tensor(v + 0.5, dtype=torch.float64) for k, v in _cost(S, c, *rest).items()},
    ],
    ids=["no-skip", "only-useful", "divisible-only", "no-diagonal", "masked-memory", "non-integer", "tuple",
         "non-integer-tensors"],
)
def test_attention_cost_rejects(answer):
    assert not _passes(sec05.check_attention_cost, answer)


@pytest.mark.parametrize(
    "answer",
    [_cost, _cost_closed_form_numpy, lambda *args: {k: torch.tensor(v) for k, v in _cost(*args).items()}],
    ids=["loop-over-block-rows", "closed-form-numpy", "0-d-tensors"],
)
def test_attention_cost_accepts(answer):
    assert _passes(sec05.check_attention_cost, answer)


def test_tiled_reference_counts_blocks_by_brute_force():
    """参照答案与“逐个块、逐个格子”的暴力计数一致。"""
    for S in (1, 2, 7, 10, 33):
        for c in (1, 2, 3, 4, 16, 40):
            brute = 0
            for r0 in range(0, S, c):
                for q0 in range(0, S, c):
                    cells = [(i, j) for i in range(r0, min(r0 + c, S)) for j in range(q0, min(q0 + c, S))]
                    if any(j <= i for i, j in cells):  # 这一块里至少有一个允许的格子：整块都要算
                        brute += len(cells)
            assert sec05._tiled_pairs(S, c) == brute, (S, c)


def test_linear_scan_names_an_aten_closed_form():
    message = sec05.check_linear_scan(lambda a, b: [b, torch.ops.aten.cumsum.default(b, 0)]).message
    assert "cumsum" in message and "default" not in message


# ---------------------------------------------------------------- 终检第二轮找到的漏洞（每个攻击都必须被拒绝）
def _behind_len(work):
    """把 ``work()`` 放进 ``torch.tensor`` 读序列长度时回头调用的 ``__len__`` 里：运算记录看不见它。"""
    box = {}

    class Seq:
        def __len__(self):
            box["r"] = work()
            return 1

        def __getitem__(self, i):
            if i:
                raise IndexError
            return 0.0

    torch.tensor(Seq())
    return box["r"]


def _attention_softmax_behind_len(X, W_Q, W_K, W_V):
    return _behind_len(lambda: torch.softmax(X @ W_Q @ (X @ W_K).T / math.sqrt(W_K.shape[1]), -1) @ (X @ W_V))


def _attention_forward_mode(X, W_Q, W_K, W_V):
    """前向模式的自动求导：logsumexp 沿第 j 列的方向导数就是 softmax 的第 j 列。"""
    import torch.autograd.forward_ad as fwAD

    _, _, V, s = _scores(X, W_Q, W_K, W_V)
    columns = []
    for j in range(s.shape[0]):
        tangent = torch.zeros_like(s)
        tangent[:, j] = 1
        with fwAD.dual_level():
            columns.append(fwAD.unpack_dual(torch.logsumexp(fwAD.make_dual(s, tangent), -1)).tangent)
    return torch.stack(columns, -1) @ V


def _attention_forward_mode_private(X, W_Q, W_K, W_V):
    """同上，改用 PyTorch 内部的 torch._make_dual / torch._unpack_dual。"""
    _, _, V, s = _scores(X, W_Q, W_K, W_V)
    columns = []
    for j in range(s.shape[0]):
        tangent = torch.zeros_like(s)
        tangent[:, j] = 1
        level = torch._C._enter_dual_level()
        columns.append(torch._unpack_dual(torch.logsumexp(torch._make_dual(s, tangent, level=level), -1), level=level)[1])
        torch._C._exit_dual_level(level=level)
    return torch.stack(columns, -1) @ V


class _OrderedLiar(torch.Tensor):
    """全 0 的错误答案，它的 allclose 对前两次（诊断用的）比较说“不等”，对第三次（判定用的）说“相等”。"""

    calls = [0]

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") == "allclose":
            me = args[0] if isinstance(args[0], _OrderedLiar) else args[1]
            cls.calls[0] += 1
            return me.shape[0] == 1 or cls.calls[0] % 3 == 0
        return super().__torch_function__(func, types, args, kwargs or {})

    def __format__(self, spec):
        return format(float(self.as_subclass(torch.Tensor).reshape(-1)[0]), spec)


def _attention_liar(X, W_Q, W_K, W_V):
    _OrderedLiar.calls[0] = 0
    return torch.zeros(X.shape[0], W_V.shape[1], dtype=X.dtype).as_subclass(_OrderedLiar)


class _AgreeingLiar(torch.Tensor):
    """和普通张量比，equal、allclose、all 一律说“是”；两个它自己的实例相比却说“不等”（骗过“每项都一样”的诊断）。"""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("equal", "allclose"):
            return not all(isinstance(a, _AgreeingLiar) for a in args[:2])
        if name == "all":
            return torch.tensor(True)
        return super().__torch_function__(func, types, args, kwargs or {})

    def __format__(self, spec):
        return format(float(self.as_subclass(torch.Tensor).reshape(-1)[0]), spec)


def _scan_liar(a, b):
    return [torch.zeros_like(b).as_subclass(_AgreeingLiar) for _ in range((a.shape[0] - 1).bit_length() + 1)]


def _mask_liar(scores):
    return torch.zeros_like(scores).as_subclass(_AgreeingLiar)


def _scan_behind_len(a, b):
    """逐位置的循环加上 (S, S, d) 的闭式系数，整个藏进 __len__：既不是倍增，也超出了运算次数。"""
    return _behind_len(lambda: [b.clone()] + sec05._window_scans(a, b, (a.shape[0] - 1).bit_length())[1:])


HOLES = [
    (sec05.check_self_attention, _attention_softmax_behind_len),
    (sec05.check_self_attention, _attention_forward_mode),
    (sec05.check_self_attention, _attention_forward_mode_private),
    (sec05.check_self_attention, _attention_liar),
    (sec05.check_mask_future, _mask_liar),
    (sec05.check_linear_scan, _scan_behind_len),
    (sec05.check_linear_scan, _scan_liar),
]
HOLE_IDS = ["attention-behind-len", "attention-forward-ad", "attention-forward-ad-private", "attention-liar",
            "mask-liar", "scan-behind-len", "scan-liar"]


@pytest.mark.parametrize(("check", "answer"), HOLES, ids=HOLE_IDS)
def test_evasions_are_rejected_directly_and_after_replay(check, answer):
    direct = check(answer)
    data = json.loads(json.dumps(recording.record(check, [answer])))
    replayed = recording.judge(check, data)
    assert not direct.passed and not replayed.passed
    assert replayed.message == direct.message


def test_forward_mode_autograd_is_named():
    message = sec05.check_self_attention(_attention_forward_mode).message
    assert "自动求导" in message and "make_dual" in message


def _linear_search_through_raw(measure, budget):
    """一个一个地试，用的是包装里露出来的、不计数的测量函数；最后只用计数的 measure 测 S − 1 与 S。"""
    raw = measure.measure
    S = 1
    while raw(S) <= budget:
        S += 1
    if S > 1:
        measure(S - 1)
    measure(S)
    return S


def _linear_search_forgetting(measure, budget):
    """一个一个地试，每测 30 次就删掉问过的长度的记录（原地改动检查给的回调）。"""
    S = 1
    while True:
        if len(measure.asked) >= 30:
            del measure.asked[:-1]
        if measure(S) > budget:
            return S
        S += 1


def _closure_cell(fn, kind):
    return next(c for c in fn.__closure__ if isinstance(c.cell_contents, kind))


def _linear_search_clearing_the_closure(measure, budget):
    """翻进闭包，把问过的长度的列表原地清空：次数只能往上数，记录对不上就被发现。"""
    asked = _closure_cell(measure, list).cell_contents
    S = 1
    while True:
        if len(asked) >= 30:
            del asked[:-1]
        if measure(S) > budget:
            return S
        S += 1


def _linear_search_resetting_the_count(measure, budget):
    """翻进闭包，把计数换成新的 itertools.count：检查手里留着原来那个，记录照样对不上。"""
    import itertools

    cell = _closure_cell(measure, itertools.count)
    S = 1
    while True:
        cell.cell_contents = itertools.count(1)
        if measure(S) > budget:
            return S
        S += 1


@pytest.mark.parametrize(
    "answer",
    [_linear_search_through_raw, _linear_search_forgetting, _linear_search_clearing_the_closure,
     _linear_search_resetting_the_count],
    ids=["raw-measure", "forget-asked", "clear-closure-list", "reset-closure-count"],
)
def test_first_length_over_rejects_uncounted_measurements(answer):
    sec05._attention_peak.cache_clear()
    assert not _passes(sec05.check_first_length_over, answer)
    data = json.loads(json.dumps(recording.record(sec05.check_first_length_over, [answer])))
    assert not recording.judge(sec05.check_first_length_over, data).passed


def test_first_length_over_hands_out_a_plain_function():
    seen = []
    sec05.check_first_length_over(lambda measure, budget: seen.append(measure) or 1)
    assert seen and all(type(m).__name__ == "function" and not vars(m) for m in seen)
    assert not any(cell.cell_contents in (sec05._synthetic_peak, sec05.attention_peak)
                   for m in seen for cell in m.__closure__)


def _double_then_bisect_numpy_lengths(measure, budget):
    """不寻常但正确：测量时传入的长度是 NumPy 的整数。"""
    import numpy as np

    hi = np.int64(1)
    while measure(hi) <= budget:
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if measure(mid) > budget else (mid, hi)
    return hi


def test_first_length_over_accepts_numpy_lengths_directly_and_after_replay():
    assert _passes(sec05.check_first_length_over, _double_then_bisect_numpy_lengths)
    data = json.loads(json.dumps(recording.record(sec05.check_first_length_over, [_double_then_bisect_numpy_lengths])))
    assert recording.judge(sec05.check_first_length_over, data).passed


def _scan_with_rows(take):
    """不寻常但正确：每轮用 ``take(x, src)`` 取出第 t − Δ 行（src 为负的行随后用 where 挡掉）。"""
    def scan(a, b):
        S, history, k = a.shape[0], [b.clone()], 1
        while k < S:
            keep = torch.arange(S) >= k
            src = torch.where(keep, torch.arange(S) - k, 0)
            keep = keep[:, None]
            b_prev, a_prev = take(b, src), take(a, src)
            b = torch.where(keep, a * b_prev + b, b)
            a = torch.where(keep, a * a_prev, a)
            history.append(b)
            k *= 2
        return history

    return scan


def _scan_flipped(a, b):
    """不寻常但正确：先把序列翻转，在翻转后的序列上向后合并，每轮结果再翻回来。"""
    a, b = a.flip(0), b.flip(0)
    history, k = [b.flip(0)], 1
    while k < a.shape[0]:
        b = torch.cat([a[:-k] * b[k:] + b[:-k], b[-k:]])
        a = torch.cat([a[:-k] * a[k:], a[-k:]])
        history.append(b.flip(0))
        k *= 2
    return history


@pytest.mark.parametrize(
    "answer",
    [
        _scan_with_rows(lambda x, src: x.index_select(0, src)),
        _scan_with_rows(lambda x, src: torch.gather(x, 0, src[:, None].expand_as(x))),
        _scan_with_rows(lambda x, src: torch.take_along_dim(x, src[:, None], 0)),
        _scan_flipped,
    ],
    ids=["index_select", "gather", "take_along_dim", "flip"],
)
def test_linear_scan_accepts_row_selection_and_flips(answer):
    assert _passes(sec05.check_linear_scan, answer)
    data = json.loads(json.dumps(recording.record(sec05.check_linear_scan, [answer])))
    assert recording.judge(sec05.check_linear_scan, data).passed
