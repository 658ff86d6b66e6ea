"""计时与峰值内存：全书唯一的计时函数 ``timing_samples``，以及用 ``torch.profiler`` 实测的内存峰值。"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable

from seqlab.runtime import native_stderr_silenced


def cpu_clock() -> float:
    """本线程占用 CPU 的累计时间（秒），即 ``time.thread_time()``。书中的计时默认都用它。

    为什么不用墙钟（``time.perf_counter``）：书里的计算都在一个线程里做完，不受打扰时两者相等；
    但机器上还有别的程序时，墙钟会把“排队等 CPU”的时间也算进来，而且对长任务比对短任务罚得重——
    不到 1 毫秒的计算常常在一个调度时间片里就做完了，几十毫秒的计算却会被打断许多次，
    比出来的倍数就会虚高好几倍。CPU 时间只数这段代码自己真正在算的时间。
    """
    return time.thread_time()


def timing_samples(fn: Callable[[], object], repeat: int, clock: Callable[[], float] = cpu_clock) -> list[float]:
    """先热身运行一次 ``fn``，再运行 ``repeat`` 次，返回每一次的用时（秒，默认是 CPU 时间）。

    全书只有这一个计时函数。每次的读数都不一样（缓存冷热、内存分配、别的程序挤占缓存），所以保留全部
    读数：调用者取最小值（``min``，最接近算法本身的代价：比最快那次慢出来的部分来自与算法无关的干扰）、
    中位数（``statistics.median``），或报告四分位距，让读者看见抖动有多大。
    CPU 时间要求计算在当前线程里进行（见 ``seqlab.runtime.single_thread``）；
    想看墙上时间，传 ``clock=time.perf_counter``。
    """
    fn()
    samples = []
    for _ in range(repeat):
        start = clock()
        fn()
        samples.append(clock() - start)
    return samples


def peak_memory_bytes(fn: Callable[[], object]) -> int:
    """运行 ``fn`` 一次，返回期间 PyTorch 在 CPU 上**新分配**内存的峰值（字节）。

    用 ``torch.profiler`` 记录每一次分配与释放，按时间顺序累加，取最大值——这是实测，
    不是按公式推算。读的是分析器公开导出的 Chrome 跟踪文件（``export_chrome_trace``）里的
    ``[memory]`` 事件：每个事件的 ``Bytes`` 是一次分配（正）或释放（负）。
    """
    from torch.profiler import ProfilerActivity, profile

    with native_stderr_silenced(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "trace.json")
        with native_stderr_silenced():
            prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
    memory = sorted((e for e in events if e.get("name") == "[memory]"), key=lambda e: float(e["ts"]))
    live = peak = 0
    for e in memory:
        live += int(e["args"]["Bytes"])
        peak = max(peak, live)
    return peak
