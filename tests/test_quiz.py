"""每节末尾的自测：题目格式正确、反馈是中文、每个笔记本都显示自己那一节的题。"""

import re

import nbformat
import pytest

from seqlab import quiz
from student import notebooks

CJK = re.compile(r"[\u4e00-\u9fff]")
NOTEBOOKS = notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_section_shows_its_own_quiz(path):
    section = f"1.{int(path.name[:2])}"
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and "quiz.show(" in c.source]
    assert len(cells) == 1, f"{path.name} 应当有且只有一个自测单元格"
    assert f'quiz.show("{section}")' in cells[0].source
    assert "remove-input" in cells[0].metadata.get("tags", [])
    headings = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## 自测")]
    assert headings, f"{path.name} 缺少“## 自测”小节"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_quiz_questions_are_well_formed(path):
    items = quiz.questions(f"1.{int(path.name[:2])}")
    assert len(items) >= 3
    for q in items:
        assert CJK.search(q["question"]) and "$" not in q["question"]
        answers = q["answers"]
        assert len(answers) >= 2
        if q["type"] == "multiple_choice":
            assert sum(bool(a.get("correct")) for a in answers) == 1, q["question"]
        for a in answers:
            assert CJK.search(a["feedback"]), f"反馈应当是中文：{a}"


def test_bad_quiz_files_are_rejected(tmp_path, monkeypatch):
    monkeypatch.setattr(quiz, "QUIZ_DIR", tmp_path)
    (tmp_path / "sec09.json").write_text(
        '[{"question": "?", "type": "multiple_choice", "answers": [{"answer": "a", "feedback": "x"}]}]',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="没有正确答案"):
        quiz.questions("1.9")
