"""第 1.6 节“打乱 token”的状态：比较“先算再打乱” ``P·f(X)`` 与“先打乱再算” ``f(P·X)``。

* 不加位置的自注意力、逐位置 FFN：两者相同（置换等变），模型分不出「狗咬了人」和「人咬了狗」里的「狗」；
* 加上正弦位置以后：同一个字换了位置就拿到不同的位置向量，两者不再相同。

网页实时面在浏览器里算同一个状态，所以这里的随机数取自 Python 的 ``random.Random``（梅森旋转，
``assets/live/random.mjs`` 逐位照搬），而不是 torch 的生成器（浏览器里没法重现）；部件的权重固定，
以 float64 计算（:func:`parts`），两边算出的输出与差异才能对上。
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

from seqlab.errors import InputError
from seqlab.runtime import single_thread
from seqlab.states import clean_text, packed_weights
from seqlab.transformer import (
    MultiHeadSelfAttention,
    PositionwiseFFN,
    TransformerBlock,
    sinusoidal_positions,
)

D_MODEL = 8
N_HEADS = 2
MAX_CHARS = 200
MAX_TOKENS = 16
MAX_SHUFFLE = 99
EQUIVARIANT_TOL = 1e-5  # 两者之差小于它就算相同（浮点误差）
# float64 的舍入误差（约 1e-16）随求和的先后次序而变，浏览器与 PyTorch 的次序不同：比它小的差异一律记为 0
ROUNDING = 1e-9
PARTS = {
    "attn": "自注意力（不加位置）",
    "ffn": "逐位置 FFN",
    "block": "整个块（不加位置）",
    "attn_pos": "自注意力（加正弦位置）",
}


def token_vectors(tokens: list[str]) -> torch.Tensor:
    """每个字一个固定的随机向量（由字的编码决定，任何字符都有）：``(S, D_MODEL)``，float64。

    以字的码位为种子，取 ``random.Random`` 的 ``D_MODEL`` 个标准正态数：浏览器里的 ``random.mjs``
    给出同样的数，网页实时面因此能为读者输入的任何字算出同一个向量。"""
    rows = []
    for ch in tokens:
        rng = random.Random(ord(ch))
        rows.append([rng.gauss(0.0, 1.0) for _ in range(D_MODEL)])
    return torch.tensor(rows, dtype=torch.float64).reshape(len(tokens), D_MODEL)


@cache
def parts() -> dict[str, torch.nn.Module]:
    """图里用到的三个随机初始化的部件（固定种子，只建一次）。

    参数按 float32 初始化，再换成 float64（每个数不变）：float64 算出的数几乎与求和的先后次序无关，
    网页实时面（同样用 float64 算）因此能得到相同的输出。"""
    with torch.random.fork_rng(devices=[]):  # 用自己的种子，不改动全局随机数
        torch.manual_seed(6)
        modules = {
            "attn": MultiHeadSelfAttention(D_MODEL, N_HEADS),
            "ffn": PositionwiseFFN(D_MODEL, 4 * D_MODEL),
            "block": TransformerBlock(D_MODEL, N_HEADS, 4 * D_MODEL),
        }
    return {name: module.double().eval() for name, module in modules.items()}


@torch.no_grad()
def apply_part(part: str, X: torch.Tensor) -> torch.Tensor:
    """把部件作用到 ``X (S, d)`` 上，返回 ``(S, d)``；``attn_pos`` 先给每一行加上它所在位置的正弦向量。"""
    modules = parts()
    with single_thread():
        if part == "attn_pos":
            PE = sinusoidal_positions(len(X), D_MODEL, dtype=X.dtype)  # 与 X 同精度：float32 的 sin、cos 浏览器重现不了
            return modules["attn"]((X + PE)[None])[0][0]
        out = modules[part](X[None])
        return (out[0] if isinstance(out, tuple) else out)[0]


def permutation(S: int, shuffle: int) -> list[int]:
    """第 ``shuffle`` 种打乱方式（固定种子，一定不是原顺序）：``perm[i]`` 是新位置 i 上放的旧位置。

    用 ``random.Random(shuffle).shuffle``：浏览器里的 ``random.mjs`` 打乱出同样的顺序。"""
    perm = list(range(S))
    random.Random(shuffle).shuffle(perm)
    if perm == list(range(S)):
        perm = perm[1:] + perm[:1]
    return perm


@dataclass(frozen=True)
class PermutationState:
    tokens: list[str]  # 原顺序
    perm: list[int]
    shuffled: list[str]  # 打乱后的顺序：shuffled[i] = tokens[perm[i]]
    part: str
    then_shuffle: list[list[float]]  # P·f(X)，(S, d)
    shuffle_then: list[list[float]]  # f(P·X)，(S, d)
    scale: float  # 两张热力图共用的色标范围：两者里最大的绝对值（全为 0 时取 1）
    gap: list[float]  # 每个（新）位置上两者之差的最大绝对值，(S,)；小于 ROUNDING 的记为 0
    max_gap: float
    equivariant: bool  # 两者是否相同（max_gap < EQUIVARIANT_TOL）


def permutation_state(text: str, part: str, shuffle: int) -> PermutationState:
    text = clean_text(text, max_chars=MAX_CHARS, what="句子")
    tokens = [ch for ch in text if not ch.isspace()]
    if len(tokens) < 2:
        raise InputError("至少需要 2 个字才谈得上打乱顺序。")
    if len(tokens) > MAX_TOKENS:
        raise InputError(f"句子有 {len(tokens)} 个字，这张图最多显示 {MAX_TOKENS} 个：请缩短后再试。")
    if part not in PARTS:
        raise InputError(f"部件只能是：{'、'.join(PARTS.values())}。")
    if not 1 <= shuffle <= MAX_SHUFFLE:
        raise InputError(f"打乱方式的编号应在 1 到 {MAX_SHUFFLE} 之间。")
    X = token_vectors(tokens)
    perm = permutation(len(tokens), shuffle)
    A = apply_part(part, X)[perm]  # 先算再打乱
    B = apply_part(part, X[perm])  # 先打乱再算
    gap = (A - B).abs().amax(dim=-1)
    gap[gap < ROUNDING] = 0.0
    max_gap = float(gap.max())
    return PermutationState(
        tokens=tokens,
        perm=perm,
        shuffled=[tokens[j] for j in perm],
        part=part,
        then_shuffle=A.tolist(),
        shuffle_then=B.tolist(),
        scale=float(torch.cat([A, B]).abs().max()) or 1.0,
        gap=gap.tolist(),
        max_gap=max_gap,
        equivariant=max_gap < EQUIVARIANT_TOL,
    )


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``permutation_state`` 所需的常量：三个部件的参数（名字前面是部件名，如 ``block.norm1.gamma``；
    :func:`seqlab.states.packed`，float32 原样）与各个上限。字向量与打乱方式由浏览器里的 ``random.mjs`` 现算。"""
    float32 = copy.deepcopy(torch.nn.ModuleDict(parts())).float()  # 拷贝再换回 float32：缓存里的部件不变
    return {
        "weights": packed_weights(float32),
        "d_model": D_MODEL,
        "n_heads": N_HEADS,
        "parts": PARTS,
        "max_chars": MAX_CHARS,
        "max_tokens": MAX_TOKENS,
        "max_shuffle": MAX_SHUFFLE,
        "equivariant_tol": EQUIVARIANT_TOL,
        "rounding": ROUNDING,
    }
