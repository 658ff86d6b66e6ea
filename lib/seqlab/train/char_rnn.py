"""第 1.3 节的训练配方 ``charlm_elman``、``charlm_lstm``、``charlm_gru``：用截断的沿时间反向传播
（truncated backpropagation through time，TBPTT）训练字级循环语言模型。

训练文本首尾相接成一条长流（``token_stream``），切成 ``B`` 条并行的子流（``tbptt_batches``）；每次只对
``L`` 个字反向传播，状态却一段接一段地传下去（``detach`` 切断的只是梯度，不是状态）；每步先做梯度范数裁剪
（``train_tbptt``）。模型、字表、训练句与评估（困惑度、远处线索句上的准确率）在 ``seqlab.charlm``。

记号：``B`` 批大小（并行子流数），``L`` 截断长度。
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from seqlab.charlm import (
    CELLS,
    CharLM,
    CharVocab,
    detach_state,
    held_out_sentences,
    lm_cue_accuracy,
    perplexity,
    training_sentences,
)
from seqlab.corpus import reading_cue
from seqlab.errors import InputError
from seqlab.measure import n_parameters
from seqlab.runtime import single_thread
from seqlab.train import builder, recipe, save


def token_stream(sentences: Sequence[str], vocab: CharVocab) -> torch.Tensor:
    """把句子首尾相接成一条 id 流：``</s> 句1 </s> 句2 … </s>``，形状 ``(N,)``。"""
    ids = [0]
    for s in sentences:
        ids += vocab.encode(s) + [0]
    return torch.tensor(ids)


def tbptt_batches(stream: torch.Tensor, B: int, L: int) -> Iterator[tuple[torch.Tensor, torch.Tensor, bool]]:
    """把流切成 ``B`` 条并行的子流（每行是原文的连续一段），再按 ``L`` 个字一段依次给出。

    每次产出 ``(x (B, L), y (B, L), restart)``：``y`` 是 ``x`` 右移一位（下一个字）；``restart`` 为真时
    子流刚从头开始，上一段的状态不再接得上，应当清零。读完一遍（一个 epoch）就从头再来。
    """
    n = (len(stream) - 1) // B
    if n <= L:
        raise InputError(f"训练文本太短：每条子流只有 {n} 个字，不够截断长度 L = {L}。")
    X = stream[: n * B].view(B, n)
    Y = stream[1 : n * B + 1].view(B, n)
    while True:
        for i, start in enumerate(range(0, n - L + 1, L)):
            yield X[:, start : start + L], Y[:, start : start + L], i == 0


@dataclass
class TBPTTLog:
    losses: list[float] = field(default_factory=list)  # 每步的平均交叉熵（nats / 字）
    grad_norms: list[float] = field(default_factory=list)  # 每步裁剪之前的梯度总范数
    clip: float = math.inf

    @property
    def clipped_fraction(self) -> float:
        """梯度总范数超过阈值、被裁剪的步数比例。"""
        return sum(g > self.clip for g in self.grad_norms) / len(self.grad_norms)


def train_tbptt(
    model: CharLM, batches: Iterator, *, steps: int, lr: float, clip: float, lr_end: float | None = None,
    progress: bool = True, desc: str = "训练",
) -> TBPTTLog:
    """Adam 训练 ``steps`` 步：每步对一段 ``L`` 个字求损失并反向传播，裁剪梯度总范数到 ``clip``，
    把状态（截断了梯度）传给下一段。学习率从 ``lr`` 线性降到 ``lr_end``（缺省不降）。"""
    from tqdm.auto import tqdm

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    log, state = TBPTTLog(clip=clip), None
    model.train()
    bar = tqdm(range(steps), desc=desc, disable=not progress, leave=False)
    for step in bar:
        x, y, restart = next(batches)
        if restart:
            state = None
        logits, state = model(x, state)
        state = detach_state(state)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        log.grad_norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), clip)))
        if lr_end is not None:
            for group in opt.param_groups:
                group["lr"] = lr + (lr_end - lr) * step / max(1, steps - 1)
        opt.step()
        log.losses.append(loss.item())
        if step % 20 == 0:
            bar.set_postfix(loss=f"{log.losses[-1]:.3f}")
    model.eval()
    return log


TRAIN: dict[str, Any] = {"seed": 1303, "B": 32, "L": 32, "steps": 800, "lr": 5e-3, "lr_end": 5e-4, "clip": 1.0,
                         "d_emb": 32, "d_h": 128}
NAMES = {cell: f"charlm_{cell}" for cell in CELLS}


def train_model(cell: str, *, steps: int | None = None, progress: bool = True) -> tuple[CharLM, CharVocab, dict]:
    """从固定种子训练一个字级语言模型，返回 ``(模型, 字表, meta)``。不改动调用者的全局随机数。"""
    steps = TRAIN["steps"] if steps is None else steps
    sentences = training_sentences()
    vocab = CharVocab.from_sentences(sentences)
    order = list(sentences)
    random.Random(TRAIN["seed"]).shuffle(order)  # 两类线索句与本书语料交错出现
    cpu_start = time.process_time()
    with single_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(TRAIN["seed"])
        model = CharLM(len(vocab), TRAIN["d_emb"], TRAIN["d_h"], cell)
        batches = tbptt_batches(token_stream(order, vocab), TRAIN["B"], TRAIN["L"])
        log = train_tbptt(model, batches, steps=steps, lr=TRAIN["lr"], lr_end=TRAIN["lr_end"], clip=TRAIN["clip"],
                          progress=progress, desc=NAMES[cell])
        cpu_train = time.process_time() - cpu_start
        _, test_pairs = reading_cue.cue_split()
        meta = {
            **{k: TRAIN[k] for k in ("seed", "B", "L", "lr", "lr_end", "clip")},
            "steps": steps,
            "cpu_seconds": round(cpu_train, 1),  # 本进程训练占用的 CPU 时间（单线程）
            "torch_threads": 1,
            "parameters": n_parameters(model),
            "final_loss": round(sum(log.losses[-50:]) / 50, 4),
            "clipped_fraction": round(log.clipped_fraction, 4),
            "max_grad_norm": round(max(log.grad_norms), 4),
            "perplexity": round(perplexity(model, vocab, held_out_sentences()), 4),
            "cue_accuracy": round(lm_cue_accuracy(model, vocab, [s for p in test_pairs for s in p]), 4),
            "losses": [round(v, 4) for v in log.losses],
            "trained_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
    return model, vocab, meta


@builder(*NAMES.values())
def build_char_lm(config: dict) -> CharLM:
    """由检查点的 config 新建（未训练的）``CharLM``；config 里另存的字表 ``vocab`` 不进模型。"""
    return CharLM(**{k: v for k, v in config.items() if k != "vocab"})


def _register(cell: str) -> None:
    name = NAMES[cell]

    @recipe(name, tolerances={"perplexity": 0.5, "cue_accuracy": 0.05, "final_loss": 0.05})
    def _make():
        """``python -m seqlab.train charlm_<cell>``：重新训练并保存检查点。"""
        model, vocab, meta = train_model(cell, progress=False)
        return save(name, model, {**model.config, "vocab": list(vocab.tokens)}, meta)


for _cell in CELLS:
    _register(_cell)
