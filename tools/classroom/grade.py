"""批量评分：一个文件夹里的全部提交 → 成绩单（CSV）和每个学生一份中文反馈。

    python tools/classroom/grade.py 提交文件夹 [--section 1.1] [--out 输出文件夹] [--jobs 2]

* 每个文件是一个学生的提交，学生名取文件名（去掉扩展名）。无论提交做了什么——死循环、导入时出错、
  ``sys.exit()`` / ``os._exit()``、分配 50 GB、删掉或改名单元格、不是笔记本、空文件、别一节的笔记本、
  几兆字节的输出、去读或改答案和评分文件——成绩单里都有它的一行，每一分的丢失都有原因。
* 每份提交在自己的进程里由 worker.py 用 ``otter run`` 的入口评分，有时间上限（整份、每个单元格）和内存
  上限，互不影响；以 root 运行时学生代码换成 ``nobody`` 并在私有的挂载命名空间里运行（见 sandbox.py）。
* 不写 ``--section`` 时，评的是多数提交在元数据里声明的那一节。

成绩单的列：学生、文件、每道题的得分、总分、满分、说明（每一处丢分的原因）。
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ASSIGNMENTS = ROOT / "_build" / "assignments"
MAX_SUBMISSION_BYTES = 20 * 2**20
# 学生函数里抛出的 AssertionError 的说明（otter 的测试输出里最后一个 “AssertionError: …”）。
ASSERTION = re.compile(r"AssertionError: (.*)\s*$", re.S)


@dataclass
class Limits:
    seconds: int = 600  # 整份提交（含启动内核）的墙钟时间
    cell_seconds: int = 60  # 每个单元格
    memory: int = 2 * 2**30  # 内核的地址空间（字节）

    @property
    def cpu_seconds(self) -> int:
        return self.seconds


@dataclass
class Grade:
    """一个学生的成绩：每道题的得分，以及丢分的原因（题目编号 → 原因；"" 表示整份提交的问题）。"""

    student: str
    file: str
    points: dict[str, float] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    def total(self) -> float:
        return sum(self.points.values())


def load_assignment(folder: Path) -> dict:
    return json.loads((folder / "assignment.json").read_text(encoding="utf-8"))


def declared_section(path: Path) -> str | None:
    """提交在元数据里声明的作业（otter assign 写进学生版的 ``otter.assignment_name``）。"""
    try:
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        name = nb.metadata.get("otter", {}).get("assignment_name", "")
    except Exception:  # noqa: BLE001 —— 读不了的文件在 precheck 里给出原因
        return None
    return name.removeprefix("seqlab-") if isinstance(name, str) and name.startswith("seqlab-") else None


def precheck(path: Path, section: str) -> str | None:
    """不必运行就能判定为零分的提交，返回原因；能运行的返回 None。"""
    size = path.stat().st_size
    if size == 0:
        return "提交的是一个空文件。"
    if path.suffix != ".ipynb":
        return f"提交的不是 Jupyter 笔记本（.ipynb），而是「{path.name}」。请提交作业的笔记本文件。"
    if size > MAX_SUBMISSION_BYTES:
        return f"笔记本有 {size / 2**20:.0f} MiB，超过了 {MAX_SUBMISSION_BYTES // 2**20} MiB：请清除输出后再提交。"
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as err:  # noqa: BLE001 —— 任何解析错误都是同一个原因
        return f"文件不是有效的 Jupyter 笔记本（{type(err).__name__}），可能已损坏或被改成了别的格式。"
    other = declared_section(path)
    if other is not None and other != section:
        return f"这是第 {other} 节的作业，不是第 {section} 节的；请提交第 {section} 节的笔记本。"
    return None


def _kill_group(pid_file: Path) -> None:
    """终止内核（它在自己的会话里）和它启动的一切。"""
    try:
        pid = int(pid_file.read_text())
        os.killpg(pid, signal.SIGKILL)
    except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
        pass


def _failure_reason(log: str) -> str:
    if "DeadKernelError" in log or "Kernel died" in log:
        return "运行中内核退出了（例如调用了 os._exit()，或超出了内存上限被系统终止），无法评分。"
    if "No gradable files" in log or "More than one" in log:
        return "评分程序找不到可以评分的笔记本。"
    last = [line for line in log.strip().splitlines() if line.strip()][-1:] or ["（没有输出）"]
    return f"评分程序无法运行这份提交：{last[0][-200:]}"


def declared_copy(path: Path, assignment: str, folder: Path) -> Path:
    """提交的副本，元数据里写明作业名：从压缩包或 nbgitpuller 拿到的学生版没有 otter 的作业名，
    otter 会拒绝它；precheck 已经确认它没有声明别的作业。"""
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    nb.metadata.setdefault("otter", {})["assignment_name"] = assignment
    copy = folder / path.name
    nbformat.write(nb, copy)
    return copy


def run_otter(
    path: Path, assignment: str, autograder: Path, scratch: Path, limits: Limits
) -> tuple[dict | None, str]:
    """在单独的进程里评一份提交；返回 otter 的 results.json（失败时为 None）与失败原因。"""
    scratch.mkdir(parents=True)
    path = declared_copy(path, assignment, scratch)
    results = scratch / "results"
    results.mkdir()
    work = scratch / "work"
    work.mkdir()
    env = dict(
        os.environ,
        SEQLAB_GRADE_MEMORY=str(limits.memory),
        SEQLAB_GRADE_CPU=str(limits.cpu_seconds),
        SEQLAB_GRADE_CELL_SECONDS=str(limits.cell_seconds),
        PYTHONUNBUFFERED="1",
    )
    log_path = scratch / "worker.log"
    cmd = [sys.executable, str(HERE / "worker.py"), str(path), str(autograder), str(work), str(results)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            proc.wait(timeout=limits.seconds)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(work / "kernel.pid")
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    if timed_out:
        return None, f"整份提交运行超过 {limits.seconds} 秒，已被终止（可能有死循环或极慢的代码）。"
    if (results / "results.json").is_file():
        return json.loads((results / "results.json").read_text(encoding="utf-8")), ""
    with open(log_path, "rb") as f:
        f.seek(max(0, log_path.stat().st_size - 20000))
        tail = f.read().decode("utf-8", "replace")
    return None, _failure_reason(tail)


def _reason(output: str) -> str:
    match = ASSERTION.search(output or "")
    if match:
        return match.group(1).strip()
    lines = [line for line in (output or "").strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "隐藏测试没有通过。"


def grade_one(path: Path, assignment: dict, autograder: Path, scratch: Path, limits: Limits) -> Grade:
    grade = Grade(student=path.stem, file=path.name)
    questions = assignment["questions"]
    for q in questions:
        grade.points[q["key"]] = 0.0
    problem = precheck(path, assignment["section"])
    results = None
    if problem is None:
        results, problem = run_otter(path, assignment["assignment"], autograder, scratch, limits)
    if results is None:
        grade.reasons[""] = problem
        return grade
    by_name = {t.get("name"): t for t in results.get("tests", [])}
    for q in questions:
        test = by_name.get(q["name"])
        if test is None:
            grade.reasons[q["key"]] = "这道题没有得到评分结果（笔记本没有运行到最后）。"
            continue
        grade.points[q["key"]] = float(test.get("score") or 0)
        if grade.points[q["key"]] < q["points"]:
            grade.reasons[q["key"]] = _reason(test.get("output", ""))
    return grade


def choose_section(files: list[Path], built: dict[str, Path]) -> str:
    declared = collections.Counter(s for s in map(declared_section, files) if s in built)
    if declared:
        return declared.most_common(1)[0][0]
    if len(built) == 1:
        return next(iter(built))
    raise SystemExit("无法判断要评哪一节：提交里没有作业信息。请用 --section 指定，例如 --section 1.1。")


def feedback(grade: Grade, assignment: dict) -> str:
    full = sum(q["points"] for q in assignment["questions"])
    lines = [
        f"# 第 {assignment['section']} 节作业反馈：{grade.student}",
        "",
        f"总分：**{grade.total():g} / {full}**",
        "",
    ]
    if "" in grade.reasons:
        lines += [f"这份提交没有能够评分：{grade.reasons['']}", ""]
    for q in assignment["questions"]:
        got = grade.points[q["key"]]
        mark = "✅" if got >= q["points"] else "❌"
        line = f"- {mark} 练习 {q['key']}「{q['title']}」：{got:g} / {q['points']} 分"
        if q["key"] in grade.reasons:
            line += f"。{grade.reasons[q['key']]}"
        lines.append(line)
    lines += [
        "",
        "评分用的是本书原版的检查：笔记本里的检查单元格只是给你自己看的，改动或删除它不会改变分数。",
        "在笔记本里重新运行每道题下面的检查单元格，可以看到同样的 ✅ / ❌ 和说明。",
        "",
    ]
    return "\n".join(lines)


def write_gradebook(grades: list[Grade], assignment: dict, out: Path) -> Path:
    questions = assignment["questions"]
    full = sum(q["points"] for q in questions)
    path = out / "gradebook.csv"
    with open(path, "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow(
            ["学生", "文件", *[f"{q['key']}（{q['points']} 分）" for q in questions], "总分", "满分", "说明"]
        )
        for g in grades:
            notes = [g.reasons[""]] if "" in g.reasons else []
            notes += [f"{q['key']}：{g.reasons[q['key']]}" for q in questions if q["key"] in g.reasons]
            writer.writerow(
                [
                    g.student,
                    g.file,
                    *[f"{g.points[q['key']]:g}" for q in questions],
                    f"{g.total():g}",
                    full,
                    "；".join(notes),
                ]
            )
    return path


def grade_folder(
    submissions: Path, assignments: Path, out: Path | None, section: str | None, jobs: int, limits: Limits
) -> Path:
    built = {
        load_assignment(d)["section"]: d
        for d in sorted(assignments.iterdir())
        if (d / "assignment.json").is_file()
    }
    if not built:
        raise SystemExit(f"{assignments} 里还没有作业：请先运行 make assignments。")
    files = sorted(p for p in submissions.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise SystemExit(f"{submissions} 里没有提交。")
    section = section or choose_section(files, built)
    if section not in built:
        raise SystemExit(f"没有第 {section} 节的作业；已生成的有：{'、'.join(built)}。")
    assignment = load_assignment(built[section])
    autograder = assignments / assignment["autograder"]
    if os.getuid() != 0:
        print(
            "提示：评分没有以 root 运行，学生的代码与你的账户有相同的文件权限；请在容器里或用专门的账户评分。"
        )
    out = out or ROOT / "_build" / "grades" / section
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o700)
    (out / "feedback").mkdir(exist_ok=True)
    scratch_root = Path(tempfile.mkdtemp(prefix="seqlab-grade-"))
    scratch_root.chmod(0o755)
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            grades = list(
                pool.map(
                    lambda ip: grade_one(ip[1], assignment, autograder, scratch_root / str(ip[0]), limits),
                    enumerate(files),
                )
            )
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    for g in grades:
        (out / "feedback" / f"{g.student}.md").write_text(feedback(g, assignment), encoding="utf-8")
    path = write_gradebook(grades, assignment, out)
    full = sum(q["points"] for q in assignment["questions"])
    print(f"第 {section} 节：评了 {len(grades)} 份提交（满分 {full}）。")
    for g in grades:
        print(f"  {g.student}: {g.total():g}")
    print(f"成绩单：{path}")
    print(f"反馈：  {out / 'feedback'}/")
    return path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="用 otter-grader 批量评分，写出成绩单与中文反馈。")
    parser.add_argument("submissions", type=Path, help="放提交的文件夹，每个学生一个文件")
    parser.add_argument("--section", help="节号，例如 1.1（默认：提交里多数声明的那一节）")
    parser.add_argument("--assignments", type=Path, default=ASSIGNMENTS, help="make assignments 的输出")
    parser.add_argument("--out", type=Path, help="成绩单与反馈的文件夹（默认：_build/grades/<节号>）")
    parser.add_argument("--jobs", type=int, default=2, help="同时评几份")
    parser.add_argument("--seconds", type=int, default=Limits.seconds, help="每份提交的时间上限（秒）")
    parser.add_argument(
        "--cell-seconds", type=int, default=Limits.cell_seconds, help="每个单元格的时间上限（秒）"
    )
    parser.add_argument(
        "--memory-gb", type=float, default=Limits.memory / 2**30, help="每份提交的内存上限（GB）"
    )
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        print(f"找不到提交文件夹：{args.submissions}")
        return 2
    limits = Limits(args.seconds, args.cell_seconds, int(args.memory_gb * 2**30))
    grade_folder(args.submissions, args.assignments, args.out, args.section, args.jobs, limits)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
