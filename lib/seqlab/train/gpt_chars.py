"""第 1.6 节的训练配方 ``gpt_chars``：在本书语料的训练部分上逐字训练小 GPT（``seqlab.transformer.TinyDecoder``）。

词表（``book_vocab``）、编码、困惑度与解码在 ``seqlab.gpt``；这里是训练批次、损失、超参数、训练与登记。
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import torch

from seqlab import corpus
from seqlab import transformer as tf
from seqlab.gpt import book_vocab, heldout_perplexity, sentence_ids, token_nll
from seqlab.measure import cpu_clock
from seqlab.runtime import single_thread
from seqlab.tokenize import Vocab
from seqlab.train import builder, fit, recipe, save

NAME = "gpt_chars"
SEED = 2017
MODEL_KEYS = ("vocab_size", "d_model", "n_heads", "d_ff", "n_layers", "norm_first")
ARCH: dict[str, Any] = {"d_model": 64, "n_heads": 4, "d_ff": 192, "n_layers": 2, "norm_first": True}


def lm_loss(model: tf.TinyDecoder, ids: torch.Tensor) -> torch.Tensor:
    """每个非填充位置上 ``-log p(下一个 token | 前文)`` 的平均。"""
    total, n = token_nll(model, ids)
    return total / n


def _batches(sentences: Sequence[str], vocab: Vocab, size: int, seed: int) -> Iterator[tuple[torch.Tensor]]:
    rng = random.Random(seed)
    while True:
        yield (sentence_ids(rng.sample(sentences, size), vocab),)


# 用 ATEN_CPU_CAPABILITY=default（模拟另一种 CPU）重新训练，两项指标实测只差 0.0024 与 0.0001：容差留了约 20 倍的余量
@recipe(NAME, tolerances={"heldout_perplexity": 0.05, "final_loss": 0.02})
def train_gpt(steps: int = 1000, progress: bool = False):
    """固定种子、单线程，在训练集上逐字训练一个 2 层、每层 4 个头的小 GPT，保存检查点 ``gpt_chars``。

    不改变调用者的全局随机数（``fork_rng``）；``meta["cpu_seconds"]`` 是训练占用的 CPU 时间。
    """
    vocab = book_vocab()
    train, test = corpus.train_test_split(corpus.book_corpus())
    config = {"vocab_size": len(vocab), **ARCH, "itos": vocab.itos}
    with torch.random.fork_rng(devices=[]), single_thread():
        torch.manual_seed(SEED)
        model = build_gpt(config)
        start = cpu_clock()
        log = fit(model, _batches(train, vocab, 32, SEED), lm_loss, steps=steps, lr=3e-3, lr_end=3e-4,
                  progress=progress, desc="小 GPT")
        cpu_seconds = cpu_clock() - start
    meta = {
        "seed": SEED, "steps": steps, "batch": 32, "cpu_seconds": round(cpu_seconds, 1),
        "final_loss": sum(log.losses[-50:]) / 50, "heldout_perplexity": heldout_perplexity(model, test, vocab),
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    return save(NAME, model, config, meta)


@builder(NAME)
def build_gpt(config: dict) -> tf.TinyDecoder:
    """由检查点的 config 新建（未训练的）``TinyDecoder``；config 里另存的词表 ``itos`` 不进模型。"""
    return tf.TinyDecoder(**{k: config[k] for k in MODEL_KEYS})
