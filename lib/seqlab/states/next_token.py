"""第 1.1 节“下一个字”的状态：n-gram 语言模型逐位置的条件概率与下一个字的候选。"""

from __future__ import annotations

import math
from dataclasses import dataclass

from seqlab.errors import InputError
from seqlab.lm import EOS, UNK, book_model
from seqlab.states import clean_text

ORDERS = (1, 2, 3, 4)
MAX_CHARS = 120
TOP_K = 8


@dataclass(frozen=True)
class NextTokenState:
    text: str  # 长度 S
    order: int
    probs: list[float]  # (S,)：p(x_t | x_{<t})
    cumulative: list[float]  # (S,)：Σ_{s≤t} log p(x_s | x_{<s})
    candidates: list[tuple[str, float]]  # 文本之后下一个字的前 TOP_K 个候选（已换成读者看的名字）与概率
    alternatives: list[str]  # (S,)：每个位置上模型最看好的几个字（悬停显示）
    unknown: int  # 语料里没见过的字数


def _show(token: str) -> str:
    """token 给读者看的名字：句尾与未知字写成中文。"""
    return {EOS: "〈句尾〉", UNK: "〈未知〉"}.get(token, token)


def next_token_state(text: str, order: int) -> NextTokenState:
    text = clean_text(text, max_chars=MAX_CHARS, what="句子")
    if order not in ORDERS:
        raise InputError(f"阶数只能取 {ORDERS} 之一。")
    model = book_model(order)
    probs = model.conditionals(text)
    cumulative, running = [], 0.0
    for p in probs:
        running += math.log(p)
        cumulative.append(running)
    alternatives = [
        "、".join(f"{_show(c)} {q:.2f}" for c, q in model.top_next(text[:t], 3)) for t in range(len(text))
    ]
    candidates = [(_show(c), q) for c, q in model.top_next(text, TOP_K)]
    unknown = sum(1 for ch in text if ch not in model.vocab)
    return NextTokenState(text, order, probs, cumulative, candidates, alternatives, unknown)
