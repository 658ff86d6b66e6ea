"""练习框架：元数据与笔记本一致；读者的答案按他写的样子判；学生版不泄露答案。

完整版笔记本里每道练习的顺序是：起始代码 → 检查（判读者自己的代码）→ 折叠的参考答案（末尾再检查一次答案）。
完整版由 nbval 在 SEQLAB_STRICT_CHECKS=1 下执行：答错的检查会报错，这证明每个参考答案都通过；
紧跟起始代码的检查在那里只显示“还没有完成”。本文件证明：完整版里没有哪个参考答案能在读者的检查之前运行、
替换掉读者的代码；学生版不带答案。检查在起始代码上报告 ❌ 由 tests/test_student_env.py 在干净的学生环境里证明。
"""

import importlib
import pkgutil
import sys
from pathlib import Path

import nbformat
import pytest

import seqlab.exercises as ex

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import student  # noqa: E402

NOTEBOOKS = student.notebooks()
for info in pkgutil.iter_modules(ex.__path__):
    importlib.import_module(f"seqlab.exercises.{info.name}")


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _cells(path, tag):
    return [c for c in nbformat.read(path, as_version=4).cells if tag in _tags(c)]


def test_every_notebook_exists_and_has_at_least_three_exercises():
    assert NOTEBOOKS, "chapters/ 下没有笔记本"
    for path in NOTEBOOKS:
        checks = _cells(path, "exercise-check")
        assert len(checks) >= 3, f"{path.name} 只有 {len(checks)} 道自动检查的练习"
        assert len(_cells(path, "exercise-starter")) >= len(checks)
        assert _cells(path, "solution"), f"{path.name} 没有参考答案"


def test_exercise_metadata_in_the_notebooks_matches_the_library():
    text = "\n".join(c.source for path in NOTEBOOKS for c in nbformat.read(path, as_version=4).cells)
    assert ex.EXERCISES
    for exercise in ex.EXERCISES.values():
        line = f"难度 {exercise.stars} · 约 {exercise.minutes} 分钟 · 目标：{exercise.objective}"
        assert line in text, f"练习 {exercise.key} 的元数据行没有出现在笔记本里：{line}"


def test_solution_cells_are_gated_and_tagged():
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown" and ("{solution-start}" in cell.source or "{solution-end}" in cell.source):
                assert "solution" in _tags(cell), f"{path.name}：答案的说明单元格必须带 solution 标签"


def test_the_readers_check_runs_before_any_solution():
    """完整版里，从起始代码到它的检查之间没有参考答案：“全部运行”判的是读者写的代码，不是答案。
    每份参考答案的末尾再检查一次答案本身（标签 solution-check，与读者的检查是同一行代码）。"""
    for path in NOTEBOOKS:
        cells = nbformat.read(path, as_version=4).cells
        starter = None
        for i, cell in enumerate(cells):
            tags = _tags(cell)
            if "exercise-starter" in tags:
                starter = i
            elif "exercise-check" in tags:
                assert starter is not None, f"{path.name} 第 {i} 格：检查前面没有起始代码"
                between = [j for j in range(starter + 1, i) if "solution" in _tags(cells[j])]
                assert not between, f"{path.name}：第 {between} 格的参考答案会在读者的检查（第 {i} 格）之前运行"
                after = i + 1
                while after < len(cells) and "solution" in _tags(cells[after]) and "solution-check" not in _tags(cells[after]):
                    after += 1
                assert after < len(cells) and cells[after].source == cell.source, (
                    f"{path.name}：第 {i} 格的检查之后应是折叠的参考答案，并以同样的检查结束"
                )
                starter = None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_student_edition_leaks_no_solution(path):
    """学生版里没有答案单元格，也没有哪段答案代码混进别的单元格。学生版在干净环境里从头到尾执行、
    每个检查都报告 ❌，由 tests/test_student_env.py 证明（make test-lab）。"""
    full = nbformat.read(path, as_version=4)
    nb = student.student_version(full)
    assert not any("solution" in _tags(c) for c in nb.cells)
    leaked = [
        c.source for c in full.cells if "solution" in _tags(c) and "solution-check" not in _tags(c) and c.cell_type == "code"
    ]
    source = "\n".join(c.source for c in nb.cells)
    assert not any(code.strip() in source for code in leaked), "学生版里出现了答案代码"
