"""探索器注册表。

``seqlab.explorers`` 包里的每个模块用 ``@register`` 登记自己的探索器类；
``all_explorers()`` 会先导入包内全部模块，所以测试和 ``make bench`` 不必知道有哪些探索器。
"""

from __future__ import annotations

import importlib
import pkgutil

from seqlab.explorers.base import Explorer, LiveView, clean_text

REGISTRY: dict[str, type[Explorer]] = {}


def register(cls: type[Explorer]) -> type[Explorer]:
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"探索器名字重复：{cls.name}")
    REGISTRY[cls.name] = cls
    return cls


def _import_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        if info.name != "base":
            importlib.import_module(f"{__name__}.{info.name}")


def get(name: str) -> Explorer:
    _import_all()
    return REGISTRY[name]()


def all_explorers() -> list[Explorer]:
    _import_all()
    return [cls() for _, cls in sorted(REGISTRY.items())]


__all__ = ["Explorer", "LiveView", "REGISTRY", "register", "get", "all_explorers", "clean_text"]
