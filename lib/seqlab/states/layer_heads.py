"""第 1.6 节“按层、按头看注意力”的状态：训练好的 2 层 Transformer 在“循环复读”任务上的注意力权重。

输入一段字，模型看到的是 〈始〉 + 这段字 + 同一段字再来一遍，并在每个位置预测下一个字。

模型用检查点里的权重、以 float64 计算（:func:`_model`）：float32 算出的很小的注意力权重与精确值的相对误差
可达 1e-5 以上，float64 算出的数几乎与求和的先后次序无关，网页实时面（同样用 float64 算）因此能得到相同的状态。
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from seqlab.runtime import single_thread
from seqlab.states import checkpoint_json, clean_text, float64_checkpoint
from seqlab.train import induction
from seqlab.transformer import TinyDecoder

CHECKPOINT = "transformer_induction"

MAX_CHARS = 200


@dataclass(frozen=True)
class LayerHeadState:
    segment: str
    layer: int  # 从 1 数
    head: int  # 从 1 数
    tokens: list[str]  # 〈始〉 + 两遍
    alpha: list[list[float]]  # (S, S)
    predicted: str  # 每个位置预测的下一个字
    correct: int  # 第二遍里预测对的个数
    graded: int  # 第二遍里可以推出答案的位置数
    scores: dict[str, float]  # 这个头的 previous / induction 分数


def _model() -> TinyDecoder:
    return float64_checkpoint(CHECKPOINT).model_as(TinyDecoder)


@torch.no_grad()
def layer_head_state(segment: str, layer: int, head: int) -> LayerHeadState:
    segment = clean_text(segment, max_chars=MAX_CHARS, what="字段")
    ids = induction.repeat_twice(segment)
    with single_thread():  # 这么小的模型，单线程最快；机器繁忙时多线程反而要等
        logits, weights = _model()(ids, return_weights=True)
    m = len(segment)
    pred = logits[0].argmax(-1)
    target = ids[0, 1:]
    graded = slice(m + 1, 2 * m)  # 第二遍里、当前字已经出现过的位置（最后一个位置之后没有答案）
    return LayerHeadState(
        segment=segment,
        layer=layer,
        head=head,
        tokens=[induction.COPY_VOCAB[i] for i in ids[0].tolist()],
        alpha=weights[layer - 1][0, head - 1].tolist(),
        predicted="".join(induction.COPY_VOCAB[i] for i in pred.tolist()),
        correct=int((pred[graded] == target[graded]).sum()),
        graded=m - 1,
        scores=induction.head_scores(weights, m)[(layer - 1, head - 1)],
    )


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``layer_head_state`` 所需的常量：检查点的 config 与每个参数（``state_dict`` 的名字 →
    :func:`seqlab.states.packed`，float32 原样），词表（编号的顺序）、模型认识的字、训练时段长的范围与字数上限。
    浏览器由它们算出与本模块相同的状态。"""
    return {
        **checkpoint_json(CHECKPOINT),
        "vocab": induction.COPY_VOCAB,
        "tokens": induction.COPY_TOKENS,
        "period_range": induction.PERIOD_RANGE,
        "max_chars": MAX_CHARS,
    }
