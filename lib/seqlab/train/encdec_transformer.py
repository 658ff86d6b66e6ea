"""第 1.6 节的训练配方 ``encdec_transformer``：在第 1.4 节的玩具翻译任务上训练编码器—解码器 Transformer。

模型与读它的交叉注意力的工具在 ``seqlab.encdec``；训练批次、损失与训练记录和第 1.4 节的两个模型共用
（``seqlab.train.translation``）。
"""

from __future__ import annotations

import time
from typing import Any

import torch

from seqlab.corpus import translation as task
from seqlab.encdec import EncoderDecoderTransformer
from seqlab.runtime import single_thread
from seqlab.seq2seq import accuracy_by_length
from seqlab.train import builder, fit, recipe, save
from seqlab.train.translation import loss_fn, training_pairs, training_record

NAME = "encdec_transformer"
# 正文与探索器展示的那一层交叉注意力（从 0 数）：它是这个检查点的一个事实，笔记本用第 1.4 节的评估集核对
# 它是各头平均之后对齐最好的一层
SHOWN_LAYER = 1
CONFIG: dict[str, Any] = {"d_model": 64, "n_heads": 2, "d_ff": 128, "n_layers": 2, "norm_first": True}
TRAIN: dict[str, Any] = {"seed": 1406, "steps": 600, "batch_size": 64, "lr": 5e-3, "lr_end": 5e-4}


def train_model(*, steps: int | None = None, progress: bool = True) -> tuple[EncoderDecoderTransformer, dict]:
    """从固定种子训练（与第 1.4 节的两个模型用同一个任务、同样的批大小），返回 ``(模型, meta)``。"""
    steps = TRAIN["steps"] if steps is None else steps
    cpu_start = time.process_time()
    with single_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(TRAIN["seed"])
        model = EncoderDecoderTransformer(len(task.SRC_TOKENS), len(task.TGT_TOKENS), **CONFIG)
        log = fit(model, training_pairs(TRAIN["seed"], TRAIN["batch_size"]), loss_fn, steps=steps, lr=TRAIN["lr"],
                  lr_end=TRAIN["lr_end"], progress=progress, desc=NAME)
        cpu_train = time.process_time() - cpu_start
        acc = accuracy_by_length(model, task.eval_set(per_length=50))
    meta = {
        **TRAIN,
        "steps": steps,
        "cpu_seconds": round(cpu_train, 1),  # 训练循环占用的 CPU 时间（单线程）
        **training_record(model, log, acc),
    }
    return model, meta


@builder(NAME)
def build_encoder_decoder(config: dict) -> EncoderDecoderTransformer:
    """由检查点的 config（即 ``model.config``）新建（未训练的）``EncoderDecoderTransformer``。"""
    return EncoderDecoderTransformer(**config)


@recipe(NAME, tolerances={"accuracy": 0.03, "final_loss": 0.05})
def train_encdec():
    """``python -m seqlab.train encdec_transformer``：重新训练并保存检查点。"""
    model, meta = train_model(progress=False)
    return save(NAME, model, model.config, meta)
