"""第 1.5 节「它」指代的玩具模型的训练与检验：训练批次、损失、准确率、把两个名词池对调的检验，
以及训练配方 ``winograd_attention``。

模型本身（``PronounResolver``）、它的输入编码（``encode_examples``）与读出（``referent_mass``）在
``seqlab.attention``；句子来自 ``seqlab.corpus.winograd``。
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from seqlab.attention import PronounResolver, encode_examples, referent_mass
from seqlab.corpus import winograd
from seqlab.runtime import single_thread
from seqlab.train import builder, fit, recipe, save

WINOGRAD_CHECKPOINT = "winograd_attention"


def _winograd_batches(vocab, seed: int, batch_size: int, unk_rate: float) -> Iterator[tuple]:
    """无穷的训练批次（只用训练名词）。名词里的字以 ``unk_rate`` 的概率换成“未知”，逼模型看结构而不是背名词。"""
    g = torch.Generator().manual_seed(seed)
    for step in range(10**9):
        batch = encode_examples(winograd.sample(batch_size, split="train", seed=seed * 100_003 + step), vocab)
        S = batch.ids.shape[1]
        positions = torch.arange(S)
        in_noun = ((positions >= batch.spans[:, :, :1]) & (positions < batch.spans[:, :, 1:])).any(1)
        drop = in_noun & (torch.rand(batch.ids.shape, generator=g) < unk_rate)
        yield batch.ids.masked_fill(drop, 1), batch.pronoun, batch.spans, batch.answer


def winograd_loss(model: PronounResolver, ids, pronoun, spans, answer) -> torch.Tensor:
    """``-log``（「它」那一行落在正确名词上的权重之和）：把整行权重推向正确的名词。"""
    _, A2 = model(ids)
    mass = referent_mass(A2, pronoun, spans)
    correct = mass[torch.arange(len(answer)), answer]
    return -torch.log(correct + 1e-6).mean()


def resolver_accuracy(
    model: PronounResolver, examples: Sequence[winograd.Example], vocab: Sequence[str]
) -> float:
    """在 ``examples`` 上的准确率：「它」一行里正确名词分到的权重多于另一个名词即算对。"""
    batch = encode_examples(examples, vocab)
    with torch.no_grad(), single_thread():
        _, A2 = model(batch.ids)
    mass = referent_mass(A2, batch.pronoun, batch.spans)
    return float((mass.argmax(-1) == batch.answer).float().mean())


@dataclass(frozen=True)
class SwapResult:
    """对调检验里的一格：句式 ``template``、关键词 ``word``、名词来自 ``split``。

    ``n`` 句都把两个名词池对调（原来坐第二个槽位的那一类名词放到第一个槽位，反之亦然），其余一字不改；
    ``second_slot`` 是模型把「它」指给第二个槽位的比例，``follows_slot`` 是它仍按训练时的槽位规则回答的比例。
    """

    template: str
    word: str
    split: str
    n: int
    second_slot: float
    follows_slot: float


def swap_test(model: PronounResolver, vocab: Sequence[str], split: str) -> list[SwapResult]:
    """对两个槽位来自不同名词池的每种句式，枚举 ``split`` 里的全部名词对，把两类名词对调后让模型回答。

    句式、关键词、「它」的位置都和训练时一样，变的只有坐在各个槽位上的是哪一类名词。如果模型只按句式和
    槽位作答，``follows_slot`` 应当是 1；它离 1 越远，说明答案越多地由名词本身决定。
    """
    results = []
    for t in winograd.TEMPLATES:
        if t.pool_a == t.pool_b:  # 两个槽位同一类名词，对调没有意义
            continue
        pairs = [(b, a) for a in winograd.noun_split(t.pool_a, split) for b in winograd.noun_split(t.pool_b, split)]
        for word in t.words:
            batch = encode_examples([winograd.make_example(t.key, a, b, word) for a, b in pairs], vocab)
            with torch.no_grad(), single_thread():
                mass = referent_mass(model(batch.ids)[1], batch.pronoun, batch.spans)
            picks_second = mass[:, 1] > mass[:, 0]
            rule = torch.full_like(picks_second, t.words.index(word) == 1)  # 训练时这个关键词指向的槽位
            results.append(SwapResult(
                t.key, word, split, len(pairs),
                float(picks_second.float().mean()), float((picks_second == rule).float().mean()),
            ))
    return results


WINOGRAD_CONFIG: dict[str, Any] = {"d_model": 32, "d_ff": 64, "max_len": 24}


def train_pronoun_resolver(
    seed: int = 0, steps: int = 1200, batch_size: int = 64, progress: bool = True
) -> tuple[PronounResolver, dict]:
    """从固定种子训练「它」模型（2 核 CPU 上十来秒），返回 ``(模型, meta)``。"""
    vocab = winograd.vocabulary()
    torch.manual_seed(seed)
    model = PronounResolver(len(vocab), **WINOGRAD_CONFIG)
    with single_thread():  # 模型极小：单线程最快，而且不和同一台机器上的其他进程抢核
        log = fit(
            model,
            _winograd_batches(vocab, seed, batch_size, unk_rate=0.15),
            winograd_loss,
            steps=steps,
            lr=3e-3,
            progress=progress,
            desc="训练「它」模型",
        )
    heldout = winograd.sample(1000, split="heldout", seed=seed + 1)
    meta = {
        "seed": seed,
        "steps": steps,
        "batch_size": batch_size,
        "seconds": round(log.seconds, 2),
        "final_loss": round(statistics.fmean(log.losses[-20:]), 4),
        "heldout_accuracy": resolver_accuracy(model, heldout, vocab),
    }
    return model, meta


@builder(WINOGRAD_CHECKPOINT)
def build_pronoun_resolver(config: dict) -> PronounResolver:
    """由检查点的 config（超参数与词表 ``vocab``）新建（未训练的）「它」模型。"""
    return PronounResolver(len(config["vocab"]), **{k: v for k, v in config.items() if k != "vocab"})


@recipe(WINOGRAD_CHECKPOINT, tolerances={"heldout_accuracy": 0.05, "final_loss": 0.01})
def winograd_attention() -> Path:
    """重新训练「它」模型并保存检查点：``python -m seqlab.train winograd_attention``。"""
    model, meta = train_pronoun_resolver(progress=False)
    config = dict(WINOGRAD_CONFIG, vocab=winograd.vocabulary())
    return save(WINOGRAD_CHECKPOINT, model, config, meta)
