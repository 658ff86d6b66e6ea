"""每节末尾的“自测”：几道选择题，点选后立即给出中文反馈。

题目保存在 ``seqlab/quizzes/secNN.json``（jupyterquiz 的格式），由 jupyterquiz 渲染成
HTML 与一段内联 JavaScript：网站上离线可用，JupyterLab 里同样可用，不需要 Python 内核来判分。
这里只用选择题（jupyterquiz 的数值题有英文界面文字）。
"""

from __future__ import annotations

import json
from pathlib import Path

QUIZ_DIR = Path(__file__).resolve().parent / "quizzes"


def questions(section: str) -> list[dict]:
    """第 ``section`` 节（如 ``"1.3"``）的题目，读入时检查格式。"""
    path = QUIZ_DIR / f"sec{int(section.split('.')[1]):02d}.json"
    items = json.loads(path.read_text(encoding="utf-8"))
    for q in items:
        if q.get("type") not in {"multiple_choice", "many_choice"}:
            raise ValueError(f"{path.name}：只支持选择题：{q.get('question')}")
        answers = q["answers"]
        if not any(a.get("correct") for a in answers):
            raise ValueError(f"{path.name}：题目没有正确答案：{q['question']}")
        if not all(a.get("feedback") for a in answers):
            raise ValueError(f"{path.name}：每个选项都要有反馈：{q['question']}")
    return items


def show(section: str) -> None:
    """在笔记本里显示第 ``section`` 节的自测题。"""
    from jupyterquiz import display_quiz

    display_quiz(questions(section), shuffle_answers=False, max_width=760)
