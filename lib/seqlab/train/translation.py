"""第 1.4 节的训练配方：在玩具翻译任务（``seqlab.corpus.translation``）上训练固定上下文模型与注意力模型，
检查点 ``seq2seq_attention``、``seq2seq_fixed``、``seq2seq_fixed_h32``、``seq2seq_fixed_h128``。

模型本身与按长度的准确率（``accuracy_by_length``）在 ``seqlab.seq2seq``；这里是训练批次、损失、配置、
训练记录与登记。第 1.6 节的编码器—解码器 Transformer（``seqlab.train.encdec_transformer``）在同一个任务上
训练，用的也是这里的批次、损失与训练记录。
"""

from __future__ import annotations

import random
import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from seqlab.corpus import translation as task
from seqlab.measure import n_parameters
from seqlab.runtime import single_thread
from seqlab.seq2seq import MODELS, FixedContextSeq2Seq, accuracy_by_length, mean_accuracy
from seqlab.train import builder, fit, recipe, save


def loss_fn(model: nn.Module, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """逐词交叉熵（teacher forcing）：``model(src, tgt)`` 返回 ``(B, T, V)`` 的 logits。第 1.6 节的 Transformer 也用它。"""
    logits = model(src, tgt)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))


def training_pairs(seed: int, batch_size: int):
    """翻译任务的训练批次：无穷地产出 ``(src, tgt)``。"""
    for batch in task.batches(seed, batch_size):
        yield batch.src, batch.tgt


# 检查点：名字 → 构造参数。四个固定上下文模型只差隐藏维度，用来把“容量”和“瓶颈”分开看。
SPECS: dict[str, Any] = {
    "seq2seq_attention": {"kind": "attention", "d_h": 64},
    "seq2seq_fixed": {"kind": "fixed", "d_h": 64},
    "seq2seq_fixed_h32": {"kind": "fixed", "d_h": 32},
    "seq2seq_fixed_h128": {"kind": "fixed", "d_h": 128},
}
TRAIN: dict[str, Any] = {"seed": 1409, "steps": 800, "batch_size": 64, "lr": 3e-3, "lr_end": 3e-4, "d_emb": 32, "d_a": 64}


def train_model(name: str, *, steps: int | None = None, progress: bool = True) -> tuple[FixedContextSeq2Seq, dict]:
    """按 ``SPECS[name]`` 从固定种子训练一个模型，返回 ``(模型, meta)``。"""
    spec = SPECS[name]
    steps = TRAIN["steps"] if steps is None else steps
    cpu_start = time.process_time()
    with single_thread():  # 这么小的矩阵，单线程反而更快，也不和别的进程抢核
        torch.manual_seed(TRAIN["seed"])
        random.seed(TRAIN["seed"])
        model = MODELS[spec["kind"]](
            len(task.SRC_TOKENS), len(task.TGT_TOKENS), d_emb=TRAIN["d_emb"], d_h=spec["d_h"], d_a=TRAIN["d_a"]
        )
        log = fit(
            model,
            training_pairs(TRAIN["seed"], TRAIN["batch_size"]),
            loss_fn,
            steps=steps,
            lr=TRAIN["lr"],
            lr_end=TRAIN["lr_end"],
            progress=progress,
            desc=name,
        )
        acc = accuracy_by_length(model, task.eval_set(per_length=50))
    cpu_seconds = time.process_time() - cpu_start
    meta = {
        "seed": TRAIN["seed"],
        "steps": steps,
        "batch_size": TRAIN["batch_size"],
        "lr": TRAIN["lr"],
        "lr_end": TRAIN["lr_end"],
        "seconds": round(log.seconds, 1),  # 训练循环的墙钟时间：机器忙时会被别的进程拉长
        "cpu_seconds": round(cpu_seconds, 1),  # 本进程实际占用的 CPU 时间（训练 + 评估），约等于空闲机器上的用时
        **training_record(model, log, acc),
    }
    return model, meta


def training_record(model: nn.Module, log, acc: dict[int, float]) -> dict:
    """翻译模型的检查点共用的训练记录：单线程、最后的损失、参数量、按长度的准确率、训练时刻。"""
    return {
        "torch_threads": 1,
        "final_loss": round(sum(log.losses[-20:]) / 20, 4),
        "parameters": n_parameters(model),
        "accuracy": round(mean_accuracy(acc), 4),
        "accuracy_by_length": {n: round(a, 4) for n, a in acc.items()},
        "trained_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


@builder(*SPECS)
def build_seq2seq(config: dict) -> FixedContextSeq2Seq:
    """由检查点的 config（模型的 ``kind`` 与构造参数，即 ``model.config``）新建（未训练的）模型。"""
    cfg = dict(config)
    return MODELS[cfg.pop("kind")](**cfg)


def _register(name: str) -> None:
    @recipe(name, tolerances={"accuracy": 0.03, "final_loss": 0.1})
    def _make():
        """``python -m seqlab.train <name>``：按 ``SPECS[name]`` 重新训练并保存检查点。"""
        model, meta = train_model(name)
        return save(name, model, model.config, meta)


for _name in SPECS:
    _register(_name)
