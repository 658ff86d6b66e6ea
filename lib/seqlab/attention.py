"""第 1.5 节：序列内部的读取——自注意力、因果掩码与 O(S²) 的代价。

本模块按正文的顺序包含：

* ``scaled_dot_product_attention`` 与 ``causal_mask``：公式的逐步实现（第 1.6 节的多头注意力也建立在它们之上）；
* ``SelfAttention``：由同一个 ``X`` 得到 ``Q = X W_Q``、``K = X W_K``、``V = X W_V`` 的单头自注意力；
* 代价模型：query–key 配对数 ``S²`` / ``S(S+1)/2``，以及分数矩阵在 batch × heads × layers × dtype 下的内存；
* 路径长度：第 1 个位置的信息到达第 ``S`` 个位置，RNN 要经过 ``S-1`` 次传递，自注意力只要 1 层；
* 「它」指代的玩具模型 ``PronounResolver``、它的输入编码与读出（``referent_mass``）。

注意力与 RNN 的用时、峰值内存随 ``S`` 的变化在 ``seqlab.measure``；「它」模型的训练配方
``winograd_attention`` 在 ``seqlab.train.pronoun``。只依赖 torch（分层约定：这里不导入 plotly 或 ipywidgets）。
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from seqlab.corpus import winograd
from seqlab.errors import DEFAULT_BUDGET_BYTES, InputError, guard_memory
from seqlab.runtime import single_thread


# ---------------------------------------------------------------- 公式本身
def scaled_dot_product_attention(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``softmax(Q Kᵀ / √d_k) V``，按公式逐步写出。

    形状：``Q (…, S_q, d_k)``，``K (…, S_k, d_k)``，``V (…, S_k, d_v)``；
    ``mask (S_q, S_k)`` 或可广播的形状，``True`` 表示**允许**读取。
    返回 ``(输出 (…, S_q, d_v), 权重 (…, S_q, S_k))``。整行都被屏蔽的 Query 得到全零的权重和输出
    （而不是 NaN）。
    """
    d_k = Q.shape[-1]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ V, weights


def causal_mask(S: int) -> torch.Tensor:
    """``(S, S)`` 的布尔下三角矩阵：位置 i 只能读取 j ≤ i。"""
    return torch.ones(S, S, dtype=torch.bool).tril()


class SelfAttention(nn.Module):
    """单头自注意力：Query、Key、Value 都来自同一个序列 ``X``。

    ``Q = X W_Q``，``K = X W_K``，``V = X W_V``（行向量记号：``X`` 的每一行是一个位置），
    分数矩阵 ``Q Kᵀ / √d_k`` 的形状是 ``(S, S)``：第 i 行是位置 i 对所有位置的打分。

    形状：``X (…, S, d_model)`` → ``(输出 (…, S, d_v), 权重 (…, S, S))``。
    """

    def __init__(self, d_model: int, d_k: int | None = None, d_v: int | None = None):
        super().__init__()
        d_k = d_k or d_model
        d_v = d_v or d_model
        self.W_Q = nn.Parameter(torch.empty(d_model, d_k))
        self.W_K = nn.Parameter(torch.empty(d_model, d_k))
        self.W_V = nn.Parameter(torch.empty(d_model, d_v))
        for W in (self.W_Q, self.W_K, self.W_V):
            nn.init.xavier_uniform_(W)

    def forward(self, X: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        Q, K, V = X @ self.W_Q, X @ self.W_K, X @ self.W_V
        return scaled_dot_product_attention(Q, K, V, mask)


# ---------------------------------------------------------------- 代价模型
DTYPE_BYTES = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2}


def check_length(S) -> int:
    if isinstance(S, bool) or not isinstance(S, int):
        raise InputError(f"序列长度 S 必须是整数，你给的是 {S!r}。")
    if S < 1:
        raise InputError(f"序列长度 S 至少是 1，你给的是 {S}。")
    return S


def _check_count(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} 必须是整数，你给的是 {value!r}。")
    if value < 1:
        raise InputError(f"{what} 至少是 1，你给的是 {value}。")
    return value


def pair_count(S: int, causal: bool = False) -> int:
    """长度为 ``S`` 的序列里要打分的 query–key 配对数：``S²``；因果掩码下只剩 ``S(S+1)/2``。"""
    S = check_length(S)
    return S * (S + 1) // 2 if causal else S * S


def score_bytes(S: int, *, batch: int = 1, heads: int = 1, layers: int = 1, dtype: str = "float32") -> int:
    """朴素实现里分数矩阵占用的字节数：``batch × heads × layers × S² × 每个数的字节数``。

    训练时每一层、每一个头的 ``(S, S)`` 权重都要留到反向传播，所以乘上 ``layers``。
    因果掩码只让一半的配对**有用**，朴素实现仍然存下整个 ``S × S`` 矩阵，所以这里不打折。
    """
    S = check_length(S)
    for value, what in ((batch, "batch"), (heads, "头数 heads"), (layers, "层数 layers")):
        _check_count(value, what)
    if dtype not in DTYPE_BYTES:
        raise InputError(f"不认识的数据类型 {dtype!r}：可选 {sorted(DTYPE_BYTES)}。")
    return batch * heads * layers * S * S * DTYPE_BYTES[dtype]


def check_score_memory(
    S: int,
    *,
    batch: int = 1,
    heads: int = 1,
    layers: int = 1,
    dtype: str = "float32",
    budget: float = DEFAULT_BUDGET_BYTES,
) -> int:
    """先估算分数矩阵的内存，超过 ``budget`` 就抛出 ``MemoryBudgetError``（消息里有估算值）。"""
    estimate = score_bytes(S, batch=batch, heads=heads, layers=layers, dtype=dtype)
    what = f"S = {S}、batch {batch} × {heads} 头 × {layers} 层、{dtype} 的分数矩阵"
    guard_memory(what, estimate, budget)
    return estimate


def max_length_within(
    budget: float, *, batch: int = 1, heads: int = 1, layers: int = 1, dtype: str = "float32"
) -> int:
    """在给定配置下，分数矩阵不超过 ``budget`` 字节的最大 ``S``。"""
    per_pair = score_bytes(1, batch=batch, heads=heads, layers=layers, dtype=dtype)
    S = math.isqrt(int(budget // per_pair))
    return max(S, 0)


# ---------------------------------------------------------------- 路径长度
def rnn_parallel_sweeps(rnn: nn.RNN, X: torch.Tensor, sweeps: int) -> torch.Tensor:
    """把 RNN 的递推改写成“所有位置同时更新”的若干轮，看信息每一轮能走多远。

    第 0 轮每个位置只读自己的输入：``H⁽⁰⁾_t = tanh(W_x x_t + b)``；之后每一轮所有位置**同时**做
    ``H⁽ᵏ⁾_t = tanh(W_x x_t + W_h H⁽ᵏ⁻¹⁾_{t-1} + b)``（``H_0`` 取零）。每一轮只把信息向右移一个位置，
    所以第 k 轮后 ``H⁽ᵏ⁾_t`` 与真正的 ``h_t`` 在 ``t ≤ k+1`` 处相同，做满 ``S-1`` 轮才与 ``nn.RNN`` 一致。

    形状：``X (S, d_in)`` → ``(S, d_h)``。只支持单层、tanh 的 ``nn.RNN``。
    """
    W_x, W_h = rnn.get_parameter("weight_ih_l0"), rnn.get_parameter("weight_hh_l0")
    b = rnn.get_parameter("bias_ih_l0") + rnn.get_parameter("bias_hh_l0")
    drive = X @ W_x.T + b  # (S, d_h)：每个位置自己的输入项，与轮数无关
    H = torch.tanh(drive)
    for _ in range(sweeps):
        previous = torch.cat([torch.zeros_like(H[:1]), H[:-1]])  # H_{t-1}，位置 1 的前一个是零
        H = torch.tanh(drive + previous @ W_h.T)
    return H


def _jacobian(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """前向模式的雅可比矩阵 ``∂fn(x)/∂x``（输入维数很小，前向模式最快）。

    屏蔽 PyTorch 内部关于 ``torch.jit.script`` 的弃用警告：它来自 ``torch.func`` 自己，与读者无关。
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*", category=DeprecationWarning)
        return torch.func.jacfwd(fn)(x)


def rnn_reach(S: int, d: int = 8, seed: int = 0) -> torch.Tensor:
    """``R[k, t] = ‖∂H⁽ᵏ⁾_t / ∂x_1‖``，``k = 0 … S-1``：RNN 做了 k 轮传递后，第 1 个位置的输入影响到了哪些位置。"""
    S = check_length(S)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        rnn = nn.RNN(d, d, batch_first=True)
        X = torch.randn(S, d)

    def sweeps_from(x1: torch.Tensor, k: int) -> torch.Tensor:
        return rnn_parallel_sweeps(rnn, torch.cat([x1[None], X[1:]]), k)

    rows = []
    with single_thread():
        for k in range(S):
            J = _jacobian(functools.partial(sweeps_from, k=k), X[0])  # (S, d, d)
            rows.append(J.flatten(1).norm(dim=1))  # (S,)：每个位置对 x_1 的导数范数
    return torch.stack(rows).detach()


def attention_reach(S: int, d: int = 8, seed: int = 0, causal: bool = True) -> torch.Tensor:
    """第 0 行是输入本身（只有位置 1 依赖 ``x_1``），第 1 行是 ``‖∂y_t / ∂x_1‖``：**一层**自注意力之后的影响。

    形状 ``(2, S)``，与 ``rnn_reach`` 的行含义一致：第 k 行 = 做了 k 次跨位置传递之后。
    """
    S = check_length(S)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        layer = SelfAttention(d)
        X = torch.randn(S, d)
    mask = causal_mask(S) if causal else None
    with single_thread():
        J = _jacobian(lambda x1: layer(torch.cat([x1[None], X[1:]]), mask)[0], X[0])
    before = torch.zeros(S)
    before[0] = math.sqrt(d)  # ‖∂x_1/∂x_1‖ = ‖I_d‖
    return torch.stack([before, J.flatten(1).norm(dim=1).detach()])


def first_reach(reach: torch.Tensor, tol: float = 1e-12) -> int:
    """``reach`` 的第 k 行是 k 次跨位置传递之后的影响；返回最后一个位置第一次受影响时的 k（路径长度）。

    找不到（传递次数还不够）时返回 -1。
    """
    hit = (reach[:, -1] > tol).nonzero()
    return int(hit[0]) if len(hit) else -1


# ---------------------------------------------------------------- 「它」指代的玩具模型
class PronounResolver(nn.Module):
    """极小的两层自注意力模型：「它」最后一层的那一行注意力权重就是答案。

    * 第 1 层：自注意力 + 逐位置前馈层（残差、层归一化），让每个位置先读一读整句——
      「它」需要读到后面的「大 / 小」和前面的动词，名词需要知道自己在哪个槽位；
    * 第 2 层：只取注意力权重。「它」那一行落在名词甲上的权重之和与落在名词乙上的之和比大小，
      大的那个就是模型认为「它」指代的东西（指针式的分类）。

    形状：``ids (B, S)``（0 是填充）→ ``(第 1 层权重 (B, S, S), 第 2 层权重 (B, S, S))``。
    """

    def __init__(self, vocab_size: int, d_model: int = 32, d_ff: int = 64, max_len: int = 24):
        super().__init__()
        self.E = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.P = nn.Embedding(max_len, d_model)
        self.attn1 = SelfAttention(d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norm2 = nn.LayerNorm(d_model)
        self.attn2 = SelfAttention(d_model)
        self.max_len = max_len

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        S = ids.shape[-1]
        if S > self.max_len:
            raise InputError(f"句子有 {S} 个字，超过了模型能处理的 {self.max_len} 个。")
        allowed = (ids != 0)[..., None, :]  # (B, 1, S)：不读填充位置
        X = self.E(ids) + self.P(torch.arange(S))
        out, A1 = self.attn1(X, allowed)
        H = self.norm1(X + out)
        H = self.norm2(H + self.ffn(H))
        _, A2 = self.attn2(H, allowed)
        return A1, A2


def referent_mass(A2: torch.Tensor, pronoun: torch.Tensor, spans: torch.Tensor) -> torch.Tensor:
    """「它」那一行落在两个名词上的权重之和。

    ``A2 (B, S, S)``，``pronoun (B,)`` 是「它」的下标，``spans (B, 2, 2)`` 是名词甲、乙的 ``[起, 止)``。
    返回 ``(B, 2)``：第 0 列是 A 得到的权重，第 1 列是 B 的。
    """
    row = A2[torch.arange(len(pronoun)), pronoun]  # (B, S)
    positions = torch.arange(row.shape[-1])
    inside = (positions[None, None, :] >= spans[..., :1]) & (positions[None, None, :] < spans[..., 1:])
    return (row[:, None, :] * inside).sum(-1)


@dataclass
class WinogradBatch:
    ids: torch.Tensor  # (B, S)
    pronoun: torch.Tensor  # (B,)
    spans: torch.Tensor  # (B, 2, 2)
    answer: torch.Tensor  # (B,)：0 表示 A，1 表示 B


def encode_examples(
    examples: Sequence[winograd.Example], vocab: Sequence[str], max_len: int = 24
) -> WinogradBatch:
    """把 ``corpus.winograd.Example`` 列表编成张量；词表外的字记为 1（未知）。"""
    index = {ch: i for i, ch in enumerate(vocab)}
    S = max(len(e.text) for e in examples)
    if S > max_len:
        raise InputError(f"句子有 {S} 个字，超过了模型能处理的 {max_len} 个。")
    ids = torch.zeros(len(examples), S, dtype=torch.long)
    for b, e in enumerate(examples):
        ids[b, : len(e.text)] = torch.tensor([index.get(ch, 1) for ch in e.text])
    return WinogradBatch(
        ids,
        torch.tensor([e.pronoun for e in examples]),
        torch.tensor([[e.span_a, e.span_b] for e in examples]),
        torch.tensor([e.answer for e in examples]),
    )
