"""一个概念一个名字：正文只用术语表（chapters/appendix/glossary.md）里的词条名，不用它的别名。

``ONE_NAME`` 列出几个曾经混用过的概念：键是术语表里的词条名，值是不再使用的说法。
检查的范围：每一节笔记本的 markdown 单元格与那一节的自测题（逐节各一个测试），以及全书共用的
前言、章导读、附录和教师指南。代码单元格不检查（标识符和注释另有约定）。
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from student import notebooks

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "chapters" / "appendix" / "glossary.md"
NOTEBOOKS = notebooks()
SHARED = [ROOT / "intro.md", ROOT / "chapters" / "ch01" / "index.md", ROOT / "chapters" / "teacher" / "guide.md",
          *sorted((ROOT / "chapters" / "appendix").glob("*.md"))]

ONE_NAME: dict[str, list[str]] = {
    "交叉注意力": ["跨序列注意力"],
    "位置编码": ["位置表示"],
    "Embedding": ["词向量"],
    "前馈网络": ["前馈层"],
}


def _glossary_entries() -> set[str]:
    """术语表 ``{glossary}`` 块里每个词条的名字（顶格的行；缩进的行是释义）。"""
    text = GLOSSARY.read_text(encoding="utf-8")
    block = text[text.index("```{glossary}") : text.rindex("```")]
    return {line.strip() for line in block.splitlines()[1:] if line.strip() and not line.startswith(" ")}


def _offences(text: str, where: str) -> list[str]:
    found = []
    for canonical, aliases in ONE_NAME.items():
        for alias in aliases:
            for m in re.finditer(re.escape(alias), text):
                context = text[max(0, m.start() - 20) : m.end() + 12].replace("\n", " ")
                found.append(f"{where}：「{alias}」应写作「{canonical}」——…{context}…")
    return found


def test_every_canonical_name_is_a_glossary_entry_and_no_alias_is():
    entries = _glossary_entries()
    for canonical, aliases in ONE_NAME.items():
        assert canonical in entries, f"「{canonical}」不是术语表的词条"
        for alias in aliases:
            assert alias not in entries, f"「{alias}」不应是术语表的词条（它是「{canonical}」的别名）"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_section_uses_one_name_per_concept(path):
    nb = nbformat.read(path, as_version=4)
    problems = [p for i, c in enumerate(nb.cells) if c.cell_type == "markdown" for p in _offences(c.source, f"第 {i} 格")]
    quiz = ROOT / "lib" / "seqlab" / "quizzes" / f"sec{path.name[:2]}.json"
    if quiz.exists():
        problems += _offences(json.dumps(json.loads(quiz.read_text(encoding="utf-8")), ensure_ascii=False), quiz.name)
    assert not problems, f"{path.name}：\n" + "\n".join(problems)


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_shared_pages_use_one_name_per_concept(path):
    problems = _offences(path.read_text(encoding="utf-8"), path.name)
    assert not problems, "\n".join(problems)


def test_the_check_itself_finds_an_alias():
    assert _offences("加上位置表示之后", "例子") and not _offences("加上位置编码之后", "例子")
