"""第 1.4 节练习的检查：每个检查至少拒绝一个错误答案，并接受一个不寻常但正确的答案；
题目写明的约束（不写关于 j 的循环、不调用库里的 AdditiveAttention、不离开 PyTorch、不调用现成的 softmax）真的被执行，评分时的记录与重放给出同样的判定。"""

from __future__ import annotations

import json
import math
import types

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checking import rejected as _rejected
from seqlab.exercises import recording, sec04
from seqlab.seq2seq import AdditiveAttention


def _todo(*args):
    raise NotImplementedError


# ---------------------------------------------------------------- 1.4.1 加性打分
def _additive(s_prev, H, W_s, W_h, v_a):
    return torch.tanh(W_s @ s_prev + H @ W_h.T) @ v_a


def test_additive_accepts_the_reference_and_unusual_right_answers():
    assert sec04.check_additive_scores(_additive).passed
    einsum = lambda s, H, W_s, W_h, v_a: torch.einsum(  # noqa: E731
        "a,sa->s", v_a, torch.tanh(torch.einsum("ad,d->a", W_s, s) + torch.einsum("ah,sh->sa", W_h, H))
    )
    assert sec04.check_additive_scores(einsum).passed
    linear = lambda s, H, W_s, W_h, v_a: F.linear(torch.tanh(F.linear(H, W_h) + F.linear(s, W_s)), v_a)  # noqa: E731
    assert sec04.check_additive_scores(linear).passed
    in_float64 = lambda s, H, W_s, W_h, v_a: _additive(s.double(), H.double(), W_s.double(), W_h.double(), v_a.double())  # noqa: E731
    assert sec04.check_additive_scores(in_float64).passed
    by_vmap = lambda s, H, W_s, W_h, v_a: torch.vmap(lambda h: v_a @ torch.tanh(W_s @ s + W_h @ h))(H)  # noqa: E731
    assert sec04.check_additive_scores(by_vmap).passed  # vmap 按 j 映射，但只调用一次，不是循环
    by_expit = lambda s, H, W_s, W_h, v_a: (2 * torch.special.expit(2 * (W_s @ s + H @ W_h.T)) - 1) @ v_a  # noqa: E731
    assert sec04.check_additive_scores(by_expit).passed  # tanh(x) = 2σ(2x) − 1


def _numpy_loop(s, H, W_s, W_h, v_a):  # 关于 j 的循环挪进 NumPy：torch 的运算计数看不见它
    s, H, W_s, W_h, v_a = (x.detach().numpy() for x in (s, H, W_s, W_h, v_a))
    return torch.tensor([float(v_a @ np.tanh(W_s @ s + W_h @ h)) for h in H])


def _library(s, H, W_s, W_h, v_a):  # 把权重装进库里的模块，直接用它的 scores
    attn = AdditiveAttention(W_s.shape[1], W_h.shape[1], W_s.shape[0])
    with torch.no_grad():
        attn.W_s.copy_(W_s), attn.W_h.copy_(W_h), attn.v_a.copy_(v_a)
    return attn.scores(s[None], H[None])[0]


_SAVED_SCORES = AdditiveAttention.scores  # 检查开始之前就存下来的库方法


def _saved_library_method(s, H, W_s, W_h, v_a):
    return _SAVED_SCORES(types.SimpleNamespace(W_s=W_s, v_a=v_a), s[None], H[None], keys=H[None] @ W_h.T)[0]


def test_additive_rejects_the_library_and_leaving_torch():
    _rejected(sec04.check_additive_scores(_library), "AdditiveAttention")
    _rejected(sec04.check_additive_scores(_saved_library_method), "AdditiveAttention")
    _rejected(sec04.check_additive_scores(_numpy_loop), "NumPy")

    def python_loop(s, H, W_s, W_h, v_a):
        keys, query, v = (H @ W_h.T).tolist(), (W_s @ s).tolist(), v_a.tolist()
        return torch.tensor([sum(a * math.tanh(q + k) for a, q, k in zip(v, query, row)) for row in keys])

    _rejected(sec04.check_additive_scores(python_loop), "NumPy")

    def without_graph(s, H, W_s, W_h, v_a):
        with torch.no_grad():
            return _additive(s, H, W_s, W_h, v_a)

    _rejected(sec04.check_additive_scores(without_graph), "grad_fn")


def test_additive_rejects_wrong_answers_and_a_loop_over_positions():
    _rejected(sec04.check_additive_scores(lambda s, H, W_s, W_h, v_a: torch.tanh(W_s @ s + H @ W_h.T).sum(-1)), "打分 e")
    _rejected(sec04.check_additive_scores(lambda s, H, W_s, W_h, v_a: (W_s @ s + H @ W_h.T) @ v_a), "tanh")  # 漏了 tanh
    _rejected(sec04.check_additive_scores(lambda s, H, W_s, W_h, v_a: _additive(s, H, W_s, W_h, v_a)[:, None]), "形状")
    loop = lambda s, H, W_s, W_h, v_a: torch.stack([v_a @ torch.tanh(W_s @ s + W_h @ h) for h in H])  # noqa: E731
    _rejected(sec04.check_additive_scores(loop), "循环")
    assert sec04.check_additive_scores(_todo).unfinished and sec04.check_additive_scores(None).unfinished


def test_additive_rejects_a_loop_over_chunks_of_positions():
    """分块循环：每块内用矩阵运算，块数随 S 增长，S = 48 时运算次数仍少于 S；检查比较三种 S 下的次数。"""
    for size in (6, 12, 24):
        def chunked(s, H, W_s, W_h, v_a, size=size):
            q = W_s @ s
            return torch.cat([torch.tanh(q + Hc @ W_h.T) @ v_a for Hc in H.split(size)])

        _rejected(sec04.check_additive_scores(chunked), "分成几块")
    fixed_chunks = lambda s, H, W_s, W_h, v_a: torch.cat([_additive(s, Hc, W_s, W_h, v_a) for Hc in H.chunk(2)])  # noqa: E731
    assert sec04.check_additive_scores(fixed_chunks).passed  # 固定分成两块：次数与 S 无关，不是关于 j 的循环


def test_additive_rejects_changing_the_arguments_in_place():
    """就地改动参数骗不了参照值（它事先算好、学生拿到的是副本），也改不了训练好的模型。"""
    from seqlab import train

    model = train.load("seq2seq_attention").model
    before = model.attention.v_a.detach().clone()

    def zero_va(s, H, W_s, W_h, v_a):  # 把 v_a 清零，返回全零：参照若在调用之后用同一个 v_a 算，也是全零
        v_a.zero_()
        return torch.tanh(W_s @ s + H @ W_h.T) @ v_a

    _rejected(sec04.check_additive_scores(zero_va), "打分 e")

    def zero_va_no_tanh(s, H, W_s, W_h, v_a):  # 检查报告里的原样写法：连 tanh 也没有
        v_a.zero_()
        return (H @ W_h.T).sum(-1) * 0.0

    _rejected(sec04.check_additive_scores(zero_va_no_tanh))
    assert torch.equal(model.attention.v_a.detach(), before)

    def correct_but_scribbles(s, H, W_s, W_h, v_a):  # 先算对，再把参数清零：答案是对的
        e = _additive(s, H, W_s, W_h, v_a)
        W_s.zero_(), W_h.zero_(), v_a.zero_()
        return e

    assert sec04.check_additive_scores(correct_but_scribbles).passed
    assert torch.equal(model.attention.v_a.detach(), before)


def _without_modes(fn):
    """把 fn 包在关掉分派模式与 torch function 的上下文里：进程内的记录看不见其中的运算。"""
    from torch.utils._python_dispatch import _disable_current_modes

    def wrapped(*args):
        with _disable_current_modes(), torch._C.DisableTorchFunction():
            return fn(*args)

    return wrapped


def test_additive_partial_defence_against_disabled_dispatch_modes():
    """有意关掉分派模式，记录就看不见里面的运算；粗防线：一次 tanh 也没看到就不算。"""
    _rejected(sec04.check_additive_scores(_without_modes(_library)), "tanh")
    loop = lambda s, H, W_s, W_h, v_a: torch.stack([v_a @ torch.tanh(W_s @ s + W_h @ h) for h in H])  # noqa: E731
    _rejected(sec04.check_additive_scores(_without_modes(loop)), "tanh")


# ---------------------------------------------------------------- 1.4.2 softmax 与 c_t
def _context(e, H):
    z = torch.exp(e - e.max())
    alpha = z / z.sum()
    return alpha, alpha @ H


def test_context_accepts_the_reference_and_unusual_right_answers():
    assert sec04.check_context(_context).passed

    def by_logsumexp(e, H):  # exp(e - log Σ exp e)：稳定的 softmax 的另一种写法
        alpha = torch.exp(e - torch.logsumexp(e, 0))
        return alpha, alpha @ H

    assert sec04.check_context(by_logsumexp).passed

    def shifted_twice(e, H):  # 先减平均值、再减最大值：多减一个常数不改变结果；c 用逐元素乘再求和
        shifted = e - e.mean()
        z = torch.exp(shifted - shifted.max())
        alpha = z / z.sum()
        return alpha, (alpha[:, None] * H).sum(0)

    assert sec04.check_context(shifted_twice).passed
    assert sec04.check_context(lambda e, H: tuple(_context(e.double(), H.double()))).passed

    def by_exp2(e, H):  # 以 2 为底：exp(x) = 2^(x·log₂e)
        z = torch.special.exp2((e - e.max()) * math.log2(math.e))
        return z / z.sum(), (z / z.sum()) @ H

    assert sec04.check_context(by_exp2).passed


def test_context_rejects_overflow_wrong_weights_and_ready_made_softmax():
    naive = sec04.check_context(lambda e, H: (torch.exp(e) / torch.exp(e).sum(), torch.exp(e) / torch.exp(e).sum() @ H))
    _rejected(naive, "减去最大")
    _rejected(sec04.check_context(lambda e, H: (e / e.sum(), e / e.sum() @ H)))
    _rejected(sec04.check_context(lambda e, H: [*_context(e, H)][0]), "二元组")
    _rejected(sec04.check_context(lambda e, H: (_context(e, H)[0], H.mean(0))), "c")
    for ready_made in (
        lambda e, H: (torch.softmax(e, -1), torch.softmax(e, -1) @ H),
        lambda e, H: (F.softmax(e, dim=0), F.softmax(e, dim=0) @ H),
        lambda e, H: (e.softmax(0), e.softmax(0) @ H),
        lambda e, H: (F.log_softmax(e, 0).exp(), F.log_softmax(e, 0).exp() @ H),
        lambda e, H: (torch.special.softmax(e, 0), torch.special.softmax(e, 0) @ H),
        lambda e, H: (torch.nn.Softmax(dim=0)(e), torch.nn.Softmax(dim=0)(e) @ H),
        lambda e, H: (torch.ops.aten.softmax.int(e, 0), torch.ops.aten.softmax.int(e, 0) @ H),  # 名字是 aten::softmax.int
        lambda e, H: (torch.ops.aten._softmax(e, 0, False), torch.ops.aten._softmax(e, 0, False) @ H),
        lambda e, H: (torch.ops.aten._softmax.default(e, 0, False), torch.ops.aten._softmax.default(e, 0, False) @ H),
        lambda e, H: (torch._softmax(e, 0, False), torch._softmax(e, 0, False) @ H),
        lambda e, H: (torch.ops.aten.log_softmax.int(e, 0).exp(), torch.ops.aten.log_softmax.int(e, 0).exp() @ H),
        lambda e, H: (F.softmin(-e, 0), F.softmin(-e, 0) @ H),
    ):
        _rejected(sec04.check_context(ready_made), "现成的 softmax")


def test_context_rejects_cross_entropy_and_hidden_softmax():
    """F.cross_entropy 在一次调用里先做 log_softmax：exp(-交叉熵) 就是 softmax 权重。"""
    def by_cross_entropy(e, H):
        S = e.shape[0]
        alpha = torch.exp(-F.cross_entropy(e.expand(S, S), torch.arange(S), reduction="none"))
        return alpha, alpha @ H

    _rejected(sec04.check_context(by_cross_entropy), "cross_entropy")
    # 关掉分派模式后调用 torch.softmax：记录看不见它；粗防线是一次 exp 也没看到就不算
    hidden = _without_modes(lambda e: torch.softmax(e, -1))
    _rejected(sec04.check_context(lambda e, H: (hidden(e), hidden(e) @ H)), "exp")


def test_context_in_place_changes_neither_fool_nor_fail_the_check():
    def zero_H(e, H):  # 把 H 清零：c 成了 0；参照若在调用之后用同一个 H 算，也是 0
        alpha = _context(e, H)[0]
        H.zero_()
        return alpha, alpha @ H

    _rejected(sec04.check_context(zero_H), "c")

    def unweighted_mean(e, H):  # 把 H 每行改成平均行：任何权重都给出同一个 c；返回的是不加权的平均
        alpha = _context(e, H)[0]
        H.copy_(H.mean(0, keepdim=True).expand_as(H))
        return alpha, H.mean(0)

    _rejected(sec04.check_context(unweighted_mean), "c")

    def in_place_softmax(e, H):  # 就地算出 softmax：数值是对的，应当通过
        e.sub_(e.max()).exp_()
        e.div_(e.sum())
        return e, e @ H

    assert sec04.check_context(in_place_softmax).passed


def test_context_rejects_the_second_largest_shift_and_attention_as_softmax():
    def second_largest(e, H):  # 平移不改变 softmax，但最大项领先上千时 exp(998) 溢出
        z = torch.exp(e - e.sort().values[-2])
        return z / z.sum(), z / z.sum() @ H

    _rejected(sec04.check_context(second_largest), "第二大")

    def by_sdpa(e, H):  # 一个 Query、S 个 Key（就是打分）、Value 取单位矩阵：输出正是 softmax(e)
        alpha = F.scaled_dot_product_attention(torch.ones(1, 1, 1), e[None, :, None], torch.eye(len(e))[None], scale=1.0)[0, 0]
        return alpha, alpha @ H

    _rejected(sec04.check_context(by_sdpa), "注意力函数")


def test_context_rejects_shifting_by_the_minimum_or_the_mean():
    """减去最小值或平均值同样不改变 softmax，但打分彼此相差上千时，最大项仍会溢出（float64 也一样）。"""
    def shifted(by, dtype=torch.float32):
        def context(e, H):
            z = torch.exp((e - by(e)).to(dtype))
            alpha = (z / z.sum()).float()
            return alpha, alpha @ H
        return context

    for by in (torch.min, torch.mean, torch.median):
        _rejected(sec04.check_context(shifted(by)), "最大的那一项")
        _rejected(sec04.check_context(shifted(by, torch.float64)), "最大的那一项")


# ---------------------------------------------------------------- 1.4.3 均匀权重
def _uniform(e):
    return torch.full_like(e, 1 / e.shape[-1])


def test_uniform_accepts_every_spelling_of_the_right_statements():
    assert sec04.check_uniform(_uniform, "BD").passed
    for why in ("db", "B, D", "B、D", "B和D", "B D.", ["D", "B"], ("b", "d"), {"B", "D"}):
        assert sec04.check_uniform(_uniform, why).passed, why
    assert sec04.check_uniform(lambda e: torch.ones_like(e) / e.size(1), "BD").passed
    assert sec04.check_uniform(lambda e: (e * 0 + 1).softmax(-1), "BD").passed  # 常数打分的 softmax 正是均匀权重


def test_uniform_rejects_wrong_weights_and_wrong_or_incomplete_statements():
    _rejected(sec04.check_uniform(lambda e: torch.full_like(e, 1 / e.shape[0]), "BD"), "均匀权重")  # 除以 batch 大小
    _rejected(sec04.check_uniform(lambda e: torch.softmax(e, -1), "BD"), "均匀权重")
    only_small = lambda e: _uniform(e) if e.shape[0] < 10 else torch.softmax(e, -1)  # noqa: E731  # 只在小 batch 上均匀
    _rejected(sec04.check_uniform(only_small, "BD"), "模型里的均匀权重")
    for why, word in (("B", "漏了"), ("D", "漏了"), ("ABD", "A 不对"), ("BCD", "C 不对"), ("BDE", "E 不对")):
        _rejected(sec04.check_uniform(_uniform, why), word)
    _rejected(sec04.check_uniform(_uniform, "BZ"), "A—E")
    _rejected(sec04.check_uniform(_uniform, 2), "A—E")
    assert sec04.check_uniform(_uniform, None).unfinished
    assert sec04.check_uniform(_todo, None).unfinished


def test_uniform_names_the_dtype():
    """float64 的权重数值没错，但模型里没法和 float32 的 H 相乘：检查点名 dtype，而不是报一个运行时错误。"""
    in_float64 = lambda e: torch.full(e.shape, 1 / e.shape[-1], dtype=torch.float64)  # noqa: E731
    _rejected(sec04.check_uniform(in_float64, "BD"), "dtype", "full_like")


# ---------------------------------------------------------------- 1.4.4 双线性打分与参数量
def _bilinear(s_prev, H, W_a):
    return H @ (W_a.T @ s_prev)


def _params(d_s, d_hh, d_a):
    return d_s * d_hh, d_a * (d_s + d_hh + 1)


def _cheaper(d_s, d_hh):
    return (d_s * d_hh - 1) // (d_s + d_hh + 1)


def test_bilinear_accepts_the_reference_and_unusual_right_answers():
    assert sec04.check_bilinear_scores(_bilinear, _params, _cheaper).passed
    assert sec04.check_bilinear_scores(
        lambda s, H, W_a: (s @ W_a) @ H.T,
        lambda *d: [d[0] * d[1], d[2] * sum(d[:2]) + d[2]],
        lambda d_s, d_hh: max((d for d in range(1, d_s * d_hh) if d * (d_s + d_hh + 1) < d_s * d_hh), default=0),  # 逐个试
    ).passed
    assert sec04.check_bilinear_scores(
        lambda s, H, W_a: torch.einsum("d,dh,sh->s", s, W_a, H),
        lambda d_s, d_hh, d_a: (float(d_s * d_hh), torch.tensor(d_a * (d_s + d_hh + 1))),
        lambda d_s, d_hh: torch.tensor(math.ceil(d_s * d_hh / (d_s + d_hh + 1)) - 1.0),  # 浮点除法再向上取整、减一
    ).passed


def test_bilinear_rejects_wrong_scores_and_wrong_parameter_counts():
    _rejected(sec04.check_bilinear_scores(lambda s, H, W_a: H @ W_a.T @ s * 2, _params, _cheaper), "双线性打分")
    _rejected(sec04.check_bilinear_scores(lambda s, H, W_a: H @ (W_a @ s), _params, _cheaper))  # W_a 乘错了一边：形状对不上
    _rejected(sec04.check_bilinear_scores(_bilinear, lambda d_s, d_hh, d_a: (d_s * d_hh, d_a * (d_s + d_hh)), _cheaper), "加性打分的参数")
    _rejected(
        sec04.check_bilinear_scores(_bilinear, lambda d_s, d_hh, d_a: (d_s * d_hh, d_a * (d_s + d_hh // 2 + 1)), _cheaper), "加性打分的参数"
    )
    _rejected(
        sec04.check_bilinear_scores(_bilinear, lambda d_s, d_hh, d_a: (d_s * d_hh + d_s, d_a * (d_s + d_hh + 1)), _cheaper), "双线性打分的参数"
    )
    _rejected(sec04.check_bilinear_scores(_bilinear, lambda d_s, d_hh, d_a: 12352, _cheaper), "二元组")
    assert sec04.check_bilinear_scores(_todo, _todo, _todo).unfinished
    assert sec04.check_bilinear_scores(_bilinear, None, None).unfinished


def test_bilinear_requires_the_derivation():
    """参数个数要从形状推导：建出真实模块再数，不算；加性打分更省参数的条件要解对，严格小于，没有时为 0。"""
    def counted(d_s, d_hh, d_a):
        return tuple(sum(p.numel() for p in m.parameters())
                     for m in (nn.Bilinear(d_s, d_hh, 1, bias=False), AdditiveAttention(d_s, d_hh, d_a)))

    _rejected(sec04.check_bilinear_scores(_bilinear, counted, _cheaper), "推导")
    by_zeros = lambda d_s, d_hh, d_a: (torch.zeros(d_s, d_hh).numel(), d_a * (d_s + d_hh + 1))  # noqa: E731
    _rejected(sec04.check_bilinear_scores(_bilinear, by_zeros, _cheaper), "推导")
    _rejected(sec04.check_bilinear_scores(_bilinear, _params, lambda d_s, d_hh: d_s * d_hh // (d_s + d_hh + 1)), "严格")  # ≤ 而不是 <
    _rejected(sec04.check_bilinear_scores(_bilinear, _params, lambda d_s, d_hh: d_s * d_hh // (d_s + d_hh)), "d_a")  # 漏了 v_a
    _rejected(sec04.check_bilinear_scores(_bilinear, _params, lambda d_s, d_hh: 42), "d_a")  # 只抄了本节维度下的答案
    _rejected(sec04.check_bilinear_scores(_bilinear, _params, lambda d_s, d_hh: max(_cheaper(d_s, d_hh), 1)), "返回 0")
    result = sec04.check_bilinear_scores(_bilinear, _params, None)
    assert result.unfinished and "cheaper_d_a" in result.message


def test_bilinear_rejects_changing_the_arguments_in_place():
    def zero_W(s, H, W_a):  # 把 W_a 清零，返回全零
        W_a.zero_()
        return H @ (W_a.T @ s)

    _rejected(sec04.check_bilinear_scores(zero_W, _params, _cheaper), "双线性打分")

    def correct_but_scribbles(s, H, W_a):
        e = _bilinear(s, H, W_a)
        s.zero_(), H.zero_(), W_a.zero_()
        return e

    assert sec04.check_bilinear_scores(correct_but_scribbles, _params, _cheaper).passed


# ---------------------------------------------------------------- 评分：记录、重放，判定不变
CASES = [
    (sec04.check_additive_scores, [_additive]),
    (sec04.check_additive_scores, [lambda s, H, W_s, W_h, v_a: torch.stack([v_a @ torch.tanh(W_s @ s + W_h @ h) for h in H])]),
    (sec04.check_additive_scores, [_library]),
    (sec04.check_additive_scores, [_numpy_loop]),
    (sec04.check_context, [_context]),
    (sec04.check_context, [lambda e, H: (lambda z: (z / z.sum(), z / z.sum() @ H))(torch.exp(e - e.sort().values[-2]))]),
    (sec04.check_uniform, [lambda e: _uniform(e) if e.shape[0] < 10 else torch.softmax(e, -1), "BD"]),
    (sec04.check_context, [lambda e, H: (torch.softmax(e, -1), torch.softmax(e, -1) @ H)]),
    (sec04.check_uniform, [_uniform, "DB"]),
    (sec04.check_uniform, [_uniform, "ABD"]),
    (sec04.check_context, [lambda e, H: (lambda z: (z / z.sum(), z / z.sum() @ H))(torch.exp(e - e.min()))]),
    (sec04.check_bilinear_scores, [_bilinear, _params, _cheaper]),
    (sec04.check_bilinear_scores, [_bilinear, lambda d_s, d_hh, d_a: (d_s * d_hh, d_a * (d_s + d_hh)), _cheaper]),
    (sec04.check_bilinear_scores, [_bilinear, _params, lambda d_s, d_hh: d_s * d_hh // (d_s + d_hh + 1)]),
    # 就地改动参数：评分时这些改动被记录、重放，判定仍与直接检查相同
    (sec04.check_additive_scores, [lambda s, H, W_s, W_h, v_a: torch.tanh(W_s @ s + H @ W_h.T) @ v_a.zero_()]),
    (sec04.check_context, [lambda e, H: (lambda a: (a, a @ H.zero_()))(_context(e, H)[0])]),
    (sec04.check_context, [lambda e, H: (lambda a: (a, a @ H))(e.sub_(e.max()).exp_().div_(e.exp().sum() * 0 + e.sum()))]),
    (sec04.check_bilinear_scores, [lambda s, H, W_a: H @ (W_a.zero_().T @ s), _params, _cheaper]),
    (sec04.check_additive_scores, [lambda s, H, W_s, W_h, v_a: torch.cat([_additive(s, Hc, W_s, W_h, v_a) for Hc in H.split(6)])]),
    (sec04.check_context, [lambda e, H: (lambda a: (a, a @ H))(torch.exp(-F.cross_entropy(e.expand(len(e), len(e)), torch.arange(len(e)), reduction="none")))]),
    (sec04.check_uniform, [lambda e: torch.full(e.shape, 1 / e.shape[-1], dtype=torch.float64), "BD"]),
]


@pytest.mark.parametrize(("check", "answers"), CASES, ids=lambda x: getattr(x, "__name__", "answers"))
def test_replayed_verdict_equals_the_direct_check(check, answers):
    direct = check(*answers)
    data = json.loads(json.dumps(recording.record(check, list(answers))))
    replayed = recording.judge(check, data)
    assert (replayed.passed, replayed.message) == (direct.passed, direct.message)
