"""全书的“装置”：术语表的每个条目都从正文链接过去，正文引用了本章依赖的每篇论文。"""

import json
import re
from pathlib import Path

import pytest

import book_ext

ROOT = Path(__file__).resolve().parent.parent
REQUIRED_CITATIONS = [
    "bengio1994learning", "hochreiter1997long", "pascanu2013difficulty", "cho2014learning",
    "sutskever2014sequence", "bahdanau2015neural", "luong2015effective", "vaswani2017attention",
    "levesque2012winograd",
]


def _prose() -> str:
    parts = [(ROOT / "intro.md").read_text(encoding="utf-8")]
    for path in sorted((ROOT / "chapters").rglob("*")):
        if path.suffix == ".md" and path.name != "glossary.md":
            parts.append(path.read_text(encoding="utf-8"))
        elif path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            parts += ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    return "\n".join(parts)


PROSE = _prose()


def test_glossary_has_at_least_40_entries_and_each_is_linked_from_the_text():
    entries = book_ext.glossary_entries()
    assert len(entries) >= 40
    linked = {m.group(1).split("<")[-1].rstrip(">").strip() for m in re.finditer(r"\{term\}`([^`]+)`", PROSE)}
    unlinked = [entry[0] for entry in entries if not linked & set(entry)]
    assert not unlinked, f"这些术语在正文里从没有用 {{term}} 链接过：{unlinked}"
    unknown = linked - set(book_ext.glossary_terms())
    assert not unknown, f"{{term}} 指向了术语表里没有的词：{unknown}"


@pytest.mark.parametrize("key", REQUIRED_CITATIONS)
def test_required_papers_are_in_the_bibliography_and_cited(key):
    assert f"{{{key}," in (ROOT / "references.bib").read_text(encoding="utf-8").replace(" ", "")
    assert re.search(r"\{cite(:[pt])?\}`[^`]*\b" + key + r"\b", PROSE), f"正文没有引用 {key}"


def test_launch_buttons_appear_only_when_the_repository_url_is_given():
    # 没有仓库地址：启动按钮与仓库按钮都去掉（None 表示从主题选项里删去这个键）
    assert book_ext.launch_options({}) == {"launch_buttons": None, "repository_url": None, "use_repository_button": False}
    options = book_ext.launch_options({"SEQLAB_REPOSITORY_URL": "https://github.com/org/book"})
    assert options["repository_url"] == "https://github.com/org/book" and options["repository_branch"] == "main"
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert "binderhub_url: https://mybinder.org" in config and "colab_url: https://colab.research.google.com" in config
    assert "thebe: true" not in config, "thebe 会让网页从外网加载脚本"


def test_no_glossary_name_appears_twice():
    """同一个词在术语表里出现两次，Sphinx 会报“重复的术语”，make book（-W）就失败了。"""
    names = book_ext.glossary_terms()
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
