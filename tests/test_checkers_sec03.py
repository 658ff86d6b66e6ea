"""第 1.3 节的每个练习检查：至少拒绝一个错误答案、接受一个不寻常的正确答案。

错误答案里包括“违反题目约束”的写法（1.3.1 用自动求导，或在 torch 里做有限差分、复步长数值微分、1.3.2 调用
``clip_grad_norm_``、``get_total_norm`` 或私有的 ``_get_total_norm``（包括事先绑定的名字和事先复制出来的函数对象）、
1.3.6 绕开传进来的 optimizer、
把被禁止的调用挪进另一个线程）；不寻常的正确答案换一种写法得到同一个结果（``torch.diag`` 与 ``addcmul``、
整体赋值 ``p.grad = …``、在 NumPy 里算好再 ``torch.from_numpy`` 等）。
1.3.4 还拒绝 PyTorch 现成的 GRU（``torch.gru_cell``、``nn.GRUCell``），1.3.2 与 1.3.6 拒绝把损失或范数当张量返回。
在 NumPy 里做数值微分（1.3.1）在进程内的运算记录之外，检查看不见，见 ``test_leaky_jacobian_cannot_see_numpy``。
"""

from __future__ import annotations

import inspect
import json
import math
import threading
import types

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn.utils import clip_grad_norm_ as early_clip_grad_norm_
from torch.nn.utils.clip_grad import _get_total_norm as early_get_total_norm

from seqlab.exercises import recording, sec03


def _in_thread(f):
    """把答案的计算挪进另一个线程：运算记录只看得见本线程，这样的写法一律判错。"""

    def g(*args):
        box = {}
        t = threading.Thread(target=lambda: box.__setitem__("r", f(*args)))
        t.start()
        t.join()
        return box["r"]

    return g


# ---------------------------------------------------------------- 1.3.1 带泄漏 RNN 的雅可比矩阵
def _s(h, h_prev, kappa):
    return (h - (1 - kappa) * h_prev) / kappa


def test_leaky_jacobian_accepts_a_derivation_written_another_way():
    def via_diag(h, h_prev, W, kappa):  # 对角矩阵真的构造出来，用矩阵乘法
        s = _s(h, h_prev, kappa)
        return torch.diag(torch.full_like(h, 1 - kappa)) + kappa * torch.diag(1 - s * s) @ W

    def via_addcmul(h, h_prev, W, kappa):  # (1 − κ)I + κ·(1 − s²)[:, None]·W，一次 addcmul
        s = _s(h, h_prev, kappa)
        return torch.addcmul((1 - kappa) * torch.eye(len(h), dtype=W.dtype), (kappa * (1 - s**2)).unsqueeze(1), W)

    assert sec03.check_leaky_jacobian(via_diag)
    assert sec03.check_leaky_jacobian(via_addcmul)


def test_leaky_jacobian_rejects_numerical_differentiation():
    def complex_step(h, h_prev, W, kappa):  # 不用 autograd、不推公式：复步长，精度与公式相当
        u = torch.atanh(_s(h, h_prev, kappa)) - W @ h_prev
        cols = []
        for c in range(len(h)):
            x = h_prev.to(torch.complex128).clone()
            x[c] += 1e-30j
            f = (1 - kappa) * x + kappa * torch.tanh(u.to(torch.complex128) + W.to(torch.complex128) @ x)
            cols.append(f.imag / 1e-30)
        return torch.stack(cols, 1)

    result = sec03.check_leaky_jacobian(complex_step)
    assert not result and "atanh" in result.message


def _clamped_preactivation(h, h_prev, W, kappa):
    """把 s_j 截到 ±1 以内（饱和的那一例不再得到 NaN），用 atanh 还原预激活 u_j + W_h h_{j−1}。"""
    one = torch.nextafter(torch.tensor(1.0, dtype=h.dtype), torch.tensor(0.0, dtype=h.dtype))
    return torch.atanh(_s(h, h_prev, kappa).clamp(-one, one))


def _richardson(f, x, step=1e-3):
    """中心差分加一次 Richardson 外推：误差 O(step⁴)，在这些例子上与 autograd 一致到 1e-9 以内。"""
    d1 = (f(x + step) - f(x - step)) / (2 * step)
    d2 = (f(x + step / 2) - f(x - step / 2)) / step
    return (4 * d2 - d1) / 3


def _finite_differences_whole_forward(h, h_prev, W, kappa):
    u = _clamped_preactivation(h, h_prev, W, kappa) - W @ h_prev
    cols = []
    for c in range(len(h)):
        e = torch.zeros_like(h_prev)
        e[c] = 1.0
        x = lambda t, e=e: h_prev + t * e  # noqa: E731
        cols.append(_richardson(lambda t, x=x: (1 - kappa) * x(t) + kappa * torch.tanh(u + W @ x(t)), 0.0))
    return torch.stack(cols, 1)


def _finite_differences_tanh_only(h, h_prev, W, kappa):
    a = _clamped_preactivation(h, h_prev, W, kappa)
    slope = _richardson(torch.tanh, a)
    return (1 - kappa) * torch.eye(len(h), dtype=h.dtype) + kappa * slope[:, None] * W


def _finite_differences_via_exp(h, h_prev, W, kappa):  # 不调用 tanh/atanh：用 log 还原、用 exp 拼出 tanh
    s = _s(h, h_prev, kappa).clamp(-1 + 1e-15, 1 - 1e-15)
    a = 0.5 * torch.log((1 + s) / (1 - s))
    slope = _richardson(lambda x: 1 - 2 / (torch.exp(2 * x) + 1), a)
    return (1 - kappa) * torch.eye(len(h), dtype=h.dtype) + kappa * slope[:, None] * W


def _finite_differences_via_softmax(h, h_prev, W, kappa):  # 用 log 还原预激活、用 softmax 拼出 tanh，不调用 exp
    s = _s(h, h_prev, kappa).clamp(-1 + 1e-15, 1 - 1e-15)
    a = 0.5 * torch.log((1 + s) / (1 - s))
    slope = _richardson(lambda x: 2 * torch.softmax(torch.stack([x, -x]), 0)[0] - 1, a)
    return (1 - kappa) * torch.eye(len(h), dtype=h.dtype) + kappa * slope[:, None] * W


@pytest.mark.parametrize("answer", [_finite_differences_whole_forward, _finite_differences_tanh_only,
                                    _finite_differences_via_exp, _finite_differences_via_softmax],
                         ids=["whole-forward", "tanh-only", "via-exp", "via-log-and-softmax"])
def test_leaky_jacobian_rejects_finite_differences_in_torch(answer):
    result = sec03.check_leaky_jacobian(answer)
    assert not result and "用不着再算 tanh" in result.message


def _replayed(check, answer):
    """像评分时那样：在记录器里跑学生的函数，把记录转成 JSON 再交给同一个检查重放。"""
    return recording.judge(check, json.loads(json.dumps(recording.record(check, [answer]))))


def test_leaky_jacobian_rejects_finite_differences_in_torch_replayed():
    result = _replayed(sec03.check_leaky_jacobian, _finite_differences_whole_forward)
    assert not result and "用不着再算 tanh" in result.message


def test_leaky_jacobian_names_a_float32_result():
    def in_float32(h, h_prev, W, kappa):  # 公式对，但 J 建在默认的 float32 张量里
        J = torch.zeros(len(h), len(h))
        J[:] = (1 - kappa) * torch.eye(len(h), dtype=W.dtype) + kappa * (1 - _s(h, h_prev, kappa) ** 2)[:, None] * W
        return J

    result = sec03.check_leaky_jacobian(in_float32)
    assert not result and "float32" in result.message


def _numpy_formula(h, h_prev, W, kappa):
    hj, hp, Wn = h.numpy(), h_prev.numpy(), W.numpy()
    s = (hj - (1 - kappa) * hp) / kappa
    return (1 - kappa) * np.eye(len(hp)) + kappa * (1 - s**2)[:, None] * Wn


@pytest.mark.parametrize("wrap", [torch.from_numpy, torch.tensor, lambda a: torch.from_numpy(a.copy()).clone()])
def test_leaky_jacobian_accepts_the_formula_computed_in_numpy(wrap):
    assert sec03.check_leaky_jacobian(lambda *a: wrap(_numpy_formula(*a)))


def test_leaky_jacobian_rejects_autograd_moved_into_a_thread():
    def by_jacrev(h, h_prev, W, kappa):
        u = torch.atanh(_s(h, h_prev, kappa).clamp(-1 + 1e-16, 1 - 1e-16)) - W @ h_prev
        return torch.func.jacrev(lambda x: (1 - kappa) * x + kappa * torch.tanh(u + W @ x))(h_prev)

    result = sec03.check_leaky_jacobian(_in_thread(by_jacrev))
    assert not result and "线程" in result.message


@pytest.mark.xfail(strict=True, reason="NumPy 里的数值微分不经过 torch 的运算记录：检查只能核对结果，练习正文如实说明")
def test_leaky_jacobian_cannot_see_numpy():
    def numpy_complex_step(h, h_prev, W, kappa):
        hj, hp, Wn = np.array(h.tolist()), np.array(h_prev.tolist()), np.array(W.tolist())
        s = np.clip((hj - (1 - kappa) * hp) / kappa, np.nextafter(-1, 0), np.nextafter(1, 0))
        u = np.arctanh(s) - Wn @ hp
        J = np.empty((len(hp), len(hp)))
        for k in range(len(hp)):
            e = hp.astype(complex)
            e[k] += 1e-30j
            J[:, k] = ((1 - kappa) * e + kappa * np.tanh(u + Wn @ e)).imag / 1e-30
        return torch.tensor(J.tolist(), dtype=torch.float64)

    assert not sec03.check_leaky_jacobian(numpy_complex_step)


def test_leaky_jacobian_rejects_autograd_even_when_the_numbers_are_right():
    def by_jacrev(h, h_prev, W, kappa):
        u = torch.atanh(_s(h, h_prev, kappa)) - W @ h_prev
        return torch.func.jacrev(lambda x: (1 - kappa) * x + kappa * torch.tanh(u + W @ x))(h_prev)

    def by_backward(h, h_prev, W, kappa):
        u = torch.atanh(_s(h, h_prev, kappa)) - W @ h_prev
        rows = []
        for i in range(h.shape[0]):
            x = h_prev.clone().requires_grad_(True)
            ((1 - kappa) * x + kappa * torch.tanh(u + W @ x))[i].backward()
            rows.append(x.grad)
        return torch.stack(rows)

    for answer in (by_jacrev, by_backward):
        result = sec03.check_leaky_jacobian(answer)
        assert not result and "自动求导" in result.message


def test_leaky_jacobian_rejects_the_common_wrong_derivations():
    def no_identity(h, h_prev, W, kappa):
        return kappa * (1 - _s(h, h_prev, kappa) ** 2)[:, None] * W

    def uses_h(h, h_prev, W, kappa):
        return (1 - kappa) * torch.eye(len(h), dtype=h.dtype) + kappa * (1 - h**2)[:, None] * W

    for answer, hint in ((no_identity, "(1 − κ)I"), (uses_h, "s_j")):
        result = sec03.check_leaky_jacobian(answer)
        assert not result and hint in result.message


# ---------------------------------------------------------------- 1.3.2 梯度裁剪
def _loop_clip(params, max_norm):
    """逐个参数用张量运算求平方和、整体赋值 p.grad：不寻常，但正确。"""
    total = torch.stack([(p.grad**2).sum() for p in params]).sum().sqrt()
    coef = torch.clamp(max_norm / total, max=1.0)
    for p in params:
        p.grad = p.grad * coef
    return total.item()


def test_clip_accepts_a_loop_over_p_grad_with_torch_ops():
    assert sec03.check_clip_gradients(_loop_clip)


@pytest.mark.parametrize("foreach", [None, False])
def test_clip_rejects_clip_grad_norm_in_either_form(foreach):
    result = sec03.check_clip_gradients(lambda ps, m: float(nn.utils.clip_grad_norm_(ps, m, foreach=foreach)))
    assert not result
    assert "现成的梯度裁剪" in result.message  # entry_points_watched 的记号 library_entry_point 出现在运算记录里


@pytest.mark.parametrize("via", ["clip_grad_norm_(inf)", "get_total_norm"])
def test_clip_rejects_pytorchs_norm_used_only_to_get_the_total(via):
    def borrowed(params, max_norm):
        if via == "get_total_norm":
            total = float(nn.utils.get_total_norm([p.grad for p in params], foreach=False))
        else:
            total = float(nn.utils.clip_grad_norm_(params, math.inf, foreach=False))
        for p in params:
            p.grad.mul_(min(1.0, max_norm / total))
        return total

    result = sec03.check_clip_gradients(borrowed)
    assert not result and "现成的梯度裁剪" in result.message


def _early_bound(params, max_norm, foreach=False):
    total = float(early_clip_grad_norm_(params, max_norm, foreach=foreach))
    if total > max_norm:
        for p in params:
            p.grad.mul_((total + 1e-6) / total)  # 抵消库里系数的 + 1e-6
    return total


def _private_total(params, max_norm):
    total = float(early_get_total_norm([p.grad for p in params], foreach=False))
    if total > max_norm:
        for p in params:
            p.grad.mul_(max_norm / total)
    return total


def _public_total(params, max_norm):
    total = float(nn.utils.get_total_norm([p.grad for p in params]))
    if total > max_norm:
        for p in params:
            p.grad.mul_(max_norm / total)
    return total


@pytest.mark.parametrize("answer", [_early_bound, lambda ps, m: _early_bound(ps, m, foreach=None), _private_total],
                         ids=["early-bound-foreach-False", "early-bound-default", "private-_get_total_norm"])
def test_clip_rejects_early_bound_and_private_library_clipping(answer):
    result = sec03.check_clip_gradients(answer)
    assert not result
    assert "现成的梯度裁剪" in result.message or "_foreach_norm" in result.message


_COPIED_TOTAL_NORM = (lambda f: types.FunctionType(f.__code__, f.__globals__, "copied", f.__defaults__, f.__closure__))(
    inspect.unwrap(torch.nn.utils.clip_grad._get_total_norm))  # 在检查开始之前复制出来的函数对象，代码还是原来那份


def _copied_private_total(params, max_norm):
    total = float(_COPIED_TOTAL_NORM([p.grad for p in params], 2.0, False, False))
    if total > max_norm:
        for p in params:
            p.grad.mul_(max_norm / total)
    return total


@pytest.mark.parametrize("run", [sec03.check_clip_gradients, lambda a: _replayed(sec03.check_clip_gradients, a)],
                         ids=["direct", "replayed"])
def test_clip_rejects_a_copy_of_the_private_function_made_beforehand(run):
    result = run(_copied_private_total)
    assert not result and "现成的梯度裁剪" in result.message


def test_clip_rejects_library_clipping_moved_into_a_thread():
    result = sec03.check_clip_gradients(_in_thread(_public_total))
    assert not result and "线程" in result.message


def test_clip_leaves_pytorchs_clipping_as_it_was():
    import sys

    code = torch.nn.utils.clip_grad._get_total_norm.__wrapped__.__code__
    profile = sys.getprofile()
    sec03.check_clip_gradients(_private_total)
    assert torch.nn.utils.clip_grad._get_total_norm.__wrapped__.__code__ is code
    assert sys.getprofile() is profile
    p = torch.zeros(3, requires_grad=True)
    p.grad = torch.tensor([3.0, 4.0, 0.0])
    assert float(early_clip_grad_norm_([p], 1.0)) == 5.0 and math.isclose(float(p.grad.norm()), 1.0, rel_tol=1e-5)


def test_clip_rejects_a_slightly_wrong_returned_norm():
    def off_by_a_little(params, max_norm):
        return _loop_clip(params, max_norm) + 9e-7  # 最小的一组总范数约 2e-4：差 0.4%

    result = sec03.check_clip_gradients(off_by_a_little)
    assert not result and "返回的范数" in result.message


def test_clip_rejects_a_tensor_instead_of_a_float():
    def returns_tensor(params, max_norm):
        total = torch.cat([p.grad.flatten() for p in params]).norm()
        for p in params:
            p.grad.mul_(min(1.0, max_norm / float(total)))
        return total

    result = sec03.check_clip_gradients(returns_tensor)
    assert not result and "Python 浮点数" in result.message


def test_clip_rejects_per_tensor_clipping():
    def per_tensor(params, max_norm):
        total = math.sqrt(sum(float((p.grad**2).sum()) for p in params))
        for p in params:
            p.grad.mul_(min(1.0, max_norm / float(p.grad.norm())))
        return total

    result = sec03.check_clip_gradients(per_tensor)
    assert not result and "分别" in result.message


# ---------------------------------------------------------------- 1.3.3 饱和
def _norms(W, U, slope=True, as_tensor=False):
    h, out = torch.zeros(W.shape[0], dtype=W.dtype), []
    for u in U:
        h = torch.tanh(u + W @ h)
        J = torch.diag(1 - h**2) @ W if slope else W
        out.append(torch.linalg.matrix_norm(J, ord=2))
    return torch.stack(out) if as_tensor else [float(x) for x in out]


def test_saturation_accepts_a_tensor_of_norms():
    assert sec03.check_saturation(lambda W, U: _norms(W, U, as_tensor=True))


def test_saturation_accepts_float32_inside_and_rejects_in_place_tampering():
    def in_float32(W, U):
        return _norms(W.float(), U.float())

    def zero_inputs(W, U):  # 把传进来的 W_h、U 原地清零：参考值由检查自己的副本算，清零骗不了它
        W.zero_()
        U.zero_()
        return [0.0] * len(U)

    assert sec03.check_saturation(in_float32)
    assert not sec03.check_saturation(zero_inputs)


def test_saturation_rejects_column_scaling():
    def columns(W, U):
        h, out = torch.zeros(W.shape[0], dtype=W.dtype), []
        for u in U:
            h = torch.tanh(u + W @ h)
            out.append(float(torch.linalg.matrix_norm((1 - h**2) * W, ord=2)))
        return out

    assert not sec03.check_saturation(columns)


def test_saturation_rejects_the_upper_bound_max_slope():
    def max_slope(W, U):  # max(1 − h_j²)·‖W_h‖₂：对正交 W_h 恰好是 ‖J_j‖₂，一般只是上界
        h, out = torch.zeros(W.shape[0], dtype=W.dtype), []
        for u in U:
            h = torch.tanh(u + W @ h)
            out.append(float((1 - h**2).max() * torch.linalg.matrix_norm(W, ord=2)))
        return out

    result = sec03.check_saturation(max_slope)
    assert not result and "上界" in result.message and "一般情况下只有 ≤" in result.message


def test_saturation_names_the_old_state():
    def old_state(W, U):  # J_j 用了更新之前的 h_{j−1}
        h, out = torch.zeros(W.shape[0], dtype=W.dtype), []
        for u in U:
            out.append(float(torch.linalg.matrix_norm(torch.diag(1 - h**2) @ W, ord=2)))
            h = torch.tanh(u + W @ h)
        return out

    result = sec03.check_saturation(old_state)
    assert not result and "h_{j−1}" in result.message


def test_saturation_rejects_a_missing_tanh_derivative_and_an_extra_step():
    forgot = sec03.check_saturation(lambda W, U: _norms(W, U, slope=False))
    assert not forgot and "diag(1 - h_j²)" in forgot.message
    extra = sec03.check_saturation(lambda W, U: [1.0, *_norms(W, U)])
    assert not extra and "应返回" in extra.message


# ---------------------------------------------------------------- 1.3.4 GRU 单元
def _gru(x, h, W_ih, W_hh, b_ih, b_hh, swap=False):
    gi_r, gi_z, gi_n = (x @ W_ih.T + b_ih).chunk(3, dim=-1)
    gh_r, gh_z, gh_n = (h @ W_hh.T + b_hh).chunk(3, dim=-1)
    r, z = torch.sigmoid(gi_r + gh_r), torch.sigmoid(gi_z + gh_z)
    n = torch.tanh(gi_n + r * gh_n)
    return z * n + (1 - z) * h if swap else n + z * (h - n)  # h' = (1 − z) n + z h 的另一种写法


def test_gru_accepts_chunk_and_the_interpolation_form():
    assert sec03.check_gru_cell(_gru)


@pytest.mark.parametrize("via", ["torch.gru_cell", "nn.GRUCell"])
def test_gru_rejects_pytorchs_own_gru(via):
    def fused(x, h, W_ih, W_hh, b_ih, b_hh):
        if via == "torch.gru_cell":
            return torch.gru_cell(x, h, W_ih, W_hh, b_ih, b_hh)
        cell = nn.GRUCell(x.shape[1], h.shape[1], dtype=x.dtype)
        with torch.no_grad():
            for p, v in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), (W_ih, W_hh, b_ih, b_hh)):
                p.copy_(v)
        return cell(x, h).detach()

    result = sec03.check_gru_cell(fused)
    assert not result and "nn.GRUCell" in result.message


def test_gru_rejects_grucell_moved_into_a_thread():
    def fused(x, h, W_ih, W_hh, b_ih, b_hh):
        cell = nn.GRUCell(x.shape[1], h.shape[1], dtype=x.dtype)
        with torch.no_grad():
            for p, v in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), (W_ih, W_hh, b_ih, b_hh)):
                p.copy_(v)
            return cell(x, h)

    result = sec03.check_gru_cell(_in_thread(fused))
    assert not result and "线程" in result.message


def test_gru_names_chos_original_reset_placement():
    def cho(x, h, W_ih, W_hh, b_ih, b_hh):
        d = h.shape[-1]
        gi, gh = x @ W_ih.T + b_ih, h @ W_hh.T + b_hh
        r, z = torch.sigmoid(gi[:, :d] + gh[:, :d]), torch.sigmoid(gi[:, d:2 * d] + gh[:, d:2 * d])
        n = torch.tanh(gi[:, 2 * d:] + (r * h) @ W_hh[2 * d:].T + b_hh[2 * d:])
        return (1 - z) * n + z * h

    result = sec03.check_gru_cell(cho)
    assert not result and "Cho" in result.message


def test_gru_rejects_swapped_update_gate():
    result = sec03.check_gru_cell(lambda *a: _gru(*a, swap=True))
    assert not result and "放反" in result.message


# ---------------------------------------------------------------- 1.3.6 TBPTT 的一步
def _tbptt(model, optimizer, x, y, state, max_norm, *, detach=True, carry=True, tensor_loss=False):
    logits, new_state = model(x, state if carry else None)
    loss = nn.functional.cross_entropy(logits.transpose(1, 2), y)  # (B, V, K) 形状的写法，平均相同
    model.zero_grad()
    loss.backward()
    params = list(model.parameters())
    total = math.sqrt(sum(float((p.grad**2).sum()) for p in params))
    if total > max_norm:  # 自己写的裁剪：恰好缩放到 max_norm，不加 1e-6
        for p in params:
            p.grad.mul_(max_norm / total)
    optimizer.step()
    return (loss.detach() if tensor_loss else float(loss.detach())), (new_state.detach() if detach else new_state)


def test_tbptt_accepts_own_clipping_and_model_zero_grad():
    assert sec03.check_tbptt_step(_tbptt)


def test_tbptt_rejects_a_tensor_loss():
    result = sec03.check_tbptt_step(lambda *a: _tbptt(*a, tensor_loss=True))
    assert not result and "Python 浮点数" in result.message


def test_tbptt_rejects_a_state_still_attached_and_a_reset_state():
    attached = sec03.check_tbptt_step(lambda *a: _tbptt(*a, detach=False))
    assert not attached and "detach" in attached.message
    reset = sec03.check_tbptt_step(lambda *a: _tbptt(*a, carry=False))
    assert not reset and "零状态" in reset.message


def test_tbptt_accepts_a_detached_leaf_that_requires_grad():
    def fresh_leaf(*args):  # 截断之后又设了 requires_grad：它是一个新的叶子，不连着这一段的计算图
        loss, state = _tbptt(*args)
        return loss, state.detach().requires_grad_()

    assert sec03.check_tbptt_step(fresh_leaf)


def test_tbptt_accepts_calling_the_optimizer_class_step():
    def class_step(model, optimizer, x, y, state, max_norm):
        logits, state = model(x, state)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        type(optimizer).step(optimizer)  # 不寻常，但仍是这个 optimizer 走了一步
        return loss.item(), state.detach()

    assert sec03.check_tbptt_step(class_step)


def test_tbptt_rejects_hand_written_momentum_and_extra_steps():
    def manual_momentum(model, optimizer, x, y, state, max_norm):  # 读出 lr 与 momentum，自己维护动量
        logits, state = model(x, state)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        for p in model.parameters():
            p.grad = None
        loss.backward()
        total = torch.cat([p.grad.flatten() for p in model.parameters()]).norm()
        coef = min(1.0, max_norm / (float(total) + 1e-6))
        group = optimizer.param_groups[0]
        with torch.no_grad():
            for p in model.parameters():
                grad = p.grad * coef
                buf = getattr(p, "_buf", None)
                p._buf = buf = grad.clone() if buf is None else buf.mul_(group["momentum"]).add_(grad)
                p -= group["lr"] * buf
        return loss.item(), state.detach()

    def two_steps(*args):
        out = _tbptt(*args)
        args[1].step()
        return out

    for answer, times in ((manual_momentum, "0 次"), (two_steps, "2 次")):
        result = sec03.check_tbptt_step(answer)
        assert not result and "optimizer.step()" in result.message and times in result.message


def test_tbptt_rejects_an_update_that_bypasses_the_optimizer():
    def manual_sgd(model, optimizer, x, y, state, max_norm):
        logits, state = model(x, state)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad  # 学习率写死，忽略了 optimizer（和它的动量）
        return loss.item(), state.detach()

    result = sec03.check_tbptt_step(manual_sgd)
    assert not result


def test_every_check_in_the_section_is_covered_here():
    checks = {name for name in dir(sec03) if name.startswith("check_")}
    assert checks == {"check_leaky_jacobian", "check_clip_gradients", "check_saturation", "check_gru_cell",
                      "check_tbptt_step", "check_neutral_scale"}


# ---------------------------------------------------------------- 1.3.7 正交线性 RNN 的中性倍数
def _bisect(grad_norm):
    """纯实验：对 ω 二分，直到一步的范数跨过 1（不用推导，但要测几十次）。"""
    lo, hi = 1.0, 1.0
    while grad_norm(hi, 1) < 1:
        hi *= 2
    while grad_norm(lo, 1) > 1:
        lo /= 2
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if grad_norm(mid, 1) > 1 else (mid, hi)
    return math.sqrt(lo * hi)


@pytest.mark.parametrize("answer", [
    lambda gn: 1 / gn(1.0, 1),
    lambda gn: gn(1.0, 20) ** (-1 / 20),  # 由 20 步的测量开 20 次方
    lambda gn: torch.tensor(0.5) / gn(0.5, 1),  # 0 维张量也行
    lambda gn: np.float64(3.0) / gn(3.0, 1),
    lambda gn: 1 / gn(np.float32(1.0), np.int64(1)),  # NumPy 的数当参数
    lambda gn: gn(1.0, np.arange(1, 11)[-1]) ** (-1 / 10),
    lambda gn: 1 / gn(1.0, torch.arange(1, 3)[0]),  # r 是 0 维整数张量
    _bisect,
], ids=["one-shot", "r-th-root", "tensor", "numpy", "numpy-arguments", "numpy-r", "tensor-r", "bisection"])
def test_neutral_scale_accepts_any_route_to_one_over_g(answer):
    assert sec03.check_neutral_scale(answer)


@pytest.mark.parametrize("answer, hint", [
    (lambda gn: 1.0, "你返回了 1"),  # 照抄正文的 g = 1
    (lambda gn: gn(1.0, 1), "方向反了"),
    (lambda gn: 1 / gn(1.0, 10), "10 次"),  # 忘了开方
    (lambda gn: 1 / gn(1.0, 1) * 1.001, "不是 1"),
    (lambda gn: [1 / gn(1.0, 1)], "应返回一个数"),
])
def test_neutral_scale_rejects_wrong_answers(answer, hint):
    result = sec03.check_neutral_scale(answer)
    assert not result and hint in result.message


def test_neutral_scale_stops_an_endless_search_and_bad_arguments():
    def endless(gn):
        omega = 1.0
        while True:
            omega *= 0.999
            gn(omega, 1)

    too_many = sec03.check_neutral_scale(endless)
    assert not too_many and "100 次" in too_many.message
    bad = sec03.check_neutral_scale(lambda gn: gn(-1.0, 1))
    assert not bad and "正数" in bad.message
