"""第 1.6 节：Transformer 的结构选择。

* 部件：多头自注意力（建立在 ``seqlab.attention.scaled_dot_product_attention`` 之上）、逐位置前馈网络、
  层归一化、正弦位置表示；
* 组装：一个 Transformer 块，归一化放在残差之后（post-norm，原论文）或之前（pre-norm，许多现代模型），
  两种都与 ``torch.nn.TransformerEncoderLayer`` 逐数比对；
* 一个极小的 decoder-only 语言模型，带 KV cache 的逐 token 解码；
* 一个 2 层模型在“循环复读”任务上的训练配方（第二层读取第一层已经混合过的表示）；
* 度量：Prefill 与 Decode 的用时和运算量，以及 Vaswani 等（2017）表 1 里的三项计数。

本模块只依赖 torch；画图在 ``seqlab.explorers`` 里。
"""

from __future__ import annotations

import contextlib
import math
import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from seqlab.attention import causal_mask, scaled_dot_product_attention
from seqlab.errors import InputError, guard_memory
from seqlab.rnn import ElmanRNN, graph_depth, phi_fn
from seqlab.runtime import cpu_clock, single_thread, timing_samples
from seqlab.train import builder, fit, recipe, save


# ---------------------------------------------------------------- 位置表示
def sinusoidal_positions(S: int, d_model: int, offset: int = 0) -> torch.Tensor:
    """正弦位置表示，形状 ``(S, d_model)``，第 ``t`` 行对应绝对位置 ``offset + t``：

    ``PE[pos, 2i] = sin(pos / 10000^(2i/d))``，``PE[pos, 2i+1] = cos(pos / 10000^(2i/d))``。
    """
    if d_model % 2:
        raise InputError(f"正弦位置表示要求 d_model 是偶数，现在是 {d_model}。")
    pos = torch.arange(offset, offset + S, dtype=torch.float32)[:, None]  # (S, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)  # (d/2,)
    angle = pos / 10000 ** (two_i / d_model)  # (S, d/2)
    PE = torch.zeros(S, d_model)
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


def _guard_decoder(model: TinyDecoder, S: int, batch: int = 1) -> None:
    """解码前估算最大的一块内存：每层的注意力分数 ``B·h·S·S`` 加上 KV cache。"""
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
    _guard_decoder(model, prompt.shape[1] + n_new, prompt.shape[0])
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


# ---------------------------------------------------------------- 训练任务：循环复读
COPY_TOKENS = list("书读过完吃苹果天雨山水花月星云风雪河海林")  # 20 个互不相同的字
BOS = "〈始〉"
COPY_VOCAB = [BOS] + COPY_TOKENS
COPY_LEN = 16  # BOS 之后的序列长度
PERIOD_RANGE = (3, 8)


def copy_task_batch(n: int, generator: random.Random) -> tuple[torch.Tensor, torch.Tensor]:
    """“循环复读”任务：随机抽 L 个不同的字（L 在 3…8 之间随机），循环重复到 16 个字，前面加 〈始〉。

    返回 ``ids (n, 17)`` 与 ``graded (n, 16)``：``graded[b, t]`` 为真表示位置 ``t`` 的下一个字可以由
    前文推出（当前字是重复出现的，它上一次出现时后面跟的字就是答案）。周期 L 每句不同，
    所以模型不能靠“往回数固定几格”作答，必须先找到当前字上一次出现的位置。
    """
    ids = torch.zeros(n, COPY_LEN + 1, dtype=torch.long)
    graded = torch.zeros(n, COPY_LEN, dtype=torch.bool)
    for b in range(n):
        L = generator.randint(*PERIOD_RANGE)
        period = generator.sample(range(1, len(COPY_VOCAB)), L)
        ids[b, 1:] = torch.tensor([period[t % L] for t in range(COPY_LEN)])
        graded[b, L + 1 :] = True  # 位置 t（含 〈始〉）的字是第 2 次及以后出现
    return ids, graded


def encode_copy(text: str) -> torch.Tensor:
    """把只含 ``COPY_TOKENS`` 的字符串编码为 ``(1, 1 + len)`` 的 id（开头加 〈始〉）。"""
    bad = sorted({ch for ch in text if ch not in COPY_TOKENS})
    if bad:
        raise InputError(f"这个模型只认识这 {len(COPY_TOKENS)} 个字：{''.join(COPY_TOKENS)}；"
                         f"这些字不在其中：{''.join(bad)}")
    return torch.tensor([[0] + [COPY_VOCAB.index(ch) for ch in text]])


def copy_loss(model: TinyDecoder, ids: torch.Tensor, graded: torch.Tensor) -> torch.Tensor:
    logits = model(ids[:, :-1])
    return nn.functional.cross_entropy(logits[graded], ids[:, 1:][graded])


@torch.no_grad()
def copy_accuracy(model: TinyDecoder, ids: torch.Tensor, graded: torch.Tensor) -> float:
    """可推出的位置上，贪心预测等于正确答案的比例。"""
    pred = model(ids[:, :-1]).argmax(-1)
    return (pred[graded] == ids[:, 1:][graded]).float().mean().item()


def repeat_twice(segment: str) -> torch.Tensor:
    """把一段字重复两遍、前面加 〈始〉：``(1, 1 + 2L)`` 的 id。段长 L 须在训练见过的 3…8 之间。"""
    lo, hi = PERIOD_RANGE
    if not lo <= len(segment) <= hi:
        raise InputError(f"这段字有 {len(segment)} 个，模型训练时只见过 {lo} 到 {hi} 个字的段落。")
    if len(set(segment)) < len(segment):
        raise InputError("段落里的字不能重复（训练数据里每段的字互不相同）。")
    return encode_copy(segment * 2)


def head_scores(weights: list[torch.Tensor], L: int) -> dict[tuple[int, int], dict[str, float]]:
    """对 ``repeat_twice`` 得到的序列（段长 ``L``），给每个 (层, 头) 打两个分：

    * ``previous``：每个位置放在“前一个位置”上的平均权重（读前一个字的头）；
    * ``induction``：第二遍里每个位置放在“它上一次出现的位置的下一格”上的平均权重（复读头）。
    ``weights`` 是 ``TinyDecoder(..., return_weights=True)`` 返回的列表，每项 ``(1, h, S, S)``。
    """
    S = 1 + 2 * L
    scores = {}
    for layer, alpha in enumerate(weights):
        for head in range(alpha.shape[1]):
            a = alpha[0, head]
            prev = torch.stack([a[t, t - 1] for t in range(1, S)]).mean().item()
            ind = torch.stack([a[t, t - L + 1] for t in range(L + 1, S)]).mean().item()
            scores[(layer, head)] = {"previous": prev, "induction": ind}
    return scores


@contextlib.contextmanager
def attention_knocked_out(model: TinyDecoder, layer: int) -> Iterator[None]:
    """在 ``with`` 块内把第 ``layer`` 层（从 0 数）自注意力的输出换成 0：该层不再跨位置交换信息，
    只剩残差和 FFN。用来检验后面的层是否依赖这一层搬运过来的信息。"""

    def zero(_module, _inputs, output):
        out, alpha = output
        return torch.zeros_like(out), alpha

    handle = model.blocks[layer].attn.register_forward_hook(zero)
    try:
        yield
    finally:
        handle.remove()


INDUCTION_CONFIG = {"vocab_size": len(COPY_VOCAB), "d_model": 64, "n_heads": 2, "d_ff": 128, "n_layers": 2, "norm_first": True}
INDUCTION_SEED = 2017


def _batches(seed: int, n: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    rng = random.Random(seed)
    while True:
        yield copy_task_batch(n, rng)


@recipe("transformer_induction", tolerances={"accuracy": 0.02, "final_loss": 0.02})
def train_induction(steps: int = 900, progress: bool = False):
    """固定种子训练 2 层、每层 2 个头的 pre-norm 模型做“循环复读”，保存检查点。

    训练时只用 1 个线程：这么小的矩阵用 2 个线程几乎不会更快，而机器上还有别的进程时，
    线程互相等待会让每一步慢上十倍。
    """
    torch.manual_seed(INDUCTION_SEED)
    model = TinyDecoder(**INDUCTION_CONFIG)
    with single_thread():
        log = fit(model, _batches(INDUCTION_SEED, 64), copy_loss, steps=steps, lr=3e-3, progress=progress,
                  desc="循环复读")
    test = copy_task_batch(512, random.Random(INDUCTION_SEED + 1))
    meta = {"seed": INDUCTION_SEED, "steps": steps, "seconds": round(log.seconds, 1),
                "final_loss": log.losses[-1], "accuracy": copy_accuracy(model, *test)}
    return save("transformer_induction", model, INDUCTION_CONFIG, meta)


@builder("transformer_induction")
def build_tiny_decoder(config: dict) -> TinyDecoder:
    """由检查点的 config 新建（未训练的）``TinyDecoder``。"""
    return TinyDecoder(**config)


# ---------------------------------------------------------------- 度量：运算量与用时
MATMULS = frozenset({"linear", "matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "addmm", "baddbmm"})


class MatmulFlops(TorchFunctionMode):
    """在 ``with`` 块内数矩阵乘法的浮点运算数：输出的每个元素要做 k 次乘加，记 ``2·k`` 次运算。

    只数矩阵乘法（``nn.Linear``、``@``、``bmm`` 等）——模型里几乎全部的运算量都在这里；
    Embedding 查表、softmax、归一化、逐元素的加法都不计。这与 PyTorch 的 ``FlopCounterMode``
    的约定相同，但它不需要加载编译器相关的模块，第一次使用时快得多。
    """

    def __init__(self):
        super().__init__()
        self.flops = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if name in MATMULS:
            # 收缩的那一维 k：A 的最后一维（addmm/baddbmm 的 A 是第 2 个参数，__rmatmul__ 的 A 在后面）
            A = args[1] if name in {"__rmatmul__", "addmm", "baddbmm"} else args[0]
            self.flops += 2 * out.numel() * A.shape[-1]
        return out


def count_flops(fn: Callable[[], object]) -> int:
    """运行 ``fn()``，返回其中矩阵乘法的浮点运算数（见 ``MatmulFlops``）。"""
    with MatmulFlops() as counter:
        fn()
    return counter.flops


@dataclass
class PrefillDecode:
    """同样 ``S`` 个 token 的三种处理方式（``MODES``）的实测结果。

    ``samples[mode]`` 是每次重复占用的 CPU 时间（秒），``seconds[mode]`` 是它们的中位数；
    ``wall[mode]`` 是同时记下的墙钟时间（机器繁忙时包含排队等 CPU 的时间）；
    ``flops[mode]`` 是数出来的矩阵乘法运算量（与机器忙闲无关，没有抖动）。
    """

    S: int
    samples: dict[str, list[float]]
    wall: dict[str, list[float]]
    flops: dict[str, int]

    @property
    def seconds(self) -> dict[str, float]:
        return {m: statistics.median(v) for m, v in self.samples.items()}


MODES = ("prefill", "decode_cache", "decode_recompute")


def _run_mode(model: TinyDecoder, ids: torch.Tensor, mode: str) -> None:
    S = ids.shape[1]
    if mode == "prefill":  # 一次前向同时处理全部 S 个位置
        model(ids)
    elif mode == "decode_cache":  # S 步，每步只送入一个 token，历史 K、V 从缓存读
        cache = KVCache()
        for t in range(S):
            model(ids[:, t : t + 1], cache)
    elif mode == "decode_recompute":  # S 步，每步把前 t+1 个 token 整段重算
        for t in range(S):
            model(ids[:, : t + 1])
    else:
        raise InputError(f"未知的模式 {mode!r}；可选 {MODES}。")


@torch.no_grad()
def measure_prefill_decode(model: TinyDecoder, S: int, *, repeats: int = 5, seed: int = 0) -> PrefillDecode:
    """对同一段随机的 ``S`` 个 token，比较：一次 Prefill；逐个生成（有 KV cache）；逐个生成（每步重算）。

    每种方式重复 ``repeats`` 次，记下 CPU 时间（见 ``cpu_clock``）和墙钟时间。三种方式轮流计时
    （而不是先把一种测完再测下一种），机器忙闲的变化就会大致均匀地落在三者头上。
    """
    _guard_decoder(model, S)
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(model.config["vocab_size"], (1, S), generator=g)
    samples: dict[str, list[float]] = {m: [] for m in MODES}
    wall: dict[str, list[float]] = {m: [] for m in MODES}
    with single_thread():
        for m in MODES:  # 热身
            _run_mode(model, ids, m)
        for _ in range(repeats):
            for m in MODES:
                start, start_wall = cpu_clock(), time.perf_counter()
                _run_mode(model, ids, m)
                samples[m].append(cpu_clock() - start)
                wall[m].append(time.perf_counter() - start_wall)
        flops = {m: count_flops(lambda m=m: _run_mode(model, ids, m)) for m in MODES}
    return PrefillDecode(S, samples, wall, flops)


@torch.no_grad()
def decode_step_cost(model: TinyDecoder, T: int, *, repeats: int = 7, seed: int = 0) -> dict:
    """上下文已有 ``T`` 个 token 时，生成下一个 token 的单步代价。

    返回 ``seconds_cache``、``seconds_recompute``（CPU 时间的中位数，秒）、``samples_cache``、``samples_recompute``
    （每次的读数）与 ``flops_cache``、``flops_recompute``：有缓存时只为 1 个新 token 做投影与 FFN，
    再读 T+1 个 K、V；没有缓存时把 T+1 个 token 整段重算。
    """
    _guard_decoder(model, T + 1)
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(model.config["vocab_size"], (1, T + 1), generator=g)
    cache = KVCache()
    model(ids[:, :T], cache)

    def step_cache():
        model(ids[:, T:], cache)
        for layer in range(len(cache.K)):  # 撤销这一步追加的 K、V，保证每次计时的上下文长度相同
            cache.K[layer], cache.V[layer] = cache.K[layer][..., :T, :], cache.V[layer][..., :T, :]

    def step_recompute():
        model(ids)

    with single_thread():
        samples = {
            "cache": timing_samples(step_cache, 3 * repeats),  # 单步很短，多测几次压住抖动
            "recompute": timing_samples(step_recompute, repeats),
        }
        flops = {"cache": count_flops(step_cache), "recompute": count_flops(step_recompute)}
    out: dict = {}
    for key in ("cache", "recompute"):
        out[f"seconds_{key}"] = statistics.median(samples[key])
        out[f"samples_{key}"] = samples[key]
        out[f"flops_{key}"] = flops[key]
    return out


@dataclass
class Span:
    """时间线上的一段：第 ``layer`` 层处理了位置 ``first…last``，从 ``start`` 到 ``end``（毫秒）。"""

    layer: int
    first: int
    last: int
    start: float
    end: float


@torch.no_grad()
def record_timeline(model: TinyDecoder, S: int, mode: str, *, runs: int = 5, seed: int = 0) -> list[Span]:
    """实际运行 ``mode``（见 ``MODES``），用钩子记下每一层每一次调用处理了哪些位置、用了多久。

    时间是本线程占用的 CPU 时间（见 ``cpu_clock``），单位毫秒。同一件事连做 ``runs`` 次；每一次调用
    （以及它与前一次调用之间的空档）取这几次里最短的用时，再首尾相接排成时间线：干扰只会把某一次
    拉长、不会让它变短，所以最短用时最接近“没有干扰”时的样子；哪些调用存在、各自覆盖哪些位置、
    谁等谁，每次运行都完全一样。矩形之间的空档是块以外的工作：Embedding、位置向量、输出层和
    Python 的循环本身。
    """
    _guard_decoder(model, S)
    if mode not in MODES:
        raise InputError(f"未知的模式 {mode!r}；可选 {MODES}。")
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(model.config["vocab_size"], (1, S), generator=g)
    calls: list[tuple[int, int, int, float, float]] = []  # (层, 第一个位置, 最后一个位置, 开始, 结束)
    clock: dict[int, float] = {}
    state = {"first": 0}

    def before(layer):
        def hook(_m, inputs):
            clock[layer] = cpu_clock()
        return hook

    def after(layer):
        def hook(_m, inputs, output):
            n = inputs[0].shape[1]
            calls.append((layer, state["first"], state["first"] + n - 1, clock[layer], cpu_clock()))
        return hook

    handles = []
    for layer, block in enumerate(model.blocks):
        handles.append(block.register_forward_pre_hook(before(layer)))
        handles.append(block.register_forward_hook(after(layer)))
    recorded = []
    try:
        with single_thread():
            _run_mode(model, ids, mode)  # 预热，不记录
            for _ in range(max(1, runs)):
                calls.clear()
                if mode == "decode_cache":
                    cache = KVCache()
                    for t in range(S):
                        state["first"] = t
                        model(ids[:, t : t + 1], cache)
                else:
                    state["first"] = 0
                    _run_mode(model, ids, mode)
                recorded.append(list(calls))
    finally:
        for h in handles:
            h.remove()
    spans, now = [], 0.0
    for i, (layer, first, last, _, _) in enumerate(recorded[0]):
        gap = 0.0 if i == 0 else min(run[i][3] - run[i - 1][4] for run in recorded)
        busy = min(run[i][4] - run[i][3] for run in recorded)
        start = now + 1000 * gap
        now = start + 1000 * busy
        spans.append(Span(layer, first, last, start, now))
    return spans


# ---------------------------------------------------------------- Vaswani 等（2017）表 1
def graph_distance(output: torch.Tensor, leaf: torch.Tensor) -> int:
    """从输入 ``leaf`` 到 ``output`` 的最短依赖链有多少个运算：信息最少要经过几步才能从一处到达另一处。"""
    frontier, seen, steps = [output.grad_fn], set(), 0
    while frontier:
        nxt = []
        for node in frontier:
            if node is None or node in seen:
                continue
            seen.add(node)
            if getattr(node, "variable", None) is leaf:
                return steps
            nxt.extend(c for c, _ in node.next_functions)
        frontier, steps = nxt, steps + 1
    raise InputError("output 不依赖于这个输入。")


def table1_counts(n: int, d: int, *, seed: int = 0) -> dict[str, dict[str, int]]:
    """在长度 ``n``、宽度 ``d`` 上实测表 1 的三项，分别对自注意力层与循环层（``seqlab.rnn.ElmanRNN``）。

    运算量按两种口径各数一次，两种口径对两种层一视同仁：

    * ``flops_mixing``：只数**跨位置混合**的部分——自注意力是 ``softmax(QKᵀ/√d)V`` 的两次矩阵乘
      （``4n²d``），循环层是每步的 ``W_h h_{t-1}``（``2nd²``）；逐位置的投影（``W_Q``、``W_K``、``W_V``、
      ``W_O`` 与循环层的 ``W_x x_t``）都不计；
    * ``flops_layer``：整层的全部矩阵乘法——自注意力再加四个投影（``8nd²``），循环层再加 ``W_x x_t``（``2nd²``）；
    * ``sequential``：整张计算图最长依赖链的运算数（必须串行的步数）；
    * ``path``：从第 1 个位置的输入到第 n 个位置输出的最短依赖链的运算数。
    """
    guard_memory(f"n = {n} 的表 1 计数", 4 * n * n + 8 * n * d * 4)
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(d, generator=g, requires_grad=True) for _ in range(n)]
    X = torch.stack(xs)[None]  # (1, n, d)
    torch.manual_seed(seed)
    attn, rnn = MultiHeadSelfAttention(d, 1), ElmanRNN(d, d)
    Q, K, V = (W(X) for W in (attn.W_Q, attn.W_K, attn.W_V))
    Y_attn, _ = attn(X)

    def run_rnn() -> torch.Tensor:  # 一步一步地喂，每个 x_t 单独进入计算图，图才能分辨“哪个位置连到哪个位置”
        h = torch.zeros(d)
        for x_t in xs:
            h, _ = rnn.step(x_t, h)
        return h

    U = X[0] @ rnn.W_x.T  # (n, d)：逐位置的 W_x x_t，可以先对所有位置一次算完

    def recurrence_only() -> None:  # 真正必须一步接一步的部分：h_t = φ(u_t + W_h h_{t-1} + b)
        h = torch.zeros(d)
        for u_t in U:
            h = phi_fn(u_t + h @ rnn.W_h.T + rnn.b, rnn.phi)

    h_n = run_rnn()
    return {
        "self_attention": {
            "flops_mixing": count_flops(lambda: scaled_dot_product_attention(Q, K, V)),
            "flops_layer": count_flops(lambda: attn(X)),
            "sequential": graph_depth(Y_attn),
            "path": graph_distance(Y_attn[0, -1], xs[0]),
        },
        "recurrent": {
            "flops_mixing": count_flops(recurrence_only),
            "flops_layer": count_flops(run_rnn),
            "sequential": graph_depth(h_n),
            "path": graph_distance(h_n, xs[0]),
        },
    }


# ---------------------------------------------------------------- 算术强度：每搬 1 字节做多少次运算
@dataclass(frozen=True)
class Intensity:
    """一次前向的运算量与搬运量。``flops``：矩阵乘法的浮点运算数（``count_flops`` 数出）；
    ``weight_bytes``：这次前向读到的权重（矩阵乘法用到的全部参数，每个至少读一遍，Embedding 只读用到的行）；
    ``cache_bytes``：读写的 KV cache（Prefill 写入 S 个位置，一步 Decode 读入 T 个旧位置、写入 1 个新位置）。"""

    flops: int
    weight_bytes: int
    cache_bytes: int

    @property
    def bytes_moved(self) -> int:
        return self.weight_bytes + self.cache_bytes

    @property
    def flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved


def _matmul_weight_bytes(model: TinyDecoder) -> int:
    """每次前向都要完整读一遍的参数：Embedding 表以外的全部参数（真实张量的字节数）。"""
    return sum(p.nbytes for name, p in model.named_parameters() if not name.startswith("embed."))


@torch.no_grad()
def arithmetic_intensity(model: TinyDecoder, S: int, mode: str) -> Intensity:
    """``mode = "prefill"``：一次处理 ``S`` 个 token；``mode = "decode"``：上下文已有 ``S`` 个 token 时的一步。

    运算量是在真实模型上数出来的；字节数来自真实张量：参数的 ``nbytes``、前向前后 KV cache 的 ``nbytes()``，
    以及 Embedding 表里真正被读到的行。
    """
    _guard_decoder(model, S + 1)
    ids = torch.zeros(1, S + 1, dtype=torch.long)
    row_bytes = model.embed.weight[0].nbytes
    cache = KVCache()
    if mode == "prefill":
        flops = count_flops(lambda: model(ids[:, :S], cache))
        return Intensity(flops, _matmul_weight_bytes(model) + S * row_bytes, cache.nbytes())
    if mode == "decode":
        model(ids[:, :S], cache)
        flops = count_flops(lambda: model(ids[:, S:], cache))
        return Intensity(flops, _matmul_weight_bytes(model) + row_bytes, cache.nbytes())
    raise InputError(f"未知的模式 {mode!r}；可选 'prefill' 或 'decode'。")
