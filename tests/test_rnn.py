"""第 1.3 节：Elman RNN 与 PyTorch 对照、雅可比矩阵与 autograd 对照，以及梯度消失/爆炸的理论。"""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from torch import nn

from seqlab import rnn
from seqlab.errors import InputError


def _torch_rnn(d_in=5, d=7, seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    return nn.RNN(d_in, d, batch_first=True, dtype=dtype)


# --- ElmanRNN 与 torch.nn.RNN ------------------------------------------------------------------
@pytest.mark.parametrize("batched", [False, True])
def test_elman_matches_torch_values_and_gradients(batched):
    ref = _torch_rnn()
    ours = rnn.ElmanRNN.from_torch(ref)
    g = torch.Generator().manual_seed(1)
    shape = (3, 11, 5) if batched else (11, 5)
    E = torch.randn(*shape, generator=g, dtype=torch.float64)
    h0 = torch.randn(*shape[:-2], 7, generator=g, dtype=torch.float64)
    E1, E2 = E.clone().requires_grad_(True), E.clone().requires_grad_(True)
    H_ref, _ = ref(E1, h0.unsqueeze(0))
    H = ours(E2, h0)
    torch.testing.assert_close(H, H_ref, rtol=1e-12, atol=1e-12)
    w = torch.randn(H.shape, generator=g, dtype=torch.float64)
    (H_ref * w).sum().backward()
    (H * w).sum().backward()
    torch.testing.assert_close(E2.grad, E1.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(ours.W_x.grad, ref.weight_ih_l0.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(ours.W_h.grad, ref.weight_hh_l0.grad, rtol=1e-10, atol=1e-12)
    # b = b_ih + b_hh，所以 ∂L/∂b 与两个偏置各自的梯度相同。
    torch.testing.assert_close(ours.b.grad, ref.bias_ih_l0.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(ours.b.grad, ref.bias_hh_l0.grad, rtol=1e-10, atol=1e-12)


def test_elman_default_dtype_and_step_agree_with_forward():
    model = rnn.ElmanRNN(4, 6)
    E = torch.randn(9, 4)
    H, A = model(E, return_preactivations=True)
    h = torch.zeros(6)
    for t in range(9):
        h, a = model.step(E[t], h)
        torch.testing.assert_close(h, H[t])
        torch.testing.assert_close(a, A[t])
    assert H.dtype == torch.float32


def test_elman_rejects_bad_shapes_and_phi():
    with pytest.raises(InputError):
        rnn.ElmanRNN(3, 4)(torch.zeros(3))
    with pytest.raises(InputError):
        rnn.ElmanRNN(3, 4, phi="relu")
    with pytest.raises(InputError):
        rnn.ElmanRNN.from_torch(nn.RNN(3, 4, num_layers=2))


# --- 雅可比矩阵与 autograd -----------------------------------------------------------------------
@pytest.mark.parametrize("phi", rnn.PHIS)
def test_step_jacobian_matches_jacrev(phi):
    model = rnn.ElmanRNN(5, 8, phi=phi, dtype=torch.float64)
    e = torch.randn(5, dtype=torch.float64)
    h_prev = torch.randn(8, dtype=torch.float64)
    J_auto = torch.func.jacrev(lambda h: model.step(e, h)[0])(h_prev)
    h, a = model.step(e, h_prev)
    J = rnn.step_jacobian(a, model.W_h, phi)
    torch.testing.assert_close(J, J_auto, rtol=1e-12, atol=1e-12)
    if phi == "tanh":  # 书里的形式：J_j = diag(1 - h_j²) W_h
        torch.testing.assert_close(J, torch.diag(1 - h**2) @ model.W_h, rtol=1e-12, atol=1e-12)


def test_tanh_derivative_is_stable_when_saturated():
    a = torch.tensor([0.0, 5.0, 25.0, -40.0], dtype=torch.float64)
    d = rnn.phi_derivative(a, "tanh")
    assert float(d[0]) == 1.0
    assert bool((d > 0).all())  # 1 - tanh(a)² 在 |a| = 25 时已被舍入成 0，真实导数并不为 0
    assert float(1 - torch.tanh(a[2]) ** 2) == 0.0


@pytest.mark.parametrize("dtype, a, rtol", [(torch.float64, [-3.0, 0.5, 30.0, 300.0, -356.5], 1e-12),
                                            (torch.float32, [0.5, -12.0, 45.5], 1e-5)])
def test_tanh_derivative_does_not_overflow(dtype, a, rtol):
    """cosh(a)**-2 在 |a| 超过约 356（float64）或 45（float32）时因 cosh² 溢出得到 0；phi_derivative 不会。
    参考值由 mpmath 以 50 位精度算出；两处最大的 |a| 上真实值已是次正规数，有效数字少几位，所以 rtol 比机器精度宽。"""
    import mpmath

    x = torch.tensor(a, dtype=dtype)
    got = rnn.phi_derivative(x, "tanh")
    with mpmath.workdps(50):
        want = [float(mpmath.sech(mpmath.mpf(v)) ** 2) for v in a]
    assert bool((got > 0).all())
    for g, w in zip(got.tolist(), want):
        assert math.isclose(g, w, rel_tol=rtol), (g, w)
    assert float(torch.cosh(x[-1]).pow(-2)) == 0.0  # 对照：直接用 cosh 的写法在这里已溢出


@pytest.mark.parametrize("r", [1, 2, 7])
def test_jacobian_product_matches_jacrev_over_r_steps(r):
    torch.manual_seed(3)
    model = rnn.ElmanRNN(4, 6, dtype=torch.float64)
    E = torch.randn(12, 4, dtype=torch.float64)
    H, A = model(E, return_preactivations=True)
    t = 11  # 最后一个位置
    Js = rnn.step_jacobian(A[t - r + 1: t + 1], model.W_h)  # J_{t-r+1} … J_t

    def h_t_from(h_start):
        h = h_start
        for j in range(t - r + 1, t + 1):
            h, _ = model.step(E[j], h)
        return h

    J_auto = torch.func.jacrev(h_t_from)(H[t - r])
    torch.testing.assert_close(rnn.jacobian_product(Js), J_auto, rtol=1e-10, atol=1e-12)
    # 逐步缩放的形式给出同一个乘积
    M, log10_c = rnn.scaled_products(Js)
    torch.testing.assert_close(10 ** log10_c[-1] * M[-1], J_auto, rtol=1e-10, atol=1e-12)


def test_scaled_products_survive_far_beyond_float_range():
    Q = rnn.orthogonal_matrix(5, seed=1)
    for g, r in ((50.0, 400), (0.01, 400)):  # 真实的范数是 50^400 ≈ 1e680 和 1e-800
        Js = (g * Q).expand(r, 5, 5).contiguous()
        M, log10_c = rnn.scaled_products(Js)
        norms = rnn.log10_spectral_norms(M, log10_c)
        assert bool(torch.isfinite(norms).all())
        expected = torch.arange(1, r + 1, dtype=torch.float64) * math.log10(g)
        torch.testing.assert_close(norms, expected, rtol=0, atol=1e-8)


def test_scaled_products_exact_zero():
    Js = torch.zeros(4, 3, 3, dtype=torch.float64)
    _, log10_c = rnn.scaled_products(Js)
    assert math.isinf(float(log10_c[0])) and float(log10_c[0]) < 0


# --- 理论：不只是代码 --------------------------------------------------------------------------
@pytest.mark.parametrize("g", [0.8, 1.0, 1.25])
def test_linear_orthogonal_norm_is_exactly_g_to_the_r(g):
    d, R = 16, 60
    W = rnn.recurrent_matrix("orthogonal", d, g, seed=4)
    Js = rnn.step_jacobian(torch.zeros(R, d, dtype=torch.float64), W, "linear")
    norms = rnn.log10_spectral_norms(*rnn.scaled_products(Js))
    expected = torch.arange(1, R + 1, dtype=torch.float64) * math.log10(g)
    torch.testing.assert_close(norms, expected, rtol=0, atol=1e-10)
    # 所有奇异值都等于 g^r（正交矩阵的幂仍是正交矩阵乘以 g^r）
    M, log10_c = rnn.scaled_products(Js)
    sv = rnn.log10_singular_values(M[-1], float(log10_c[-1]))
    torch.testing.assert_close(sv, torch.full((d,), R * math.log10(g), dtype=torch.float64), rtol=0, atol=1e-9)


@pytest.mark.parametrize("g", [0.9, 1.0, 1.5])
@pytest.mark.parametrize("scale", [0.1, 1.0, 3.0])
def test_tanh_norm_is_at_most_g_to_the_r(g, scale):
    d, R = 16, 50
    W = rnn.recurrent_matrix("orthogonal", d, g, seed=5)
    model = rnn.ElmanRNN.from_matrices(scale * torch.eye(d, dtype=torch.float64), W,
                                       torch.zeros(d, dtype=torch.float64), "tanh")
    E = torch.randn(R, d, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    with torch.no_grad():
        _, A = model(E, return_preactivations=True)
    norms = rnn.log10_spectral_norms(*rnn.scaled_products(rnn.step_jacobian(A, W, "tanh")))
    bound = torch.arange(1, R + 1, dtype=torch.float64) * math.log10(g)
    assert bool((norms <= bound + 1e-9).all())
    if scale >= 1.0:  # 饱和让它严格更小
        assert float(norms[-1]) < float(bound[-1]) - 1.0


def test_nonnormal_grows_then_decays_at_same_spectral_radius():
    d, rho, beta, R = 8, 0.9, 4.0, 100
    W = rnn.recurrent_matrix("nonnormal", d, rho, beta=beta, seed=0)
    Q = rnn.recurrent_matrix("orthogonal", d, rho, seed=0)
    assert rnn.spectral_radius(W) == pytest.approx(rho, abs=1e-6)
    assert rnn.spectral_radius(Q) == pytest.approx(rho, abs=1e-9)
    lin = torch.zeros(R, d, dtype=torch.float64)
    n_W = rnn.log10_spectral_norms(*rnn.scaled_products(rnn.step_jacobian(lin, W, "linear")))
    n_Q = rnn.log10_spectral_norms(*rnn.scaled_products(rnn.step_jacobian(lin, Q, "linear")))
    peak = int(torch.argmax(n_W))
    assert 3 <= peak <= 20
    assert float(n_W[peak]) > float(n_W[0]) + 0.4  # 峰值比一步时大 2.5 倍以上
    assert float(n_W[peak]) > 1.0  # 超过 10：明显的暂态增长
    assert bool((torch.diff(n_W[:peak]) > 0).all())  # 先单调增长
    assert bool((torch.diff(n_W[peak + 5:]) < 0).all())  # 后单调衰减
    assert float(n_W[-1]) < 0  # 最终衰减到 1 以下
    assert bool((torch.diff(n_Q) < 0).all())  # 同谱半径的正交矩阵：从头到尾都在衰减
    # 2×2 若尔当块的幂有闭式：B^r = [[ρ^r, rβρ^{r-1}], [0, ρ^r]]
    for r in (1, 5, 30):
        B_r = torch.tensor([[rho**r, r * beta * rho ** (r - 1)], [0.0, rho**r]], dtype=torch.float64)
        assert 10 ** float(n_W[r - 1]) == pytest.approx(float(torch.linalg.matrix_norm(B_r, ord=2)), rel=1e-9)


def test_gaussian_matrix_has_exact_radius_and_larger_sigma_max():
    W = rnn.recurrent_matrix("gaussian", 64, 0.9, seed=2)
    assert rnn.spectral_radius(W) == pytest.approx(0.9, abs=1e-9)
    assert float(torch.linalg.matrix_norm(W, ord=2)) > 1.5


@pytest.mark.parametrize("d", [2, 5, 32])
def test_nonnormal_matrix_is_U_B_Ut_with_every_eigenvalue_rho(d):
    rho, beta = 0.7, 3.0
    U = rnn.orthogonal_matrix(d, 2000)
    B = rho * torch.eye(d, dtype=torch.float64)
    idx = torch.arange(0, d - 1, 2)
    B[idx, idx + 1] = beta
    W = rnn.recurrent_matrix("nonnormal", d, rho, beta=beta)
    torch.testing.assert_close(W, U @ B @ U.T, rtol=0, atol=1e-13)
    N = rnn.nilpotent_part(d)
    torch.testing.assert_close(N @ N, torch.zeros(d, d, dtype=torch.float64), rtol=0, atol=1e-14)
    # 若尔当块的重根：数值特征值只准到 √(ε β) 左右，这正是状态里 ρ(W_h) 取构造值 ρ 的原因
    assert rnn.spectral_radius(W) == pytest.approx(rho, abs=1e-6)


@pytest.mark.parametrize("kind", rnn.KINDS)
@pytest.mark.parametrize("rho", [0.1, 1.0, 2.9])
def test_state_spectral_radius_is_the_constructed_one(kind, rho):
    from seqlab.states import jacobian

    curve, _ = jacobian.family_products(kind, 16, rho, 2.0, "linear", 0.0, 0)
    assert curve.rho_W == rho
    assert rnn.spectral_radius(rnn.recurrent_matrix(kind, 16, rho, beta=2.0)) == pytest.approx(rho, rel=1e-6)


def test_reproducible_forward_matches_the_book_rnn_torch_tanh_and_phi_derivative():
    from seqlab.states import jacobian

    a = torch.linspace(-60, 60, 20001, dtype=torch.float64)
    h, slope = jacobian._tanh_and_slope(a.numpy())
    torch.testing.assert_close(torch.from_numpy(h), torch.tanh(a), rtol=0, atol=4e-16)
    torch.testing.assert_close(torch.from_numpy(slope), rnn.phi_derivative(a, "tanh"), rtol=2e-15, atol=0)
    d = 12
    W = rnn.recurrent_matrix("gaussian", d, 0.8, seed=3)
    E = jacobian.input_noise(d, 3)
    A, slopes = jacobian.reproducible_preactivations(W, 0.7 * E)
    model = rnn.ElmanRNN.from_matrices(0.7 * torch.eye(d, dtype=torch.float64), W, torch.zeros(d, dtype=torch.float64))
    with torch.no_grad():
        _, A_book = model(E, return_preactivations=True)
    torch.testing.assert_close(A, A_book, rtol=0, atol=1e-12)  # ρ < 1：不混沌，两种求和顺序只差舍入
    torch.testing.assert_close(slopes, rnn.phi_derivative(A_book, "tanh"), rtol=1e-11, atol=0)


@pytest.mark.parametrize("bad", [{"kind": "circulant"}, {"d": 0}, {"rho": -1.0}, {"rho": float("nan")},
                                 {"beta": -2.0}])
def test_recurrent_matrix_rejects_bad_input(bad):
    args = {"kind": "orthogonal", "d": 4, "rho": 1.0, "beta": 1.0} | bad
    with pytest.raises(InputError):
        rnn.recurrent_matrix(args.pop("kind"), args.pop("d"), args.pop("rho"), **args)


# --- 梯度能走多远、串行依赖 --------------------------------------------------------------------
def test_input_gradient_norms_match_autograd_and_gates_extend_reach():
    torch.manual_seed(0)
    X = torch.randn(4, 30, 3, dtype=torch.float64)
    u = torch.randn(6, dtype=torch.float64)
    model = nn.GRU(3, 6, batch_first=True, dtype=torch.float64)
    norms = rnn.input_gradient_norms(model, X, u)
    x0 = X[0].clone().requires_grad_(True)
    (model(x0.unsqueeze(0))[0][0, -1] @ u).backward()
    per_seq = x0.grad.norm(dim=-1).flip(0)
    assert norms.shape == (30,)
    assert bool(torch.isfinite(norms).all())
    assert per_seq.shape == norms.shape
    lstm = nn.LSTM(3, 6, batch_first=True, dtype=torch.float64)
    before = rnn.input_gradient_norms(lstm, X, u)
    rnn.bias_gates_to_remember(lstm, 4.0)
    after = rnn.input_gradient_norms(lstm, X, u)
    assert float(after[-1]) > 100 * float(before[-1])


def test_graph_depth_grows_with_S_for_rnn_only():
    model = rnn.ElmanRNN(4, 4)
    lin = nn.Linear(4, 4)
    depths = {}
    for S in (8, 64, 120):
        E = torch.randn(S, 4, requires_grad=True)
        depths[S] = (rnn.graph_depth(model(E)), rnn.graph_depth(torch.tanh(lin(E))))
    per_step = (depths[64][0] - depths[8][0]) / (64 - 8)
    assert per_step >= 3 and per_step == int(per_step)  # 每一步至少：乘 W_h、相加、tanh
    assert depths[120][0] - depths[64][0] == per_step * (120 - 64)  # 严格线性增长
    assert depths[8][1] == depths[64][1] == depths[120][1]  # 各位置并行：与 S 无关
    assert rnn.graph_depth(torch.zeros(3)) == 0


def test_memory_formulas():
    assert rnn.state_bytes(256) == 1024
    assert rnn.all_positions_bytes(1000, 256) == 2 * 1000 * 256 * 4


# --- 探索器 -----------------------------------------------------------------------------------
def test_explorer_static_tour_and_live_examples():
    from seqlab import explorers
    from seqlab.explorers import jacobian as J

    ex = explorers.get("jacobian_product")
    fig = ex.static_figure()
    steps = fig.layout.sliders[0].steps
    assert len(steps) == len(J.TOUR) >= 2
    assert len(fig.to_json()) < 400_000
    assert "$" not in fig.to_json()
    view = ex.live()
    seen = []
    for example in ex.examples:
        assert view.set(**example), view.status
        assert view.unexpected is None
        seen.append([list(t.y) for t in view.figure.data])
    assert all(a != b for a, b in itertools.pairwise(seen))
    # 溢出：说明文字讲清楚，曲线里没有 NaN / inf
    assert view.set(matrix="orthogonal", rho=3.0, phi="linear", r=100, d=64)
    assert "溢出" in view.status and "r = 82" in view.status
    assert all(math.isfinite(y) and y > 0 for t in view.figure.data for y in t.y)
    # 下溢也一样：不留空洞
    assert view.set(matrix="orthogonal", rho=0.2, phi="tanh", input_scale=3.0)
    assert "下溢" in view.status
    assert all(math.isfinite(y) and y > 0 for t in view.figure.data for y in t.y)


def test_static_face_has_a_scene_slider_and_an_r_slider_that_work_together():
    """两个滑块：场景（update：切换可见轨迹与版面）和距离 r（restyle：只改竖线、圆点、奇异值）。"""
    from seqlab import explorers
    from seqlab.explorers import jacobian as J
    from seqlab.figures import jacobian_traces as T

    fig = explorers.get("jacobian_product").static_figure()
    scenes, distances = fig.layout.sliders
    n = len(fig.data)
    assert n == len(J.TOUR) * T.N_TRACES
    assert [s.label for s in scenes.steps] == [label for label, _, _ in J.TOUR]
    for step in scenes.steps:  # 每个场景恰好显示自己的一组轨迹
        visible = step.args[0]["visible"]
        assert len(visible) == n and sum(visible) == T.N_TRACES
    assert [int(s.label) for s in distances.steps] == J.STATIC_R
    r_only = {T.I_VLINE, T.I_MARKERS} | {T.I_SINGULAR + j for j in range(T.N_NORM)}
    previous = None
    for r, step in zip(J.STATIC_R, distances.steps):
        assert step.method == "restyle"
        data, indices = step.args
        assert {i % T.N_TRACES for i in indices} == r_only  # 不碰范数曲线和参考线
        assert all(x == [r, r] for x, i in zip(data["x"], indices) if i % T.N_TRACES == T.I_VLINE)
        ys = [y for ys in data["y"] for y in ys]
        assert all(math.isfinite(y) and y > 0 for y in ys)  # 没有 NaN 空洞
        assert ys != previous
        previous = ys
    # 默认停在 r = 30，和初始数据一致
    assert distances.active == J.STATIC_R.index(J.STATIC_R_DEFAULT)
    assert list(fig.data[T.I_VLINE].x) == [J.STATIC_R_DEFAULT] * 2


def test_verdict_names_the_regime():
    from seqlab import explorers
    from seqlab.figures.jacobian import verdict

    state = explorers.get("jacobian_product").compute
    assert "必然指数衰减" in verdict(state(matrix="orthogonal", rho=0.9, phi="linear"))
    assert "上界管不住" in verdict(state(matrix="nonnormal", rho=0.9, phi="linear"))
    assert "必然增长" in verdict(state(matrix="orthogonal", rho=1.1, phi="linear"))
    assert "不必然" in verdict(state(matrix="orthogonal", rho=1.1, phi="tanh", input_scale=2.0))


def test_explorer_shows_the_three_phenomena():
    from seqlab import explorers
    from seqlab.figures.jacobian import caption

    state = explorers.get("jacobian_product").compute
    below = state(matrix="orthogonal", rho=0.9, phi="tanh", input_scale=0.5)
    above = state(matrix="orthogonal", rho=1.2, phi="linear")
    assert float(below.selected.log10_norm[-1]) < -4
    assert float(above.selected.log10_norm[-1]) > 7
    nn_ = state(matrix="nonnormal", rho=0.9, phi="linear", r=10)
    assert "先增长" in caption(nn_)
    assert float(nn_.curves["nonnormal"].log10_norm[9]) > 1 > float(nn_.curves["orthogonal"].log10_norm[9])


def test_explorer_bad_input_is_a_chinese_message():
    from seqlab import explorers

    view = explorers.get("jacobian_product").live()
    before = [list(t.y) for t in view.figure.data]
    for bad in ({"d": 1}, {"d": 65}, {"r": 0}, {"rho": float("nan")}, {"rho": 1e308}, {"seed": -1}):
        view._hold = True
        for k, v in bad.items():
            view.controls[k].value = v  # 滑块会把越界值夹回范围内，这只是确认不会出意外
        view._hold = False
        view.refresh()
        assert view.unexpected is None
    for bad in ({"d": 1}, {"r": 101}, {"rho": float("nan")}, {"matrix": "x"}, {"phi": "relu"},
                {"seed": 2.5}, {"input_scale": -1.0}):
        with pytest.raises(InputError):
            explorers.get("jacobian_product").compute(**bad)
    assert before  # 图仍在


# --- 练习的检查：答案通过，常见错误得到有针对性的提示 --------------------------------------------
def test_exercise_checks_teach_the_common_mistakes(monkeypatch):
    monkeypatch.delenv("SEQLAB_STRICT_CHECKS", raising=False)
    from seqlab.exercises import sec03

    def leaky(h, h_prev, W, kappa, wrong_side=False):
        s = (h - (1 - kappa) * h_prev) / kappa
        slope = (1 - s**2)[None, :] if wrong_side else (1 - s**2)[:, None]
        return (1 - kappa) * torch.eye(W.shape[0], dtype=W.dtype) + kappa * slope * W

    assert sec03.check_leaky_jacobian(leaky)
    wrong_side = sec03.check_leaky_jacobian(lambda *a: leaky(*a, wrong_side=True))
    assert not wrong_side and "列" in wrong_side.message
    def clip(params, max_norm, per_tensor=False, report_after=False):
        total = float(torch.cat([p.grad.flatten() for p in params]).norm())
        for p in params:
            scale = max_norm / (float(p.grad.norm()) if per_tensor else total)
            if scale < 1:
                p.grad.mul_(scale)
        return min(total, max_norm) if report_after else total

    assert sec03.check_clip_gradients(clip)
    separately = sec03.check_clip_gradients(lambda ps, m: clip(ps, m, per_tensor=True))
    assert not separately and "分别" in separately.message
    after = sec03.check_clip_gradients(lambda ps, m: clip(ps, m, report_after=True))
    assert not after and "之后" in after.message

    def norms(W, U, with_slope=True):
        h, out = torch.zeros(W.shape[0], dtype=W.dtype), []
        for u in U:
            h = torch.tanh(u + W @ h)
            J = (1 - h**2)[:, None] * W if with_slope else W
            out.append(float(torch.linalg.matrix_norm(J, ord=2)))
        return out

    assert sec03.check_saturation(norms)
    forgot = sec03.check_saturation(lambda W, U: norms(W, U, with_slope=False))
    assert not forgot and "diag(1 - h_j²)" in forgot.message

    def gru(x, h, W_ih, W_hh, b_ih, b_hh, swap=False):
        d = h.shape[-1]
        gi, gh = x @ W_ih.T + b_ih, h @ W_hh.T + b_hh
        r = torch.sigmoid(gi[:, :d] + gh[:, :d])
        z = torch.sigmoid(gi[:, d:2 * d] + gh[:, d:2 * d])
        n = torch.tanh(gi[:, 2 * d:] + r * gh[:, 2 * d:])
        return z * n + (1 - z) * h if swap else (1 - z) * n + z * h

    assert sec03.check_gru_cell(gru)
    swapped = sec03.check_gru_cell(lambda *a: gru(*a, swap=True))
    assert not swapped and "放反" in swapped.message
    for check in (sec03.check_leaky_jacobian, sec03.check_clip_gradients, sec03.check_saturation,
                  sec03.check_gru_cell):
        assert not check(None)
