"""线性递推的并行扫描（第 1.3 节）与梯度会爆炸的小任务：对照暴力展开与 PyTorch 自己的梯度裁剪。"""

import math

import pytest
import torch

from seqlab import rnn
from seqlab.errors import InputError


def _brute_force(lam, u):
    """h_t = Σ_{s ≤ t} (λ_{s+1} ⋯ λ_t) u_s：把递推完全展开，逐项求和。"""
    S = u.shape[-2]
    H = torch.zeros_like(u)
    for t in range(S):
        for s in range(t + 1):
            coeff = torch.ones_like(u[..., 0, :])
            for k in range(s + 1, t + 1):
                coeff = coeff * lam[..., k, :]
            H[..., t, :] += coeff * u[..., s, :]
    return H


@pytest.mark.parametrize("S", [1, 2, 3, 7, 8, 9, 16, 17])
def test_scan_and_loop_equal_the_expanded_sum(S):
    g = torch.Generator().manual_seed(S)
    lam = torch.rand(2, S, 3, generator=g, dtype=torch.float64) * 1.2
    u = torch.randn(2, S, 3, generator=g, dtype=torch.float64)
    want = _brute_force(lam, u)
    H_scan, rounds = rnn.linear_recurrence_scan(lam, u)
    assert torch.allclose(rnn.linear_recurrence_loop(lam, u), want, atol=1e-12)
    assert torch.allclose(H_scan, want, atol=1e-12)
    assert rounds == (S - 1).bit_length() == math.ceil(math.log2(S)) if S > 1 else rounds == 0


def test_scan_depth_grows_like_log_s_and_loop_depth_like_s():
    depths = {}
    for S in (64, 128, 256):
        lam = torch.rand(S, 4, dtype=torch.float64, requires_grad=True)
        u = torch.randn(S, 4, dtype=torch.float64)
        depths[S] = (rnn.graph_depth(rnn.linear_recurrence_loop(lam, u)), rnn.graph_depth(rnn.linear_recurrence_scan(lam, u)[0]))
    loop_step = depths[128][0] - depths[64][0]
    assert depths[256][0] - depths[128][0] == 2 * loop_step > 0          # 逐步：与 S 成正比
    scan_step = depths[128][1] - depths[64][1]
    assert depths[256][1] - depths[128][1] == scan_step > 0              # 扫描：S 翻倍只多一轮


def test_bad_shapes_get_a_chinese_message():
    with pytest.raises(InputError, match="形状"):
        rnn.linear_recurrence_scan(torch.ones(3, 2), torch.ones(4, 2))
    with pytest.raises(InputError, match="形状"):
        rnn.linear_recurrence_loop(torch.ones(0, 2), torch.ones(0, 2))


def test_exploding_task_is_deterministic_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    a, b = rnn.exploding_copy_task(), rnn.exploding_copy_task()
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(a[2], b[2]) and torch.equal(a[0].W_h, b[0].W_h) and torch.equal(a[1].weight, b[1].weight)
    model, _, X, y = a
    assert X.shape == (64, 30, 1) and torch.equal(y, X[:, 30 - 1 - 5, 0])
    s = torch.linalg.svdvals(model.W_h.double())
    assert torch.allclose(s, torch.full_like(s, 1.5), atol=1e-5)       # W_h = 1.5 Q


def test_the_gradient_explodes_on_that_task():
    model, readout, X, y = rnn.exploding_copy_task()
    loss = ((readout(model(X)[:, -1]).squeeze(-1) - y) ** 2).mean()
    loss.backward()
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in [*model.parameters(), *readout.parameters()]]))
    assert norm > 1.0
