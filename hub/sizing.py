"""把 ``make test-hub`` 测得的数字（``_build/hub/sizing.json``）写成教师指南里的表和 Kubernetes 的资源配置。

    python hub/sizing.py _build/hub/sizing.json > hub/sizing.md

教师指南用 ``{include}`` 引用 ``hub/sizing.md``：表里的每个数都来自那次测试，这里只做换算：

* 每个学生的内存 = 内核峰值 + 单用户服务器峰值（取最多的一人）；
* Zero to JupyterHub 的内存保证值 = 它的 1.25 倍，上限 = 2 倍（学生可能同时开着两节的内核），都向上取到 0.25 GB；
* CPU 保证值 = 最重的一节的内核 CPU 秒数 ÷ 120：全班同时点“全部运行”时，每人两分钟内跑完；上限 1 核
  （本书的内核只用一个线程）。
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

GB = 1e9
QUARTER_GB = 0.25 * GB
FIRST_RUN_SECONDS = 120


def _up(value: float, step: float) -> float:
    """向上取到 ``step`` 的整数倍（容忍浮点误差：0.75 不会变成 1.0）。"""
    return round(math.ceil(round(value / step, 9)) * step, 9)


def per_student_bytes(students: list[dict]) -> int:
    return max(s["kernel_peak_bytes"] + s["server_peak_bytes"] for s in students)


def kubernetes(students: list[dict]) -> dict:
    """Zero to JupyterHub 的 ``singleuser`` 资源（memory 以 GB、cpu 以核计）。"""
    memory = per_student_bytes(students)
    cpu = max(s["kernel_cpu_s"] for s in students)
    return {
        "memory_guarantee_gb": _up(1.25 * memory, QUARTER_GB) / GB,
        "memory_limit_gb": _up(2 * memory, QUARTER_GB) / GB,
        "cpu_guarantee": _up(cpu / FIRST_RUN_SECONDS, 0.05),
        "cpu_limit": 1,
    }


def markdown(report: dict) -> str:
    students = report["students"]
    rows = [
        "| 学生 | 节 | 登录→第一个单元格 | 整节运行 | 内核 CPU | 内核峰值 | 服务器峰值 |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in students:
        rows.append(
            f"| {s['student']} | {s.get('section', s['notebook'])} | {s['login_to_first_cell_s']:.0f} 秒 | {s['notebook_s']:.0f} 秒 | "
            f"{s['kernel_cpu_s']:.1f} 秒 | {s['kernel_peak_bytes'] / GB:.2f} GB | {s['server_peak_bytes'] / GB:.2f} GB |"
        )
    memory = per_student_bytes(students)
    cpu = max(s["kernel_cpu_s"] for s in students)
    summary = [
        "| 量 | 实测 |",
        "|---|---|",
        f"| 同时上课的学生 | {len(students)} 人，{report['cores']} 核、{report['memory_bytes'] / GB:.0f} GB 内存的机器，"
        f"全班在 {report['wall_s']:.0f} 秒内跑完 |",
        f"| 每个学生的峰值内存（内核 + 服务器，最多的一人） | {memory / GB:.2f} GB |",
        f"| 一整节笔记本的内核 CPU 时间（最重的一节，含启动内核） | {cpu:.1f} 秒 |",
        f"| 全班执行一遍的 CPU 时间合计 | {sum(s['kernel_cpu_s'] for s in students):.0f} 秒 |",
        f"| 每 GB 内存能同时容纳的学生（按峰值） | {GB / memory:.1f} 人 |",
        f"| 每个核每分钟能跑完的笔记本（按最重的一节） | {60 / cpu:.1f} 个 |",
    ]
    startup = report.get("kernel_startup")
    if startup:
        after, before = startup["after"], startup["before"]
        summary.append(
            f"| 内核启动（`seqlab.setup()`）的 CPU 时间与内存峰值 | {after['cpu_s']:.1f} 秒、{after['peak_bytes'] / 2**20:.0f} MiB"
            f"（不跳过 IRI 文法时 {before['cpu_s']:.1f} 秒、{before['peak_bytes'] / 2**20:.0f} MiB） |"
        )
    k8s = kubernetes(students)
    helm = [
        "```yaml",
        "# Zero to JupyterHub 的 config.yaml（资源取自上面的实测值，换算见 hub/sizing.py）",
        "singleuser:",
        "  image:",
        "    name: <您的镜像>   # 装好 requirements.txt 与 nbgitpuller 的单用户镜像",
        "    tag: <版本>",
        "  defaultUrl: /lab",
        "  extraEnv:",
        '    SEQLAB_STRICT_CHECKS: "0"',
        "  memory:",
        f"    guarantee: {k8s['memory_guarantee_gb']:g}G",
        f"    limit: {k8s['memory_limit_gb']:g}G",
        "  cpu:",
        f"    guarantee: {k8s['cpu_guarantee']:g}",
        f"    limit: {k8s['cpu_limit']:g}",
        "```",
    ]
    return "\n".join(rows) + "\n\n" + "\n".join(summary) + "\n\n" + "\n".join(helm) + "\n"


def main(argv: list[str]) -> int:
    if not argv or not Path(argv[0]).is_file():
        print("用法：python hub/sizing.py _build/hub/sizing.json（先运行 make test-hub）")
        return 2
    print(markdown(json.loads(Path(argv[0]).read_text(encoding="utf-8"))), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
