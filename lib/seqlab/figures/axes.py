"""坐标轴的公用写法。"""

from __future__ import annotations


def byte_ticks(lo: float, hi: float) -> dict:
    """对数坐标上的字节刻度：取 2 的整数次幂，写成 KiB、MiB、GiB……（与正文的单位一致）。"""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    ks = [k for k in range(0, 61) if lo <= 2**k <= hi]
    step = max(1, -(-len(ks) // 6))  # 最多六个刻度
    if step > 1 and step % 10:  # 刻度优先落在 1 KiB、1 MiB 这样整齐的地方
        step = 10 if step > 5 else (5 if step > 2 else 2)
    ks = [k for k in ks if k % step == 0] or ks[:1]
    return {"tickvals": [2**k for k in ks], "ticktext": [f"{2 ** (k % 10)} {units[k // 10]}" for k in ks]}
