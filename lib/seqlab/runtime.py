"""运行环境的小工具：单线程运行 torch、屏蔽原生库直接写进 stderr 的调试行。计时在 ``seqlab.measure``。"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

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
