"""把每一节的练习变成 otter-grader 的作业（``otter assign`` 的笔记本格式）。

对每个笔记本 ``chapters/*/NN_*.ipynb``：

1. 找到每个检查单元格（标签 ``exercise-check``，形如 ``sec01.check_x(答案名, …)``），它前面最近的起始代码
   （``exercise-starter``）和其间的参考答案（``solution``）；
2. 写一个 otter 的“主笔记本”：每道练习是一个 question，分值 = 难度（★ 的个数）；起始代码与参考答案合并成
   otter 的答案单元格（学生版里只留起始代码），再加一个**隐藏测试**；
3. 运行 ``otter assign``：得到学生版笔记本（``student/``）和评分用的 ``autograder/*.zip``，并让 otter
   在参考答案上跑一遍隐藏测试（参考答案必须拿满分）。

隐藏测试不信任学生的笔记本：它不看检查单元格（删掉、改掉都无所谓），而是从磁盘重新导入本书的 seqlab
（丢掉学生内核里已经导入、可能被改写过的那一份），用原版的检查函数去检查学生定义的答案。

用法：``python tools/classroom/assignments.py [输出目录] [节号 …]``，默认输出到 ``_build/assignments``。
"""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
OUT = ROOT / "_build" / "assignments"
# 每道题的隐藏测试最多运行这么多秒（学生函数里的死循环只让这一题丢分）。
TEST_SECONDS = 60


@dataclass(frozen=True)
class Question:
    """一道练习在笔记本里的位置，以及隐藏测试需要的信息。"""

    key: str  # 练习编号，例如 "1.1.1"
    title: str
    points: int
    module: str  # seqlab.exercises 里的模块名，例如 "sec01"
    check: str  # 检查函数名
    answers: tuple[str, ...]  # 学生要定义的名字（检查单元格的参数）
    starter: int  # 起始代码单元格的下标
    solutions: tuple[int, ...]  # 参考答案单元格的下标
    check_cell: int

    @property
    def name(self) -> str:
        return "q" + self.key.replace(".", "_")


def notebooks() -> list[Path]:
    return sorted(CHAPTERS.glob("*/[0-9][0-9]_*.ipynb"))


def section_of(path: Path) -> str:
    """``chapters/ch01/03_rnn_history.ipynb`` → ``"1.3"``。"""
    return f"{int(path.parent.name[2:])}.{int(path.name[:2])}"


def assignment_name(section: str) -> str:
    return f"seqlab-{section}"


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _parse_check(source: str) -> tuple[str, str, tuple[str, ...]]:
    """``sec01.check_x(a, b)`` → ``("sec01", "check_x", ("a", "b"))``。"""
    tree = ast.parse(source)
    call = tree.body[-1].value if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and all(isinstance(a, ast.Name) for a in call.args)
        and not call.keywords
    ):
        raise ValueError(f"检查单元格应当形如 secNN.check_x(答案名, …)，实际是：{source!r}")
    return call.func.value.id, call.func.attr, tuple(a.id for a in call.args)


def questions(nb) -> list[Question]:
    """按顺序列出笔记本里的练习。"""
    found, starter = [], None
    for i, cell in enumerate(nb.cells):
        tags = _tags(cell)
        if "exercise-starter" in tags:
            starter = i
        elif "exercise-check" in tags:
            if starter is None:
                raise ValueError(f"第 {i} 个单元格是检查，但它前面没有起始代码")
            module, check, answers = _parse_check(cell.source)
            exercise = getattr(importlib.import_module(f"seqlab.exercises.{module}"), check).exercise
            solutions = tuple(
                j
                for j in range(starter + 1, i)
                if nb.cells[j].cell_type == "code" and "solution" in _tags(nb.cells[j])
            )
            found.append(
                Question(
                    exercise.key,
                    exercise.title,
                    exercise.difficulty,
                    module,
                    check,
                    answers,
                    starter,
                    solutions,
                    i,
                )
            )
            starter = None
    return found


def _raw(text: str):
    return nbformat.v4.new_raw_cell(text)


def _answer_cell(nb, q: Question):
    """otter 的答案单元格：参考答案在 ``BEGIN SOLUTION`` 块里，起始代码是学生版里留下的提示。"""
    solution = "\n\n".join(nb.cells[j].source.strip("\n") for j in q.solutions)
    starter = nb.cells[q.starter].source.strip("\n")
    if '"""' in starter:
        raise ValueError(f"练习 {q.key} 的起始代码里有三引号，otter 的 PROMPT 块放不下它")
    source = f'# BEGIN SOLUTION NO PROMPT\n{solution}\n# END SOLUTION\n""" # BEGIN PROMPT\n{starter}\n""" # END PROMPT'
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata = {"tags": ["exercise-starter"]}
    return cell


def hidden_test_source(q: Question) -> str:
    """隐藏测试：用重新导入的原版检查函数检查学生定义的答案；不及格时的说明就是丢分的理由。

    1. 从磁盘把整个 seqlab 重新导入一份，和学生内核里的那份逐个比较函数与方法的字节码：学生改写过本书的库
       （例如让模型返回他想要的数），这道题不得分；
    2. 检查函数（``seqlab.exercises``）用重新导入的那份，库的其余部分用学生内核里那份（已确认没被改写；
       学生的答案里可能用 ``isinstance`` 认本书的类，类必须是同一个）。
    """
    body = f'''\
    """ # BEGIN TEST CONFIG
    points: {q.points}
    hidden: true
    """ # END TEST CONFIG
    def test_{q.name}(env):
        import importlib, os, signal, sys

        os.environ["SEQLAB_STRICT_CHECKS"] = "0"

        def book_modules():
            return {{m: sys.modules[m] for m in list(sys.modules) if m == "seqlab" or m.startswith("seqlab.")}}

        def functions(obj):
            if hasattr(obj, "__code__"):
                return {{"": obj.__code__}}
            if isinstance(obj, type):
                return {{k: f.__code__ for k, f in vars(obj).items() if hasattr(f, "__code__")}}
            return {{}}

        theirs = book_modules()
        for m in theirs:
            del sys.modules[m]
        importlib.import_module("seqlab.exercises.{q.module}")
        fresh = book_modules()
        patched = []
        for name, module in fresh.items():
            if name.startswith("seqlab.exercises") or name not in theirs:
                continue
            for attr, value in vars(module).items():
                if getattr(value, "__module__", None) != name:
                    continue
                want, got = functions(value), functions(getattr(theirs[name], attr, None))
                changed = [k for k in want.keys() | got.keys() if got.get(k) != want.get(k)]
                patched += [f"{{name}}.{{attr}}" + (f".{{k}}" if k else "") for k in changed]
        for m in fresh:
            del sys.modules[m]
        sys.modules.update({{m: mod for m, mod in theirs.items() if not m.startswith("seqlab.exercises")}})
        assert not patched, "笔记本改写了本书的库（" + "、".join(sorted(patched)[:3]) + "），这道题不计分。"
        check = getattr(importlib.import_module("seqlab.exercises.{q.module}"), "{q.check}")
        missing = [n for n in {list(q.answers)!r} if n not in env]
        assert not missing, "笔记本里没有定义 " + "、".join(missing) + "：定义它的单元格被删除或改名了？"

        def too_slow(signum, frame):
            raise TimeoutError("运行超过 {TEST_SECONDS} 秒，可能有死循环")

        signal.signal(signal.SIGALRM, too_slow)
        signal.alarm({TEST_SECONDS})
        try:
            result = check(*[env[n] for n in {list(q.answers)!r}])
        finally:
            signal.alarm(0)
        assert result.passed, result.message
    '''
    return textwrap.dedent(body).strip("\n")


def master_notebook(nb, section: str):
    """书中的笔记本 → otter assign 的主笔记本（不改原笔记本）。"""
    qs = questions(nb)
    config = {
        "name": assignment_name(section),
        "init_cell": False,
        "check_all_cell": False,
        "export_cell": False,
        "run_tests": True,
        "solutions_pdf": False,
        "template_pdf": False,
        "generate": {"pdf": False, "filtering": False},
        "tests": {"ok_format": False, "files": True},
    }
    cells = [_raw("# ASSIGNMENT CONFIG\n" + json.dumps(config, ensure_ascii=False, indent=1))]
    by_starter = {q.starter: q for q in qs}
    skip = {j for q in qs for j in q.solutions}
    for i, cell in enumerate(nb.cells):
        if i in skip or "solution" in _tags(cell):
            continue  # 参考答案已并入答案单元格；答案的说明文字只留在教师答案里
        if i in by_starter:
            q = by_starter[i]
            cells += [
                _raw(f"# BEGIN QUESTION\nname: {q.name}\npoints: {q.points}"),
                _raw("# BEGIN SOLUTION"),
                _answer_cell(nb, q),
                _raw("# END SOLUTION"),
                _raw("# BEGIN TESTS"),
                nbformat.v4.new_code_cell(hidden_test_source(q)),
                _raw("# END TESTS"),
                _raw("# END QUESTION"),
            ]
            continue
        cell = nbformat.from_dict(cell)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    master = nbformat.from_dict(nb)
    master.cells = cells
    master.metadata.pop("widgets", None)
    return master, qs


def build(path: Path, out: Path) -> dict:
    """生成一节的作业，返回它的清单（节号、文件、每道题的分值）。"""
    section = section_of(path)
    master, qs = master_notebook(nbformat.read(path, as_version=4), section)
    work = out / section
    if work.exists():
        shutil.rmtree(work)
    (work / "source").mkdir(parents=True)
    master_path = work / "source" / path.name
    nbformat.write(master, master_path)
    # 笔记本用相对路径引用插图；otter 在 source/ 旁边运行它，插图放在它旁边。
    if (path.parent / "images").is_dir():
        shutil.copytree(path.parent / "images", work / "source" / "images")
    subprocess.run(
        [str(Path(sys.executable).parent / "otter"), "assign", master_path.name, str(work / "dist")],
        cwd=work / "source",
        check=True,
    )
    zips = sorted((work / "dist" / "autograder").glob("*.zip"))
    manifest = {
        "section": section,
        "assignment": assignment_name(section),
        "notebook": path.name,
        "autograder": str(zips[-1].relative_to(out)),
        "student": str((work / "dist" / "student" / path.name).relative_to(out)),
        "questions": [{"name": q.name, "key": q.key, "title": q.title, "points": q.points} for q in qs],
    }
    (work / "assignment.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    return manifest


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    wanted = set(argv[1:])
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o700)  # 答案与评分文件只给教师：评分时学生的代码（以无权限用户运行）读不到
    for path in notebooks():
        if wanted and section_of(path) not in wanted:
            continue
        m = build(path, out)
        total = sum(q["points"] for q in m["questions"])
        print(f"第 {m['section']} 节：{len(m['questions'])} 道题，共 {total} 分")
        print(f"  学生版：{out / m['student']}")
        print(f"  评分包：{out / m['autograder']}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "lib"))
    raise SystemExit(main(sys.argv[1:]))
