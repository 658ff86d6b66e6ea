"""第 1.1 节“下一个字”的状态：n-gram 语言模型逐位置的条件概率与下一个字的候选。"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from seqlab.errors import InputError
from seqlab.lm import BOS, EOS, UNK, NGramLM, book_model
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


def _counts_rows(model: NGramLM, ids: dict[str, int]) -> list[list[int]]:
    """``model.counts`` 写成整数的行：每个上下文一行，先是它的 ``order-1`` 个 token 编号，
    再是（下一个 token 的编号, 次数）一对一对，顺序与计数器里的相同（``most_common`` 遇到同样的次数按这个顺序排）。"""
    return [[ids[c] for c in context] + [n for token, count in counter.items() for n in (ids[token], count)]
            for context, counter in model.counts.items()]


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``next_token_state`` 所需的常量：各阶 ``book_model`` 的词表（有序）、平滑常数 k、
    句首/句尾/未知字的 token，以及每一阶的计数（见 :func:`_counts_rows`；token 编号是它在词表里的位置，
    句首 ``<s>`` 的编号是词表的长度 V）。浏览器由它们算出与本模块相同的概率与候选。"""
    models = [book_model(order) for order in ORDERS]
    vocab = models[0].vocab
    assert all(m.vocab == vocab and m.k == models[0].k for m in models), "各阶模型应当在同一份语料上、用同一个 k 拟合"
    ids = {token: i for i, token in enumerate([*vocab, BOS])}
    return {
        "vocab": vocab,
        "k": models[0].k,
        "bos": BOS,
        "eos": EOS,
        "unk": UNK,
        "shown": {EOS: _show(EOS), UNK: _show(UNK)},
        "orders": ORDERS,
        "max_chars": MAX_CHARS,
        "top_k": TOP_K,
        "counts": {str(m.order): _counts_rows(m, ids) for m in models},
    }
