"""全书共用的极简训练循环与检查点读写。

检查点保存在 ``seqlab/checkpoints/``：``<name>.safetensors`` 是模型参数，``<name>.json`` 是构造模型所需的
超参数（``config``）和训练记录（``meta``：种子、步数、用时、指标……）。两者读取时都不执行代码。
全书只有一个读取入口 ``load(name)``。每个检查点都能由 ``python -m seqlab.train <name>`` 用固定种子重新训练出来
（见各模块登记的 ``RECIPES``）。各任务的训练在本包的子模块里（``RECIPE_MODULES`` 列出全部）：
``masked_words``（第 1.2 节）、``char_rnn``（第 1.3 节）、``translation``（第 1.4 节）、``pronoun``（第 1.5 节）、
``induction``、``gpt_chars`` 与 ``encdec_transformer``（第 1.6 节）。模型本身在下面一层的模型模块里，它们不导入本包。

可复现性的保证（``tests/test_checkpoints.py`` 检查的正是这两条）：

* **同一台机器、同样的设置**：同一个配方运行两次，得到的权重逐位相同；
* **换一台机器**（另一种 CPU 指令集，PyTorch 的 ``ATEN_CPU_CAPABILITY`` 不同）：浮点运算的舍入不同，
  训练会把低位的差别放大，权重不再逐位相同；但重新训练出的模型的指标与随书检查点记录的指标相差不超过
  各配方声明的容差（``TOLERANCES``）。
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TypeVar

import torch
from torch import nn

CHECKPOINT_DIR = Path(__file__).resolve().parent.parent / "checkpoints"


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


M = TypeVar("M", bound=nn.Module)


# ---------------------------------------------------------------- 检查点：safetensors 权重 + JSON 记录
@dataclass(frozen=True)
class Checkpoint:
    """``load(name)`` 的结果。

    ``model`` 是为这次调用新建的副本（``eval`` 模式）：改动它不会影响下一次 ``load`` 得到的模型；
    ``config`` 是构造模型所需的超参数，``meta`` 是训练记录（种子、步数、用时、指标……），都是 JSON 的纯数据。
    """

    name: str
    model: nn.Module
    config: dict
    meta: dict

    def model_as(self, kind: type[M]) -> M:
        """``model``，并确认它是 ``kind`` 类的模型（给类型检查器一个确定的类型）。"""
        if not isinstance(self.model, kind):
            raise TypeError(f"检查点 {self.name} 的模型是 {type(self.model).__name__}，不是 {kind.__name__}")
        return self.model


# 名字 → 由 config 新建一个（未训练的）模型。本包的各训练模块在导入时登记，与配方登记在一起。
BUILDERS: dict[str, Callable[[dict], nn.Module]] = {}


def builder(*names: str):
    """登记“由 config 构造模型”的函数，供 ``load`` 使用；重复登记（例如 ``importlib.reload``）以新者为准。"""

    def wrap(fn: Callable[[dict], nn.Module]) -> Callable[[dict], nn.Module]:
        for name in names:
            BUILDERS[name] = fn
        return fn

    return wrap


def weights_path(name: str) -> Path:
    return CHECKPOINT_DIR / f"{name}.safetensors"


def record_path(name: str) -> Path:
    return CHECKPOINT_DIR / f"{name}.json"


def save(name: str, model: nn.Module, config: dict, meta: dict | None = None) -> Path:
    """保存检查点：权重写进 ``<name>.safetensors``，``config`` 与 ``meta`` 写进旁边的 ``<name>.json``。

    两种格式读取时都不执行任何代码（不像 pickle）。返回权重文件的路径。
    """
    from safetensors.torch import save_file

    CHECKPOINT_DIR.mkdir(exist_ok=True)
    tensors = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    save_file(tensors, weights_path(name))
    record = {"config": config, "meta": meta or {}}
    record_path(name).write_text(json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                                 encoding="utf-8")
    _read.cache_clear()
    return weights_path(name)


def read(name: str) -> dict:
    """读出 ``{"config", "meta", "state_dict"}``（都是副本）；文件不存在时说明如何重新生成。"""
    tensors, record = _read(str(weights_path(name)), str(record_path(name)))
    record = json.loads(record)
    return {**record, "state_dict": {k: v.clone() for k, v in tensors.items()}}


@cache
def _read(weights: str, record: str) -> tuple[dict[str, torch.Tensor], str]:
    from safetensors.torch import load_file

    for path in (Path(weights), Path(record)):
        if not path.exists():
            raise FileNotFoundError(f"找不到检查点文件 {path}。请运行：python -m seqlab.train {path.stem}")
    return load_file(weights), Path(record).read_text(encoding="utf-8")


def load(name: str) -> Checkpoint:
    """全书唯一的检查点读取入口：返回新建的、``eval`` 模式的模型与它的 config、meta。

    磁盘只读一次（进程内缓存的是原始张量）；每次调用都新建模型并把权重拷进去，所以一个单元格
    改动了拿到的模型，不会悄悄影响后面的单元格。新建模型时 PyTorch 会用全局随机数初始化参数，
    这里在 ``fork_rng`` 里做，读检查点不改变全局随机数的状态。
    """
    _load_model_modules()
    if name not in BUILDERS:
        raise KeyError(f"未知的检查点：{name!r}；可选：{sorted(BUILDERS)}")
    tensors, record = _read(str(weights_path(name)), str(record_path(name)))
    stored = json.loads(record)  # 每次新解析一份：改动 config、meta 也不会影响下一次
    with torch.random.fork_rng(devices=[]):
        model = BUILDERS[name](stored["config"])
    model.load_state_dict(tensors)  # 拷进模型自己的参数，不与缓存共享存储
    return Checkpoint(name, model.eval(), stored["config"], stored["meta"])


# 名字 → 重新训练并保存该检查点的函数。各模块在导入时登记自己的配方。
RECIPES: dict[str, Callable[[], Path]] = {}
RECIPE_MODULES = ["seqlab.train.masked_words", "seqlab.train.translation", "seqlab.train.pronoun",
                  "seqlab.train.induction", "seqlab.train.gpt_chars", "seqlab.train.char_rnn",
                  "seqlab.train.encdec_transformer"]


# 名字 → {指标: 容差}：换一台机器重新训练时，``meta`` 里这些指标与随书检查点的差别不超过容差（绝对值）。
TOLERANCES: dict[str, dict[str, float]] = {}


def recipe(name: str, *, tolerances: dict[str, float]):
    """登记重新训练检查点 ``name`` 的配方，并声明它在另一台机器上复现时各指标的容差。"""

    def wrap(fn: Callable[[], Path]) -> Callable[[], Path]:
        RECIPES[name] = fn
        TOLERANCES[name] = dict(tolerances)
        return fn

    return wrap


def _load_model_modules() -> None:
    """导入登记了配方与构造函数的模块（它们在导入时登记自己）。"""
    import importlib

    for module in RECIPE_MODULES:
        importlib.import_module(module)


def main(argv: list[str]) -> int:
    _load_model_modules()
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

