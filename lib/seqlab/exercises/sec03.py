"""第 1.3 节练习的自动检查。参考值一律由 autograd 或 PyTorch 自带的模块现算，不引用书里的实现。"""

from __future__ import annotations

import math

import torch
from torch import nn

from seqlab.exercises import call, checker, expect, expect_close, fail


def _as_tensor(x, what: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        fail(f"{what}应该返回一个 torch.Tensor，你返回的是 {type(x).__name__}。")
    return x.to(torch.float64)


def _random_case(seed: int, d: int = 5):
    g = torch.Generator().manual_seed(seed)
    W_h = torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)
    u = torch.randn(d, generator=g, dtype=torch.float64)  # W_x e_j + b
    h_prev = torch.randn(d, generator=g, dtype=torch.float64).tanh()
    return W_h, u, h_prev


@checker(
    "1.3.1",
    "推导并实现一步的雅可比矩阵",
    objective="从 h_j = tanh(a_j) 推出 J_j = diag(1 - h_j²) W_h，并用 autograd 验证",
    difficulty=1,
    minutes=10,
)
def check_tanh_jacobian(tanh_jacobian):
    """学生函数 ``tanh_jacobian(h_j, W_h) -> (d, d)``：``∂h_j/∂h_{j-1}``，其中 ``h_j = tanh(u + W_h h_{j-1})``。"""
    for seed in range(4):
        W_h, u, h_prev = _random_case(seed, d=3 + seed)
        h_j = torch.tanh(u + W_h @ h_prev)
        want = torch.func.jacrev(lambda h, W_h=W_h, u=u: torch.tanh(u + W_h @ h))(h_prev)
        got = _as_tensor(call(tanh_jacobian, h_j.clone(), W_h.clone()), "tanh_jacobian")
        d = W_h.shape[0]
        expect(tuple(got.shape) == (d, d), f"d = {d} 时 J_j 的形状应为 ({d}, {d})，你的是 {tuple(got.shape)}。")
        if torch.allclose(got, W_h * (1 - h_j**2)[None, :]):
            fail("你把 1 - h_j² 乘在了 W_h 的列上（W_h diag(…)）。链式法则给出的是 diag(1 - h_j²) W_h："
                 "先乘 W_h，再逐元素乘 tanh 的导数，所以应缩放的是行。")
        if torch.allclose(got, (1 - torch.tanh(h_j) ** 2)[:, None] * W_h):
            fail("tanh 的导数要在预激活 a_j 处取值：tanh'(a_j) = 1 - tanh(a_j)² = 1 - h_j²。"
                 "你对 h_j 又求了一次 tanh。")
        expect(torch.allclose(got, want, rtol=1e-9, atol=1e-12),
               f"d = {d} 的随机例子里你的 J_j 与 autograd 的结果不一致（最大差 {float((got - want).abs().max()):.2e}）。"
               "提示：J_j 的第 i 行是 W_h 的第 i 行乘以 1 - h_j[i]²。")
    return "与 torch.func.jacrev 一致：J_j = diag(1 − h_j²) W_h。注意它只用到 h_j，不需要再存 a_j。"


@checker(
    "1.3.2",
    "让线性正交 RNN 不消失也不爆炸",
    objective="用 ‖(gQ)^r‖₂ = g^r 求出让梯度在 r 步后保持指定大小的缩放 g",
    difficulty=1,
    minutes=5,
)
def check_scale_for_target(g_for):
    """学生函数 ``g_for(target, r) -> float``：使 ``‖∂h_t/∂h_{t-r}‖₂ = target`` 的 ``g``（``W_h = gQ``，φ 线性）。"""
    Q, _ = torch.linalg.qr(torch.randn(8, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64))
    for target, r in ((1.0, 50), (0.5, 50), (1e-3, 20), (100.0, 30)):
        got = call(g_for, target, r)
        try:
            g = float(got)
        except (TypeError, ValueError):
            fail(f"g_for({target}, {r}) 应返回一个数，你返回的是 {got!r}。")
        if math.isclose(g, target / r, rel_tol=1e-9) and not math.isclose(target / r, target ** (1 / r)):
            fail("范数不是按 g·r 线性变化，而是按 g^r 指数变化：需要解 g^r = target。")
        norm = float(torch.linalg.matrix_norm(torch.linalg.matrix_power(g * Q, r), ord=2)) if g > 0 else 0.0
        expect_close(norm, target, f"用你的 g = {g:.6g} 时，r = {r} 步后的梯度范数", tol=1e-6)
    return ("g = target^(1/r)。要让梯度既不消失也不爆炸，g 必须恰好是 1——"
            "差一点都会被 r 次方放大：g = 0.99 时 100 步后只剩 37%，g = 1.01 时变成 2.7 倍。")


def _reference_norms(W_h: torch.Tensor, U: torch.Tensor) -> list[float]:
    h = torch.zeros(W_h.shape[0], dtype=torch.float64)
    out = []
    for u in U:
        J = torch.func.jacrev(lambda h, u=u: torch.tanh(u + W_h @ h))(h)
        out.append(float(torch.linalg.matrix_norm(J, ord=2)))
        h = torch.tanh(u + W_h @ h)
    return out


@checker(
    "1.3.3",
    "饱和让雅可比矩阵变小",
    objective="计算 tanh RNN 每一步的 ‖J_j‖₂，看到输入越大、tanh 越饱和、J_j 越小",
    difficulty=2,
    minutes=15,
)
def check_saturation(jacobian_norms):
    """学生函数 ``jacobian_norms(W_h, U) -> list[float]``：从 ``h_0 = 0`` 开始按 ``h_j = tanh(u_j + W_h h_{j-1})``
    跑 ``T = len(U)`` 步，返回每一步的 ``‖J_j‖₂``。"""
    d, T = 6, 25
    g = torch.Generator().manual_seed(3)
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    Z = torch.randn(T, d, generator=g, dtype=torch.float64)
    means = {}
    for scale in (0.1, 1.0, 3.0):
        U = scale * Z
        got = call(jacobian_norms, Q.clone(), U.clone())
        try:
            got = [float(x) for x in got]
        except TypeError:
            fail(f"应返回 T = {T} 个数组成的列表，你返回的是 {type(got).__name__}。")
        expect(len(got) == T, f"U 有 T = {T} 行，应返回 {T} 个范数，你返回了 {len(got)} 个。")
        want = _reference_norms(Q, U)
        if any(math.isclose(a, 1.0, rel_tol=1e-9) for a in got) and not all(
            math.isclose(b, 1.0, rel_tol=1e-6) for b in want
        ):
            fail("有的范数恰好是 1 = ‖W_h‖₂：你可能忘了乘 tanh 的导数 diag(1 - h_j²)。")
        for j, (a, b) in enumerate(zip(got, want)):
            expect_close(a, b, f"输入幅度 {scale} 时第 {j + 1} 步的 ‖J_j‖₂", tol=1e-6)
        means[scale] = sum(got) / T
    expect(means[0.1] > means[1.0] > means[3.0], "输入越大，平均的 ‖J_j‖₂ 应该越小。")
    return (f"平均 ‖J_j‖₂：输入幅度 0.1 → {means[0.1]:.3f}，1 → {means[1.0]:.3f}，3 → {means[3.0]:.3f}。"
            "W_h 是正交矩阵（‖W_h‖₂ = 1），变小的部分全部来自饱和的 tanh：连乘几十步后，"
            "这个差别会被放大成许多个数量级。")


@checker(
    "1.3.4",
    "（挑战）自己写一个 GRU 单元",
    objective="按 PyTorch 的约定实现 GRU 的一步，并与 nn.GRUCell 逐位对照",
    difficulty=3,
    minutes=25,
)
def check_gru_cell(gru_cell):
    """学生函数 ``gru_cell(x, h, W_ih, W_hh, b_ih, b_hh) -> h_new``，形状约定同 ``nn.GRUCell``（门的顺序 r, z, n）。"""
    torch.manual_seed(0)
    for d_in, d in ((3, 4), (5, 2)):
        cell = nn.GRUCell(d_in, d, dtype=torch.float64)
        with torch.no_grad():
            cell.bias_hh.uniform_(-1, 1)  # 让 b_hn 足够大，放错位置时能看出来
        x = torch.randn(7, d_in, dtype=torch.float64)
        h = torch.randn(7, d, dtype=torch.float64)
        params = [p.detach().clone() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
        got = _as_tensor(call(gru_cell, x.clone(), h.clone(), *params), "gru_cell")
        want = cell(x, h).detach()
        expect(tuple(got.shape) == tuple(want.shape),
               f"x 形状 {tuple(x.shape)}、h 形状 {tuple(h.shape)} 时输出应为 {tuple(want.shape)}，你的是 {tuple(got.shape)}。")
        W_ih, W_hh, b_ih, b_hh = params
        gi, gh = x @ W_ih.T + b_ih, h @ W_hh.T + b_hh
        r = torch.sigmoid(gi[:, :d] + gh[:, :d])
        z = torch.sigmoid(gi[:, d:2 * d] + gh[:, d:2 * d])
        n = torch.tanh(gi[:, 2 * d:] + r * gh[:, 2 * d:])
        if torch.allclose(got, z * n + (1 - z) * h):
            fail("z 的两个系数放反了：PyTorch 的约定是 h' = (1 − z) ⊙ n + z ⊙ h，z 越大越保留旧状态。")
        n_wrong = torch.tanh(gi[:, 2 * d:] + r * (h @ W_hh[2 * d:].T) + b_hh[2 * d:])
        if torch.allclose(got, (1 - z) * n_wrong + z * h):
            fail("候选状态里重置门 r 要乘在整个 (W_hn h + b_hn) 上，包括偏置 b_hn。")
        expect(torch.allclose(got, want, rtol=1e-9, atol=1e-12),
               f"与 nn.GRUCell 的结果不一致（最大差 {float((got - want).abs().max()):.2e}）。"
               "提示：先算 x W_ihᵀ + b_ih 与 h W_hhᵀ + b_hh，各自按 r, z, n 切成三段。")
    return ("与 nn.GRUCell 完全一致。注意 h' = (1 − z) ⊙ n + z ⊙ h 里那条 z ⊙ h 的直连：对 h 的导数含有 diag(z)，"
            "不经过 W_hh 也不经过 tanh——这就是门控改善信息保持的原因。但它仍是一步接一步的递归。")
