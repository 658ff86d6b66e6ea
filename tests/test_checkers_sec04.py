"""第 1.4 节练习的检查：每个检查至少拒绝一个错误答案，并接受一个不寻常但正确的答案；
题目写明的约束（不写关于 j 的循环、不调用库里的 AdditiveAttention、不离开 PyTorch、不调用现成的 softmax）真的被执行，评分时的记录与重放给出同样的判定。"""

from __future__ import annotations

import json
import math

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


def _numpy_loop(s, H, W_s, W_h, v_a):  # 关于 j 的循环挪进 NumPy：torch 的运算计数看不见它
    s, H, W_s, W_h, v_a = (x.detach().numpy() for x in (s, H, W_s, W_h, v_a))
    return torch.tensor([float(v_a @ np.tanh(W_s @ s + W_h @ h)) for h in H])


def _library(s, H, W_s, W_h, v_a):  # 把权重装进库里的模块，直接用它的 scores
    attn = AdditiveAttention(W_s.shape[1], W_h.shape[1], W_s.shape[0])
    with torch.no_grad():
        attn.W_s.copy_(W_s), attn.W_h.copy_(W_h), attn.v_a.copy_(v_a)
    return attn.scores(s[None], H[None])[0]


def test_additive_rejects_the_library_and_leaving_torch():
    _rejected(sec04.check_additive_scores(_library), "AdditiveAttention")
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
    _rejected(sec04.check_additive_scores(lambda s, H, W_s, W_h, v_a: (W_s @ s + H @ W_h.T) @ v_a), "打分 e")  # 漏了 tanh
    _rejected(sec04.check_additive_scores(lambda s, H, W_s, W_h, v_a: _additive(s, H, W_s, W_h, v_a)[:, None]), "形状")
    loop = lambda s, H, W_s, W_h, v_a: torch.stack([v_a @ torch.tanh(W_s @ s + W_h @ h) for h in H])  # noqa: E731
    _rejected(sec04.check_additive_scores(loop), "循环")
    assert sec04.check_additive_scores(_todo).unfinished and sec04.check_additive_scores(None).unfinished


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
]


@pytest.mark.parametrize(("check", "answers"), CASES, ids=lambda x: getattr(x, "__name__", "answers"))
def test_replayed_verdict_equals_the_direct_check(check, answers):
    direct = check(*answers)
    data = json.loads(json.dumps(recording.record(check, list(answers))))
    replayed = recording.judge(check, data)
    assert (replayed.passed, replayed.message) == (direct.passed, direct.message)
