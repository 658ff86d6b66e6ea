"""第 1.5 节：序列内部的读取——自注意力、因果掩码与 O(S²) 的代价。"""

from __future__ import annotations

import math

import torch


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
