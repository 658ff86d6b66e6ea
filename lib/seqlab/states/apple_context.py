"""第 1.2 节“同一个词，两种上下文”的状态：一个词在两句话里的输入向量与上下文层之后的隐藏状态。

模型与“句子矩阵”相同：检查点里的权重，以 float64 计算（:func:`seqlab.states.x_matrix.embedding_model`）。
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from seqlab.embedding import ContextVectors, context_vectors, cosine
from seqlab.errors import InputError
from seqlab.states import clean_text
from seqlab.states.x_matrix import embedding_data, embedding_model

MAX_CHARS = 40
MAX_WORD_CHARS = 8


@dataclass(frozen=True)
class AppleState:
    word: str
    a: ContextVectors  # 句子 A
    b: ContextVectors  # 句子 B
    i: int  # 词在 A 里的位置
    j: int  # 词在 B 里的位置
    cos_x: float  # cos(x_A, x_B)：输入向量
    cos_h: float  # cos(h_A, h_B)：上下文层之后

    @property
    def vectors(self) -> torch.Tensor:
        """要画的四个向量 x_A、x_B、h_A、h_B，形状 ``(4, d)``。"""
        a, b, i, j = self.a, self.b, self.i, self.j
        return torch.stack([a.X[i], b.X[j], a.H[i], b.H[j]])


def _find(word: str, cv: ContextVectors, which: str) -> int:
    if word not in cv.tokens:
        shown = " / ".join(cv.tokens)
        raise InputError(f"句子 {which} 的分词结果是「{shown}」，里面没有「{word}」这个 token。请换一个句子或一个词。")
    return cv.tokens.index(word)


def apple_state(sentence_a: str, sentence_b: str, word: str) -> AppleState:
    sentence_a = clean_text(sentence_a, max_chars=MAX_CHARS, what="句子（A）")
    sentence_b = clean_text(sentence_b, max_chars=MAX_CHARS, what="句子（B）")
    word = clean_text(word, max_chars=MAX_WORD_CHARS, what="要比较的词")
    model, vocab = embedding_model()
    if word not in vocab:
        raise InputError(
            f"「{word}」不在模型的词表里（词表只收了语料中出现过的 {len(vocab)} 个词），"
            "模型没有为它学过向量，只能当作 <unk>。请换一个词，例如「苹果」「北京」「老师」。"
        )
    a = context_vectors(model, vocab, sentence_a)
    b = context_vectors(model, vocab, sentence_b)
    i, j = _find(word, a, "A"), _find(word, b, "B")
    return AppleState(word, a, b, i, j, cosine(a.X[i], b.X[j]), cosine(a.H[i], b.H[j]))


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``apple_state`` 所需的常量：:func:`seqlab.states.x_matrix.embedding_data` 与句子、词的字数上限。"""
    return {**embedding_data(), "max_chars": MAX_CHARS, "max_word_chars": MAX_WORD_CHARS}
