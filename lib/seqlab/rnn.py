"""第 1.3 节：循环神经网络如何表示历史。

* ``ElmanRNN``：按公式 ``h_t = φ(W_x e_t + W_h h_{t-1} + b)`` 一步一步写出的循环网络，
  测试里与 ``torch.nn.RNN`` 逐个数值、逐个梯度地对照；
* ``step_jacobian`` / ``jacobian_product`` / ``scaled_products``：逐步雅可比矩阵
  ``J_j = ∂h_j/∂h_{j-1} = diag(φ'(a_j)) W_h`` 以及连乘 ``J_t J_{t-1} ⋯ J_{t-r+1}``；
* ``recurrent_matrix``：三类循环矩阵——正交、高斯随机、非正规——都能指定谱半径；
* ``input_gradient_norms``、``graph_depth``：梯度能“走多远”，以及沿时间的串行依赖到底有多长
  （有多慢由 ``seqlab.measure.timing_samples`` 实测）；
* ``linear_recurrence_loop`` / ``linear_recurrence_scan``：**线性**递推 ``h_t = λ_t ⊙ h_{t-1} + u_t``
  既可以逐步算，也可以用并行前缀扫描在 ``⌈log₂ S⌉`` 轮内算完——串行依赖来自非线性；
* ``exploding_copy_task``：一个梯度会爆炸的小训练任务，用来演示梯度裁剪。

记号：公式里用列向量；代码里一批序列按行存放（``E`` 形状 ``(B, S, d_in)``），
所以 ``W_x e_t`` 写成 ``e_t @ W_x.T``，两者是同一个运算。
"""

from __future__ import annotations

import math

import torch
from torch import nn

from seqlab.errors import InputError, guard_memory

PHIS = ("tanh", "linear")
KINDS = ("orthogonal", "gaussian", "nonnormal")
PHI_DERIVATIVE_BOUND = {"tanh": 1.0, "linear": 1.0}  # γ = sup |φ'|


# ---------------------------------------------------------------------------
# 非线性及其导数
# ---------------------------------------------------------------------------
def _check_phi(phi: str) -> None:
    if phi not in PHIS:
        raise InputError(f"非线性 φ 只能是 {PHIS} 之一，收到的是 {phi!r}。")


def phi_fn(a: torch.Tensor, phi: str) -> torch.Tensor:
    """``φ(a)``：逐元素作用。"""
    _check_phi(phi)
    return torch.tanh(a) if phi == "tanh" else a


def phi_derivative(a: torch.Tensor, phi: str) -> torch.Tensor:
    """``φ'(a)``，与 ``a`` 同形状。

    tanh 的导数是 ``1 - tanh(a)² = 1 - h² = 1 / cosh(a)²``。这里用同一个值的第三种写法 ``4t / (1 + t)²``，
    ``t = e^{-2|a|}``：饱和时（``|a|`` 超过约 19（float64）或 9（float32））``tanh(a)`` 会被舍入成恰好 1，
    ``1 - h²`` 就变成 0，而真实导数 ``≈ 4 e^{-2|a|}`` 只是很小（并不为零）；直接算 ``cosh(a)**-2`` 又会在
    ``|a|`` 超过约 356（float64）或 45（float32）时因 ``cosh²`` 溢出而得到 0。``t`` 只会变小、不会溢出，
    所以结果只在真实导数本身小于最小的浮点数时才是 0。第 1.3 节的笔记本实测了这几个界。
    """
    _check_phi(phi)
    if phi == "linear":
        return torch.ones_like(a)
    t = torch.exp(-2 * a.abs())
    return 4 * t / (1 + t) ** 2


# ---------------------------------------------------------------------------
# Elman RNN
# ---------------------------------------------------------------------------
class ElmanRNN(nn.Module):
    """单层 Elman 循环网络：``a_t = W_x e_t + W_h h_{t-1} + b``，``h_t = φ(a_t)``。

    参数形状：``W_x (d, d_in)``，``W_h (d, d)``，``b (d,)``。初始化与 ``torch.nn.RNN`` 相同：
    均匀分布 ``U(-1/√d, 1/√d)``。
    """

    def __init__(self, d_in: int, d: int, phi: str = "tanh", dtype: torch.dtype = torch.float32):
        super().__init__()
        _check_phi(phi)
        self.phi = phi
        k = 1.0 / math.sqrt(d)
        self.W_x = nn.Parameter(torch.empty(d, d_in, dtype=dtype).uniform_(-k, k))
        self.W_h = nn.Parameter(torch.empty(d, d, dtype=dtype).uniform_(-k, k))
        self.b = nn.Parameter(torch.empty(d, dtype=dtype).uniform_(-k, k))

    @property
    def d(self) -> int:
        return self.W_h.shape[0]

    @classmethod
    def from_matrices(cls, W_x: torch.Tensor, W_h: torch.Tensor, b: torch.Tensor, phi: str = "tanh"):
        """用给定的矩阵构造（复制一份，不共享存储）。"""
        with torch.random.fork_rng(devices=[]):  # 随机初始化马上被覆盖：不该改动全局随机数
            model = cls(W_x.shape[1], W_h.shape[0], phi=phi, dtype=W_h.dtype)
        with torch.no_grad():
            model.W_x.copy_(W_x)
            model.W_h.copy_(W_h)
            model.b.copy_(b)
        return model

    @classmethod
    def from_torch(cls, rnn: nn.RNN) -> ElmanRNN:
        """从单层、单向的 ``nn.RNN`` 复制权重。PyTorch 有两个偏置，它们总是相加出现：``b = b_ih + b_hh``。"""
        if rnn.num_layers != 1 or rnn.bidirectional or not rnn.bias:
            raise InputError("只能从单层、单向、带偏置的 nn.RNN 复制权重。")
        phi = {"tanh": "tanh", "relu": None}[rnn.nonlinearity]
        if phi is None:
            raise InputError("本书的 ElmanRNN 只实现了 tanh（以及线性）非线性。")
        W_x, W_h = rnn.get_parameter("weight_ih_l0").detach(), rnn.get_parameter("weight_hh_l0").detach()
        b = rnn.get_parameter("bias_ih_l0").detach() + rnn.get_parameter("bias_hh_l0").detach()
        return cls.from_matrices(W_x, W_h, b, phi)

    def step(self, e_t: torch.Tensor, h_prev: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """一步：``e_t (…, d_in)``，``h_prev (…, d)`` → ``(h_t, a_t)``，两者形状 ``(…, d)``。"""
        a_t = e_t @ self.W_x.T + h_prev @ self.W_h.T + self.b
        return phi_fn(a_t, self.phi), a_t

    def forward(
        self, E: torch.Tensor, h0: torch.Tensor | None = None, *, return_preactivations: bool = False
    ):
        """``E (S, d_in)`` 或 ``(B, S, d_in)`` → ``H``，形状 ``(S, d)`` 或 ``(B, S, d)``。

        ``H[..., t, :]`` 是读完第 ``t+1`` 个输入之后的状态。``h0`` 缺省为零向量。
        ``return_preactivations=True`` 时同时返回每一步的 ``a_t``（形状同 ``H``），雅可比矩阵要用它。
        这个循环就是串行依赖本身：第 t 步必须等第 t-1 步算完。
        """
        if E.dim() not in (2, 3):
            raise InputError(f"E 的形状应为 (S, d_in) 或 (B, S, d_in)，收到 {tuple(E.shape)}。")
        # 输入那一半 W_x e_t + b 不依赖过去，可以一次算出所有位置；只有 W_h h_{t-1} 必须一步一步来。
        U = E @ self.W_x.T + self.b
        h = torch.zeros(*E.shape[:-2], self.d, dtype=E.dtype) if h0 is None else h0
        hs, as_ = [], []
        for t in range(E.shape[-2]):
            a = U[..., t, :] + h @ self.W_h.T
            h = phi_fn(a, self.phi)
            hs.append(h)
            as_.append(a)
        H = torch.stack(hs, dim=-2)
        return (H, torch.stack(as_, dim=-2)) if return_preactivations else H


# ---------------------------------------------------------------------------
# 雅可比矩阵及其连乘
# ---------------------------------------------------------------------------
def step_jacobian(a_j: torch.Tensor, W_h: torch.Tensor, phi: str = "tanh") -> torch.Tensor:
    """``J_j = ∂h_j/∂h_{j-1} = diag(φ'(a_j)) W_h``。

    ``a_j (…, d)`` 可以带任意批维度，``W_h (d, d)``；返回 ``(…, d, d)``。
    ``diag(v) W`` 就是把 ``W`` 的第 i 行乘以 ``v_i``，不必真的构造对角矩阵。
    对 tanh：``φ'(a_j) = 1 - h_j²``，所以 ``J_j = diag(1 - h_j²) W_h``。
    """
    return phi_derivative(a_j, phi).unsqueeze(-1) * W_h


def jacobian_product(Js: torch.Tensor) -> torch.Tensor:
    """``∂h_t/∂h_{t-r} = J_t J_{t-1} ⋯ J_{t-r+1}``。

    ``Js (r, d, d)`` 按时间顺序存放 ``J_{t-r+1}, …, J_t``（最后一个是 ``J_t``）。
    注意乘法顺序：最近的一步在最左边。
    """
    P = Js[-1]
    for J in reversed(Js[:-1]):
        P = P @ J
    return P


def scaled_products(Js: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """对 ``r = 1 … R`` 依次给出 ``P_r = J_t ⋯ J_{t-r+1}``，但以“方向 × 尺度”的形式保存。

    ``Js (R, d, d)`` 按时间顺序（最后一个是 ``J_t``）。返回 ``(M, log10_c)``：
    ``M (R, d, d)`` 满足 ``‖M_r‖_F = 1``，``log10_c (R,)``，并且 ``P_r = 10^{log10_c[r-1]} · M_r``。
    连乘途中每隔几步、以及数量级可能超出浮点范围的四分之一时，就把乘积缩放回单位大小，所以即使 ``P_r`` 本身早已
    超出浮点数的表示范围（``1e400`` 或 ``1e-400``），它的方向和数量级仍然算得准确——曲线不会断。
    若某一步乘积恰好为零矩阵，之后的 ``log10_c`` 为 ``-inf``，``M`` 为零。
    """
    Js = Js.detach()
    R, d, _ = Js.shape
    guard_memory("保存雅可比矩阵连乘", 2 * R * d * d * Js.element_size())
    # ‖P J‖_F ≤ ‖P‖_F ‖J‖_F：用它预先知道什么时候必须缩放，省去每一步都求范数。
    log10_bound = torch.log10(torch.linalg.matrix_norm(Js).to(torch.float64)).tolist()[::-1]
    M = torch.empty_like(Js)
    log10_c = torch.zeros(R, dtype=torch.float64)
    P = torch.eye(d, dtype=Js.dtype)
    limit = math.log10(torch.finfo(Js.dtype).max) / 4  # float64: 1e±77，float32: 1e±9.6
    total, drift = 0.0, 0.0
    for r in range(1, R + 1):
        P = P @ Js[R - r]
        drift += log10_bound[r - 1]
        if abs(drift) > limit or r % 4 == 0:
            f = float(torch.linalg.matrix_norm(P))
            if f == 0.0:
                M[r - 1:] = 0.0
                log10_c[r - 1:] = -math.inf
                break
            P = P / f
            total += math.log10(f)
            drift = 0.0
        M[r - 1] = P
        log10_c[r - 1] = total
    else:
        r = R + 1
    # 最后统一缩放到 ‖M_r‖_F = 1。
    n = torch.linalg.matrix_norm(M[: r - 1]).to(torch.float64)
    M[: r - 1] /= n.to(M.dtype).clamp_min(torch.finfo(M.dtype).tiny)[:, None, None]
    log10_c[: r - 1] += torch.log10(n)
    return M, log10_c


def log10_spectral_norms(M: torch.Tensor, log10_c: torch.Tensor) -> torch.Tensor:
    """``log10 ‖P_r‖_2``，``r = 1 … R``：``‖P_r‖_2 = c_r · σ_max(M_r)``。

    ``σ_max(M)²`` 是 ``MᵀM`` 的最大特征值；对称矩阵的特征值比一般的 SVD 快得多。
    """
    gram = M.mT @ M
    top = torch.linalg.eigvalsh(gram)[..., -1].clamp_min(0.0)
    with torch.no_grad():
        return log10_c + 0.5 * torch.log10(top.to(torch.float64))


def log10_singular_values(M_r: torch.Tensor, log10_c_r: float) -> torch.Tensor:
    """一个乘积的全部奇异值（从大到小）的 ``log10``。"""
    return float(log10_c_r) + torch.log10(torch.linalg.svdvals(M_r).to(torch.float64))


# ---------------------------------------------------------------------------
# 三类循环矩阵
# ---------------------------------------------------------------------------
def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def orthogonal_matrix(d: int, seed: int = 0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """``d × d`` 的随机正交矩阵 ``Q``（``QᵀQ = I``）：对高斯矩阵做 QR 分解并修正符号。"""
    A = torch.randn(d, d, generator=_generator(seed), dtype=torch.float64)
    Q, R = torch.linalg.qr(A)
    Q = Q * torch.sign(torch.diagonal(R)).where(torch.diagonal(R) != 0, torch.ones(d, dtype=torch.float64))
    return Q.to(dtype)


def spectral_radius(W: torch.Tensor) -> float:
    """谱半径 ``ρ(W) = max |λ_i(W)|``。"""
    return float(torch.linalg.eigvals(W.to(torch.float64)).abs().max())


def recurrent_matrix(
    kind: str, d: int, rho: float, *, beta: float = 4.0, seed: int = 0, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """谱半径恰为 ``rho`` 的 ``d × d`` 循环矩阵 ``W_h``。

    * ``"orthogonal"``：``W_h = ρ Q``。所有奇异值都等于 ρ，是“正规”矩阵。
    * ``"gaussian"``：元素独立同分布的高斯矩阵，整体缩放到谱半径 ρ。它的最大奇异值约为 2ρ。
    * ``"nonnormal"``：``W_h = U diag(B, B, …) Uᵀ``，``U`` 正交，``B = [[ρ, β], [0, ρ]]``
      （``d`` 为奇数时末尾补一个 ``ρ``）。``β = 1`` 时 ``B`` 是若尔当块 ``J``；``β ≠ 0`` 时它与 ``J`` 相似
      （``B = D J D⁻¹``，``D = diag(β, 1)``），特征值相同、范数不同。全部特征值都是 ρ，但 ``β > 0`` 时它不是正规矩阵：
      ``‖B^r‖`` 约为 ``r β ρ^{r-1}``，先增长后衰减。``β = 0`` 时退化为 ``ρ I``。
      因为 ``UUᵀ = I``，``U diag(B, B, …) Uᵀ = ρI + β N``，``N = Σ_k u_{2k} u_{2k+1}ᵀ``（``U`` 的相邻两列的外积）：
      代码按这个式子算，任意 ρ、β 都只差逐元素的一次乘加，网页实时面由同一个 ``N`` 得到逐位相同的 ``W_h``。
    """
    if kind not in KINDS:
        raise InputError(f"矩阵类型只能是 {KINDS} 之一，收到 {kind!r}。")
    if not (isinstance(d, int) and d >= 1):
        raise InputError(f"维度 d 必须是正整数，收到 {d!r}。")
    if not (math.isfinite(rho) and rho > 0):
        raise InputError(f"谱半径 ρ 必须是正的有限实数，收到 {rho!r}。")
    if not (math.isfinite(beta) and beta >= 0):
        raise InputError(f"非正规强度 β 必须是非负的有限实数，收到 {beta!r}。")
    guard_memory("构造循环矩阵", 4 * d * d * 8)
    if kind == "orthogonal":
        W = rho * orthogonal_matrix(d, seed)
    elif kind == "gaussian":
        G = gaussian_matrix(d, seed)
        W = rho * G / spectral_radius(G)
    else:
        W = rho * torch.eye(d, dtype=torch.float64) + beta * nilpotent_part(d, seed)
    return W.to(dtype)


def gaussian_matrix(d: int, seed: int = 0) -> torch.Tensor:
    """高斯循环矩阵缩放之前的 ``G``：元素独立同分布 ``N(0, 1/d)``（种子 ``seed + 1000``），形状 ``(d, d)``，float64。"""
    return torch.randn(d, d, generator=_generator(seed + 1000), dtype=torch.float64) / math.sqrt(d)


def nilpotent_part(d: int, seed: int = 0) -> torch.Tensor:
    """非正规矩阵的 ``N = U E Uᵀ = Σ_k u_{2k} u_{2k+1}ᵀ``（``E`` 在每个 2×2 块的右上角是 1，其余是 0；
    ``U = orthogonal_matrix(d, seed + 2000)``）。``N² = 0``：它只有特征值 0。形状 ``(d, d)``，float64。"""
    U = orthogonal_matrix(d, seed + 2000)
    pairs = d // 2
    return U[:, 0 : 2 * pairs : 2] @ U[:, 1 : 2 * pairs : 2].T


# ---------------------------------------------------------------------------
# 梯度能走多远：RNN / LSTM / GRU
# ---------------------------------------------------------------------------
def input_gradient_norms(model: nn.Module, X: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """最后一步的状态对每个输入的梯度有多大，按“距离”排列。

    ``model`` 是 ``batch_first=True`` 的 ``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU``，或本书的 ``ElmanRNN``；
    ``X (B, S, d_in)``；``u (d,)`` 是一个固定的读出方向。对每条序列计算
    ``‖∂(uᵀ h_S)/∂x_s‖``，在批上取中位数。返回 ``(S,)``：第 ``r`` 个元素对应距离 ``r = S - s``
    （``r = 0`` 是最后一个输入本身）。
    """
    B, S, d_in = X.shape
    guard_memory("计算每个输入的梯度", 8 * B * S * max(d_in, u.shape[0]) * 4)
    X = X.detach().clone().requires_grad_(True)
    out = model(X)
    H = out[0] if isinstance(out, tuple) else out
    (H[:, -1] @ u).sum().backward()
    grad = X.grad
    assert grad is not None  # X 是要求梯度的叶子张量，反向传播之后一定有梯度
    norms = grad.norm(dim=-1).median(dim=0).values  # (S,)
    return norms.flip(0)


def bias_gates_to_remember(model: nn.LSTM | nn.GRU | nn.LSTMCell | nn.GRUCell, value: float) -> None:
    """把“保留旧状态”的那道门的偏置设成 ``value``（原地修改；多层网络只改第一层）。

    LSTM：遗忘门 ``f``（PyTorch 的门顺序是 i, f, g, o）；``f = σ(…+value)``，越接近 1 越记得住。
    GRU：更新门 ``z``（顺序 r, z, n）；PyTorch 的 GRU 写作 ``h_t = (1 - z) ⊙ n + z ⊙ h_{t-1}``，
    所以 ``z`` 越接近 1 越记得住。两个偏置向量都设：``b_ih`` 取 ``value``，``b_hh`` 取 0。
    """
    if not isinstance(model, (nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell)):
        raise InputError("只有 LSTM 与 GRU（及其单步版本）有“保留旧状态”的门。")
    d = model.hidden_size
    suffix = "_l0" if hasattr(model, "bias_ih_l0") else ""
    with torch.no_grad():
        for name, fill in ((f"bias_ih{suffix}", value), (f"bias_hh{suffix}", 0.0)):
            getattr(model, name)[d:2 * d] = fill


# ---------------------------------------------------------------------------
# 串行依赖：计算图有多“深”，实际跑多久（计时在 ``seqlab.measure``）
# ---------------------------------------------------------------------------
def graph_depth(y: torch.Tensor) -> int:
    """``y`` 的反向计算图里最长的一条依赖链有多少个运算节点。

    这条链上的运算只能一个接一个地执行——无论有多少个处理器。对 RNN 它随序列长度 S 线性增长；
    对“各位置并行”的层它是一个与 S 无关的常数。
    """
    if y.grad_fn is None:
        return 0
    depth: dict = {}
    stack = [(y.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if node in depth:
            continue
        children = [n for n, _ in node.next_functions if n is not None]
        if expanded:
            depth[node] = 1 + max((depth[c] for c in children), default=0)
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in children if c not in depth)
    return depth[y.grad_fn]


# ---------------------------------------------------------------------------
# 线性递推：逐步计算与并行前缀扫描
# ---------------------------------------------------------------------------
def _check_recurrence(lam: torch.Tensor, u: torch.Tensor) -> None:
    if lam.shape != u.shape or u.dim() < 2 or u.shape[-2] == 0:
        raise InputError(f"λ 与 u 的形状应相同，都是 (…, S, d) 且 S ≥ 1；收到 {tuple(lam.shape)} 与 {tuple(u.shape)}。")


def linear_recurrence_loop(lam: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """逐步计算 ``h_t = λ_t ⊙ h_{t-1} + u_t``（``h_0 = 0``）。

    ``lam``、``u`` 形状 ``(…, S, d)`` → ``H`` 形状 ``(…, S, d)``。第 t 步要等第 t-1 步：S 轮彼此等待的更新。
    """
    _check_recurrence(lam, u)
    h = torch.zeros_like(u[..., 0, :])
    hs = []
    for t in range(u.shape[-2]):
        h = lam[..., t, :] * h + u[..., t, :]
        hs.append(h)
    return torch.stack(hs, dim=-2)


def linear_recurrence_scan(lam: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, int]:
    """用并行前缀扫描（Hillis–Steele 式）算同一个递推，返回 ``(H, rounds)``，``rounds = ⌈log₂ S⌉``。

    每一步 ``h ↦ λ_t ⊙ h + u_t`` 是一个仿射映射，两个仿射映射复合后还是仿射映射：
    ``(λ_t, u_t) ∘ (λ_s, u_s) = (λ_t λ_s, λ_t u_s + u_t)``。这种复合满足结合律，所以第 k 轮让每个位置
    与它前面 ``2^k`` 个位置的累积映射复合，一轮之内各位置互不等待；``⌈log₂ S⌉`` 轮后 ``u_t`` 就是 ``h_t``。
    这一版总运算量是 ``O(S log S)``；Blelloch (1990) 的两趟扫描把它降到 ``O(S)``，深度仍是 ``O(log S)``。
    tanh 之类的非线性不满足这种结合律，所以 Elman RNN 不能这样算。
    """
    _check_recurrence(lam, u)
    S, offset, rounds = u.shape[-2], 1, 0
    while offset < S:
        lam_before = torch.cat([torch.ones_like(lam[..., :offset, :]), lam[..., :-offset, :]], dim=-2)
        u_before = torch.cat([torch.zeros_like(u[..., :offset, :]), u[..., :-offset, :]], dim=-2)
        lam, u = lam * lam_before, lam * u_before + u
        offset, rounds = 2 * offset, rounds + 1
    return u, rounds


def exploding_copy_task(
    *, d: int = 16, S: int = 30, B: int = 64, lag: int = 5, g: float = 1.5, seed: int = 0
) -> tuple[ElmanRNN, nn.Linear, torch.Tensor, torch.Tensor]:
    """一个梯度会爆炸的训练任务：tanh RNN 的 ``W_h = gQ``（``g > 1``），要记住倒数第 ``lag + 1`` 个输入。

    返回 ``(rnn, readout, X, y)``：``X`` 形状 ``(B, S, 1)``，``y = X[:, S-1-lag, 0]`` 形状 ``(B,)``；
    预测是 ``readout(rnn(X)[:, -1])``。模型与数据都由 ``seed`` 决定，不动全局随机数发生器。
    """
    with torch.random.fork_rng(devices=[]):  # 用自己的种子初始化，不改动全局随机数发生器
        torch.manual_seed(seed)
        model, readout = ElmanRNN(1, d, "tanh"), nn.Linear(d, 1)
        X = torch.randn(B, S, 1)
    with torch.no_grad():
        model.W_h.copy_(recurrent_matrix("orthogonal", d, g, seed=seed).to(torch.float32))
    return model, readout, X, X[:, S - 1 - lag, 0].clone()


def state_bytes(d: int, *, dtype_bytes: int = 4) -> int:
    """RNN 的历史只有一个状态 ``h_t``：``d`` 个数，与已经读过多少 token 无关。"""
    return d * dtype_bytes


def all_positions_bytes(S: int, d: int, *, copies: int = 2, dtype_bytes: int = 4) -> int:
    """把每个位置的表示都留着（例如自注意力的 Key 与 Value，``copies = 2``）：随 ``S`` 线性增长。"""
    return copies * S * d * dtype_bytes
