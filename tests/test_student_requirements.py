"""学生环境由 import 语句推出来：笔记本与 seqlab 导入的每个第三方模块，学生版的依赖都要提供。

不建虚拟环境、不联网：学生版会装的包是 requirements-student.txt 里的包连同它们（递归地）声明的依赖，
依赖关系读本书环境里装好的同一批包的元数据（版本由 constraints.txt 固定，与学生版相同，下面也检查这一点）；
模块由哪个包提供，用 ``importlib.metadata.packages_distributions``。每个笔记本需要哪些第三方模块由
``tools/student.py`` 从 import 语句（ast）推出：笔记本自己导入的，加上它用到的 seqlab 模块递归导入的，
``try … except ImportError`` 里有退路的导入不算。第一格（环境检查）列出的正是这一份清单。
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from importlib import metadata

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from student import (
    PACKAGE,
    ROOT,
    STUDENT_REQUIREMENTS,
    distribution_of,
    library_third_party,
    module_owners,
    notebook_third_party,
    notebooks,
    third_party_closure,
)

NOTEBOOKS = notebooks()
# 不被导入、却不可少的包：在 requirements-student.txt 的行尾用这句话开头的注释写明用途。
NOT_IMPORTED = "# 不被导入："


def _requirement_lines() -> list[tuple[Requirement, str]]:
    """requirements-student.txt 里的每个包：``(要求, 行尾注释)``；pip 的选项行（-c、--extra-index-url）跳过。"""
    lines = []
    for line in STUDENT_REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        text, _, comment = line.partition(" #")
        if text.strip() and not text.lstrip().startswith(("#", "-")):
            lines.append((Requirement(text.strip()), f"#{comment}".strip() if comment else ""))
    return lines


def _pins(path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.partition("#")[0].strip()
        if line and not line.startswith("-"):
            req = Requirement(line)
            pins[canonicalize_name(req.name)] = str(req.specifier).removeprefix("==")
    return pins


@cache
def student_distributions() -> dict[str, str]:
    """学生版会装的包（规范名 → 版本）：直接依赖连同元数据里声明的依赖（按当前解释器求值环境标记）。"""
    found: dict[str, str] = {}
    todo = [(req.name, frozenset(req.extras)) for req, _ in _requirement_lines()]
    while todo:
        name, extras = todo.pop()
        dist = metadata.distribution(name)
        key = canonicalize_name(dist.metadata["Name"])
        if key in found and not extras:
            continue
        found[key] = dist.version
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in {"", *extras}):
                todo.append((req.name, frozenset(req.extras)))
    return found


@cache
def student_modules() -> frozenset[str]:
    """学生版的包提供的顶层模块。"""
    dists = set(student_distributions())
    return frozenset(m for m, owners in module_owners().items()
                     if any(canonicalize_name(d) in dists for d in owners))


def _missing(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m not in student_modules())


def test_every_library_module_imports_only_what_students_have():
    missing = {name: _missing(mods) for name, mods in library_third_party().items() if _missing(mods)}
    assert not missing, f"这些 seqlab 模块导入了学生版的依赖里没有的第三方模块（请加进 requirements-student.txt）：{missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_imports_only_what_students_have(path):
    missing = _missing(notebook_third_party(nbformat.read(path, as_version=4)))
    assert not missing, f"{path.name} 在学生环境里缺少：{missing}（换成本书已有的做法，或加进 requirements-student.txt）"


def test_every_student_requirement_is_imported_or_explained():
    needed = set().union(*library_third_party().values(),
                         *(notebook_third_party(nbformat.read(p, as_version=4)) for p in NOTEBOOKS))
    provides: dict[str, set[str]] = {}
    for module, owners in module_owners().items():
        for owner in owners:
            provides.setdefault(canonicalize_name(owner), set()).add(module)
    unexplained = [str(req) for req, comment in _requirement_lines()
                   if not provides.get(canonicalize_name(req.name), set()) & needed
                   and not comment.startswith(NOT_IMPORTED)]
    assert not unexplained, f"没有任何笔记本或 seqlab 模块导入这些包，行尾也没有写明用途（“{NOT_IMPORTED}…”）：{unexplained}"


def test_student_pins_agree_with_the_book_environment():
    """直接依赖的版本与 constraints.txt、本书环境里装好的一致；学生版会装的每个包都由 constraints.txt 固定。"""
    constraints = _pins(ROOT / "constraints.txt")
    for req, _ in _requirement_lines():
        pinned = str(req.specifier).removeprefix("==")
        assert constraints.get(canonicalize_name(req.name), pinned) == pinned, req
        installed = metadata.version(req.name)
        assert installed.split("+")[0] == pinned, f"{req.name}：本书环境里是 {installed}，学生版固定 {pinned}"
    direct = {canonicalize_name(req.name) for req, _ in _requirement_lines()}
    unpinned = sorted(set(student_distributions()) - direct - set(constraints))
    assert not unpinned, f"学生版会装、但 constraints.txt 没有固定版本的包：{unpinned}"


def _environment_check(nb) -> tuple[ast.Module, dict[str, str]]:
    source = next(c for c in nb.cells if c.cell_type == "code").source
    tree = ast.parse(source)
    (needs,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["NEEDS"]]
    return tree, ast.literal_eval(needs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_first_cell_checks_every_third_party_module_the_section_needs(path):
    nb = nbformat.read(path, as_version=4)
    tree, needs = _environment_check(nb)
    expected = notebook_third_party(nb)
    assert list(needs)[0] == PACKAGE, "第一格先检查 seqlab 本身"
    assert set(needs) - {PACKAGE} == expected, (
        f"{path.name} 的第一格应当检查：{sorted(expected)}；多了 {sorted(set(needs) - {PACKAGE} - expected)}，"
        f"少了 {sorted(expected - set(needs))}")
    wrong = {m: (p, distribution_of(m)) for m, p in needs.items() if m != PACKAGE and p != distribution_of(m)}
    assert not wrong, f"说明里的 pip 包名不对（写的, 应当是）：{wrong}"
    # 第一格要在什么都没装的内核里运行：只导入标准库
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= set(sys.stdlib_module_names), imported


def test_the_derivation_sees_what_a_notebook_would_miss():
    """推导本身：笔记本里的 ``from myst_nb import glue``、``import pandas`` 会被发现；seqlab.glue 里
    有退路的 myst_nb 不算；按名字导入的子模块（seqlab.train 的配方、seqlab.explorers 的探索器）也算进来。"""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("# 环境检查"),
        nbformat.v4.new_code_cell("%matplotlib inline\nfrom myst_nb import glue\nfrom seqlab import lm"),
        nbformat.v4.new_code_cell("import pandas as pd\n!ls"),
    ])
    needed = notebook_third_party(nb)
    assert {"myst_nb", "pandas", "torch"} <= needed and _missing(needed) == ["myst_nb", "pandas"]
    assert "IPython" in third_party_closure({"seqlab.glue"}) and "myst_nb" not in third_party_closure({"seqlab.glue"})
    assert {"tqdm", "safetensors"} <= third_party_closure({"seqlab.train"})
    assert {"ipywidgets", "anywidget", "jieba"} <= third_party_closure({"seqlab.explorers"})
