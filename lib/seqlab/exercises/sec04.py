"""第 1.4 节练习的自动检查：加性打分、归一化与上下文、均匀权重、点积打分。"""

from __future__ import annotations

import copy
import random

import torch

from seqlab.corpus import translation as task
from seqlab.exercises import call, checker, expect, expect_tensor, fail


def _shape(x: torch.Tensor, shape: tuple[int, ...], what: str) -> None:
    expect(tuple(x.shape) == shape, f"{what} 的形状应为 {shape}，你的是 {tuple(x.shape)}。")


def _close(got: torch.Tensor, want: torch.Tensor, what: str, hint: str, tol: float = 1e-5) -> None:
    if not torch.isfinite(got).all():
        fail(f"「{what}」里出现了 NaN 或无穷大。{hint}")
    err = (got.double() - want.double()).abs().max().item()
    expect(err <= tol, f"「{what}」与参考值最多差 {err:.3g}（允许 {tol:g}）。{hint}")


def _random_attention(seed: int, d_s: int = 5, d_hh: int = 6, d_a: int = 4, S: int = 7):
    from seqlab.seq2seq import AdditiveAttention

    torch.manual_seed(seed)
    attn = AdditiveAttention(d_s, d_hh, d_a)
    return attn, torch.randn(d_s), torch.randn(S, d_hh)


@checker(
    "1.4.1",
    "按公式写出加性打分",
    objective="把 e_tj = v_aᵀ tanh(W_s s_{t-1} + W_h h_j) 逐项翻译成张量运算",
    difficulty=1,
    minutes=10,
)
def check_additive_scores(additive_scores):
    from seqlab import train

    for seed in (0, 1):
        attn, s_prev, H = _random_attention(seed)
        e = expect_tensor(call(additive_scores, s_prev, H, attn.W_s.data, attn.W_h.data, attn.v_a.data), "e")
        _shape(e, (H.shape[0],), "e")
        want = attn.scores(s_prev[None], H[None])[0].detach()
        _close(e, want, "打分 e", "提示：先算 W_s @ s_prev（一个向量）和 H @ W_h.T（每行是一个 W_h h_j），"
               "相加后取 tanh，再与 v_a 做内积。")
    model = train.load("seq2seq_attention").model
    H = model.encoder(torch.tensor([task.encode_source(list(task.EXAMPLES[0]))]))[0].detach()
    s_prev = torch.randn(model.attention.W_s.shape[1], generator=torch.Generator().manual_seed(2))
    a = model.attention
    e = expect_tensor(call(additive_scores, s_prev, H, a.W_s.data, a.W_h.data, a.v_a.data), "e")
    _close(e, a.scores(s_prev[None], H[None])[0].detach(), "训练好的模型上的打分 e", "")
    return f"与库里的 AdditiveAttention.scores 一致（随机权重与训练好的权重都试过，S = {H.shape[0]}）。"


@checker(
    "1.4.2",
    "权重归一化，拼出 c_t",
    objective="用数值稳定的 softmax 得到和为 1 的 α_tj，并算出 c_t = Σ_j α_tj h_j",
    difficulty=2,
    minutes=12,
)
def check_context(context):
    attn, s_prev, H = _random_attention(3)
    e = attn.scores(s_prev[None], H[None])[0].detach()
    cases = [("随机打分", e), ("很大的打分（e + 1000）", e + 1000.0), ("很小的打分（e - 1000）", e - 1000.0)]
    for what, scores in cases:
        out = call(context, scores, H)
        if not (isinstance(out, tuple) and len(out) == 2):
            fail("context 应返回一个二元组 (alpha, c)。")
        alpha, c = expect_tensor(out[0], "alpha"), expect_tensor(out[1], "c")
        _shape(alpha, (H.shape[0],), "alpha")
        _shape(c, (H.shape[1],), "c")
        hint = "提示：exp 之前先减去最大的打分，结果不变，却不会溢出。" if "1000" in what else ""
        if not torch.isfinite(alpha).all():
            fail(f"{what}：alpha 里出现了 NaN 或无穷大。{hint}")
        expect(bool((alpha >= 0).all()), f"{what}：权重不能是负数。")
        total = alpha.sum().item()
        expect(abs(total - 1) < 1e-5, f"{what}：权重之和应为 1，你的是 {total:.6f}。")
        _close(alpha, torch.softmax(e, dim=-1), f"{what}：alpha", hint or "提示：α_tj = exp(e_tj) / Σ_r exp(e_tr)。")
        _close(c, torch.softmax(e, dim=-1) @ H, f"{what}：c", "提示：c 是 H 各行按 alpha 加权的和。")
    return "权重非负、和为 1，打分整体加上 ±1000 也不溢出；c_t 正确。"


@checker(
    "1.4.3",
    "均匀权重：瓶颈又回来了",
    objective="理解注意力的收益来自“每一步读不同的地方”，而不只是“保留了所有 h_j”",
    difficulty=2,
    minutes=15,
)
def check_uniform(uniform_weights, why):
    from seqlab import train
    from seqlab.seq2seq import accuracy_by_length

    e = torch.randn(3, 5, generator=torch.Generator().manual_seed(4))
    alpha = expect_tensor(call(uniform_weights, e), "alpha")
    _shape(alpha, tuple(e.shape), "alpha")
    _close(alpha, torch.full_like(e, 1 / 5), "均匀权重", "提示：S 个位置，每个位置的权重都是 1/S。")
    alpha2 = call(uniform_weights, e * 10 + 3)
    _close(expect_tensor(alpha2, "alpha"), torch.full_like(e, 1 / 5), "换一组打分后的权重", "均匀权重不应该依赖打分。")
    expect(why in {"A", "B", "C"}, "why 应该是字符串 'A'、'B' 或 'C' 之一。")
    model = train.load("seq2seq_attention").model
    uniform = copy.deepcopy(model)
    uniform.attention.weights = uniform_weights
    data = [task.make_batch(n, 40, random.Random(n)) for n in (5, 12, 24)]
    soft, flat = accuracy_by_length(model, data), accuracy_by_length(uniform, data)
    report = "；".join(f"长度 {n}：{soft[n]:.2f} → {flat[n]:.2f}" for n in soft)
    expect(
        why == "B",
        f"均匀权重写对了（准确率 softmax → 均匀：{report}），但 why 选得不对。想一想：均匀权重下 c_t 对每个 t "
        "都一样吗？它和固定上下文的 c 有什么共同点？",
    )
    return f"均匀权重下 c_t = 每个 h_j 的平均，对所有 t 都相同——又变回了一个固定向量。{report}。"


@checker(
    "1.4.4",
    "点积打分",
    objective="写出 e_tj = (W s_{t-1})ᵀ h_j，并和加性打分比较参数量",
    difficulty=2,
    minutes=10,
)
def check_dot_scores(dot_scores):
    torch.manual_seed(5)
    d_s, d_hh, S = 4, 6, 9
    for _ in range(2):
        s_prev, H, W = torch.randn(d_s), torch.randn(S, d_hh), torch.randn(d_hh, d_s)
        e = expect_tensor(call(dot_scores, s_prev, H, W), "e")
        _shape(e, (S,), "e")
        _close(e, H @ (W @ s_prev), "点积打分 e", "提示：先把 s_prev 用 W 映射到 h_j 的空间（W @ s_prev），"
               "再和 H 的每一行做内积。")
    return "正确！点积打分只需一个矩阵乘法，也没有 tanh 与 v_a。"
