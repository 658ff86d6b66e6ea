"""教师指南“运行时间”一节的数字：逐个执行每个笔记本（完整版与学生版），实测用时、内核 CPU 时间与内存峰值。

    .venv/bin/python tools/runtime.py            # 测量，写出 chapters/teacher/runtime.json 与 runtime.md
    .venv/bin/python tools/runtime.py --render   # 不测量，只按 runtime.json 重新写出 runtime.md

教师指南用 ``{include}`` 引用 ``chapters/teacher/runtime.md``；``tests/test_teacher.py`` 检查它与
``runtime.json`` 一致、列出的正是现有的笔记本，并检查指南正文里的近似数（内存的范围、CPU 时间的范围、
全班同时运行时要等多久）都由这份测量算得出来。

每个笔记本用 nbclient 在一个新内核里从头执行到尾（计时包括启动内核）：

* **完整版**与构建网站时相同：``SEQLAB_STRICT_CHECKS=1``，带 ``skip-execution`` 标签的格（实时探索器）不执行；
* **学生版**是 ``make student`` 生成的笔记本，像学生点“运行所有单元格”那样每一格都执行，练习的检查都显示 ❌。

内核的 CPU 时间是内核进程（连同它的子进程）用户态加内核态的时间，内存峰值是内核进程一生中驻留内存的
峰值（Linux ``/proc/<pid>/status`` 的 ``VmHWM``，不靠采样）。测量时的机器（CPU 型号、核数、平均负载）一并记下。
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

REPORT = ROOT / "chapters" / "teacher" / "runtime.json"
TABLE = ROOT / "chapters" / "teacher" / "runtime.md"
GB = 1e9
# 全班同时点“运行所有单元格”时的估算：这么多学生，这两种大小的 hub
CLASS_SIZE = 100
HUB_CORES = (16, 32)
EDITIONS = ("full", "student")


def _peak_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/{pid}/status 里没有 VmHWM")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_notebook(path: Path, *, strict: bool, run_every_cell: bool) -> dict:
    """在新内核里执行 ``path``，返回墙钟时间、内核 CPU 时间与内存峰值（执行出错就抛出）。"""
    import nbformat
    import psutil
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    os.environ["SEQLAB_STRICT_CHECKS"] = "1" if strict else "0"  # 内核继承执行时的环境
    nb = nbformat.read(path, as_version=4)
    options = {"skip_cells_with_tag": ""} if run_every_cell else {}
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}}, **options)
    start = time.perf_counter()
    try:
        client.execute(cleanup_kc=False)
        wall = time.perf_counter() - start
        kernel = psutil.Process(client.km.provisioner.pid)
        cpu = kernel.cpu_times()
        cpu_s = cpu.user + cpu.system + cpu.children_user + cpu.children_system
        peak = _peak_bytes(kernel.pid)
    finally:
        if client.km is not None:
            run_sync(client.km.shutdown_kernel)(now=True)
    # 出错的格照样往下执行（allow_errors），但记下来：测试要求测量时没有一格出错
    errors = sum(o.get("output_type") == "error" for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu_s, 2), "peak_bytes": peak, "errors": errors}


def measure() -> dict:
    from student import build, notebooks

    paths = notebooks()
    loads = [os.getloadavg()[0]]
    rows: dict[str, dict] = {p.name: {} for p in paths}
    with tempfile.TemporaryDirectory(prefix="runtime-") as tmp:
        build(Path(tmp) / "student")
        for path in paths:
            print(f"{path.name}：完整版…", file=sys.stderr, flush=True)
            rows[path.name]["full"] = run_notebook(path, strict=True, run_every_cell=False)
            loads.append(os.getloadavg()[0])
            print(f"{path.name}：学生版…", file=sys.stderr, flush=True)
            student_path = Path(tmp) / "student" / "notebooks" / path.name
            rows[path.name]["student"] = run_notebook(student_path, strict=False, run_every_cell=True)
            loads.append(os.getloadavg()[0])
    return {
        "machine": {"cpu": _cpu_model(), "cores": os.cpu_count(), "load_min": round(min(loads), 1),
                    "load_max": round(max(loads), 1)},
        "date": time.strftime("%Y-%m-%d"),
        "notebooks": rows,
    }


# ---------------------------------------------------------------- 由测量算出的量（指南正文与测试共用）
def section_of(name: str) -> str:
    return f"1.{int(name[:2])}"


def peak_range_gb(report: dict) -> tuple[float, float]:
    """各笔记本内核峰值内存（两个版本里较大的一个）的最小与最大值，单位 GB。"""
    peaks = [max(r[e]["peak_bytes"] for e in EDITIONS) / GB for r in report["notebooks"].values()]
    return min(peaks), max(peaks)


def cpu_range_s(report: dict, edition: str = "student") -> tuple[float, float]:
    cpus = [r[edition]["cpu_s"] for r in report["notebooks"].values()]
    return min(cpus), max(cpus)


def class_wait_s(report: dict, cores: int, students: int = CLASS_SIZE) -> tuple[float, float]:
    """全班同时执行最轻 / 最重的一节（学生版）时，最后一个人大约要等多久：学生数 × CPU 秒 ÷ 核数。"""
    low, high = cpu_range_s(report)
    return students * low / cores, students * high / cores


def markdown(report: dict) -> str:
    rows = [
        "| 笔记本 | 墙钟时间（完整版 / 学生版） | 内核 CPU 时间（完整版 / 学生版） | 内核峰值内存 |",
        "|---|---|---|---|",
    ]
    total = {e: {"wall_s": 0.0, "cpu_s": 0.0} for e in EDITIONS}
    for name, r in report["notebooks"].items():
        full, stud = r["full"], r["student"]
        peak = max(full["peak_bytes"], stud["peak_bytes"]) / GB
        rows.append(f"| {section_of(name)} `{name}` | {full['wall_s']:.0f} 秒 / {stud['wall_s']:.0f} 秒 | "
                    f"{full['cpu_s']:.1f} 秒 / {stud['cpu_s']:.1f} 秒 | {peak:.2f} GB |")
        for e in EDITIONS:
            for k in ("wall_s", "cpu_s"):
                total[e][k] += r[e][k]
    rows.append(f"| 合计 | {total['full']['wall_s']:.0f} 秒 / {total['student']['wall_s']:.0f} 秒 | "
                f"{total['full']['cpu_s']:.0f} 秒 / {total['student']['cpu_s']:.0f} 秒 | |")
    m = report["machine"]
    lines = [
        f"测量用的机器：{m['cores']} 核，{m['cpu']}，无 GPU；测量期间一分钟平均负载 {m['load_min']:g}～{m['load_max']:g}"
        f"（{report['date']}，`tools/runtime.py`）。",
        "",
        *rows,
        "",
        f"| 全班 {CLASS_SIZE} 人同时执行一节学生版（按上表最轻与最重的一节的 CPU 时间） | 最后一个人大约要等 |",
        "|---|---|",
    ]
    for cores in HUB_CORES:
        low, high = class_wait_s(report, cores)
        lines.append(f"| {cores} 核的 hub | {math.floor(low):.0f}～{math.ceil(high):.0f} 秒 |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render", action="store_true", help="不测量，只按 runtime.json 重写 runtime.md")
    args = parser.parse_args(argv)
    if args.render:
        report = json.loads(REPORT.read_text(encoding="utf-8"))
    else:
        report = measure()
        REPORT.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    TABLE.write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
