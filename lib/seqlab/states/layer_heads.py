"""第 1.6 节“按层、按头看注意力”的状态：训练好的 2 层 Transformer 在“循环复读”任务上的注意力权重。

输入一段字，模型看到的是 〈始〉 + 这段字 + 同一段字再来一遍，并在每个位置预测下一个字。
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from seqlab import train
from seqlab.runtime import single_thread
from seqlab.states import clean_text
from seqlab.train import induction

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


@torch.no_grad()
def layer_head_state(segment: str, layer: int, head: int) -> LayerHeadState:
    segment = clean_text(segment, max_chars=MAX_CHARS, what="字段")
    ids = induction.repeat_twice(segment)
    with single_thread():  # 这么小的模型，单线程最快；机器繁忙时多线程反而要等
        logits, weights = train.load("transformer_induction").model(ids, return_weights=True)
    L = len(segment)
    pred = logits[0].argmax(-1)
    target = ids[0, 1:]
    graded = slice(L + 1, 2 * L)  # 第二遍里、当前字已经出现过的位置（最后一个位置之后没有答案）
    return LayerHeadState(
        segment=segment,
        layer=layer,
        head=head,
        tokens=[induction.COPY_VOCAB[i] for i in ids[0].tolist()],
        alpha=weights[layer - 1][0, head - 1].tolist(),
        predicted="".join(induction.COPY_VOCAB[i] for i in pred.tolist()),
        correct=int((pred[graded] == target[graded]).sum()),
        graded=L - 1,
        scores=induction.head_scores(weights, L)[(layer - 1, head - 1)],
    )
