"""笔记本的结构约定（执行由 nbval 负责）：不存输出、第一格调用 setup、动手验证、实时单元格的标签。"""

import re

import nbformat
import pytest

from student import notebooks

NOTEBOOKS = notebooks()


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.name)
def nb(request):
    return request.param, nbformat.read(request.param, as_version=4)


def test_there_are_six_sections():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06"]


def test_no_stored_outputs(nb):
    path, book = nb
    stored = [c.source[:40] for c in book.cells if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not stored, f"{path.name} 存有输出：{stored}"


def test_first_code_cell_calls_setup_and_title_has_a_label(nb):
    path, book = nb
    guard, first_code = [c for c in book.cells if c.cell_type == "code"][:2]
    assert "EnvironmentNotReady" in guard.source, "第一格先检查环境（缺少 seqlab 时用中文说明怎样安装）"
    assert "remove-cell" in guard.metadata.get("tags", [])
    assert "seqlab.setup()" in first_code.source
    number = int(path.name[:2])
    assert book.cells[0].source.startswith(f"(sec-1-{number})=\n# ")
    assert not re.match(r"# \d", book.cells[0].source.splitlines()[1]), "标题不要手写编号（网站自动编号）"


def test_has_hands_on_checks(nb):
    path, book = nb
    text = "\n".join(c.source for c in book.cells if c.cell_type == "markdown")
    assert text.count("动手验证") >= 2, f"{path.name} 的“动手验证”太少"
    asserts = sum(c.source.count("assert ") for c in book.cells if c.cell_type == "code")
    assert asserts >= 5


def test_live_cells_show_code_only_and_are_not_executed_by_the_site_build(nb):
    path, book = nb
    live = [c for c in book.cells if c.cell_type == "code" and ".live()" in c.source]
    for cell in live:
        tags = cell.metadata.get("tags", [])
        assert "remove-output" in tags and "skip-execution" in tags, f"{path.name}: {cell.source!r} 缺少标签"
