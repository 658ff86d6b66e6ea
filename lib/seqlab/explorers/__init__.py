"""探索器（本库里唯一导入 ipywidgets 的一层）：每个探索器一份小小的说明，外加实时面 ``LiveView``。

包里的每个模块定义一个 :class:`Explorer` 并用 ``register`` 登记；``all_explorers()`` 会先导入包内全部模块，
所以测试和 ``make bench`` 不必知道有哪些探索器。计算在 ``seqlab.states``，画图在 ``seqlab.figures``。
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from seqlab.explorers.base import Explorer, WebFace
from seqlab.explorers.live import LiveView
from seqlab.explorers.params import Param

REGISTRY: dict[str, Explorer[Any]] = {}
_FRAMEWORK = {"base", "live", "params", "plotview", "web"}


def _origin(explorer: Explorer[Any]) -> tuple[str, str]:
    return explorer.state.__module__, explorer.state.__qualname__


def register(explorer: Explorer[Any]) -> Explorer[Any]:
    """登记探索器。同一个探索器重新登记（``importlib.reload`` 或 ``%autoreload`` 之后）以新者为准；
    两个状态函数不同的探索器用同一个名字才是错误。"""
    old = REGISTRY.get(explorer.name)
    if old is not None and _origin(old) != _origin(explorer):
        raise ValueError(f"探索器名字重复：{explorer.name}（{'.'.join(_origin(old))} 与 {'.'.join(_origin(explorer))}）")
    REGISTRY[explorer.name] = explorer
    return explorer


def _import_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name not in _FRAMEWORK:
            importlib.import_module(f"{__name__}.{info.name}")


def get(name: str) -> Explorer[Any]:
    _import_all()
    return REGISTRY[name]


def all_explorers() -> list[Explorer[Any]]:
    _import_all()
    return [explorer for _, explorer in sorted(REGISTRY.items())]


__all__ = ["Explorer", "LiveView", "Param", "WebFace", "REGISTRY", "register", "get", "all_explorers"]
