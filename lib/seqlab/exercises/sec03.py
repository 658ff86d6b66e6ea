"""第 1.3 节练习的自动检查。参考值一律由 autograd 或 PyTorch 自带的模块现算，不引用书里的实现。

“不许用某某”的约束由 ``call_tracing_torch`` 看学生函数调用了哪些张量运算来执行：自动求导显示为 ``grad``、
``backward``（``jacfwd`` 是 ``_make_dual``）。``clip_grad_norm_`` 与它在内部用的 ``_get_total_norm``、
``_clip_grads_with_norm_``（公开名 ``get_total_norm``、``clip_grads_with_norm_``）是普通的 Python 函数，运算记录里
本来看不见它们：检查期间用 ``entry_points_watched`` 看着这几个函数，它按源文件与限定名认出它们的代码，一开始执行
就在记录里留下 ``library_entry_point``，所以事先绑定的名字（``from torch.nn.utils import clip_grad_norm_``）
和事先复制出来的函数对象（``types.FunctionType(原函数.__code__, …)``）也一样认得出。
同样，1.3.6 传进去的 optimizer 每走一步（``step``）都留下记号运算 ``optimizer_step``。

记录只看得见学生函数在本线程里调用的 torch 运算：把数据转成 NumPy、在 PyTorch 之外算，检查看不见过程，
只能核对结果（练习正文与教师指南都这样说明）。"""

from __future__ import annotations

import math
import numbers

import torch
from torch import nn

from seqlab.exercises import (
    call,
    call_tracing_torch,
    checker,
    entry_points_watched,
    expect,
    expect_close,
    expect_tensor,
    fail,
)

AUTOGRAD_OPS = ("grad", "backward", "_make_dual", "_unpack_dual")  # torch.autograd.grad / jacrev / .backward() / jacfwd
COMPLEX_OPS = ("imag", "real", "view_as_real", "view_as_complex", "complex", "polar")  # 复步长数值微分要用到它们


# 1.3.1 的闭式只要对 h_j、h_{j−1}、W_h、κ 做加减乘和矩阵乘法，用不着任何超越函数。数值微分（有限差分、复步长）
# 却必须在扰动点上重算前向，也就是求 tanh（或用 exp、sigmoid、softmax 之类拼出它），从 s_j 还原预激活还要 atanh
# （或用 log 拼出它）：检查把这些运算（含原地版本）一律判错。用 pow 以张量为底拼出指数函数这样的写法，
# 从运算的名字上分辨不出来（正确答案也会写 h ** 2），检查看不见。
TANH_FAMILY = tuple(
    name + suffix
    for name in ("tanh", "atanh", "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logit",
                 "sigmoid", "logsigmoid", "softplus", "softmax", "log_softmax", "_softmax", "_log_softmax", "softmin",
                 "logsumexp", "logaddexp", "xlogy", "float_power", "tan", "atan", "cosh", "sinh", "asinh", "erf",
                 "erfinv", "special_expit", "special_exp2", "special_expm1", "special_log1p", "special_logit",
                 "special_erf", "special_xlogy", "__rpow__")
    for suffix in ("", "_")
)


def _marker_dispatch(x):
    return (x,)


def _clip_functions():
    """``torch.nn.utils.clip_grad`` 里与梯度裁剪有关的函数（这一版 PyTorch 有哪些就取哪些）。"""
    from torch.nn.utils import clip_grad

    names = ("_get_total_norm", "_clip_grads_with_norm_", "clip_grad_norm_", "clip_grad_norm", "get_total_norm",
             "clip_grads_with_norm_")
    return [getattr(clip_grad, name) for name in names if callable(getattr(clip_grad, name, None))]


def _leaky_case(seed: int, d: int, kappa: float, saturate: bool = False):
    """一步带泄漏的 tanh RNN：返回 ``(W_h, u, h_prev, s_j, h_j)``，``u = W_x e_j + b``。
    ``saturate=True`` 时让一半分量的预激活超过 25：双精度的 tanh 在那里恰好是 ±1，导数（autograd 也这样算）是 0。"""
    g = torch.Generator().manual_seed(seed)
    W_h = torch.randn(d, d, generator=g, dtype=torch.float64) * (1.5 / math.sqrt(d))
    u = 1.5 * torch.randn(d, generator=g, dtype=torch.float64)
    if saturate:
        u[: d // 2] = 30.0 * torch.sign(u[: d // 2])
    h_prev = torch.randn(d, generator=g, dtype=torch.float64).tanh()
    s_j = torch.tanh(u + W_h @ h_prev)
    return W_h, u, h_prev, s_j, (1 - kappa) * h_prev + kappa * s_j


@checker(
    "1.3.1",
    "推导并实现一步的雅可比矩阵",
    objective="为带泄漏的 tanh RNN 推出 J_j = (1 − κ)I + κ diag(1 − s_j²) W_h，只用前向存下的状态实现它",
    difficulty=1,
    minutes=10,
)
def check_leaky_jacobian(leaky_jacobian):
    """学生函数 ``leaky_jacobian(h_j, h_prev, W_h, kappa) -> (d, d)``：``∂h_j/∂h_{j-1}``，其中
    ``h_j = (1 - κ) h_{j-1} + κ tanh(u_j + W_h h_{j-1})``。不许用自动求导（检查看它调用了哪些张量运算）。"""
    # 最后一例有一半分量深度饱和：tanh 恰好是 ±1，而从 h_j、h_{j−1} 还原的 s_j 因舍入有一个分量比 1 大一个 ulp
    # （种子 5 正是为此选的）。公式 1 − s_j² 在那里约为 −4e-16，与 autograd 的 0 一致。
    # 在 torch 里做的数值微分（有限差分、复步长，哪怕先把 s_j 截到 ±1 以内）要算 tanh 或 atanh，由 TANH_FAMILY 判错；
    # 在 NumPy 里做的，记录看不见，检查只能核对结果（正文与教师指南如实说明）。
    cases = ((0, 3, 1.0, False), (1, 4, 0.5, False), (2, 6, 0.1, False), (3, 5, 0.9, False), (5, 6, 0.3, True))
    for seed, d, kappa, saturate in cases:
        W_h, u, h_prev, s_j, h_j = _leaky_case(seed, d, kappa, saturate)
        want = torch.func.jacrev(lambda h, W_h=W_h, u=u, k=kappa: (1 - k) * h + k * torch.tanh(u + W_h @ h))(h_prev)
        got, trace = call_tracing_torch(leaky_jacobian, h_j.clone(), h_prev.clone(), W_h.clone(), kappa)
        used = trace.used(*AUTOGRAD_OPS)
        if used:
            fail(f"你的函数调用了自动求导（{'、'.join(used)}）。这道题要你自己推导：写出 J_j 的公式，"
                 "再只用 h_j、h_{j-1}、W_h 和 κ 把它算出来；autograd 只由检查拿来核对。")
        used = trace.used(*TANH_FAMILY)
        if used:
            fail(f"你的函数调用了 {'、'.join(used)}。J_j 的公式用不着再算 tanh：s_j 由 h_j 与 h_{{j−1}} 直接得到，"
                 "tanh 的导数就是 1 − s_j²。在扰动点上重算前向的数值微分（有限差分、复步长）和用 atanh 还原预激活都不是推导；"
                 "请只用 h_j、h_{j-1}、W_h 和 κ 做加减乘与矩阵乘法算出 J_j。")
        used = trace.used(*COMPLEX_OPS)
        if used:
            fail(f"你的函数用到了复数运算（{'、'.join(used)}）：这是复步长的数值微分。这道题要你推导 J_j 的公式，"
                 "不是在扰动点上重算前向；请只用 h_j、h_{j-1}、W_h 和 κ 按公式算出 J_j。")
        got = expect_tensor(got, "leaky_jacobian")
        if got.dtype != torch.float64 and got.is_floating_point():
            fail(f"输入都是 float64，你返回的 J_j 却是 {str(got.dtype).removeprefix('torch.')}：精度只剩七位左右，"
                 "检查要求与 autograd 一致到 1e-9。新建张量时用输入的 dtype，例如 torch.eye(d, dtype=W_h.dtype)。")
        got = got.double()
        if not torch.isfinite(got).all():
            fail(f"d = {d}、κ = {kappa} 的例子里你的 J_j 含有 inf 或 NaN。"
                 + ("这一例有几个分量深度饱和：tanh 恰好是 ±1，从 h_j 还原的 s_j 因舍入甚至略大于 1。"
                    "公式 1 − s_j² 只用 s_j 本身，在那里仍是有限的数。" if saturate else ""))
        expect(tuple(got.shape) == (d, d), f"d = {d} 时 J_j 的形状应为 ({d}, {d})，你的是 {tuple(got.shape)}。")
        eye = torch.eye(d, dtype=torch.float64)
        slope = 1 - s_j**2
        if kappa < 1 and torch.allclose(got, kappa * slope[:, None] * W_h):
            fail(f"κ = {kappa} 时少了 (1 − κ)I 这一项：h_j 里的 (1 − κ) h_{{j−1}} 对 h_{{j−1}} 的导数是 (1 − κ)I，"
                 "它不经过 W_h，也不经过 tanh。")
        if torch.allclose(got, (1 - kappa) * eye + kappa * W_h * slope[None, :]):
            fail("你把 1 − s_j² 乘在了 W_h 的列上（W_h diag(…)）。链式法则给出的是 diag(1 − s_j²) W_h："
                 "先乘 W_h，再逐元素乘 tanh 的导数，所以应缩放的是行。")
        if kappa < 1 and torch.allclose(got, (1 - kappa) * eye + kappa * (1 - h_j**2)[:, None] * W_h):
            fail(f"κ = {kappa} 时 tanh 的输出不是 h_j 而是 s_j = (h_j − (1 − κ) h_{{j−1}}) / κ："
                 "导数 1 − tanh(a_j)² 要用 s_j 来算，不是 1 − h_j²。")
        expect(torch.allclose(got, want, rtol=1e-9, atol=1e-12),
               f"d = {d}、κ = {kappa} 的例子里你的 J_j 与 autograd 的结果不一致（最大差 {float((got - want).abs().max()):.2e}）。"
               "提示：先从 h_j 与 h_{j−1} 还原出 s_j = tanh(a_j)，再对 h_j 的两项分别求导。")
    return ("与 torch.func.jacrev 一致：J_j = (1 − κ)I + κ diag(1 − s_j²) W_h，κ = 1 时就是 Elman 网络的 diag(1 − h_j²) W_h。"
            "κ 很小时 J_j 接近单位矩阵：(1 − κ)I 这条不经过 W_h 和 tanh′ 的通路，正是门控（GRU 的 z ⊙ h_{t−1}）"
            "让网络自己学着打开的那一条。")


def _train_copy_task(clip, steps: int = 300, lr: float = 0.3) -> list[float]:
    """参考训练：exploding_copy_task 上的普通梯度下降，每步调用 ``clip(params)``；出现 NaN/inf 即停。"""
    from seqlab import rnn  # 只借用任务本身（模型与数据），训练循环在这里独立写出
    from seqlab.runtime import single_thread

    with single_thread():
        return _train_loop(rnn.exploding_copy_task(), clip, steps, lr)


def _train_loop(task, clip, steps: int, lr: float) -> list[float]:
    model, readout, X, y = task
    params = [*model.parameters(), *readout.parameters()]
    losses = []
    for _ in range(steps):
        loss = ((readout(model(X)[:, -1]).squeeze(-1) - y) ** 2).mean()
        for p in params:
            p.grad = None
        loss.backward()
        clip(params)
        with torch.no_grad():
            for p in params:
                p -= lr * p.grad
        losses.append(loss.item())
        if not math.isfinite(losses[-1]):
            break
    return losses


@checker(
    "1.3.2",
    "梯度裁剪：救回一次爆炸的训练",
    objective="实现按总范数的梯度裁剪，在一次不裁剪就会溢出成 inf 的训练里逐步核对它",
    difficulty=2,
    minutes=15,
)
def check_clip_gradients(clip_gradients):
    """学生函数 ``clip_gradients(params, max_norm) -> float``：把各参数 ``.grad`` 的总范数裁剪到 ``max_norm``
    （``p.grad.mul_(…)`` 或 ``p.grad = …`` 都行：检查看到的是调用之后每个参数的 ``.grad``），返回裁剪前的总范数（Python 浮点数）。

    不许用 ``clip_grad_norm_``（也不许借 ``get_total_norm``、``_get_total_norm`` 求范数）：检查期间
    ``entry_points_watched`` 看着它们（见 ``_clip_functions``），调用一次就在记录里留下 ``library_entry_point``。
    手写的 ``max_norm / (总范数 + 1e-6)`` 由最后一组很小的梯度认出：裁剪后的总范数差了约 1%，
    而题目要的是恰好等于 ``max_norm``。训练那一段沿按定义裁剪的参考轨迹走，判的是每一步的裁剪，不判收敛。
    """
    g = torch.Generator().manual_seed(0)
    cases = ((10.0, 1.0), (0.01, 1.0), (3.0, 0.5), (4e-5, 5e-5))
    for scale, max_norm in cases:
        shapes = [(4, 3), (3,), (2, 2)]
        grads = [scale * torch.randn(s, generator=g, dtype=torch.float64) for s in shapes]
        ours = [torch.zeros(s, dtype=torch.float64, requires_grad=True) for s in shapes]
        for p, gr in zip(ours, grads):
            p.grad = gr.clone()
        total = float(torch.cat([gr.flatten() for gr in grads]).norm())
        coef = min(1.0, max_norm / total)  # 题目的定义：恰好缩放到 max_norm
        want = [gr * coef for gr in grads]
        with entry_points_watched(_clip_functions()):
            got_norm, trace = call_tracing_torch(clip_gradients, ours, max_norm)
        if got_norm is not None and not isinstance(got_norm, float):
            fail(f"应返回一个 Python 浮点数（裁剪之前的总范数），你返回的是 {type(got_norm).__name__}。"
                 "张量可以用 float(…) 或 .item() 转成浮点数。")
        if trace.used("library_entry_point"):
            fail("你的函数调用了 torch.nn.utils 里现成的梯度裁剪（clip_grad_norm_、get_total_norm、clip_grads_with_norm_ "
                 "或它们在里面用的 _get_total_norm、_clip_grads_with_norm_），哪怕只是借它求总范数。题目要你自己写：算出所有梯度拼成的长向量的 2-范数，"
                 "超过 max_norm 时把每个 .grad 乘上同一个系数。")
        used = trace.used("_foreach_norm", "_foreach_mul_", "_foreach_mul")
        if used:
            fail(f"你的函数调用了 {'、'.join(used)}——这是 torch.nn.utils.clip_grad_norm_ 在里面做的事。"
                 "题目要你自己写：算出所有梯度拼成的长向量的 2-范数，超过 max_norm 时把每个 .grad 乘上同一个系数。")
        if total > max_norm and got_norm is not None and math.isclose(float(got_norm), max_norm, rel_tol=1e-6):
            fail("你返回的是裁剪之后的范数（它总等于 max_norm）；题目要的是裁剪之前的总范数。")
        # 只用相对误差：最小的一组总范数约 2e-4，绝对误差 1e-6 会放过 0.5% 的错
        if got_norm is None:
            fail("应返回裁剪之前的总范数（一个 Python 浮点数），你的函数返回了 None。")
        if not math.isclose(float(got_norm), total, rel_tol=1e-9, abs_tol=0.0):
            fail(f"总范数约为 {total:.6g} 时返回的范数应为 {total:.10g}，你的结果是 {float(got_norm):.10g}。")
        per_tensor = [gr * min(1.0, max_norm / float(gr.norm())) for gr in grads]
        if total > max_norm and all(torch.allclose(p.grad, t) for p, t in zip(ours, per_tensor)) and not all(
            torch.allclose(p.grad, w, rtol=1e-5) for p, w in zip(ours, want)
        ):
            fail("你对每个参数分别做了裁剪。要把所有梯度拼成一个向量，按它的总范数统一缩放。")
        after = float(torch.cat([p.grad.flatten() for p in ours]).norm())
        if total > max_norm and scale < 1e-3 and math.isclose(after, max_norm / (total + 1e-6) * total, rel_tol=1e-4):
            fail(f"总范数只有 {total:.3g}、max_norm = {max_norm:.3g} 时，裁剪后的总范数是 {after:.4g}，不是恰好 {max_norm:.3g}："
                 "你的系数是 max_norm / (总范数 + 1e-6)，这正是 clip_grad_norm_ 的写法。"
                 "题目要的是恰好缩放到 max_norm——只在总范数大于 max_norm 时才缩放，分母不会是零，不必加小数。")
        for p, w in zip(ours, want):
            expect(torch.allclose(p.grad, w, rtol=1e-6, atol=1e-15),
                   f"总范数约为 {total:.3g}、max_norm = {max_norm:.3g} 时，裁剪后的梯度不对：应当每个梯度都乘上 "
                   f"min(1, max_norm / 总范数) = {coef:.4g}（结果要留在每个参数的 p.grad 里）。")
    # 训练：每一步先让学生的函数裁剪，与定义逐步核对，再用按定义裁剪的梯度更新。这个任务对舍入极其敏感
    # （两种都正确的写法，300 步后的损失可以差几十倍），所以训练沿着同一条参考轨迹走，判的是每一步的裁剪。
    plain = _train_copy_task(lambda params: None)
    mismatch: list[int] = []  # 第一次不一致的步（下标）
    scaled_steps: list[bool] = []  # 每一步是否真的缩放了

    def clip_and_compare(params):
        before = [q.grad.detach().clone() for q in params]
        coef = min(1.0, 1.0 / float(torch.cat([gr.double().flatten() for gr in before]).norm()))
        clip_gradients(params, 1.0)
        for q, gr in zip(params, before):
            ok = isinstance(q.grad, torch.Tensor) and q.grad.shape == gr.shape and torch.allclose(
                q.grad, gr * coef, rtol=1e-4, atol=1e-8)
            if not ok and not mismatch:
                mismatch.append(len(scaled_steps))
            q.grad = gr * coef
        scaled_steps.append(coef < 1.0)

    losses = _train_copy_task(clip_and_compare)
    expect(not mismatch, f"在训练的第 {mismatch[0] + 1 if mismatch else 0} 步，你的函数裁剪后的梯度与定义不一致"
           "（应当每个梯度都乘上 min(1, 1 / 总范数)，结果留在每个参数的 p.grad 里）。")
    # 训练沿按定义裁剪的参考轨迹走，所以这里不再断言“收敛”：判的只是上面每一步的裁剪，下面的损失只是报告
    return (f"300 步里你的裁剪每一步都与定义一致（其中 {sum(scaled_steps)} 步真的缩放了梯度）。"
            f"训练沿按定义裁剪的梯度走：不裁剪时第 {len(plain)} 步损失就溢出成 {plain[-1]}，"
            f"裁剪后损失从 {losses[0]:.3f} 降到 {losses[-1]:.1e}。"
            "裁剪只限制步长、不改方向：它治爆炸这个症状，不解决梯度消失。")


def _steps(W_h: torch.Tensor, U: torch.Tensor):
    """沿 ``h_j = tanh(u_j + W_h h_{j−1})``（``h_0 = 0``）逐步走，依次给出 ``(u_j, h_{j−1}, h_j)``。"""
    h = torch.zeros(W_h.shape[0], dtype=torch.float64)
    for u in U:
        h_prev, h = h, torch.tanh(u + W_h @ h)
        yield u, h_prev, h


def _reference_norms(W_h: torch.Tensor, U: torch.Tensor) -> list[float]:
    return [float(torch.linalg.matrix_norm(torch.func.jacrev(lambda h, u=u: torch.tanh(u + W_h @ h))(h_prev), ord=2))
            for u, h_prev, _ in _steps(W_h, U)]


def _reference_old_state(W_h: torch.Tensor, U: torch.Tensor) -> list[float]:
    """一个常见的错误答案：J_j 里用了更新之前的 h_{j−1}，即 ‖diag(1 − h_{j−1}²) W_h‖₂。"""
    return [float(torch.linalg.matrix_norm((1 - h_prev**2)[:, None] * W_h, ord=2)) for _, h_prev, _ in _steps(W_h, U)]


def _reference_slope_max(W_h: torch.Tensor, U: torch.Tensor) -> list[float]:
    """一个常见的错误答案：每一步的 max(1 − h_j²)，即 ‖J_j‖₂ 的上界 max(1 − h_j²)·‖W_h‖₂（这里 ‖W_h‖₂ = 1）。"""
    return [float((1 - h**2).max()) for _, _, h in _steps(W_h, U)]


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
    # 非正规的 W_h，谱范数缩放到 1：对正交矩阵，‖diag(s) W_h‖₂ 恰好等于 max(s)，只算 max(1 − h_j²) 也能蒙对
    # （s 各分量相等、W_h 是对角矩阵等情形也相等）；对这里的矩阵两者不同，只有真的乘出来、求谱范数才对。
    G = torch.randn(d, d, generator=g, dtype=torch.float64)
    Q = G / torch.linalg.matrix_norm(G, ord=2)
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
        if all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(got, _reference_old_state(Q, U))):
            fail("你在 J_j 里用了更新之前的状态 h_{j−1}（所以第一步的范数恰好是 ‖W_h‖₂ = 1：h_0 = 0）。"
                 "J_j = diag(1 − h_j²) W_h 里的 h_j = tanh(a_j) 是这一步新算出的状态：先更新 h，再用新的 h 算 J_j。")
        if any(math.isclose(a, 1.0, rel_tol=1e-9) for a in got) and not all(
            math.isclose(b, 1.0, rel_tol=1e-6) for b in want
        ):
            fail("有的范数恰好是 1 = ‖W_h‖₂：你可能忘了乘 tanh 的导数 diag(1 - h_j²)。")
        slope_max = _reference_slope_max(Q, U)
        if all(math.isclose(a, m, rel_tol=1e-9) for a, m in zip(got, slope_max)):
            fail("你返回的是 max(1 − h_j²)（或它乘 ‖W_h‖₂ = 1）：那只是 ‖J_j‖₂ 的上界。W_h 正交时两者一定相等，"
                 "一般情况下只有 ≤；这里的 W_h 下两者不同，要真的把 J_j = diag(1 − h_j²) W_h 乘出来再求谱范数。")
        for j, (a, b) in enumerate(zip(got, want)):
            expect_close(a, b, f"输入幅度 {scale} 时第 {j + 1} 步的 ‖J_j‖₂", tol=1e-6)
        means[scale] = sum(got) / T
    expect(means[0.1] > means[1.0] > means[3.0], "输入越大，平均的 ‖J_j‖₂ 应该越小。")
    return (f"平均 ‖J_j‖₂：输入幅度 0.1 → {means[0.1]:.3f}，1 → {means[1.0]:.3f}，3 → {means[3.0]:.3f}。"
            "W_h 没有变（‖W_h‖₂ = 1），变小的部分全部来自饱和的 tanh：连乘几十步后，"
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
        got, trace = call_tracing_torch(gru_cell, x.clone(), h.clone(), *params)
        fused = trace.used("gru_cell", "gru", "_thnn_fused_gru_cell")
        if fused:
            fail(f"你的函数调用了 PyTorch 现成的 GRU（{'、'.join(fused)}，nn.GRUCell 在里面用的就是它）。"
                 "这道题要你自己按公式写出 r、z、n 和 h'，nn.GRUCell 只由检查拿来核对。")
        got = expect_tensor(got, "gru_cell").double()
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
        n_cho = torch.tanh(gi[:, 2 * d:] + (r * h) @ W_hh[2 * d:].T + b_hh[2 * d:])
        if torch.allclose(got, (1 - z) * n_cho + z * h, rtol=1e-9, atol=1e-12):
            fail("你先算 r ⊙ h、再乘 W_hn：这是 Cho 等人 2014 年原文的写法，本身没有错，但与 PyTorch 不同。"
                 "nn.GRUCell 把 r 乘在 (W_hn h + b_hn) 上，题目要的是这个约定（两者的参数不能互换）。")
        expect(torch.allclose(got, want, rtol=1e-9, atol=1e-12),
               f"与 nn.GRUCell 的结果不一致（最大差 {float((got - want).abs().max()):.2e}）。"
               "提示：先算 x W_ihᵀ + b_ih 与 h W_hhᵀ + b_hh，各自按 r, z, n 切成三段。")
    return ("与 nn.GRUCell 完全一致。注意 h' = (1 − z) ⊙ n + z ⊙ h 里那条 z ⊙ h 的直连：对 h 的导数含有 diag(z)，"
            "不经过 W_hh 也不经过 tanh——这就是门控改善信息保持的原因。但它仍是一步接一步的递归。")


class _TinyGRULM(nn.Module):
    """检查用的极小字级语言模型：``model(x (B, K), state) -> (logits (B, K, V), state)``，与 ``CharLM`` 同一个接口。"""

    def __init__(self, V: int = 11, d: int = 6):
        super().__init__()
        self.embed, self.rnn, self.W_o = nn.Embedding(V, d), nn.GRU(d, d, batch_first=True), nn.Linear(d, V)

    def forward(self, x, state=None):
        H, state = self.rnn(self.embed(x), state)
        return self.W_o(H), state


def _reference_tbptt(model, chunks, max_norm: float, *, carry: bool = True, clip: bool = True):
    """参考实现：带动量的梯度下降，每段前向 → 交叉熵 → 反向 → 裁剪 → 更新，状态截断后传给下一段。"""
    opt = _optimizer(model)
    state, losses = None, []
    for x, y in chunks:
        logits, state = model(x, state if carry else None)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        if clip:
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        opt.step()
        losses.append(loss.item())
        state = state.detach()
    return losses, state


def _optimizer(model):
    """动量让“绕开 optimizer、自己写 p -= lr * p.grad”的答案与参考实现分道扬镳。"""
    return torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)


@torch.overrides.wrap_torch_function(_marker_dispatch)
def optimizer_step(x):
    """一个什么也不做的“运算”：检查交给学生的 optimizer 每走一步（``step``）调用它一次，步数由此进入运算记录。"""
    return x


def _counted_optimizer(model):
    """``_optimizer``，外加一个 step 之后的钩子：每次 ``optimizer.step()`` 在运算记录里留下一次 ``optimizer_step``
    （钩子挂在 PyTorch 包装 step 的那一层，``torch.optim.SGD.step(optimizer)`` 这样调用也会留下）。"""
    opt = _optimizer(model)
    opt.register_step_post_hook(lambda *_: optimizer_step(torch.zeros(())))
    return opt


@checker(
    "1.3.6",
    "截断的沿时间反向传播：一步训练",
    objective="写出 TBPTT 的一步：接着上一段的状态前向、反向、裁剪梯度、更新参数，并把截断了梯度的状态交给下一段",
    difficulty=2,
    minutes=15,
)
def check_tbptt_step(tbptt_step):
    """学生函数 ``tbptt_step(model, optimizer, x, y, state, max_norm) -> (loss: float, state)``。
    每一段里 ``optimizer.step()`` 必须恰好调用一次（``_counted_optimizer`` 的记号运算数出来）。"""
    g = torch.Generator().manual_seed(36)
    stream = torch.randint(11, (3, 4 * 8 + 1), generator=g)
    chunks = [(stream[:, i : i + 8], stream[:, i + 1 : i + 9]) for i in range(0, 32, 8)]
    max_norm = 0.05  # 足够小：每一步都会被裁剪，漏掉裁剪一定看得出来

    def fresh():
        torch.manual_seed(63)
        return _TinyGRULM()

    ref = fresh()
    want_losses, want_state = _reference_tbptt(ref, chunks, max_norm)
    reset_losses, _ = _reference_tbptt(fresh(), chunks, max_norm, carry=False)
    unclipped_losses, _ = _reference_tbptt(fresh(), chunks, max_norm, clip=False)
    model = fresh()
    opt = _counted_optimizer(model)
    state, losses = None, []
    for k, (x, y) in enumerate(chunks):
        out, trace = call_tracing_torch(tbptt_step, model, opt, x, y, state, max_norm)
        steps = trace.calls.get("optimizer_step", 0)
        if steps != 1:
            fail(f"第 {k + 1} 段里 optimizer.step() 被调用了 {steps} 次，应当恰好 1 次：参数要由传进来的 optimizer "
                 "更新（它带动量），不要自己写 p -= lr * p.grad，也不要一段走好几步。")
        expect(isinstance(out, tuple) and len(out) == 2, "应返回两项：（这一段的损失，传给下一段的状态）。")
        loss, state = out
        expect(isinstance(loss, float), f"损失应是一个 Python 浮点数（loss.item()），你返回的是 {type(loss).__name__}。")
        expect(isinstance(state, torch.Tensor), f"状态应是 GRU 返回的张量，你返回的是 {type(state).__name__}。")
        if state.grad_fn is not None:
            fail("返回的状态还连着这一段的计算图：要用 state.detach() 截断梯度——否则下一段反向传播会一路穿回第一段，"
                 "那就不是“截断”的 BPTT 了，内存和用时也随训练步数增长。")
        if k and abs(float(loss) - reset_losses[k]) < 1e-5:
            fail(f"第 {k + 1} 段的损失等于“从零状态重新开始”时的值：要把传进来的 state 交给 model(x, state)，"
                 "让这一段接着上一段读下去。")
        if k and abs(float(loss) - unclipped_losses[k]) < 1e-5:
            fail("参数的更新与“不裁剪”完全一样：在 loss.backward() 之后、optimizer.step() 之前调用 "
                 "nn.utils.clip_grad_norm_(model.parameters(), max_norm)。")
        expect_close(loss, want_losses[k], f"第 {k + 1} 段的损失", tol=1e-5)
        losses.append(float(loss))
    if not all(torch.allclose(p, q, atol=1e-6) for p, q in zip(model.parameters(), ref.parameters())):
        fail("四段训练之后参数与参考实现不一致。顺序应是：前向（带上一段的状态）→ 损失 → zero_grad → backward → 裁剪 → "
             "optimizer.step()。更新要交给传进来的 optimizer（它带动量），不要自己写 p -= lr * p.grad。")
    expect(torch.allclose(state, want_state, atol=1e-6), "最后的状态与参考实现不一致。")
    return (f"与参考实现逐段一致（四段的损失 {', '.join(f'{v:.3f}' for v in losses)}）。状态的值一段接一段地传下去，"
            f"梯度却只在一段之内流动。要是每段都从零状态开始，第 2 段的损失会是 {reset_losses[1]:.3f} 而不是 "
            f"{losses[1]:.3f}：这里的字是随机的、模型也没训练，两者只差一点；在真实文本上，传下去的状态带着"
            "段落边界之前的上下文。")


MAX_GRAD_NORM_CALLS = 100
MAX_DISTANCE = 1000


def _scaled_orthogonal(seed: int, d: int, g: float) -> torch.Tensor:
    """``g·Q``：Q 是由 QR 分解得到的随机正交矩阵（按 R 的对角元定号，使它在正交矩阵里均匀分布）。"""
    G = torch.randn(d, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    Q, R = torch.linalg.qr(G)
    return g * Q * torch.sign(torch.diagonal(R))


class _GradNorm:
    """练习 1.3.7 交给学生的测量：线性 RNN ``h_t = ω W_h h_{t−1} + u_t`` 跨 ``r`` 步的 ``‖∂h_t/∂h_{t−r}‖₂``。

    按链式法则把 ``r`` 个一步雅可比矩阵 ``∂h_j/∂h_{j−1} = ω W_h`` 连乘起来，再求谱范数；顺便数学生测了几次。"""

    def __init__(self, W_h: torch.Tensor) -> None:
        self.W_h = W_h
        self.asked: list[tuple] = []

    def __call__(self, omega, r):
        self.asked.append((omega, r))
        if len(self.asked) > MAX_GRAD_NORM_CALLS:
            fail(f"你已经测了 {MAX_GRAD_NORM_CALLS} 次还没停下。先推一推 ‖∂h_t/∂h_{{t−r}}‖₂ 与 ω、r 的关系："
                 "知道了它的形式，测一两次就够了。")
        if isinstance(omega, torch.Tensor) and omega.numel() == 1:
            omega = omega.item()
        if isinstance(r, torch.Tensor) and r.numel() == 1 and not r.is_floating_point() and r.dtype != torch.bool:
            r = r.item()
        # NumPy 的数（np.float32、np.int64 等）也接受：它们登记为 numbers.Real / numbers.Integral；bool 不算数
        if isinstance(omega, bool) or not isinstance(omega, numbers.Real) or not math.isfinite(omega) or omega <= 0:
            fail(f"grad_norm 的第一个参数 ω 应是一个有限的正数，你传入的是 {omega!r}。")
        if isinstance(r, bool) or not isinstance(r, numbers.Integral) or not 1 <= r <= MAX_DISTANCE:
            fail(f"grad_norm 的第二个参数 r 应是 1 到 {MAX_DISTANCE} 之间的整数，你传入的是 {r!r}。")
        return _product_norm(float(omega) * self.W_h, int(r))


def _product_norm(J: torch.Tensor, r: int) -> float:
    """``‖J^r‖₂``：一步一步连乘，每步把乘积缩放回最大元为 1、尺度另记在对数里，超出浮点范围时返回 inf 或 0。"""
    P, log_scale = torch.eye(J.shape[0], dtype=J.dtype), 0.0
    for _ in range(r):
        P = J @ P
        top = float(P.abs().max())
        if not math.isfinite(top):
            return math.inf
        if top == 0.0:
            return 0.0
        P, log_scale = P / top, log_scale + math.log(top)
    log_norm = log_scale + math.log(float(torch.linalg.matrix_norm(P, ord=2)))
    return math.exp(log_norm) if log_norm < 709 else math.inf


@checker(
    "1.3.7",
    "正交的线性 RNN：不消失也不爆炸的尺度",
    objective=r"推出 $W_h=gQ$ 时 $\lVert\partial h_t/\partial h_{t-r}\rVert_2=(\omega g)^r$，用测量找出让梯度既不消失也不爆炸的倍数 $\omega=1/g$",
    difficulty=1,
    minutes=15,
)
def check_neutral_scale(neutral_scale):
    """学生函数 ``neutral_scale(grad_norm) -> float``。``grad_norm(omega, r)`` 量的是线性 RNN
    ``h_t = ω W_h h_{t−1} + u_t`` 的 ``‖∂h_t/∂h_{t−r}‖₂``，``W_h = gQ``（Q 正交，g 不告诉学生）；
    要返回使它对每个 r 都等于 1 的 ω（即 1/g，相对误差 1e-6 以内）。每一例的 g 都不同，背下 1 不行。"""
    cases = ((0, 4, 0.37), (1, 6, 1.9), (2, 8, 1.0), (3, 5, 12.5))
    for seed, d, g in cases:
        W_h = _scaled_orthogonal(seed, d, g)
        grad_norm = _GradNorm(W_h.clone())
        got = call(neutral_scale, grad_norm)
        try:
            omega = float(got)
        except (TypeError, ValueError, RuntimeError):
            fail(f"应返回一个数（倍数 ω），你返回的是 {type(got).__name__}。")
        expect(math.isfinite(omega) and omega > 0, f"ω 应是一个有限的正数，你返回的是 {omega!r}。")
        if math.isclose(omega, 1 / g, rel_tol=1e-6):
            continue
        if g != 1 and math.isclose(omega, 1.0, rel_tol=1e-6):
            fail("你返回了 1：那只在 W_h 本身恰好正交时才对。这里的 W_h 是正交矩阵乘上一个不告诉你的数 g，"
                 "先用 grad_norm 量一量 ω = 1 时的范数。")
        if math.isclose(omega, g, rel_tol=1e-6):
            fail(f"你返回的 ω = {omega:.6g} 正好是 W_h 自己的倍数 g，方向反了：ω = 1 时梯度每一步乘上 g，"
                 "要让 ωg = 1，ω 应是它的倒数。")
        hint = ""
        for r in range(2, MAX_DISTANCE + 1) if g != 1 else ():
            log_g = math.log(g)  # 在对数里比较：g 的 1000 次幂会超出浮点范围
            if any(abs(math.log(omega) - value) < 1e-6 for value in (-r * log_g, r * log_g, -log_g / r)):
                hint = (f"你的 ω 与 g 的 {r} 次幂（或 {r} 次方根）有关：跨 r 步的范数是一步的倍数连乘 r 次，"
                        "由 r 步的测量反推一步的倍数要开 r 次方。")
                break
        fail(f"d = {d} 的这一例里，你的 ω = {omega:.6g} 使梯度每一步乘上 {omega * g:.6g}，"
             f"100 步后是 {_product_norm(omega * W_h, 100):.3g} 倍，不是 1。{hint}"
             "提示：推一推 W_h = gQ 时 ‖∂h_t/∂h_{t−r}‖₂ 与 ω、g、r 的关系。")
    # ω 偏离 1% 会怎样：检查自己的测量，ω 取正确值的 1 ± 1%
    W_h = _scaled_orthogonal(1, 6, 1.9)
    far = {(f, r): _product_norm(f / 1.9 * W_h, r) for f in (0.99, 1.0, 1.01) for r in (100, 1000)}
    return (f"四个不同的 g 都找对了（例如 g = 1.9 时 ω = {1 / 1.9:.6f}）。用对的 ω，1000 步之后 ‖∂h_t/∂h_{{t−r}}‖₂ "
            f"仍是 {far[(1.0, 1000)]:.6f}；ω 偏大 1%，100 步后变成 {far[(1.01, 100)]:.2f} 倍、1000 步后 "
            f"{far[(1.01, 1000)]:.3g} 倍；偏小 1%，分别只剩 {far[(0.99, 100)]:.3f} 与 {far[(0.99, 1000)]:.2g}。"
            "“既不消失也不爆炸”只在 ωg = 1 这一点上成立，像一道刀刃；换成 tanh，饱和只会让范数更小。")
