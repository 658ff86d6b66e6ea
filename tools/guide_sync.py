"""让教师指南与章导读里由练习登记表决定的文字跟上库（``seqlab.exercises.EXERCISES``）。

    .venv/bin/python tools/guide_sync.py          # 改写 chapters/teacher/guide.md 与 chapters/ch01/index.md
    .venv/bin/python tools/guide_sync.py --check  # 只报告哪里与库不一致，有则返回 1

改写的只是“数”：练习一览表的每一行（编号、题目、难度、用时、目标）、“常见错误”里每道练习的题目、全章与每节的练习道数、练习总用时、
课时安排里每组练习后面括号中的分钟数、两节课表格里课堂练习的用时与难度，以及正文里按
``chapters/teacher/runtime.json`` 写的峰值内存范围。哪道练习放在哪一课由人来定：
新增的练习要自己写进课时安排，``tests/test_teacher.py`` 会指出漏了哪一道。
"""

from __future__ import annotations

import collections
import importlib
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
GUIDE = ROOT / "chapters" / "teacher" / "guide.md"
INDEX = ROOT / "chapters" / "ch01" / "index.md"
KEY = r"1\.\d\.\d+"


def exercises() -> dict:
    import seqlab.exercises as ex

    for info in pkgutil.iter_modules(ex.__path__):
        importlib.import_module(f"seqlab.exercises.{info.name}")
    return dict(sorted(ex.EXERCISES.items(), key=lambda kv: [int(x) for x in kv[0].split(".")]))


def _counts(table: dict) -> tuple[int, int, int]:
    per = collections.Counter(k.rsplit(".", 1)[0] for k in table).values()
    return min(per), max(per), len(table)


def sync_counts(text: str, table: dict) -> str:
    low, high, total = _counts(table)
    text = re.sub(r"((?:每节|末尾)有 )\d+～\d+( 道(?:带)?自动检查的练习)", rf"\g<1>{low}～{high}\g<2>", text)
    text = re.sub(r"全章 \d+ 道", f"全章 {total} 道", text)
    return re.sub(r"练习加起来要 \d+ 分钟", f"练习加起来要 {sum(e.minutes for e in table.values())} 分钟", text)


def sync_plans(text: str, table: dict) -> str:
    def group(m: re.Match) -> str:
        keys = m[1].split("、")
        if not all(k in table for k in keys):
            return m[0]
        return f"{m[1]}（{sum(table[k].minutes for k in keys)} 分钟）"

    text = re.sub(rf"((?:{KEY}、)*{KEY})（约?\s*\d+ 分钟）", group, text)

    def slot(m: re.Match) -> str:
        e = table.get(m[2])
        return f"{m[1]}{m[2]}{m[3]}{e.minutes} 分钟，{e.stars}" if e else m[0]

    return re.sub(rf"(课堂练习 )({KEY})(\s*\|\s*)\d+ 分钟，[★☆]+", slot, text)


def sync_runtime(text: str, table: dict) -> str:
    """正文里的峰值内存范围跟上 chapters/teacher/runtime.json（tools/runtime.py 的测量）。"""
    import json

    import runtime

    low, high = runtime.peak_range_gb(json.loads(runtime.REPORT.read_text(encoding="utf-8")))
    return re.sub(r"峰值内存，在 \d+\.\d+～\d+\.\d+ GB 之间", f"峰值内存，在 {low:.2f}～{high:.2f} GB 之间", text)


def exercise_rows(table: dict) -> list[str]:
    return [f"| {{ref}}`{k} <ex-{k.replace('.', '-')}>` | {e.title} | {e.stars} | {e.minutes} 分钟 | {e.objective} |"
            for k, e in table.items()]


def sync_mistake_titles(text: str, table: dict) -> str:
    """“常见错误”里每道练习的标题行 ``**1.1.1** 题目`` 跟上库里的题目。"""
    def title(m: re.Match) -> str:
        e = table.get(m[1])
        return f"**{m[1]}** {e.title}" if e else m[0]

    start = text.index("## 常见错误")
    end = text.index("\n## ", start + 1)
    return text[:start] + re.sub(rf"^\*\*({KEY})\*\* .*$", title, text[start:end], flags=re.M) + text[end:]


def sync_table(text: str, table: dict) -> str:
    start = text.index("## 练习一览")
    head = text.index("|---|---|---|---|---|", start)
    body_start = text.index("\n", head) + 1
    body_end = body_start
    while text.startswith("| {ref}", body_end):
        body_end = text.index("\n", body_end) + 1
    return text[:body_start] + "\n".join(exercise_rows(table)) + "\n" + text[body_end:]


def main(argv: list[str]) -> int:
    table = exercises()
    changed = []
    for path, steps in ((GUIDE, (sync_counts, sync_plans, sync_table, sync_mistake_titles, sync_runtime)), (INDEX, (sync_counts,))):
        old = path.read_text(encoding="utf-8")
        new = old
        for step in steps:
            new = step(new, table)
        if new != old:
            changed.append(path.relative_to(ROOT).as_posix())
            if "--check" not in argv:
                path.write_text(new, encoding="utf-8")
    if changed:
        print(("与库不一致：" if "--check" in argv else "已改写：") + "、".join(changed))
    return 1 if changed and "--check" in argv else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
