"""第 1.2 节“句子矩阵”的状态：一句话查表得到的 X 与上下文层之后的 H。"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from seqlab import train
from seqlab.embedding import ContextVectors, MaskedWordModel, checkpoint_vocab, context_vectors
from seqlab.errors import InputError
from seqlab.states import clean_text

MAX_CHARS = 40
LAYERS = {"X": "X：输入向量（查表的结果）", "H": "H：上下文层之后"}


@dataclass(frozen=True)
class MatrixState:
    cv: ContextVectors
    layer: str  # "X" 或 "H"
    unknown: int  # 不在词表里、按 <unk> 处理的词数

    @property
    def M(self) -> torch.Tensor:
        """要画的矩阵，形状 ``(S, d)``。"""
        return self.cv.X if self.layer == "X" else self.cv.H


def matrix_state(text: str, layer: str) -> MatrixState:
    text = clean_text(text, max_chars=MAX_CHARS, what="句子")
    if layer not in LAYERS:
        raise InputError("只能选择 X（输入向量）或 H（上下文层之后）。")
    ckpt = train.load("embedding")
    vocab = checkpoint_vocab(ckpt.config)
    cv = context_vectors(ckpt.model_as(MaskedWordModel), vocab, text)
    return MatrixState(cv, layer, cv.ids.count(vocab.unk_id))
