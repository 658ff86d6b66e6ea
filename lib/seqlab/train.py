"""全书共用的极简训练循环与检查点读写。

检查点保存在 ``seqlab/checkpoints/<name>.pt``：模型参数（``state_dict``）、构造模型所需的超参数
（``config``）和训练记录（``meta``：种子、步数、用时、最终损失……）。每个检查点都能由
``python -m seqlab.train <name>`` 用固定种子重新训练出来（见各模块登记的 ``RECIPES``）。
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"


@dataclass
class TrainLog:
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def fit(
    model: nn.Module,
    batches: Iterator[tuple],
    loss_fn: Callable[..., torch.Tensor],
    *,
    steps: int,
    lr: float = 3e-3,
    clip: float | None = 1.0,
    progress: bool = True,
    desc: str = "训练",
    lr_end: float | None = None,
) -> TrainLog:
    """用 Adam 训练 ``steps`` 步。``loss_fn(model, *batch)`` 返回标量损失。

    ``progress=True`` 时显示 tqdm 进度条（笔记本里是控件，终端里是文本）。
    给出 ``lr_end`` 时，学习率从 ``lr`` 线性降到 ``lr_end``（训练末尾更平稳）；默认保持不变。
    """
    from tqdm.auto import tqdm

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    log = TrainLog()
    start = time.perf_counter()
    model.train()
    bar = tqdm(range(steps), desc=desc, disable=not progress, leave=False)
    for _ in bar:
        batch = next(batches)
        loss = loss_fn(model, *batch)
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip)
        if lr_end is not None:
            for group in opt.param_groups:
                group["lr"] = lr + (lr_end - lr) * len(log.losses) / max(1, steps - 1)
        opt.step()
        log.losses.append(loss.item())
        if len(log.losses) % 20 == 0:
            bar.set_postfix(loss=f"{log.losses[-1]:.3f}")
    model.eval()
    log.seconds = time.perf_counter() - start
    return log


def save_checkpoint(name: str, model: nn.Module, config: dict, meta: dict | None = None) -> Path:
    CHECKPOINT_DIR.mkdir(exist_ok=True)
    path = CHECKPOINT_DIR / f"{name}.pt"
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    torch.save({"config": config, "state_dict": state, "meta": meta or {}}, path)
    return path


def load_checkpoint(name: str) -> dict:
    """读出 ``{"config", "state_dict", "meta"}``；文件不存在时说明如何重新生成。"""
    path = CHECKPOINT_DIR / f"{name}.pt"
    if not path.exists():
        raise FileNotFoundError(f"找不到检查点 {path}。请运行：python -m seqlab.train {name}")
    return torch.load(path, map_location="cpu", weights_only=True)


# 名字 → 重新训练并保存该检查点的函数。各模块在导入时登记自己的配方。
RECIPES: dict[str, Callable[[], Path]] = {}
RECIPE_MODULES = ["seqlab.embedding", "seqlab.seq2seq", "seqlab.attention", "seqlab.transformer"]


def recipe(name: str):
    def wrap(fn: Callable[[], Path]) -> Callable[[], Path]:
        RECIPES[name] = fn
        return fn

    return wrap


def _load_recipes() -> None:
    import importlib

    for module in RECIPE_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise


def main(argv: list[str]) -> int:
    _load_recipes()
    names = argv or sorted(RECIPES)
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        print(f"未知的检查点：{unknown}；可选：{sorted(RECIPES)}", file=sys.stderr)
        return 2
    for name in names:
        start = time.perf_counter()
        path = RECIPES[name]()
        print(f"{name}: {path} ({path.stat().st_size / 1024:.0f} KiB, {time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    # 用 ``python -m seqlab.train`` 运行时本文件是 ``__main__``，而各模块把配方登记在
    # ``seqlab.train.RECIPES`` 里——所以要调用那个模块的 ``main``，不能用这里的副本。
    from seqlab.train import main as _main

    raise SystemExit(_main(sys.argv[1:]))
