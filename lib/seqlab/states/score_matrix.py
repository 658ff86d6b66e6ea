"""第 1.5 节“O(S²) 的分数矩阵”的状态：一句话的 ``S × S`` 分数矩阵、配对数与分数矩阵的内存。

分数矩阵 ``Q Kᵀ / √d_k`` 来自固定种子的随机字向量和一层随机初始化的自注意力：这里看的是矩阵的形状与掩码，
不是语义。内存按朴素实现估算（``attention.score_bytes``）；超过预算的请求在分配之前就被拒绝，并说出估算值。
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from seqlab import attention, corpus
from seqlab.errors import DEFAULT_BUDGET_BYTES, InputError, MemoryBudgetError
from seqlab.runtime import single_thread

S_MAX = 256  # 实时面热力图的最大长度
SENTENCE = "奖杯放不进这个箱子，因为它太大了。"  # 前 16 个字正好是一句完整的话
D_MODEL = 16
CURVE_LENGTHS = np.unique(np.logspace(0, 17, 69, base=2).round().astype(int))  # 内存曲线的横坐标：1 … 131072
# 静态面内存图里作对照的另外两组配置：只差一个常数倍，在对数坐标上是平行线
REFERENCE_CONFIGS: tuple[dict[str, Any], ...] = (
    {"batch": 8, "heads": 12, "layers": 12, "dtype": "float16"},
    {"batch": 1, "heads": 1, "layers": 1, "dtype": "float32"},
)


@dataclass(frozen=True)
class MemoryCurve:
    """一组配置（batch × heads × layers × dtype）下，分数矩阵的内存随长度 S 的变化。"""

    batch: int
    heads: int
    layers: int
    dtype: str
    lengths: np.ndarray  # CURVE_LENGTHS，形状 (69,)
    bytes: list[int]  # 每个长度的字节数，与 lengths 一一对应


@dataclass(frozen=True)
class MemoryState:
    """所选配置在长度 S 下的分数矩阵内存：估算值、预算、预算内的最大长度，以及整条曲线。"""

    S: int
    curve: MemoryCurve
    bytes: int
    budget: float
    max_S: int  # 这组配置下不超预算的最大长度


@dataclass(frozen=True)
class ScoreState:
    """实时面的状态：一句话前 S 个字的分数矩阵、配对数与所选配置下的内存。"""

    S: int
    causal: bool
    text: str  # 前 S 个字
    scores: np.ndarray  # (S, S)，挡住的格子是 NaN（图上留白）
    pairs: int  # 要打分的 query–key 配对数：S² 或 S(S+1)/2
    memory: MemoryState


@dataclass(frozen=True)
class StaticStep:
    """静态面的一档：长度 S 在静态面配置下的内存（连同对照曲线）和两块分数矩阵。

    超出预算时 ``full``、``causal`` 都是 ``None``：请求在分配之前就被拒绝，只剩内存的估算。
    """

    memory: MemoryState
    references: list[MemoryCurve]  # REFERENCE_CONFIGS 的曲线
    pairs: int  # 无掩码的配对数 S²
    full: ScoreState | None  # 无掩码
    causal: ScoreState | None  # 因果掩码


@lru_cache(maxsize=1)
def _text() -> str:
    """热力图用的文字：先是正文的例句，再接本书语料，取前 S 个字。"""
    return SENTENCE + "".join(corpus.book_corpus()[:40])


@lru_cache(maxsize=1)
def _layer() -> tuple[dict[str, torch.Tensor], attention.SelfAttention]:
    """固定种子的随机字向量和一层随机初始化的自注意力。"""
    g = torch.Generator().manual_seed(5)
    chars = sorted(set(_text()))
    vectors = torch.randn(len(chars), D_MODEL, generator=g)
    with torch.random.fork_rng():
        torch.manual_seed(5)
        layer = attention.SelfAttention(D_MODEL)
    return dict(zip(chars, vectors)), layer


def sentence_scores(S: int, causal: bool) -> tuple[str, np.ndarray]:
    """前 ``S`` 个字的分数矩阵 ``Q Kᵀ / √d_k``，形状 ``(S, S)``；被掩码挡住的格子是 NaN。

    用 float64 计算、最后存成 float32：结果就是精确值最近的 float32，与求和的先后次序无关，
    网页实时面（同样用 float64 算）因此能得到相同的数。"""
    text = _text()[:S]
    vectors, layer = _layer()
    X = torch.stack([vectors[ch] for ch in text]).double()
    with torch.no_grad(), single_thread():
        Q, K = X @ layer.W_Q.double(), X @ layer.W_K.double()
        scores = Q @ K.T / np.sqrt(Q.shape[-1])
    W = scores.numpy().astype(np.float32)
    if causal:
        W[~attention.causal_mask(S).numpy()] = np.nan
    return text, W


def _config(batch: int, heads: int, layers: int, dtype: str) -> dict[str, Any]:
    """``attention`` 里代价函数的关键字参数。"""
    return {"batch": batch, "heads": heads, "layers": layers, "dtype": dtype}


def memory_curve(batch: int, heads: int, layers: int, dtype: str) -> MemoryCurve:
    config = _config(batch, heads, layers, dtype)
    return MemoryCurve(
        batch, heads, layers, dtype, CURVE_LENGTHS, [attention.score_bytes(int(s), **config) for s in CURVE_LENGTHS]
    )


def memory_state(S: int, batch: int, heads: int, layers: int, dtype: str) -> MemoryState:
    """长度 ``S`` 的分数矩阵在这组配置下的内存（只估算，不拒绝）。"""
    config = _config(batch, heads, layers, dtype)
    return MemoryState(
        S,
        memory_curve(batch, heads, layers, dtype),
        attention.score_bytes(S, **config),
        DEFAULT_BUDGET_BYTES,
        attention.max_length_within(DEFAULT_BUDGET_BYTES, **config),
    )


def score_state(S: int, causal: bool, batch: int, heads: int, layers: int, dtype: str) -> ScoreState:
    """先检查输入、估算内存（超预算抛 ``MemoryBudgetError``），再算一句话的分数矩阵。"""
    attention.check_score_memory(S, **_config(batch, heads, layers, dtype), budget=DEFAULT_BUDGET_BYTES)
    if S > S_MAX:
        raise InputError(f"热力图最多画 S = {S_MAX}（{S_MAX}² 个格子），你选的是 S = {S}。")
    causal = bool(causal)
    text, W = sentence_scores(S, causal)
    memory = memory_state(S, batch, heads, layers, dtype)
    return ScoreState(S, causal, text, W, attention.pair_count(S, causal), memory)


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``score_state`` 所需的常量：例句（前 ``S_MAX`` 个字）、每个字的随机向量、``W_Q`` 与 ``W_K``、
    内存曲线的横坐标、每种 dtype 的字节数与内存预算。浏览器由它们算出与本模块相同的状态。"""
    vectors, layer = _layer()
    text = _text()[:S_MAX]
    return {
        "text": text,
        "vectors": {ch: vectors[ch] for ch in sorted(set(text))},
        "W_Q": layer.W_Q.detach(),
        "W_K": layer.W_K.detach(),
        "curve_lengths": CURVE_LENGTHS,
        "dtype_bytes": attention.DTYPE_BYTES,
        "budget": DEFAULT_BUDGET_BYTES,
        "S_max": S_MAX,
    }


def static_step(S: int, batch: int, heads: int, layers: int, dtype: str) -> StaticStep:
    """静态面的一档：无掩码与因果掩码两块分数矩阵；超出预算就只留内存的估算。"""
    try:
        full: ScoreState | None = score_state(S, False, batch, heads, layers, dtype)
        causal: ScoreState | None = score_state(S, True, batch, heads, layers, dtype)
    except MemoryBudgetError:
        full = causal = None
    references = [memory_curve(**ref) for ref in REFERENCE_CONFIGS]
    memory = memory_state(S, batch, heads, layers, dtype)
    return StaticStep(memory, references, attention.pair_count(S), full, causal)
