"""面向读者的错误：消息一律是中文，探索器把它们显示在控件里而不是抛出回溯。"""

from __future__ import annotations

DEFAULT_BUDGET_BYTES = 512 * 2**20  # 单次交互计算允许使用的内存上限：512 MiB


class InputError(ValueError):
    """读者的输入不合法（空文本、超出范围的数……）。消息是给读者看的中文句子。"""


class MemoryBudgetError(InputError):
    """请求的计算估计会用掉太多内存，在真正分配之前就被拒绝。"""

    def __init__(self, what: str, estimate_bytes: float, budget_bytes: float):
        self.estimate_bytes = float(estimate_bytes)
        self.budget_bytes = float(budget_bytes)
        super().__init__(
            f"{what}估计需要 {format_bytes(estimate_bytes)} 内存，超过了预算 "
            f"{format_bytes(budget_bytes)}，因此没有执行。请减小规模再试。"
        )


def guard_memory(what: str, estimate_bytes: float, budget_bytes: float = DEFAULT_BUDGET_BYTES) -> float:
    """估算值超过预算就抛出 ``MemoryBudgetError``；否则原样返回估算值。"""
    if not estimate_bytes <= budget_bytes:  # 也拒绝 NaN
        raise MemoryBudgetError(what, estimate_bytes, budget_bytes)
    return estimate_bytes


def format_bytes(n: float) -> str:
    """把字节数写成人读的形式：``format_bytes(3 * 2**30) == '3.0 GiB'``。"""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
