"""运行环境的小工具：单线程运行 torch、按 CPU 时间计时、屏蔽原生库直接写进 stderr 的调试行。"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator

import torch


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """在 ``with`` 块内让 PyTorch 只用一个线程，结束后恢复原值。

    本书的模型和矩阵都很小，多线程的调度开销远大于计算本身；机器繁忙时两个线程互相等待，
    一次几毫秒的计算能被拖到几百毫秒。单线程也让计时更稳定。``seqlab.setup()`` 已经把笔记本
    设为单线程；这个上下文保证库函数在测试或命令行（``python -m seqlab.train``）里也一样。
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def native_stderr_silenced() -> Iterator[None]:
    """暂时把文件描述符 2 指向 /dev/null。

    PyTorch 的性能分析器（Kineto）会绕过 Python 直接向 fd 2 写调试行（``USDT: … profiler_start``）；
    它们不是错误，却会被 Jupyter 当作 stderr 输出显示出来。
    """
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


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

    每次的读数都不一样（缓存冷热、内存分配、别的程序挤占缓存），所以保留全部读数：调用者可以取
    最小值（最接近算法本身的代价）、中位数，或报告四分位距，让读者看见抖动有多大。
    想看墙上时间，传 ``clock=time.perf_counter``。
    """
    fn()
    samples = []
    for _ in range(repeat):
        start = clock()
        fn()
        samples.append(clock() - start)
    return samples
