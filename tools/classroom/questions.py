"""每一节的练习在笔记本里的位置：评分要知道哪几道题、每道题的检查函数、学生要定义的名字和分值。

完全由单元格标签决定：标签 ``exercise-starter`` 的起始代码，其后第一个标签 ``exercise-check`` 的检查单元格
（形如 ``sec01.check_x(答案名, …)``）。分值 = 练习的难度（★ 的个数），取自 ``seqlab.exercises`` 的元数据。
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"


@dataclass(frozen=True)
class Question:
    """一道练习：编号、标题、分值、检查函数，以及学生要定义的名字。"""

    key: str  # 练习编号，例如 "1.1.1"
    title: str
    points: int
    module: str  # seqlab.exercises 里的模块名，例如 "sec01"
    check: str  # 检查函数名
    answers: tuple[str, ...]  # 学生要定义的名字（检查单元格的参数）
    starter: int  # 起始代码单元格的下标
    check_cell: int

    @property
    def name(self) -> str:
        return "q" + self.key.replace(".", "_")

    @property
    def signature(self) -> tuple[str, str, tuple[str, ...]]:
        """检查单元格解析出的 (模块, 检查函数, 答案名)：学生版与完整版里是同一个。"""
        return self.module, self.check, self.answers

    def checker(self):
        return getattr(importlib.import_module(f"seqlab.exercises.{self.module}"), self.check)


def notebooks() -> list[Path]:
    return sorted(CHAPTERS.glob("*/[0-9][0-9]_*.ipynb"))


def section_of(path: Path) -> str:
    """``chapters/ch01/03_rnn_history.ipynb`` → ``"1.3"``。"""
    return f"{int(path.parent.name[2:])}.{int(path.name[:2])}"


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def parse_check(source: str) -> tuple[str, str, tuple[str, ...]] | None:
    """``sec01.check_x(a, b)`` → ``("sec01", "check_x", ("a", "b"))``；不是这种形状的代码返回 None。"""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    node = tree.body[-1].value if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id.startswith("sec")
        and node.func.attr.startswith("check_")
        and all(isinstance(a, ast.Name) for a in node.args)
        and not node.keywords
    ):
        return node.func.value.id, node.func.attr, tuple(a.id for a in node.args)
    return None


def questions(nb) -> list[Question]:
    """按顺序列出笔记本里的练习。"""
    found, starter = [], None
    for i, cell in enumerate(nb.cells):
        tags = _tags(cell)
        if "exercise-starter" in tags:
            starter = i
        elif "exercise-check" in tags:
            parsed = parse_check(cell.source)
            if starter is None or parsed is None:
                raise ValueError(f"第 {i} 个单元格：检查应当形如 secNN.check_x(答案名, …)，且前面有起始代码")
            module, check, answers = parsed
            exercise = getattr(importlib.import_module(f"seqlab.exercises.{module}"), check).exercise
            found.append(
                Question(exercise.key, exercise.title, exercise.difficulty, module, check, answers, starter, i)
            )
            starter = None
    return found
