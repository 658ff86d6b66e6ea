"""在不利的条件下运行一条命令：只给它一个核，或者让另外的进程把每个核都占满。

用法::

    python tools/stress.py one-core -- make test-lib test-notebooks JOBS=1
    python tools/stress.py busy -- make test-lib test-notebooks

``one-core`` 把命令（和它的全部子进程）固定在第 0 号核上；``busy`` 先为每个核起一个空转的进程，
命令结束（或超过 ``--limit`` 秒）就把它们全部结束。两种方式都打印命令的墙钟时间，并以命令的退出码退出。
这是为了证明测试不依赖机器的快慢与忙闲：断言只针对计数、字节与确定的斜率，计时只显示不断言。
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import time


def _spin(deadline: float) -> None:
    """空转到 ``deadline``（墙钟秒）为止：占满一个核，不分配内存，不碰磁盘和网络。"""
    x = 0
    while time.time() < deadline:
        for _ in range(100_000):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def run(mode: str, command: list[str], limit: float) -> int:
    workers: list[mp.Process] = []
    preexec = None
    if mode == "one-core":
        preexec = lambda: os.sched_setaffinity(0, {0})  # noqa: E731 —— 子进程启动前固定到 0 号核
    else:
        deadline = time.time() + limit
        workers = [mp.Process(target=_spin, args=(deadline,), daemon=True) for _ in range(os.cpu_count() or 1)]
        for w in workers:
            w.start()
    start = time.perf_counter()
    try:
        code = subprocess.run(command, preexec_fn=preexec, timeout=limit).returncode
    except subprocess.TimeoutExpired:
        print(f"stress {mode}: 超过 {limit:.0f} 秒仍未结束", file=sys.stderr)
        code = 124
    finally:
        for w in workers:
            w.terminate()
            w.join()
    wall = time.perf_counter() - start
    print(f"stress {mode}: {' '.join(command)} → 退出码 {code}，墙钟 {wall:.0f} 秒"
          + (f"（另有 {len(workers)} 个空转进程占满每个核）" if workers else "（只用 0 号核）"))
    return code


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], usage="%(prog)s 模式 [--limit 秒] -- 命令 …")
    parser.add_argument("mode", choices=["one-core", "busy"])
    parser.add_argument("--limit", type=float, default=45 * 60, help="最长运行时间（秒）")
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        parser.error("缺少要运行的命令：在 -- 之后写出它")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    return run(args.mode, argv[split + 1 :], args.limit)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
