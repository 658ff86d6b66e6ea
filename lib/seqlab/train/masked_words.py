"""第 1.2 节的训练配方 ``embedding``：在本书语料上训练 ``MaskedWordModel`` 做“完形填空”。

模型、训练批次（``masked_batches``）、损失与准确率都在 ``seqlab.embedding``；这里只有配置、训练与登记。
"""

from __future__ import annotations

from typing import Any

import torch

from seqlab.embedding import (
    MaskedWordModel,
    book_vocab,
    encode_sentences,
    masked_accuracy,
    masked_batches,
    masked_loss,
)
from seqlab.runtime import single_thread
from seqlab.tokenize import MASK
from seqlab.train import builder, fit, recipe, save

CONFIG: dict[str, Any] = {"d": 32, "w": 2, "steps": 1200, "batch_size": 64, "lr": 3e-3, "seed": 0}


def train_embedding_model(*, progress: bool = True) -> tuple[MaskedWordModel, dict, dict]:
    """用固定种子在本书语料的训练部分上训练 ``MaskedWordModel``，返回 ``(模型, config, meta)``。"""
    with single_thread():
        return train_model(dict(CONFIG), progress=progress)


def train_model(cfg: dict, *, progress: bool = True) -> tuple[MaskedWordModel, dict, dict]:
    """按配置 ``cfg``（键同 ``CONFIG``）从它的种子训练一个 ``MaskedWordModel``，返回 ``(模型, config, meta)``。"""
    from seqlab.corpus import book_corpus, train_test_split

    torch.manual_seed(cfg["seed"])
    vocab = book_vocab()
    train, test = train_test_split(book_corpus())
    seqs = encode_sentences(train, vocab)
    model = MaskedWordModel(len(vocab), cfg["d"], cfg["w"])
    batches = masked_batches(seqs, len(vocab), mask_id=vocab.stoi[MASK], batch_size=cfg["batch_size"],
                             seed=cfg["seed"])
    log = fit(model, batches, masked_loss, steps=cfg["steps"], lr=cfg["lr"], progress=progress, desc="训练 Embedding")
    config = {**cfg, "V": len(vocab), "itos": list(vocab.itos)}
    meta = {
        "seconds": round(log.seconds, 1),
        "final_loss": sum(log.losses[-50:]) / 50,
        "test_accuracy": masked_accuracy(model, vocab, test),
        "torch": str(torch.__version__),
    }
    return model, config, meta


@builder("embedding")
def build_masked_word_model(config: dict) -> MaskedWordModel:
    """由检查点的 config 新建（未训练的）``MaskedWordModel``。"""
    return MaskedWordModel(config["V"], config["d"], config["w"])


@recipe("embedding", tolerances={"test_accuracy": 0.02, "final_loss": 0.05})
def embedding_recipe():
    """``python -m seqlab.train embedding``：重新训练并保存检查点 ``embedding``。"""
    model, config, meta = train_embedding_model(progress=False)
    return save("embedding", model, config, meta)


