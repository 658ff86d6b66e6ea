"""一个概念一个名字：正文只用术语表（chapters/appendix/glossary.md）里的词条名，不用它的别名。

``ONE_NAME`` 列出几个曾经混用过的概念：键是术语表里的词条名，值是不再使用的说法。
检查的范围：每一节笔记本的 markdown 单元格（包括练习与参考答案）与那一节的自测题（逐节各一个测试），以及
全书共用的前言、章导读、附录和教师指南。代码单元格不检查（标识符和注释另有约定）。

同一个测试文件还检查两件与措辞有关的事：Query/Key/Value 在中文正文里首字母大写；正文里没有超过 170 个字的
句子（句子以 。！？ 或段落结束为界；代码、公式、表格和链接地址不算）。
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
    "位置编码": ["位置表示", "位置向量"],
    "Embedding": ["词向量"],
    "前馈网络": ["前馈层"],
    "单元状态": ["细胞状态"],
    "KV cache": ["KV 缓存", "KV缓存"],
    "batch 大小": ["批大小", "批量"],
    "词表": ["字表"],
    "提示词": ["提示"],
}
# 别名的写法不总是字面：这些别名用正则表达式找，以免把别的词算进来。
ALIAS_PATTERN: dict[str, str] = {
    # “批量评分”说的是一次评很多份作业，不是 batch
    "批量": r"批量(?!评分|地|生成|下载)",
    # “这个字表示…”里的“字表”不是词表
    "字表": r"字表(?![示达])",
    # “提示”在练习里是“提示：……”（hint），检查函数“给出提示”也是；只有说模型输入的地方才是“提示词”
    "提示": r"提示(?!词|：|:|框)(?=长度|里|中|的末尾|的最后|的开头|之后|后面|的\s*token|末尾|开头|部分)"
            r"|(?:一段|这段|整段|给定的?|输入的?|同一个|短|长|用户的)提示(?!词|：|:|框)"
            r"|(?:把|对|给)提示(?!词|：|:|框)(?:送|喂|做|编码|切)",
}
# Query/Key/Value 在中文正文里首字母大写；代码、公式与英文句子不查（只查紧挨着汉字的小写写法）。
LOWERCASE_QKV = re.compile(r"(?:(?<=[\u4e00-\u9fff])\s?|(?<=[，。、（）“”：；]))(query|key|value)(?=\s?[\u4e00-\u9fff，。、（）])")


def _glossary_entries() -> set[str]:
    """术语表 ``{glossary}`` 块里每个词条的名字（顶格的行；缩进的行是释义）。"""
    text = GLOSSARY.read_text(encoding="utf-8")
    block = text[text.index("```{glossary}") : text.rindex("```")]
    return {line.strip() for line in block.splitlines()[1:] if line.strip() and not line.startswith(" ")}


def _strip_code(text: str) -> str:
    """去掉代码块、行内代码、公式和链接地址：术语只在正文里查。"""
    text = re.sub(r"^(`{3,}|~{3,})[^\n{]*\n.*?^\1\s*$", " ", text, flags=re.S | re.M)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " ", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    return re.sub(r"https?://\S+", " ", text)


def _offences(text: str, where: str) -> list[str]:
    found = []
    for canonical, aliases in ONE_NAME.items():
        for alias in aliases:
            for m in re.finditer(ALIAS_PATTERN.get(alias, re.escape(alias)), text):
                context = text[max(0, m.start() - 20) : m.end() + 12].replace("\n", " ")
                found.append(f"{where}：「{m.group(0)}」应写作「{canonical}」——…{context}…")
    for m in LOWERCASE_QKV.finditer(_strip_code(text)):
        found.append(f"{where}：中文正文里写作「{m.group(1).capitalize()}」，不是「{m.group(1)}」")
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


@pytest.mark.parametrize("text", ["细胞状态", "位置向量", "KV 缓存", "批大小", "批量 32", "这张字表",
                                  "提示长度为 8", "提示里的最后一个字", "给定的提示", "用 query 去匹配"])
def test_the_check_finds_each_new_alias(text):
    assert _offences(text, "例子"), text


@pytest.mark.parametrize("text", ["提示：先投影", "检查会给出具体的提示", "“实时版本”的提示框", "批量评分", "这个字表示",
                                  "提示词长度", "`query`", "$q_i$ 是 query vector", "Query 与 Key"])
def test_the_check_leaves_hints_and_other_words_alone(text):
    assert not _offences(text, "例子"), text


# ---------------------------------------------------------------- 句子不超过 170 个字
MAX_SENTENCE = 170


def sentences(markdown: str) -> list[str]:
    """正文里的句子（以 。！？、段落结束或列表项结束为界）。不算：代码块、公式、表格行、标题、指令与选项行、链接地址，
    以及 MyST 角色的内容（``{ref}`…``` 只算作一个字）。"""
    text = re.sub(r"^(`{3,}|~{3,})(?!\{)[^\n]*\n.*?^\1\s*$", "\n\n", markdown, flags=re.S | re.M)
    text = re.sub(r"\$\$.*?\$\$", "\n\n", text, flags=re.S)
    text = re.sub(r"\$[^$\n]+\$", "式", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "引", text)
    text = re.sub(r"`[^`\n]*`", "码", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<?https?://\S+>?", "址", text)
    keep = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("|", "#", "```", "~~~", ":", "(", "<")) and not s.startswith("（"):
            keep.append("")
            continue
        if re.match(r"^(?:[-*+]|\d+\.)\s", s):
            keep.append("")  # 列表的每一项自成一段
        keep.append(s)
    out = []
    for paragraph in re.split(r"\n\s*\n", "\n".join(keep)):
        flat = re.sub(r"\s*\n\s*", "", paragraph)
        out += [s.strip() for s in re.findall(r"[^。！？]+[。！？]?[”）」]?", flat) if s.strip()]
    return out


def long_sentences(markdown: str, where: str) -> list[str]:
    return [f"{where}：{len(s)} 个字——{s[:40]}…" for s in sentences(markdown) if len(s) > MAX_SENTENCE]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_sentence_in_a_section_is_longer_than_170_characters(path):
    nb = nbformat.read(path, as_version=4)
    problems = [p for i, c in enumerate(nb.cells) if c.cell_type == "markdown" for p in long_sentences(c.source, f"第 {i} 格")]
    quiz = ROOT / "lib" / "seqlab" / "quizzes" / f"sec{path.name[:2]}.json"
    if quiz.exists():
        for q, question in enumerate(json.loads(quiz.read_text(encoding="utf-8")), 1):
            texts = [question["question"]] + [a.get(k, "") for a in question.get("answers", []) for k in ("answer", "feedback")]
            problems += [p for text in texts for p in long_sentences(text, f"{quiz.name} 第 {q} 题")]
    assert not problems, f"{path.name} 有 {len(problems)} 个句子超过 {MAX_SENTENCE} 个字：\n" + "\n".join(problems)


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_no_sentence_on_the_shared_pages_is_longer_than_170_characters(path):
    problems = long_sentences(path.read_text(encoding="utf-8"), path.name)
    assert not problems, f"{path.name} 有 {len(problems)} 个句子超过 {MAX_SENTENCE} 个字：\n" + "\n".join(problems)


def test_sentence_splitter():
    text = "第一句。第二句！\n\n| 表格 | 不算 |\n\n```python\nx = '很长' * 500\n```\n第三句用 $a+b$ 和 {ref}`sec-1-1`？"
    assert sentences(text) == ["第一句。", "第二句！", "第三句用 式 和 引？"]
    assert long_sentences("字" * 171 + "。", "例") and not long_sentences("字" * 169 + "。", "例")
