"""批量评分：otter assign 生成第 1.1 节的作业，一个文件夹里放参考答案、起始代码和各种“捣乱”的提交，
grade.py 评完后检查成绩单的每一行：分数对、每一处丢分都有原因，而且谁也影响不了别人。

每种情况的期望分数按题意推出（例如“删掉第一题的单元格、其余都做对” = 满分减去第一题的分值）；
每道题的分值是练习的难度（★ 的个数），取自练习的元数据，不是用评分程序算出来的。读写答案和评分文件的
那份提交只在以 root 运行时评（否则学生代码与测试同一个账户，它真的能改掉本书的文件）。
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import os
from pathlib import Path

import nbformat
import pytest

import seqlab.exercises as ex
import student
from classroom import assignments, grade

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "chapters" / "ch01" / "01_language_as_sequence.ipynb"
QUESTIONS = assignments.questions(nbformat.read(BOOK, as_version=4))
POINTS = {q.key: ex.EXERCISES[q.key].difficulty for q in QUESTIONS}
KEYS = tuple(POINTS)
FULL = sum(POINTS.values())
IS_ROOT = os.getuid() == 0
FIRST, SECOND, THIRD = QUESTIONS[0], QUESTIONS[1], QUESTIONS[2]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _only(*questions) -> dict[str, int]:
    return {q.key: POINTS[q.key] for q in questions}


def _all_but(*questions) -> dict[str, int]:
    return {k: p for k, p in POINTS.items() if k not in {q.key for q in questions}}


class Class:
    """从 otter 的学生版出发，造出一个班的提交。"""

    def __init__(self, student_nb: Path, folder: Path):
        self.starter = nbformat.read(student_nb, as_version=4)
        book = nbformat.read(BOOK, as_version=4)
        self.solutions = {q.key: "\n\n".join(book.cells[j].source for j in q.solutions) for q in QUESTIONS}
        self.folder = folder

    @staticmethod
    def _tagged(nb, tag: str) -> list:
        return [c for c in nb.cells if tag in c.metadata.get("tags", [])]

    def notebook(self, solved=(), drop=(), rename=None):
        """学生版；``solved`` 里的题填上参考答案，``drop`` 里的题连同检查单元格一起删掉，
        ``rename = (题, 旧名, 新名)`` 把答案里的名字改掉。"""
        nb = nbformat.from_dict(self.starter)
        answers, checks = self._tagged(nb, "otter_answer_cell"), self._tagged(nb, "exercise-check")
        assert len(answers) == len(checks) == len(QUESTIONS)
        for q, answer, check in zip(QUESTIONS, answers, checks):
            if q in solved:
                answer.source = self.solutions[q.key]
            if rename and q == rename[0]:
                answer.source = answer.source.replace(rename[1], rename[2])
            if q in drop:
                nb.cells.remove(answer)
                nb.cells.remove(check)
        return nb

    def before_exercises(self, nb, *sources: str):
        """在第一道练习之前（准备单元格都已运行）插入代码单元格。"""
        index = nb.cells.index(self._tagged(nb, "otter_answer_cell")[0])
        nb.cells[index:index] = [nbformat.v4.new_code_cell(s) for s in sources]
        return nb

    def save(self, name: str, nb) -> None:
        nbformat.write(nb, self.folder / f"{name}.ipynb")


TAMPER = """\
import glob, pathlib
overwrite = {overwrite!r} + glob.glob('tests/*.py')
broke_in = []
for t in overwrite:
    try:
        pathlib.Path(t).write_text('def test(env): pass')
        broke_in.append(t)
    except OSError:
        pass
try:
    open({library!r}, 'r+b').close()  # 能以写方式打开本书的库就算得逞（不真的写）
    broke_in.append('library')
except OSError:
    pass
broke_in"""

MONKEYPATCH = """\
import seqlab.exercises as ex
from seqlab.exercises import sec01
always = lambda *a, **k: ex.CheckResult(next(iter(ex.EXERCISES.values())), True, '正确！')
for name in dir(sec01):
    if name.startswith('check_'):
        setattr(sec01, name, always)
ex.expect = ex.expect_close = ex.fail = lambda *a, **k: None"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("grading")
    out_assign = base / "assignments"
    out_assign.mkdir(mode=0o700)
    manifest = assignments.build(BOOK, out_assign)
    assert {q["key"]: q["points"] for q in manifest["questions"]} == POINTS
    student_nb = out_assign / manifest["student"]
    subs = base / "submissions"
    subs.mkdir()
    c = Class(student_nb, subs)
    everything = tuple(QUESTIONS)

    c.save("solution", c.notebook(solved=everything))
    c.save("starter", c.notebook())
    c.save("loop", c.before_exercises(c.notebook(solved=(FIRST, SECOND)), "while True:\n    pass"))
    c.save("import_error", c.before_exercises(c.notebook(solved=everything), "import 不存在的模块"))
    c.save("sys_exit", c.before_exercises(c.notebook(solved=everything), "import sys\nsys.exit(3)"))
    c.save("os_exit", c.before_exercises(c.notebook(solved=everything), "import os\nos._exit(1)"))
    c.save(
        "huge_alloc",
        c.before_exercises(
            c.notebook(solved=everything),
            "import torch\nx = torch.empty(50 * 2**30, dtype=torch.uint8)\nx.fill_(1)",
            "block = bytearray(50 * 2**30)",
        ),
    )
    c.save("deleted_cells", c.notebook(solved=everything[1:], drop=(FIRST,)))
    c.save("renamed", c.notebook(solved=everything, rename=(THIRD, THIRD.answers[0], "my_answer")))
    noisy = c.before_exercises(c.notebook(solved=everything), "print('喧' * 3_000_000)")
    noisy.cells[noisy.cells.index(c._tagged(noisy, "otter_answer_cell")[0]) - 1].outputs = [
        nbformat.v4.new_output("stream", text="吵" * 2_000_000)
    ]
    c.save("megabytes", noisy)
    # 改写本书的检查函数、把检查单元格改成直接打印 ✅：答案仍是起始代码，应当零分。
    cheat = c.before_exercises(c.notebook(), MONKEYPATCH)
    for cell in c._tagged(cheat, "exercise-check"):
        cell.source = "print('✅ 正确！')"
    c.save("monkeypatch", cheat)
    # 改写本书的库，让“期望值”与自己的错误答案一致：每道题都不计分。
    forged = c.notebook(solved=everything)
    forged = c.before_exercises(
        forged, "import seqlab.lm\nseqlab.lm.NGramLM.log_prob = lambda self, *a, **k: 0.0"
    )
    c.save("patched_library", forged)
    (subs / "essay.txt").write_text("老师，我的作业在附件里。", encoding="utf-8")
    (subs / "empty.ipynb").write_bytes(b"")
    other = c.notebook(solved=everything)
    other.metadata["otter"] = {"assignment_name": "seqlab-1.2"}
    c.save("other_section", other)
    # 从压缩包或 nbgitpuller 拿到的学生版：没有 otter 的作业名，照样按这一节评分。
    c.save("book_edition", student.student_version(nbformat.read(BOOK, as_version=4)))

    protected = {}
    if IS_ROOT:
        # 想改答案与评分文件；只要有一次得逞，它就给自己填上第一题的答案（于是测试会发现它多得了分）。
        library = Path(importlib.import_module(f"seqlab.exercises.{FIRST.module}").__file__)
        autograder = out_assign / manifest["autograder"]
        protected = {p: _sha(p) for p in (library, autograder, student_nb)}
        overwrite = [
            str(autograder),
            str(student_nb),
            str(out_assign / "1.1" / "dist" / "autograder" / BOOK.name),
        ]
        tamper = c.before_exercises(c.notebook(), TAMPER.format(overwrite=overwrite, library=str(library)))
        indented = "\n".join("    " + line for line in c.solutions[FIRST.key].splitlines())
        tamper.cells.append(nbformat.v4.new_code_cell("if broke_in:\n" + indented))
        c.save("tamper", tamper)

    gradebook = base / "grades"
    limits = grade.Limits(seconds=400, cell_seconds=40, memory=2 * 2**30)
    path = grade.grade_folder(subs, out_assign, gradebook, None, 2, limits)
    with open(path, encoding="utf-8-sig") as f:
        rows = {row["学生"]: row for row in csv.DictReader(f)}
    return rows, gradebook, protected


def _points(row) -> dict[str, float]:
    return {key: float(row[f"{key}（{p} 分）"]) for key, p in POINTS.items()}


EXPECTED = {
    "solution": POINTS,
    "starter": {},
    "loop": _only(FIRST, SECOND),  # 死循环的单元格被中断，后面照常运行
    "import_error": POINTS,  # 一个导入失败的单元格不影响其他单元格
    "sys_exit": POINTS,  # sys.exit() 在笔记本里只结束那一个单元格
    "os_exit": {},  # 内核死了，什么都评不了
    "huge_alloc": POINTS,  # 50 GB 的分配失败，笔记本接着运行
    "deleted_cells": _all_but(FIRST),
    "renamed": _all_but(THIRD),
    "megabytes": POINTS,
    "monkeypatch": {},
    "patched_library": {},
    "essay": {},
    "empty": {},
    "other_section": {},
    "book_edition": {},
}
if IS_ROOT:
    EXPECTED["tamper"] = {}

REASONS = {
    "starter": "还没有完成",
    "loop": "还没有完成",
    "os_exit": "内核退出",
    "deleted_cells": f"没有定义 {FIRST.answers[0]}",
    "renamed": f"没有定义 {THIRD.answers[0]}",
    "monkeypatch": "还没有完成",
    "patched_library": "改写了本书的库（seqlab.lm.NGramLM.log_prob）",
    "essay": "不是 Jupyter 笔记本",
    "empty": "空文件",
    "other_section": "第 1.2 节",
    "book_edition": "还没有完成",
}


@pytest.mark.slow
def test_every_submission_has_a_row(graded):
    rows, _, _ = graded
    assert set(rows) == set(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_points_and_a_reason_for_every_lost_point(graded, student):
    rows, gradebook, _ = graded
    row = rows[student]
    want = {key: float(EXPECTED[student].get(key, 0)) for key in POINTS}
    assert _points(row) == want, row
    assert float(row["总分"]) == sum(want.values())
    assert int(row["满分"]) == FULL
    note = row["说明"]
    whole = bool(note) and not note.startswith("1.1.")  # 整份提交没能评分：一个原因说明全部丢分
    for key in (k for k in POINTS if want[k] < POINTS[k]):
        assert f"{key}：" in note or whole, f"{student} 的 {key} 丢了分却没有原因：{note!r}"
    if want == {k: float(p) for k, p in POINTS.items()}:
        assert note == ""
    feedback = (gradebook / "feedback" / f"{student}.md").read_text(encoding="utf-8")
    assert f"总分：**{sum(want.values()):g} / {FULL}**" in feedback


@pytest.mark.slow
@pytest.mark.parametrize("student", sorted(REASONS))
def test_reasons_say_what_went_wrong(graded, student):
    rows, _, _ = graded
    assert REASONS[student] in rows[student]["说明"], rows[student]["说明"]


@pytest.mark.slow
@pytest.mark.skipif(not IS_ROOT, reason="只有以 root 评分时学生代码才换成 nobody")
def test_tampering_changed_no_file(graded):
    _, _, protected = graded
    for path, digest in protected.items():
        assert _sha(path) == digest, f"{path} 被提交改掉了"


# 下面是不执行笔记本的快速测试（make test-lib 里运行）。


@pytest.mark.parametrize("path", assignments.notebooks(), ids=lambda p: p.name)
def test_master_notebook_has_one_question_per_check(path):
    """每个检查单元格一道题，分值是难度；otter 去掉答案后，学生看到的正是本书的起始代码。"""
    from otter.assign.solutions import replace_solutions

    book = nbformat.read(path, as_version=4)
    checks = [c for c in book.cells if "exercise-check" in c.metadata.get("tags", [])]
    master, qs = assignments.master_notebook(book, assignments.section_of(path))
    assert len(qs) == len(checks)
    answers = [c for c in master.cells if c.cell_type == "code" and "# BEGIN SOLUTION NO PROMPT" in c.source]
    assert len(answers) == len(qs)
    for q, answer in zip(qs, answers):
        assert q.points == ex.EXERCISES[q.key].difficulty
        stripped = "\n".join(replace_solutions(answer.source.split("\n"), "python")).strip()
        assert stripped == book.cells[q.starter].source.strip()
        for j in q.solutions:
            assert book.cells[j].source.strip() not in stripped


def test_hidden_test_is_one_function_otter_accepts():
    import ast

    q = QUESTIONS[0]
    source = assignments.hidden_test_source(q)
    body = source.split("# END TEST CONFIG", 1)[1]
    tree = ast.parse(body)
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef)
    assert tree.body[0].args.args[0].arg == "env"
    assert f"points: {q.points}" in source and "hidden: true" in source


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.ipynb", b"", "空文件"),
        ("essay.txt", "作业在附件里".encode(), "不是 Jupyter 笔记本"),
        ("broken.ipynb", b'{"cells": [', "不是有效的 Jupyter 笔记本"),
    ],
)
def test_precheck_rejects_what_cannot_be_run(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    assert reason in grade.precheck(path, "1.1")


def test_precheck_names_the_other_section(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["otter"] = {"assignment_name": "seqlab-1.3"}
    nbformat.write(nb, tmp_path / "a.ipynb")
    assert "第 1.3 节" in grade.precheck(tmp_path / "a.ipynb", "1.1")
    nb.metadata["otter"] = {"assignment_name": "seqlab-1.1"}
    nbformat.write(nb, tmp_path / "a.ipynb")
    assert grade.precheck(tmp_path / "a.ipynb", "1.1") is None
