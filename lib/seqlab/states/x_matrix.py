"""第 1.2 节“句子矩阵”的状态：一句话查表得到的 X 与上下文层之后的 H。

模型用检查点里的权重、以 float64 计算（:func:`embedding_model`）：上下文层里一百多项乘积求和，接近 0 的 h 值在
float32 下与精确值的相对误差可达 1e-5 以上（本书语料的句子里约 0.2% 的 h 值如此，最大约 2e-3），float64 算出的数几乎与求和的先后次序无关，网页实时面（同样用 float64 算）
因此能得到相同的状态。第 1.2 节的笔记本自己读检查点、用 float32 计算，不受影响。
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from seqlab import train
from seqlab.embedding import ContextVectors, MaskedWordModel, checkpoint_vocab, context_vectors
from seqlab.errors import InputError
from seqlab.states import clean_text, float64_checkpoint, packed_weights
from seqlab.tokenize import Vocab, segmenter_words

CHECKPOINT = "embedding"

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


@lru_cache(maxsize=1)
def embedding_model() -> tuple[MaskedWordModel, Vocab]:
    """检查点 ``embedding`` 里的模型（float64，见 :func:`seqlab.states.float64_checkpoint`）与它的词表。"""
    ckpt = float64_checkpoint(CHECKPOINT)
    return ckpt.model_as(MaskedWordModel), checkpoint_vocab(ckpt.config)


def embedding_data() -> dict[str, Any]:
    """网页实时面算 ``context_vectors`` 所需的常量：窗口半径 ``w``、每个参数（``state_dict`` 的名字 →
    :func:`seqlab.states.packed`，float32 原样）、词表（``itos``：ID → 词）与网页分词器要补的词
    （``tokenize.segmenter_words``）。第 1.2 节的两个探索器共用。"""
    ckpt = train.load(CHECKPOINT)
    return {
        "w": ckpt.config["w"],
        "weights": packed_weights(ckpt.model),
        "itos": ckpt.config["itos"],
        "segmenter_words": segmenter_words(),
    }


def matrix_state(text: str, layer: str) -> MatrixState:
    text = clean_text(text, max_chars=MAX_CHARS, what="句子")
    if layer not in LAYERS:
        raise InputError("只能选择 X（输入向量）或 H（上下文层之后）。")
    model, vocab = embedding_model()
    cv = context_vectors(model, vocab, text)
    return MatrixState(cv, layer, cv.ids.count(vocab.unk_id))


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``matrix_state`` 所需的常量：:func:`embedding_data` 与句子的字数上限。"""
    return {**embedding_data(), "max_chars": MAX_CHARS}
