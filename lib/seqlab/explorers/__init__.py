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
    """登记探索器类。同一个类重新登记（``importlib.reload`` 或 ``%autoreload`` 之后）以新者为准；
    两个不同的类用同一个名字才是错误。"""
    old = REGISTRY.get(cls.name)
    if old is not None and (old.__module__, old.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(f"探索器名字重复：{cls.name}（{old.__module__} 与 {cls.__module__}）")
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
