"""第 1.6 节：Transformer 的结构选择。

* 部件：多头自注意力（建立在 ``seqlab.attention.scaled_dot_product_attention`` 之上）、逐位置前馈网络、
  层归一化、正弦位置表示；
* 组装：一个 Transformer 块，归一化放在残差之后（post-norm，原论文）或之前（pre-norm，许多现代模型），
  两种都与 ``torch.nn.TransformerEncoderLayer`` 逐数比对；
* 一个极小的 decoder-only 语言模型，带 KV cache 的逐 token 解码。

“循环复读”任务与它的训练配方在 ``seqlab.train.induction``；Prefill 与 Decode 的用时和运算量、
Vaswani 等（2017）表 1 里的三项计数在 ``seqlab.measure``。本模块只依赖 torch。
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn

from seqlab.attention import causal_mask, scaled_dot_product_attention
from seqlab.errors import InputError, guard_memory


# ---------------------------------------------------------------- 位置表示
def sinusoidal_positions(S: int, d_model: int, offset: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """正弦位置表示，形状 ``(S, d_model)``，第 ``t`` 行对应绝对位置 ``offset + t``：

    ``PE[pos, 2i] = sin(pos / 10000^(2i/d))``，``PE[pos, 2i+1] = cos(pos / 10000^(2i/d))``。
    ``dtype`` 是计算与结果的精度（``torch.float64`` 时每一步都用 float64 算）。
    """
    if d_model % 2:
        raise InputError(f"正弦位置表示要求 d_model 是偶数，现在是 {d_model}。")
    pos = torch.arange(offset, offset + S, dtype=dtype)[:, None]  # (S, 1)
    two_i = torch.arange(0, d_model, 2, dtype=dtype)  # (d/2,)
    angle = pos / 10000 ** (two_i / d_model)  # (S, d/2)
    PE = torch.zeros(S, d_model, dtype=dtype)
    PE[:, 0::2] = torch.sin(angle)
    PE[:, 1::2] = torch.cos(angle)
    return PE


# ---------------------------------------------------------------- KV cache
@dataclass
class KVCache:
    """解码时每一层保存的历史 Key 与 Value：``K[l]``、``V[l]`` 形状 ``(B, h, T, d_k)``。

    新 token 到来时只为它算一次 K、V 并接到末尾；之前的 token 不再重算。
    """

    K: list[torch.Tensor] = field(default_factory=list)
    V: list[torch.Tensor] = field(default_factory=list)

    @property
    def length(self) -> int:
        """已经缓存的 token 数 T。"""
        return self.K[0].shape[-2] if self.K else 0

    def append(self, layer: int, K_new: torch.Tensor, V_new: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """把第 ``layer`` 层新算出的 ``K_new, V_new (B, h, S_new, d_k)`` 接到缓存末尾，返回完整的 K、V。"""
        if layer == len(self.K):
            self.K.append(K_new)
            self.V.append(V_new)
        else:
            self.K[layer] = torch.cat([self.K[layer], K_new], dim=-2)
            self.V[layer] = torch.cat([self.V[layer], V_new], dim=-2)
        return self.K[layer], self.V[layer]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.K + self.V)


# ---------------------------------------------------------------- 部件
class MultiHeadSelfAttention(nn.Module):
    """多头自注意力：``h`` 个头各自在 ``d_k = d_model / h`` 维的子空间里读取，结果拼接后再经 ``W_O``。

    ``X (B, S, d_model)`` → ``(输出 (B, S, d_model), 权重 alpha (B, h, S, S_k))``。
    ``mask (S, S_k)``：``True`` 表示允许读取（与 ``seqlab.attention`` 一致）。
    传入 ``cache`` 时，本层新算的 K、V 接到缓存末尾，Query 读取缓存里的全部历史。
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise InputError(f"d_model = {d_model} 不能被头数 h = {n_heads} 整除。")
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def split_heads(self, X: torch.Tensor) -> torch.Tensor:
        """``(B, S, d_model)`` → ``(B, h, S, d_k)``。"""
        B, S, _ = X.shape
        return X.view(B, S, self.n_heads, self.d_k).transpose(1, 2)

    def merge_heads(self, H: torch.Tensor) -> torch.Tensor:
        """``(B, h, S, d_k)`` → ``(B, S, d_model)``：各头的结果首尾拼接。"""
        B, _, S, _ = H.shape
        return H.transpose(1, 2).reshape(B, S, self.d_model)

    def forward(
        self, X: torch.Tensor, mask: torch.Tensor | None = None, cache: KVCache | None = None, layer: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        Q = self.split_heads(self.W_Q(X))
        K = self.split_heads(self.W_K(X))
        V = self.split_heads(self.W_V(X))
        if cache is not None:
            K, V = cache.append(layer, K, V)
        heads, alpha = scaled_dot_product_attention(Q, K, V, mask)
        return self.W_O(self.merge_heads(heads)), alpha


class PositionwiseFFN(nn.Module):
    """逐位置前馈网络 ``FFN(x) = max(0, x W_1 + b_1) W_2 + b_2``。

    ``(…, d_model)`` → ``(…, d_model)``；同一组参数独立地作用在每个位置上，位置之间不交换信息。
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.W_2(torch.relu(self.W_1(X)))


class LayerNorm(nn.Module):
    """层归一化：每个位置的向量减去自己的均值、除以自己的标准差，再乘 ``gamma`` 加 ``beta``。

    ``(…, d)`` → ``(…, d)``；``eps`` 与 ``torch.nn.LayerNorm`` 的默认值相同。
    """

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(d))
        self.beta = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        mu = X.mean(dim=-1, keepdim=True)
        var = X.var(dim=-1, unbiased=False, keepdim=True)
        return self.gamma * (X - mu) / torch.sqrt(var + self.eps) + self.beta


class TransformerBlock(nn.Module):
    """一个 Transformer 块：跨位置交换（自注意力）+ 位置内变换（FFN），各带一条残差连接。

    * ``norm_first=False``（post-norm，原论文）：``X ← LN₁(X + Attn(X))``，``X ← LN₂(X + FFN(X))``；
    * ``norm_first=True``（pre-norm）：``X ← X + Attn(LN₁(X))``，``X ← X + FFN(LN₂(X))``。

    ``X (B, S, d_model)`` → ``(X' (B, S, d_model), alpha (B, h, S, S_k))``。
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, *, norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.attn = MultiHeadSelfAttention(d_model, n_heads)
        self.ffn = PositionwiseFFN(d_model, d_ff)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)

    def forward(
        self, X: torch.Tensor, mask: torch.Tensor | None = None, cache: KVCache | None = None, layer: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if self.norm_first:
            A, alpha = self.attn(self.norm1(X), mask, cache, layer)
            X = X + A
            X = X + self.ffn(self.norm2(X))
        else:
            A, alpha = self.attn(X, mask, cache, layer)
            X = self.norm1(X + A)
            X = self.norm2(X + self.ffn(X))
        return X, alpha


def block_from_torch(layer: nn.TransformerEncoderLayer) -> TransformerBlock:
    """把 ``torch.nn.TransformerEncoderLayer`` 的参数逐个拷进本书的 ``TransformerBlock``。

    PyTorch 把 ``W_Q, W_K, W_V`` 竖着拼成一个 ``in_proj_weight (3d, d)``；其余名字一一对应。
    只支持 ReLU 激活（原论文的选择，也是 PyTorch 的默认值）。
    """
    attn = layer.self_attn
    d, h, d_ff = attn.embed_dim, attn.num_heads, layer.linear1.out_features
    if layer.activation_relu_or_gelu != 1:
        raise InputError("只支持 activation='relu' 的 TransformerEncoderLayer。")
    with torch.random.fork_rng(devices=[]):  # 参数马上被覆盖：新建时的随机初始化不该动全局随机数
        block = TransformerBlock(d, h, d_ff, norm_first=layer.norm_first).to(attn.in_proj_weight.dtype)
    W_q, W_k, W_v = attn.in_proj_weight.detach().chunk(3)
    b_q, b_k, b_v = attn.in_proj_bias.detach().chunk(3)
    pairs = [
        (block.attn.W_Q, W_q, b_q),
        (block.attn.W_K, W_k, b_k),
        (block.attn.W_V, W_v, b_v),
        (block.attn.W_O, attn.out_proj.weight, attn.out_proj.bias),
        (block.ffn.W_1, layer.linear1.weight, layer.linear1.bias),
        (block.ffn.W_2, layer.linear2.weight, layer.linear2.bias),
    ]
    with torch.no_grad():
        for linear, W, b in pairs:
            linear.weight.copy_(W)
            linear.bias.copy_(b)
        for ours, theirs in [(block.norm1, layer.norm1), (block.norm2, layer.norm2)]:
            ours.gamma.copy_(theirs.weight)
            ours.beta.copy_(theirs.bias)
            ours.eps = theirs.eps
    return block.eval()


# ---------------------------------------------------------------- decoder-only 模型
class TinyDecoder(nn.Module):
    """极小的 decoder-only 语言模型：Embedding × √d + 正弦位置 → N 个带因果掩码的块 → 词表上的 logits。

    ``ids (B, S)`` → ``logits (B, S, V)``；``return_weights=True`` 时另外返回每层的
    ``alpha (B, h, S, S_k)`` 列表。传入 ``cache`` 时 ``ids`` 只含新 token，位置从 ``cache.length`` 接着数。
    """

    def __init__(
        self, vocab_size: int, d_model: int = 64, n_heads: int = 2, d_ff: int = 128, n_layers: int = 2,
        *, norm_first: bool = True,
    ):
        super().__init__()
        self.config = {
            "vocab_size": vocab_size, "d_model": d_model, "n_heads": n_heads, "d_ff": d_ff, "n_layers": n_layers,
            "norm_first": norm_first,
        }
        self.d_model = d_model
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(
            TransformerBlock(d_model, n_heads, d_ff, norm_first=norm_first) for _ in range(n_layers)
        )
        # pre-norm 的残差流从不经过归一化，所以在输出之前补一次（post-norm 的最后一步已经归一化了）。
        self.norm_out = LayerNorm(d_model) if norm_first else nn.Identity()
        self.W_out = nn.Linear(d_model, vocab_size)

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None, *, return_weights: bool = False):
        S = ids.shape[1]
        offset = cache.length if cache is not None else 0
        X = self.embed(ids) * math.sqrt(self.d_model) + sinusoidal_positions(S, self.d_model, offset)
        mask = causal_mask(offset + S)[offset:]  # (S, offset+S)：新位置可以读取全部历史和自己之前的新位置
        weights = []
        for layer, block in enumerate(self.blocks):
            X, alpha = block(X, mask, cache, layer)
            weights.append(alpha)
        logits = self.W_out(self.norm_out(X))
        return (logits, weights) if return_weights else logits


def kv_cache_bytes(model: TinyDecoder, T: int, batch: int = 1, bytes_per_value: int = 4) -> int:
    """上下文长 ``T`` 时 KV cache 的大小：``2 (K 与 V) × 层数 × B × T × d_model × 每个数的字节``。"""
    c = model.config
    return 2 * c["n_layers"] * batch * T * c["d_model"] * bytes_per_value


def guard_decoder(model: TinyDecoder, S: int, batch: int = 1) -> None:
    """解码（或度量一次解码）前估算最大的一块内存：每层的注意力分数 ``B·h·S·S`` 加上 KV cache。"""
    if not isinstance(S, int) or S < 1:
        raise InputError(f"序列长度必须是正整数，现在是 {S!r}。")
    c = model.config
    scores = 4 * batch * c["n_heads"] * S * S
    guard_memory(f"长度 {S} 的解码", scores + kv_cache_bytes(model, S, batch))


@torch.no_grad()
def generate(model: TinyDecoder, prompt: torch.Tensor, n_new: int, *, use_cache: bool = True):
    """贪心解码 ``n_new`` 个 token。``prompt (B, S)`` → ``(ids (B, S + n_new), 每一步的 logits 列表)``。

    ``use_cache=False``：每一步把到目前为止的整段序列从头算一遍，只取最后一个位置的 logits；
    ``use_cache=True``：先 Prefill 整段提示，之后每步只送入一个新 token，历史的 K、V 从缓存里读。
    两种做法在数学上完全相同，只是第二种不重复计算。
    """
    guard_decoder(model, prompt.shape[1] + n_new, prompt.shape[0])
    ids, step_logits = prompt, []
    cache = KVCache() if use_cache else None
    new = prompt
    for _ in range(n_new):
        logits = model(new, cache) if use_cache else model(ids)
        last = logits[:, -1]
        step_logits.append(last)
        nxt = last.argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
        new = nxt
    return ids, step_logits
