"""第 1.5 节：序列内部的读取——自注意力、因果掩码与 O(S²) 的代价。

本模块按正文的顺序包含：

* ``scaled_dot_product_attention`` 与 ``causal_mask``：公式的逐步实现（第 1.6 节的多头注意力也建立在它们之上）；
* ``SelfAttention``：由同一个 ``X`` 得到 ``Q = X W_Q``、``K = X W_K``、``V = X W_V`` 的单头自注意力；
* 代价模型：query–key 配对数 ``S²`` / ``S(S+1)/2``，以及分数矩阵在 batch × heads × layers × dtype 下的内存；
* 实测：注意力与 RNN 的用时、峰值内存随 ``S`` 的变化，以及对数—对数坐标下拟合的斜率；
* 路径长度：第 1 个位置的信息到达第 ``S`` 个位置，RNN 要经过 ``S-1`` 次传递，自注意力只要 1 层；
* 「它」指代的玩具模型 ``PronounResolver`` 及其训练配方 ``winograd_attention``。

只依赖 torch（分层约定：这里不导入 plotly 或 ipywidgets）。
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from seqlab.corpus import winograd
from seqlab.errors import DEFAULT_BUDGET_BYTES, InputError, guard_memory
from seqlab.runtime import cpu_clock, native_stderr_silenced, single_thread, timing_samples
from seqlab.train import builder, fit, recipe, save


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


def _check_length(S) -> int:
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
    S = _check_length(S)
    return S * (S + 1) // 2 if causal else S * S


def score_bytes(S: int, *, batch: int = 1, heads: int = 1, layers: int = 1, dtype: str = "float32") -> int:
    """朴素实现里分数矩阵占用的字节数：``batch × heads × layers × S² × 每个数的字节数``。

    训练时每一层、每一个头的 ``(S, S)`` 权重都要留到反向传播，所以乘上 ``layers``。
    因果掩码只让一半的配对**有用**，朴素实现仍然存下整个 ``S × S`` 矩阵，所以这里不打折。
    """
    S = _check_length(S)
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


# ---------------------------------------------------------------- 实测：用时与峰值内存
def best_seconds(fn: Callable[[], object], repeats: int = 5, clock: Callable[[], float] = cpu_clock) -> float:
    """先预热一次，再运行 ``repeats`` 次，返回最快一次的用时（秒，默认是本线程的 CPU 时间）。

    取最小值而不是平均值：比最快那次慢出来的部分，来自缓存被挤掉等与算法无关的干扰。
    CPU 时间要求计算在当前线程里进行，见 ``measure_scaling`` 的单线程。
    """
    return min(timing_samples(fn, repeats, clock))


def peak_memory_bytes(fn: Callable[[], object]) -> int:
    """运行 ``fn`` 一次，返回期间 PyTorch 在 CPU 上**新分配**内存的峰值（字节）。

    用 ``torch.profiler`` 记录每一次分配与释放，按时间顺序累加，取最大值——这是实测，
    不是按公式推算。
    """
    from torch.profiler import ProfilerActivity, profile

    with native_stderr_silenced(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    events.sort(key=lambda e: e.start_ns())
    live = peak = 0
    for e in events:
        live += e.nbytes()
        peak = max(peak, live)
    return peak


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """在对数—对数坐标上做最小二乘直线拟合，返回斜率（``y ∝ x^斜率``）。"""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("至少需要两个点，且 x、y 个数相同")
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly))
    den = sum((a - mx) ** 2 for a in lx)
    return num / den


@dataclass
class ScalingResult:
    """``measure_scaling`` 的结果：每个长度一行。时间单位秒，内存单位字节。

    用时随机器负载起伏，只用来显示；内存（分配的字节）与运算量（PyTorch 的 ``FlopCounterMode``
    数出来的浮点运算数）与负载无关，可以断言。
    """

    lengths: list[int]
    attention_seconds: list[float]
    rnn_seconds: list[float]
    attention_peak: list[int]
    rnn_peak: list[int]
    attention_flops: list[int]
    rnn_flops: list[int]
    d_model: int

    def slopes(self, fit_from: int = 0) -> dict[str, float]:
        """从第 ``fit_from`` 个长度起拟合四条曲线的对数—对数斜率。"""
        xs = self.lengths[fit_from:]
        return {
            "attention_time": loglog_slope(xs, self.attention_seconds[fit_from:]),
            "rnn_time": loglog_slope(xs, self.rnn_seconds[fit_from:]),
            "attention_memory": loglog_slope(xs, self.attention_peak[fit_from:]),
            "rnn_memory": loglog_slope(xs, self.rnn_peak[fit_from:]),
            "attention_flops": loglog_slope(xs, self.attention_flops[fit_from:]),
            "rnn_flops": loglog_slope(xs, self.rnn_flops[fit_from:]),
        }


def measure_scaling(
    lengths: Sequence[int] = (128, 256, 512, 1024, 2048),
    d_model: int = 64,
    repeats: int = 5,
    seed: int = 0,
    budget: float = DEFAULT_BUDGET_BYTES,
) -> ScalingResult:
    """在本机上实测一层自注意力与一层 RNN 的前向用时和峰值内存随 ``S`` 的变化。

    用时是单线程下这一线程占用的 CPU 时间（见 ``best_seconds``）。两者的宽度都是 ``d_model``、batch 为 1、不求梯度。自注意力要物化 ``(S, S)`` 的分数与权重，
    RNN 只保留 ``(S, d_model)`` 的状态序列。运行前先按最大的 ``S`` 估算内存（分数、权重各一份，
    再加线性项），超过 ``budget`` 就拒绝。
    """
    lengths = [_check_length(int(S)) for S in lengths]
    S_max = max(lengths)
    estimate = 3 * S_max * S_max * 4 + 8 * S_max * d_model * 4
    guard_memory(f"S = {S_max} 的用时与内存实测", estimate, budget)
    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        attention = SelfAttention(d_model)
        rnn = nn.RNN(d_model, d_model, batch_first=True)
    result = ScalingResult(lengths, [], [], [], [], [], [], d_model)
    with single_thread():  # 单线程：曲线反映算法本身的代价，不受线程调度和其他进程的干扰
        for S in lengths:
            _measure_one(result, attention, rnn, torch.randn(1, S, d_model, generator=g), repeats)
    return result


def _measure_one(result: ScalingResult, attention: SelfAttention, rnn: nn.RNN, X: torch.Tensor, repeats: int):
    def run_attention():
        with torch.no_grad():
            return attention(X)[0]

    def run_rnn():
        with torch.no_grad():
            return rnn(X)[0]

    result.attention_seconds.append(best_seconds(run_attention, repeats))
    result.rnn_seconds.append(best_seconds(run_rnn, repeats))
    result.attention_peak.append(peak_memory_bytes(run_attention))
    result.rnn_peak.append(peak_memory_bytes(run_rnn))
    result.attention_flops.append(counted_flops(run_attention))
    result.rnn_flops.append(counted_flops(run_rnn))


def counted_flops(fn: Callable[[], object]) -> int:
    """运行 ``fn`` 一次，返回 PyTorch 的 ``FlopCounterMode`` 数出的浮点运算数（与机器忙闲无关）。"""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


# ---------------------------------------------------------------- 路径长度
def rnn_parallel_sweeps(rnn: nn.RNN, X: torch.Tensor, sweeps: int) -> torch.Tensor:
    """把 RNN 的递推改写成“所有位置同时更新”的若干轮，看信息每一轮能走多远。

    第 0 轮每个位置只读自己的输入：``H⁽⁰⁾_t = tanh(W_x x_t + b)``；之后每一轮所有位置**同时**做
    ``H⁽ᵏ⁾_t = tanh(W_x x_t + W_h H⁽ᵏ⁻¹⁾_{t-1} + b)``（``H_0`` 取零）。每一轮只把信息向右移一个位置，
    所以第 k 轮后 ``H⁽ᵏ⁾_t`` 与真正的 ``h_t`` 在 ``t ≤ k+1`` 处相同，做满 ``S-1`` 轮才与 ``nn.RNN`` 一致。

    形状：``X (S, d_in)`` → ``(S, d_h)``。只支持单层、tanh 的 ``nn.RNN``。
    """
    W_x, W_h = rnn.weight_ih_l0, rnn.weight_hh_l0
    b = rnn.bias_ih_l0 + rnn.bias_hh_l0
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
    S = _check_length(S)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        rnn = nn.RNN(d, d, batch_first=True)
        X = torch.randn(S, d)

    def sweeps_from(x1: torch.Tensor, k: int) -> torch.Tensor:
        return rnn_parallel_sweeps(rnn, torch.cat([x1[None], X[1:]]), k)

    rows = []
    with single_thread():
        for k in range(S):
            J = _jacobian(lambda x1, k=k: sweeps_from(x1, k), X[0])  # (S, d, d)
            rows.append(J.flatten(1).norm(dim=1))  # (S,)：每个位置对 x_1 的导数范数
    return torch.stack(rows).detach()


def attention_reach(S: int, d: int = 8, seed: int = 0, causal: bool = True) -> torch.Tensor:
    """第 0 行是输入本身（只有位置 1 依赖 ``x_1``），第 1 行是 ``‖∂y_t / ∂x_1‖``：**一层**自注意力之后的影响。

    形状 ``(2, S)``，与 ``rnn_reach`` 的行含义一致：第 k 行 = 做了 k 次跨位置传递之后。
    """
    S = _check_length(S)
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
    * 第 2 层：只取注意力权重。「它」那一行落在名词 A 上的权重之和与落在名词 B 上的之和比大小，
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

    ``A2 (B, S, S)``，``pronoun (B,)`` 是「它」的下标，``spans (B, 2, 2)`` 是名词 A、B 的 ``[起, 止)``。
    返回 ``(B, 2)``：第 0 列是 A 得到的权重，第 1 列是 B 的。
    """
    row = A2[torch.arange(len(pronoun)), pronoun]  # (B, S)
    positions = torch.arange(row.shape[-1])
    inside = (positions[None, None, :] >= spans[..., :1]) & (positions[None, None, :] < spans[..., 1:])
    return (row[:, None, :] * inside).sum(-1)


WINOGRAD_CHECKPOINT = "winograd_attention"


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


def _winograd_batches(vocab, seed: int, batch_size: int, unk_rate: float) -> Iterator[tuple]:
    """无穷的训练批次（只用训练名词）。名词里的字以 ``unk_rate`` 的概率换成“未知”，逼模型看结构而不是背名词。"""
    g = torch.Generator().manual_seed(seed)
    for step in range(10**9):
        batch = encode_examples(winograd.sample(batch_size, split="train", seed=seed * 100_003 + step), vocab)
        S = batch.ids.shape[1]
        positions = torch.arange(S)
        in_noun = ((positions >= batch.spans[:, :, :1]) & (positions < batch.spans[:, :, 1:])).any(1)
        drop = in_noun & (torch.rand(batch.ids.shape, generator=g) < unk_rate)
        yield batch.ids.masked_fill(drop, 1), batch.pronoun, batch.spans, batch.answer


def winograd_loss(model: PronounResolver, ids, pronoun, spans, answer) -> torch.Tensor:
    """``-log``（「它」那一行落在正确名词上的权重之和）：把整行权重推向正确的名词。"""
    _, A2 = model(ids)
    mass = referent_mass(A2, pronoun, spans)
    correct = mass[torch.arange(len(answer)), answer]
    return -torch.log(correct + 1e-6).mean()


def resolver_accuracy(
    model: PronounResolver, examples: Sequence[winograd.Example], vocab: Sequence[str]
) -> float:
    """在 ``examples`` 上的准确率：「它」一行里正确名词分到的权重多于另一个名词即算对。"""
    batch = encode_examples(examples, vocab)
    with torch.no_grad(), single_thread():
        _, A2 = model(batch.ids)
    mass = referent_mass(A2, batch.pronoun, batch.spans)
    return float((mass.argmax(-1) == batch.answer).float().mean())


@dataclass(frozen=True)
class SwapResult:
    """对调检验里的一格：句式 ``template``、关键词 ``word``、名词来自 ``split``。

    ``n`` 句都把两个名词池对调（原来坐第二个槽位的那一类名词放到第一个槽位，反之亦然），其余一字不改；
    ``second_slot`` 是模型把「它」指给第二个槽位的比例，``follows_slot`` 是它仍按训练时的槽位规则回答的比例。
    """

    template: str
    word: str
    split: str
    n: int
    second_slot: float
    follows_slot: float


def swap_test(model: PronounResolver, vocab: Sequence[str], split: str) -> list[SwapResult]:
    """对两个槽位来自不同名词池的每种句式，枚举 ``split`` 里的全部名词对，把两类名词对调后让模型回答。

    句式、关键词、「它」的位置都和训练时一样，变的只有坐在各个槽位上的是哪一类名词。如果模型只按句式和
    槽位作答，``follows_slot`` 应当是 1；它离 1 越远，说明答案越多地由名词本身决定。
    """
    results = []
    for t in winograd.TEMPLATES:
        if t.pool_a == t.pool_b:  # 两个槽位同一类名词，对调没有意义
            continue
        pairs = [(b, a) for a in winograd.noun_split(t.pool_a, split) for b in winograd.noun_split(t.pool_b, split)]
        for word in t.words:
            batch = encode_examples([winograd.make_example(t.key, a, b, word) for a, b in pairs], vocab)
            with torch.no_grad(), single_thread():
                mass = referent_mass(model(batch.ids)[1], batch.pronoun, batch.spans)
            picks_second = mass[:, 1] > mass[:, 0]
            rule = torch.full_like(picks_second, t.words.index(word) == 1)  # 训练时这个关键词指向的槽位
            results.append(SwapResult(
                t.key, word, split, len(pairs),
                float(picks_second.float().mean()), float((picks_second == rule).float().mean()),
            ))
    return results


WINOGRAD_CONFIG = {"d_model": 32, "d_ff": 64, "max_len": 24}


def train_pronoun_resolver(
    seed: int = 0, steps: int = 1200, batch_size: int = 64, progress: bool = True
) -> tuple[PronounResolver, dict]:
    """从固定种子训练「它」模型（2 核 CPU 上十来秒），返回 ``(模型, meta)``。"""
    vocab = winograd.vocabulary()
    torch.manual_seed(seed)
    model = PronounResolver(len(vocab), **WINOGRAD_CONFIG)
    with single_thread():  # 模型极小：单线程最快，而且不和同一台机器上的其他进程抢核
        log = fit(
            model,
            _winograd_batches(vocab, seed, batch_size, unk_rate=0.15),
            winograd_loss,
            steps=steps,
            lr=3e-3,
            progress=progress,
            desc="训练「它」模型",
        )
    heldout = winograd.sample(1000, split="heldout", seed=seed + 1)
    meta = {
        "seed": seed,
        "steps": steps,
        "batch_size": batch_size,
        "seconds": round(log.seconds, 2),
        "final_loss": round(statistics.fmean(log.losses[-20:]), 4),
        "heldout_accuracy": resolver_accuracy(model, heldout, vocab),
    }
    return model, meta


@builder(WINOGRAD_CHECKPOINT)
def build_pronoun_resolver(config: dict) -> PronounResolver:
    """由检查点的 config（超参数与词表 ``vocab``）新建（未训练的）「它」模型。"""
    return PronounResolver(len(config["vocab"]), **{k: v for k, v in config.items() if k != "vocab"})


@recipe(WINOGRAD_CHECKPOINT, tolerances={"heldout_accuracy": 0.05, "final_loss": 0.01})
def winograd_attention() -> Path:
    """重新训练「它」模型并保存检查点：``python -m seqlab.train winograd_attention``。"""
    model, meta = train_pronoun_resolver(progress=False)
    config = dict(WINOGRAD_CONFIG, vocab=winograd.vocabulary())
    return save(WINOGRAD_CHECKPOINT, model, config, meta)
