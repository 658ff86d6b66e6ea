"""make bench 的 JupyterLab 部分：从真实控件操作到图重画完的时间，以及学生环境的安装大小。

数据由浏览器测试写出：tests/test_lab.py 在真实的 JupyterLab 里对每个实时探索器做几次真实的控件操作
（拖动滑块、选下拉菜单、点切换按钮、输入文字），把每次的毫秒数写到 ``_build/lab-latency/<笔记本>.json``；
tests/test_student_env.py 把学生环境的大小写到 ``_build/student-env.json``。这里只汇总成表（预算：中位数 ≤ 150 ms）。

用法：``python tools/lab_latency.py [--strict]``；``--strict`` 时超出预算返回 1。
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LATENCY = ROOT / "_build" / "lab-latency"
STUDENT_ENV = ROOT / "_build" / "student-env.json"
BUDGET_MS = 150.0


def p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main(argv: list[str]) -> int:
    ok = True
    files = sorted(LATENCY.glob("*.json"))
    print(f"== JupyterLab：从控件操作到图重画完（预算：中位数 ≤ {BUDGET_MS:.0f} ms）==")
    if not files:
        print("还没有数据：先运行 pytest tests/test_lab.py（make test-lab）。")
    row = "{:<22}{:<24}{:>12}{:>10}{:>6}{:>6}"
    if files:
        print(row.format("探索器", "操作", "中位数 ms", "p95 ms", "次数", "预算"))
    for path in files:
        for name, entry in json.loads(path.read_text(encoding="utf-8")).items():
            samples = [s for s in entry["ms"] if s is not None]
            if not samples:
                print(row.format(name, entry["action"], "—", "—", 0, "✗"))
                ok = False
                continue
            median = statistics.median(samples)
            good = median <= BUDGET_MS
            ok &= good
            print(row.format(name, entry["action"], f"{median:.0f}", f"{p95(samples):.0f}", len(samples),
                             "✓" if good else "✗"))
    if STUDENT_ENV.exists():
        env = json.loads(STUDENT_ENV.read_text(encoding="utf-8"))
        print(f"\n== 学生环境（学生版压缩包的 requirements.txt，装进全新的虚拟环境）==\n"
              f"{env['packages']} 个包，安装后 {env['installed_bytes'] / 2**20:.0f} MiB")
    return 1 if "--strict" in argv and not ok else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
