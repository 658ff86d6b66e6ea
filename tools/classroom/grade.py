"""批量评分：一个文件夹里的全部提交 → 成绩单（CSV）和每个学生一份中文反馈。

    python tools/classroom/grade.py 提交文件夹 [--section 1.1] [--out 输出文件夹] [--jobs 2]

评分不信任提交：

1. **隔离运行**（sandbox.py）：每份提交在自己的 bubblewrap 沙箱里、真正的 Jupyter 内核中从头运行到尾。沙箱里
   看不见教师答案、执行缓存、别的提交和评分程序的文件，没有网络，内存、CPU、进程数和写出的文件都有上限。
2. **只记录**（runner.py）：运行完后，沙箱里对每道题调用学生的函数、把它的效果（返回值、对参数的原地修改……）
   记成纯数据；检查在那里给出的 ✅ 一概不用。
3. **在外面判定**（seqlab.exercises.recording.judge）：评分程序在自己的进程里，用本书原版的检查函数、同样的
   输入再检查一遍，学生的函数换成重放记录的替身。学生改写检查、``import`` 机制或内置函数，只改得了沙箱里
   那一遍被丢掉的检查。

成绩单与反馈里的每一句说明都出自评分程序和检查函数：学生代码产生的文字（异常信息、输出）不会被转述。
无论提交做了什么——死循环、语法错误、导入时出错、``os._exit()``、分配 50 GB、fork 炸弹、刷屏、删掉或改名单元格、
不是笔记本、空文件、别一节的笔记本——成绩单里都有它的一行，每一分的丢失都有原因。
不写 ``--section`` 时，评的是多数提交里的检查单元格所属的那一节。

成绩单的列：学生、文件、每道题的得分、总分、满分、说明（每一处丢分的原因）。
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import queue
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import questions as book  # noqa: E402
import sandbox  # noqa: E402
from sandbox import Limits  # noqa: E402

from seqlab.exercises import recording  # noqa: E402

ROOT = HERE.parents[1]
MAX_SUBMISSION_BYTES = 20 * 2**20
MAX_REASON = 300  # 一条说明最多这么多个字符
SYNTAX = {"SyntaxError", "IndentationError", "TabError"}
_JUDGE = threading.Lock()  # 判定用全局的随机数状态（检查各自固定种子）：一次判一题


@dataclass
class Grade:
    """一个学生的成绩：每道题的得分，以及丢分的原因（题目编号 → 原因；"" 表示整份提交的问题）。"""

    student: str
    file: str
    points: dict[str, float] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    def total(self) -> float:
        return sum(self.points.values())


def book_sections() -> dict[str, list[book.Question]]:
    return {book.section_of(p): book.questions(nbformat.read(p, as_version=4)) for p in book.notebooks()}


def _check_calls(nb) -> list[tuple[int, tuple]]:
    """提交里每个形如检查的代码单元格：(下标, (模块, 检查函数, 答案名))。"""
    found = [(i, book.parse_check(c.source) if c.cell_type == "code" else None) for i, c in enumerate(nb.cells)]
    return [(i, parsed) for i, parsed in found if parsed is not None]


def identify_section(nb, sections: dict[str, list[book.Question]]) -> str | None:
    """提交属于哪一节：它的检查单元格与哪一节的练习重合得最多。"""
    calls = {parsed for _, parsed in _check_calls(nb)}
    best = max(sections, key=lambda s: len(calls & {q.signature for q in sections[s]}), default=None)
    return best if best is not None and calls & {q.signature for q in sections[best]} else None


def _read_notebook(path: Path):
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        return nb
    except Exception:  # noqa: BLE001 —— 任何解析错误都是同一个原因
        return None


def precheck(path: Path, section: str, sections: dict) -> str | None:
    """不必运行就能判定为零分的提交，返回原因；能运行的返回 None。"""
    size = path.stat().st_size
    if size == 0:
        return "提交的是一个空文件。"
    if path.suffix != ".ipynb":
        return f"提交的不是 Jupyter 笔记本（.ipynb），而是「{path.name[:60]}」。请提交作业的笔记本文件。"
    if size > MAX_SUBMISSION_BYTES:
        return f"笔记本有 {size / 2**20:.0f} MiB，超过了 {MAX_SUBMISSION_BYTES // 2**20} MiB：请清除输出后再提交。"
    nb = _read_notebook(path)
    if nb is None:
        return "文件不是有效的 Jupyter 笔记本，可能已损坏或被改成了别的格式。"
    other = identify_section(nb, sections)
    if other is not None and other != section:
        return f"这是第 {other} 节的作业，不是第 {section} 节的；请提交第 {section} 节的笔记本。"
    return None


def _read_result(path: Path, limit: int) -> object | None:
    """读沙箱写出的一个 JSON 文件：不跟随符号链接、只读普通文件、有大小上限；读不了或不合规定返回 None。"""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        try:
            return json.loads(f.read(limit + 1).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None


def _prepare(folder: Path, owner: int | None) -> Path:
    folder.mkdir(mode=0o700)
    if owner is not None:
        os.chown(folder, owner, owner)
    return folder


def run_sandbox(
    nb, qs: list[book.Question], scratch: Path, slot: int, limits: Limits
) -> tuple[dict | None, dict[str, object], str]:
    """在沙箱里运行一份提交；返回单元格报告（失败时为 None）、每道题的记录，以及整份提交的问题（没有则为空）。"""
    owner = sandbox.sandbox_owner(slot)
    work, out = _prepare(scratch / "work", owner), _prepare(scratch / "out", owner)
    nbformat.write(nb, work / "submission.ipynb")
    plan = [{"name": q.name, "module": q.module, "check": q.check, "answers": list(q.answers)} for q in qs]
    (work / "questions.json").write_text(json.dumps(plan), encoding="utf-8")
    if owner is not None:
        for f in work.iterdir():
            os.chown(f, owner, owner)
    # 沙箱的输出一概丢掉：学生的代码可以直接往文件描述符 1 写几百兆（单元格的输出 runner.py 也不收）
    with subprocess.Popen(
        sandbox.command(work, out, slot, limits),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    ) as proc:
        try:
            proc.wait(timeout=limits.seconds)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # bwrap 一退出，沙箱里的一切随之终止（--die-with-parent）
            except ProcessLookupError:
                pass
            proc.wait()
    recordings = {q.name: _read_result(out / f"{q.name}.json", recording.MAX_RECORDING_BYTES) for q in qs}
    report = _read_result(out / "cells.json", 2**20)
    if timed_out:
        return report, recordings, f"整份提交运行超过 {limits.seconds} 秒，已被终止（可能有死循环或极慢的代码）。"
    if not isinstance(report, dict):
        return None, recordings, "评分时笔记本没能运行完（内核或运行它的进程被提交里的代码终止了），没有得到单元格的结果。"
    return report, recordings, ""


def _cell_statuses(report: dict | None, n_cells: int) -> tuple[dict[int, str], int | None]:
    """沙箱的单元格报告（不可信）→ {下标: 状态}；只收下标在范围内、状态是短字符串的项。"""
    statuses: dict[int, str] = {}
    died = None
    if isinstance(report, dict):
        for entry in report.get("cells", []) if isinstance(report.get("cells"), list) else []:
            if (
                isinstance(entry, list)
                and len(entry) == 2
                and isinstance(entry[0], int)
                and 0 <= entry[0] < n_cells
                and isinstance(entry[1], str)
            ):
                statuses[entry[0]] = entry[1]
        if isinstance(report.get("kernel_died_at"), int):
            died = report["kernel_died_at"]
    return statuses, died


def _named_error(status: str) -> str:
    """单元格出错的类型名：只转述 Python 内置异常的名字，别的一律说“出错”。"""
    import builtins

    return status if isinstance(getattr(builtins, status, None), type) else "一个错误"


def _answer_cells_problem(nb, q: book.Question, statuses: dict[int, str], limits: Limits) -> str:
    """定义这道题答案的单元格（上一道题的检查之后、这道题的检查之前）出了什么问题；没有问题返回空串。"""
    calls = _check_calls(nb)
    index = next((i for i, parsed in calls if parsed == q.signature), None)
    if index is None:
        return ""
    start = max((i for i, _ in calls if i < index), default=-1) + 1
    for i in range(start, index):
        status = statuses.get(i, "ok")
        if status in SYNTAX:
            return f"定义答案的单元格有语法错误（{status}），那一格没有运行。"
        if status == "CellTimeout":
            return f"定义答案的单元格运行超过 {limits.cell_seconds} 秒，被中断了（可能有死循环）。"
        if status not in ("ok", "KeyboardInterrupt"):
            return f"定义答案的单元格运行时出错（{_named_error(status)}）。"
    return ""


def _short(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


def grade_one(path: Path, section: str, qs: list[book.Question], sections: dict, scratch: Path, slot: int,
              limits: Limits) -> Grade:
    grade = Grade(student=path.stem[:80], file=path.name[:120])
    for q in qs:
        grade.points[q.key] = 0.0
    problem = precheck(path, section, sections)
    if problem is not None:
        grade.reasons[""] = problem
        return grade
    nb = _read_notebook(path)
    scratch.mkdir(mode=0o711)
    report, recordings, problem = run_sandbox(nb, qs, scratch, slot, limits)
    statuses, died = _cell_statuses(report, len(nb.cells) + len(qs))
    if problem:
        grade.reasons[""] = problem
    elif died is not None:
        grade.reasons[""] = "运行中内核退出了（例如调用了 os._exit()，或超出了内存上限被系统终止），之后的题没能评分。"
    else:
        stopped = [i for i in range(len(nb.cells)) if statuses.get(i) == "CellTimeout"]
        if stopped:
            grade.reasons[""] = (
                f"从上往下数第 {'、'.join(str(i + 1) for i in stopped[:5])} 个单元格运行超过 {limits.cell_seconds} 秒，"
                "被中断了（可能有死循环）；评分接着运行了后面的单元格。"
            )
    for k, q in enumerate(qs):
        data = recordings[q.name]
        if data is None:
            if statuses.get(len(nb.cells) + k) == "CellTimeout":
                reason = f"检查调用你的函数时运行超过 {limits.cell_seconds} 秒，被中断了（可能有死循环）。"
            else:
                reason = "这道题没有得到评分记录：笔记本没有运行到最后，或者它改动了 Python 的导入机制或内置函数。"
            passed = False
        else:
            with _JUDGE:
                result = recording.judge(q.checker(), data)
            passed, reason = result.passed, result.message
        if passed:
            grade.points[q.key] = float(q.points)
            continue
        note = _answer_cells_problem(nb, q, statuses, limits)
        if note and isinstance(data, dict) and "missing" in data:
            reason = f"所以 {'、'.join(q.answers)} 没有定义。"
        grade.reasons[q.key] = _short(f"{note}{reason}" if note else reason)
    return grade


def choose_section(files: list[Path], sections: dict) -> str:
    found = collections.Counter(
        s for s in (identify_section(nb, sections) for nb in map(_read_notebook, files) if nb is not None) if s
    )
    if found:
        return found.most_common(1)[0][0]
    raise SystemExit("无法判断要评哪一节：提交里没有认得出的检查单元格。请用 --section 指定，例如 --section 1.1。")


def feedback(grade: Grade, section: str, qs: list[book.Question]) -> str:
    full = sum(q.points for q in qs)
    lines = [f"# 第 {section} 节作业反馈：{grade.student}", "", f"总分：**{grade.total():g} / {full}**", ""]
    if "" in grade.reasons:
        lines += [f"评分时的问题：{grade.reasons['']}", ""]
    for q in qs:
        got = grade.points[q.key]
        mark = "✅" if got >= q.points else "❌"
        line = f"- {mark} 练习 {q.key}「{q.title}」：{got:g} / {q.points} 分"
        if q.key in grade.reasons:
            line += f"。{grade.reasons[q.key]}"
        lines.append(line)
    lines += [
        "",
        "评分用的是本书原版的检查：笔记本里的检查单元格只是给你自己看的，改动或删除它不会改变分数。",
        "在笔记本里重新运行每道题下面的检查单元格，可以看到同样的 ✅ / ❌ 和完整的说明。",
        "",
    ]
    return "\n".join(lines)


def write_gradebook(grades: list[Grade], qs: list[book.Question], out: Path) -> Path:
    full = sum(q.points for q in qs)
    path = out / "gradebook.csv"
    with open(path, "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow(["学生", "文件", *[f"{q.key}（{q.points} 分）" for q in qs], "总分", "满分", "说明"])
        for g in grades:
            notes = [g.reasons[""]] if "" in g.reasons else []
            notes += [f"{q.key}：{g.reasons[q.key]}" for q in qs if q.key in g.reasons]
            writer.writerow(
                [g.student, g.file, *[f"{g.points[q.key]:g}" for q in qs], f"{g.total():g}", full, "；".join(notes)]
            )
    return path


def grade_folder(submissions: Path, out: Path | None, section: str | None, jobs: int, limits: Limits) -> Path:
    sandbox.check_available()
    os.environ["SEQLAB_STRICT_CHECKS"] = "0"  # 判定只要结论，不要异常
    sections = book_sections()
    files = sorted(p for p in submissions.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise SystemExit(f"{submissions} 里没有提交。")
    section = section or choose_section(files, sections)
    if section not in sections:
        raise SystemExit(f"没有第 {section} 节的练习；本书有：{'、'.join(sections)}。")
    qs = sections[section]
    out = out or ROOT / "_build" / "grades" / section
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o700)
    (out / "feedback").mkdir(exist_ok=True)
    scratch_root = Path(tempfile.mkdtemp(prefix="seqlab-grade-"))
    scratch_root.chmod(0o711)  # 沙箱的用户要走到自己的文件夹去挂载它，但列不出别的
    slots: queue.Queue[int] = queue.Queue()
    for k in range(jobs):
        slots.put(k)

    def one(item: tuple[int, Path]) -> Grade:
        slot = slots.get()
        try:
            return grade_one(item[1], section, qs, sections, scratch_root / str(item[0]), slot, limits)
        finally:
            slots.put(slot)

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            grades = list(pool.map(one, enumerate(files)))
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    for g in grades:
        (out / "feedback" / f"{g.student}.md").write_text(feedback(g, section, qs), encoding="utf-8")
    path = write_gradebook(grades, qs, out)
    full = sum(q.points for q in qs)
    print(f"第 {section} 节：评了 {len(grades)} 份提交（满分 {full}）。")
    for g in grades:
        print(f"  {g.student}: {g.total():g}")
    print(f"成绩单：{path}")
    print(f"反馈：  {out / 'feedback'}/")
    return path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="在沙箱里批量评分，写出成绩单与中文反馈。")
    parser.add_argument("submissions", type=Path, help="放提交的文件夹，每个学生一个文件")
    parser.add_argument("--section", help="节号，例如 1.1（默认：提交里多数属于的那一节）")
    parser.add_argument("--out", type=Path, help="成绩单与反馈的文件夹（默认：_build/grades/<节号>）")
    parser.add_argument("--jobs", type=int, default=2, help="同时评几份")
    parser.add_argument("--seconds", type=int, default=Limits.seconds, help="每份提交的时间上限（秒）")
    parser.add_argument("--cell-seconds", type=int, default=Limits.cell_seconds, help="每个单元格的时间上限（秒）")
    parser.add_argument("--memory-gb", type=float, default=Limits.memory / 2**30, help="每个进程的内存上限（GB）")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        print(f"找不到提交文件夹：{args.submissions}")
        return 2
    limits = Limits(seconds=args.seconds, cell_seconds=args.cell_seconds, memory=int(args.memory_gb * 2**30))
    try:
        grade_folder(args.submissions, args.out, args.section, args.jobs, limits)
    except sandbox.SandboxUnavailable as err:
        print(err)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
