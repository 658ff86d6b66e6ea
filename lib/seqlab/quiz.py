"""每节末尾的“自测”：几道选择题，点选后立即给出中文反馈。

题目保存在 ``seqlab/quizzes/secNN.json``（字段 ``question``、``type``、``answers``，每个选项有
``answer``、``correct``、``feedback``）。``show`` 把它们渲染成一段**不含 JavaScript** 的 HTML：
每个选项是一个单选框（多选题是复选框），选中后紧跟在它后面的反馈由 CSS 显示出来。
所以它在网站上、在 JupyterLab 和 VS Code 里、甚至在只显示 HTML 的查看器里都一样可用，
不需要内核，不加载任何外部资源，也不会有脚本出错；公式由所在页面自己的 MathJax 排版。
"""

from __future__ import annotations

import html
import json
from pathlib import Path

QUIZ_DIR = Path(__file__).resolve().parent / "quizzes"
KINDS = {"multiple_choice": "radio", "many_choice": "checkbox"}

# 颜色只用半透明的强调色，浅色和深色页面上都清楚；选项可以用 Tab / 方向键 / 空格操作。
STYLE = """
.seqlab-quiz{max-width:760px;margin:.5em 0}
.seqlab-quiz fieldset{border:1px solid rgba(127,127,127,.45);border-radius:8px;margin:0 0 1em;padding:.6em 1em}
.seqlab-quiz legend{float:none;width:auto;font-weight:600;padding:0 .3em}
.seqlab-quiz .sq-hint{font-size:.9em;opacity:.75;margin:0 0 .4em}
.seqlab-quiz input{position:absolute;opacity:0;width:1px;height:1px}
.seqlab-quiz label{display:block;cursor:pointer;margin:.35em 0;padding:.4em .7em;border-radius:6px;
  border:1px solid rgba(127,127,127,.35)}
.seqlab-quiz label:hover{background:rgba(52,101,164,.08)}
.seqlab-quiz input:focus-visible+label{outline:2px solid #3465a4;outline-offset:2px}
.seqlab-quiz input:checked+label{border-color:#3465a4;background:rgba(52,101,164,.14)}
.seqlab-quiz .sq-feedback{display:none;margin:.1em 0 .5em 1.2em;padding:.3em .7em;border-left:4px solid}
.seqlab-quiz input:checked+label+.sq-feedback{display:block}
.seqlab-quiz .sq-right{border-color:#2e8b57;background:rgba(46,139,87,.12)}
.seqlab-quiz .sq-wrong{border-color:#b5485d;background:rgba(181,72,93,.12)}
"""


def questions(section: str) -> list[dict]:
    """第 ``section`` 节（如 ``"1.3"``）的题目，读入时检查格式。"""
    path = QUIZ_DIR / f"sec{int(section.split('.')[1]):02d}.json"
    items = json.loads(path.read_text(encoding="utf-8"))
    for q in items:
        if q.get("type") not in KINDS:
            raise ValueError(f"{path.name}：只支持选择题：{q.get('question')}")
        answers = q["answers"]
        if not any(a.get("correct") for a in answers):
            raise ValueError(f"{path.name}：题目没有正确答案：{q['question']}")
        if not all(a.get("feedback") for a in answers):
            raise ValueError(f"{path.name}：每个选项都要有反馈：{q['question']}")
    return items


def _question_html(q: dict, name: str, number: int) -> str:
    kind = KINDS[q["type"]]
    hint = '<p class="sq-hint">（多选：可以选几个选项）</p>' if kind == "checkbox" else ""
    parts = [f'<fieldset><legend>{number}. {html.escape(q["question"])}</legend>{hint}']
    for k, a in enumerate(q["answers"]):
        ident = f"{name}-{k}"
        mark, css = ("✅", "sq-right") if a.get("correct") else ("❌", "sq-wrong")
        parts.append(
            f'<input type="{kind}" name="{name}" id="{ident}">'
            f'<label for="{ident}">{html.escape(a["answer"])}</label>'
            f'<div class="sq-feedback {css}">{mark} {html.escape(a["feedback"])}</div>'
        )
    parts.append("</fieldset>")
    return "".join(parts)


def to_html(section: str) -> str:
    """第 ``section`` 节自测题的 HTML（每节的控件名不同，一页里放几份也不会互相干扰）。"""
    prefix = "sq-" + section.replace(".", "-")
    body = "".join(_question_html(q, f"{prefix}-q{i}", i) for i, q in enumerate(questions(section), start=1))
    intro = '<p class="sq-hint">点选一个选项，马上就能看到它对在哪里、错在哪里。</p>'
    return f'<div class="seqlab-quiz" id="{prefix}"><style>{STYLE}</style>{intro}{body}</div>'


def show(section: str) -> None:
    """在笔记本里显示第 ``section`` 节的自测题。"""
    from IPython.display import HTML, display

    display(HTML(to_html(section)))
