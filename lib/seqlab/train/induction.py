"""第 1.6 节的训练任务“循环复读”：数据、训练配方 ``transformer_induction``，以及读训练好的模型的两件工具——
给每个头打分（读前一个位置 / 复读头），和把某一层的注意力或某一个头关掉。

模型本身是 ``seqlab.transformer.TinyDecoder``；这里只有任务与训练。
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from typing import Any, cast

import torch
from torch import nn

from seqlab.errors import InputError
from seqlab.runtime import single_thread
from seqlab.train import builder, fit, recipe, save
from seqlab.transformer import TinyDecoder, TransformerBlock

COPY_TOKENS = list("书读过完吃苹果天雨山水花月星云风雪河海林")  # 20 个互不相同的字
BOS = "〈始〉"
COPY_VOCAB = [BOS] + COPY_TOKENS
COPY_LEN = 16  # BOS 之后的序列长度
PERIOD_RANGE = (3, 8)


def copy_task_batch(n: int, generator: random.Random) -> tuple[torch.Tensor, torch.Tensor]:
    """“循环复读”任务：随机抽 m 个不同的字（m 在 3…8 之间随机），循环重复到 16 个字，前面加 〈始〉。

    返回 ``ids (n, 17)`` 与 ``graded (n, 16)``：``graded[b, t]`` 为真表示位置 ``t`` 的下一个字可以由
    前文推出（当前字是重复出现的，它上一次出现时后面跟的字就是答案）。周期 m 每句不同，
    所以模型不能靠“往回数固定几格”作答，必须先找到当前字上一次出现的位置。
    """
    ids = torch.zeros(n, COPY_LEN + 1, dtype=torch.long)
    graded = torch.zeros(n, COPY_LEN, dtype=torch.bool)
    for b in range(n):
        m = generator.randint(*PERIOD_RANGE)
        period = generator.sample(range(1, len(COPY_VOCAB)), m)
        ids[b, 1:] = torch.tensor([period[t % m] for t in range(COPY_LEN)])
        graded[b, m + 1 :] = True  # 位置 t（含 〈始〉）的字是第 2 次及以后出现
    return ids, graded


def encode_copy(text: str) -> torch.Tensor:
    """把只含 ``COPY_TOKENS`` 的字符串编码为 ``(1, 1 + len)`` 的 id（开头加 〈始〉）。"""
    bad = sorted({ch for ch in text if ch not in COPY_TOKENS})
    if bad:
        raise InputError(f"这个模型只认识这 {len(COPY_TOKENS)} 个字：{''.join(COPY_TOKENS)}；"
                         f"这些字不在其中：{''.join(bad)}")
    return torch.tensor([[0] + [COPY_VOCAB.index(ch) for ch in text]])


def copy_loss(model: TinyDecoder, ids: torch.Tensor, graded: torch.Tensor) -> torch.Tensor:
    logits = model(ids[:, :-1])
    return nn.functional.cross_entropy(logits[graded], ids[:, 1:][graded])


@torch.no_grad()
def copy_accuracy(model: TinyDecoder, ids: torch.Tensor, graded: torch.Tensor) -> float:
    """可推出的位置上，贪心预测等于正确答案的比例。"""
    pred = model(ids[:, :-1]).argmax(-1)
    return (pred[graded] == ids[:, 1:][graded]).float().mean().item()


def repeat_twice(segment: str) -> torch.Tensor:
    """把一段字重复两遍、前面加 〈始〉：``(1, 1 + 2m)`` 的 id。段长 m 须在训练见过的 3…8 之间。"""
    lo, hi = PERIOD_RANGE
    if not lo <= len(segment) <= hi:
        raise InputError(f"这段字有 {len(segment)} 个，模型训练时只见过 {lo} 到 {hi} 个字的段落。")
    if len(set(segment)) < len(segment):
        raise InputError("段落里的字不能重复（训练数据里每段的字互不相同）。")
    return encode_copy(segment * 2)


def head_scores(weights: list[torch.Tensor], m: int) -> dict[tuple[int, int], dict[str, float]]:
    """对 ``repeat_twice`` 得到的序列（段长 ``m``），给每个 (层, 头) 打两个分：

    * ``previous``：每个位置放在“前一个位置”上的平均权重（读前一个字的头）；
    * ``induction``：第二遍里每个位置放在“它上一次出现的位置的下一格”上的平均权重（复读头）。
    ``weights`` 是 ``TinyDecoder(..., return_weights=True)`` 返回的列表，每项 ``(1, h, S, S)``。
    """
    S = 1 + 2 * m
    scores = {}
    for layer, alpha in enumerate(weights):
        for head in range(alpha.shape[1]):
            a = alpha[0, head]
            prev = torch.stack([a[t, t - 1] for t in range(1, S)]).mean().item()
            ind = torch.stack([a[t, t - m + 1] for t in range(m + 1, S)]).mean().item()
            scores[(layer, head)] = {"previous": prev, "induction": ind}
    return scores


@contextlib.contextmanager
def attention_knocked_out(model: TinyDecoder, layer: int) -> Iterator[None]:
    """在 ``with`` 块内把第 ``layer`` 层（从 0 数）自注意力的输出换成 0：该层不再跨位置交换信息，
    只剩残差和 FFN。用来检验后面的层是否依赖这一层搬运过来的信息。"""

    def zero(_module, _inputs, output):
        out, alpha = output
        return torch.zeros_like(out), alpha

    block = cast(TransformerBlock, model.blocks[layer])
    handle = block.attn.register_forward_hook(zero)
    try:
        yield
    finally:
        handle.remove()


@contextlib.contextmanager
def head_knocked_out(model: TinyDecoder, layer: int, head: int) -> Iterator[None]:
    """在 ``with`` 块内只关掉第 ``layer`` 层（从 0 数）的第 ``head`` 个头：拼接各头结果、送进 ``W_O`` 之前，
    把这个头的 ``d_k`` 列换成 0，其余的头照常。用来检验模型的输出靠不靠这一个头。"""
    attn = cast(TransformerBlock, model.blocks[layer]).attn
    if not 0 <= head < attn.n_heads:
        raise InputError(f"第 {layer + 1} 层只有 {attn.n_heads} 个头，没有编号 {head} 的头（从 0 数）。")
    cols = slice(head * attn.d_k, (head + 1) * attn.d_k)

    def zero_head(_module, inputs):
        (merged,) = inputs
        merged = merged.clone()
        merged[..., cols] = 0
        return (merged,)

    handle = attn.W_O.register_forward_pre_hook(zero_head)
    try:
        yield
    finally:
        handle.remove()


INDUCTION_CONFIG: dict[str, Any] = {"vocab_size": len(COPY_VOCAB), "d_model": 64, "n_heads": 2, "d_ff": 128, "n_layers": 2, "norm_first": True}
INDUCTION_SEED = 2017


def _batches(seed: int, n: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    rng = random.Random(seed)
    while True:
        yield copy_task_batch(n, rng)


@recipe("transformer_induction", tolerances={"accuracy": 0.02, "final_loss": 0.02})
def train_induction(steps: int = 900, progress: bool = False):
    """固定种子训练 2 层、每层 2 个头的 pre-norm 模型做“循环复读”，保存检查点。

    训练时只用 1 个线程：这么小的矩阵用 2 个线程几乎不会更快，而机器上还有别的进程时，
    线程互相等待会让每一步慢上十倍。
    """
    torch.manual_seed(INDUCTION_SEED)
    model = TinyDecoder(**INDUCTION_CONFIG)
    with single_thread():
        log = fit(model, _batches(INDUCTION_SEED, 64), copy_loss, steps=steps, lr=3e-3, progress=progress,
                  desc="循环复读")
    test = copy_task_batch(512, random.Random(INDUCTION_SEED + 1))
    meta = {"seed": INDUCTION_SEED, "steps": steps, "seconds": round(log.seconds, 1),
                "final_loss": log.losses[-1], "accuracy": copy_accuracy(model, *test)}
    return save("transformer_induction", model, INDUCTION_CONFIG, meta)


@builder("transformer_induction")
def build_tiny_decoder(config: dict) -> TinyDecoder:
    """由检查点的 config 新建（未训练的）``TinyDecoder``。"""
    return TinyDecoder(**config)


