"""批量评分：一个班的第 1.1 节提交——做对的、没做的、捣乱的、存心作弊和攻击评分程序的——评完之后逐行检查成绩单。

每份提交的期望分数只由它**真正写下的答案**决定（例如“改写了检查函数、答案仍是起始代码” = 零分，“fork 炸弹之后
把题都做对了” = 满分）；每道题的分值是练习的难度（★ 的个数），取自练习的元数据，不是用评分程序算出来的。
攻击评分程序的提交：一旦读到答案、缓存、隐藏的文件或同学的提交，就拿它给自己填上答案（于是多得的分会被发现），
并把读到的文字塞进异常信息与返回值（于是它出现在成绩单里会被发现）。
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import secrets
from pathlib import Path

import nbformat
import pytest

import seqlab.exercises as ex
import student
from classroom import grade, questions, sandbox

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "chapters" / "ch01" / "01_language_as_sequence.ipynb"
QUESTIONS = questions.questions(nbformat.read(BOOK, as_version=4))
POINTS = {q.key: ex.EXERCISES[q.key].difficulty for q in QUESTIONS}
FULL = sum(POINTS.values())
FIRST, SECOND, THIRD = QUESTIONS[0], QUESTIONS[1], QUESTIONS[2]
TOKEN = secrets.token_hex(8)  # 这次测试独有的记号：攻击者写出的文件名、藏起来的秘密都带着它
SECRET = f"答案钥匙-{TOKEN}"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _only(*qs) -> dict[str, int]:
    return {q.key: POINTS[q.key] for q in qs}


def _all_but(*qs) -> dict[str, int]:
    return {k: p for k, p in POINTS.items() if k not in {q.key for q in qs}}


def _solutions(book) -> dict[str, str]:
    """完整版里每道题的参考答案代码（检查之后、答案自己的检查之前的 solution 代码单元格）。"""
    found = {}
    for q in questions.questions(book):
        codes, i = [], q.check_cell + 1
        while "solution-check" not in book.cells[i].metadata.get("tags", []):
            if book.cells[i].cell_type == "code":
                codes.append(book.cells[i].source)
            i += 1
        found[q.key] = "\n\n".join(codes)
    return found


class Class:
    """从学生版出发，造出一个班的提交。"""

    def __init__(self, folder: Path):
        book = nbformat.read(BOOK, as_version=4)
        self.starter = student.student_version(book)
        self.solutions = _solutions(book)
        self.folder = folder

    @staticmethod
    def starters(nb) -> list:
        return [c for c in nb.cells if "exercise-starter" in c.metadata.get("tags", [])]

    def notebook(self, solved=(), drop=(), rename=None, answers=None):
        """学生版；``solved`` 里的题填上参考答案，``answers = {题: 代码}`` 填上给定的代码，``drop`` 里的题连同检查
        单元格一起删掉，``rename = (题, 旧名, 新名)`` 把答案里的名字改掉。"""
        nb = nbformat.from_dict(self.starter)
        checks = [c for c in nb.cells if "exercise-check" in c.metadata.get("tags", [])]
        starters = self.starters(nb)
        assert len(starters) == len(checks) == len(QUESTIONS)
        for q, cell, check in zip(QUESTIONS, starters, checks):
            if q in solved:
                cell.source = self.solutions[q.key]
            if answers and q in answers:
                cell.source = answers[q]
            if rename and q == rename[0]:
                cell.source = cell.source.replace(rename[1], rename[2])
            if q in drop:
                nb.cells.remove(cell)
                nb.cells.remove(check)
        return nb

    def before_exercises(self, nb, *sources: str):
        """在第一道练习之前（准备单元格都已运行）插入代码单元格。"""
        index = nb.cells.index(self.starters(nb)[0])
        nb.cells[index:index] = [nbformat.v4.new_code_cell(s) for s in sources]
        return nb

    def after_exercises(self, nb, *sources: str):
        nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
        return nb

    def save(self, name: str, nb) -> None:
        nbformat.write(nb, self.folder / f"{name}.ipynb")


# ---- 三种在旧评分程序里拿满分的作弊：答案都是起始代码，只多了一格 ----
PATCH_IMPORT_MODULE = """\
import importlib, types
from seqlab.exercises import CheckResult, EXERCISES
_real = importlib.import_module
def _always(*args, **kwargs):
    return CheckResult(next(iter(EXERCISES.values())), True, '正确！')
def import_module(name, *args, **kwargs):
    module = _real(name, *args, **kwargs)
    if name.startswith('seqlab.exercises.sec'):
        return types.SimpleNamespace(**{k: _always for k in dir(module) if k.startswith('check_')})
    return module
importlib.import_module = import_module"""

FAKE_FINDER = """\
import importlib.abc, importlib.util, sys
from seqlab.exercises import CheckResult, EXERCISES
class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.startswith('seqlab.exercises.sec'):
            return importlib.util.spec_from_loader(name, self)
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        ok = lambda *a, **k: CheckResult(next(iter(EXERCISES.values())), True, '正确！')
        for n in ('check_sentence_log_prob', 'check_right_to_left', 'check_perplexity', 'check_cue_accuracy'):
            setattr(module, n, ok)
sys.meta_path.insert(0, Finder())
for name in [m for m in sys.modules if m.startswith('seqlab.exercises.sec')]:
    del sys.modules[name]
from seqlab.exercises import sec01"""

PATCH_GETATTR = """\
import builtins
from seqlab.exercises import CheckResult, EXERCISES
_getattr = builtins.getattr
def getattr(obj, name, *default):
    if isinstance(name, str) and name.startswith('check_'):
        return lambda *a, **k: CheckResult(next(iter(EXERCISES.values())), True, '正确！')
    return _getattr(obj, name, *default)
builtins.getattr = getattr"""

PATCH_RECORDING = """\
import seqlab.exercises.recording as r
r.record = lambda check, answers: {'answers': [{'value': 0.0} for _ in answers]}
r.encode = lambda value: -11.681464386651152"""


def _spy(paths: list[str]) -> str:
    """读沙箱外的文件：读到了就用参考答案作答，并把读到的文字放进返回值和异常里。"""
    return f"""\
import glob, os
stolen = []
for pattern in {paths!r}:
    for p in glob.glob(pattern, recursive=True)[:50]:
        try:
            with open(p, 'rb') as f:
                stolen.append(f.read(4000).decode('utf-8', 'replace'))
        except OSError:
            pass
loot = '\\n'.join(stolen)"""


def _solution_if(condition: str, key: str, solutions: dict) -> str:
    indented = "\n".join("    " + line for line in solutions[key].splitlines())
    return f"if {condition}:\n{indented}"


LEAKY_ANSWER = """\
def sentence_log_prob(model, text):
    with open('/etc/passwd') as f:
        raise ValueError('读到的文件：' + f.read() + loot)"""

READ_CLASSMATE = """\
import glob, json, time
classmate = None
deadline = time.time() + 20
while classmate is None and time.time() < deadline:
    for p in glob.glob('/tmp/seqlab-grade-*/*/work/submission.ipynb') + glob.glob('/proc/*/root/grading/work/*.ipynb'):
        if '/grading/work/submission.ipynb' in p and p.startswith('/proc/self'):
            continue
        try:
            cells = json.load(open(p))['cells']
        except Exception:
            continue
        if any('return sum(' in ''.join(c['source']) for c in cells):
            classmate = cells
    time.sleep(0.5)
if classmate:
    for c in classmate:
        if c['cell_type'] == 'code' and 'def ' in ''.join(c['source']):
            exec(''.join(c['source']))"""

WRITE_OUTSIDE = f"""\
import os, glob
wrote = []
targets = ['/tmp/PWNED-{TOKEN}', '/dev/shm/PWNED-{TOKEN}', '/var/tmp/PWNED-{TOKEN}']
targets += [os.path.join(d, 'PWNED-{TOKEN}') for d in glob.glob('/work/*') + glob.glob('{ROOT}/*')]
for t in targets:
    try:
        with open(t, 'w') as f:
            f.write('x')
        wrote.append(t)
    except OSError:
        pass
for lib in glob.glob('{ROOT}/lib/seqlab/exercises/*.py') + glob.glob('{ROOT}/tools/classroom/*.py'):
    try:
        with open(lib, 'a') as f:
            f.write('#')
        wrote.append(lib)
    except OSError:
        pass"""

FORK_BOMB = """\
import os, time
children = 0
try:
    while children < 100_000:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        children += 1
except OSError:
    pass
assert children < 100_000, '进程数没有上限'"""

FLOOD = """\
import os, sys
print('喧' * 3_000_000)
for _ in range(200):
    os.write(1, b'x' * 1_000_000)
    sys.stderr.write('y' * 100_000)"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("grading")
    # 一份“只给老师”的答案，带着这次测试的秘密记号：攻击者读得到它就会多得分、把记号带进成绩单
    key = base / "answer_key"
    key.mkdir()
    (key / BOOK.name).write_text(BOOK.read_text(encoding="utf-8") + SECRET, encoding="utf-8")
    (key / "secret.txt").write_text(SECRET, encoding="utf-8")
    for p in (base, key, *key.iterdir()):
        p.chmod(0o755 if p.is_dir() else 0o644)
    subs = base / "submissions"
    subs.mkdir()
    c = Class(subs)
    everything = tuple(QUESTIONS)
    spied = [str(key / "**"), str(ROOT / "_build" / "student" / "answer_key" / "*"),
             str(ROOT / "_build" / ".jupyter_cache" / "**"), str(ROOT / "_build" / "grades" / "**"),
             "/tmp/seqlab-grade-*/**", "/root/**/*.ipynb"]

    c.save("solution", c.notebook(solved=everything))
    c.save("starter", c.notebook())
    c.save("book_edition", student.student_version(nbformat.read(BOOK, as_version=4)))
    c.save("wrong", c.notebook(solved=everything[1:], answers={FIRST: "def sentence_log_prob(model, text):\n    return 42.0"}))
    c.save("syntax", c.notebook(solved=everything[1:], answers={FIRST: "def sentence_log_prob(model, text)\n    return 0"}))
    c.save("loop", c.before_exercises(c.notebook(solved=(FIRST, SECOND)), "while True:\n    pass"))
    c.save("loop_in_answer", c.notebook(solved=everything[1:], answers={FIRST: "def sentence_log_prob(model, text):\n    while True:\n        pass"}))
    c.save("import_error", c.before_exercises(c.notebook(solved=everything), "import 不存在的模块"))
    c.save("sys_exit", c.before_exercises(c.notebook(solved=everything), "import sys\nsys.exit(3)"))
    c.save("os_exit", c.before_exercises(c.notebook(solved=everything), "import os\nos._exit(1)"))
    c.save("huge_alloc", c.before_exercises(
        c.notebook(solved=everything),
        "import torch\nx = torch.empty(50 * 2**30, dtype=torch.uint8)\nx.fill_(1)",
        "block = bytearray(50 * 2**30)",
    ))
    c.save("deleted_cells", c.notebook(solved=everything[1:], drop=(FIRST,)))
    c.save("renamed", c.notebook(solved=everything, rename=(THIRD, THIRD.answers[0], "my_answer")))
    noisy = c.before_exercises(c.notebook(solved=everything), FLOOD)
    next(cell for cell in noisy.cells if cell.source == FLOOD).outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="吵" * 2_000_000)
    ]
    c.save("flood", noisy)
    c.save("fork_bomb", c.before_exercises(c.notebook(solved=everything), FORK_BOMB))
    # 旧评分程序给了满分的三种作弊，以及直接伪造记录：答案都是起始代码
    for name, source in [("patch_import_module", PATCH_IMPORT_MODULE), ("fake_finder", FAKE_FINDER),
                         ("patch_getattr", PATCH_GETATTR), ("patch_recording", PATCH_RECORDING)]:
        cheat = c.before_exercises(c.notebook(), source)
        for cell in cheat.cells:
            if "exercise-check" in cell.metadata.get("tags", []):
                cell.source = "print('✅ 正确！')"
        c.save(name, cheat)
    # 改写本书的库：只改得了自己那份，答案照样按它自己的效果判
    c.save("patched_library", c.before_exercises(
        c.notebook(solved=everything), "import seqlab.lm\nseqlab.lm.NGramLM.log_prob = lambda self, *a, **k: 0.0"))
    # 读答案、缓存、隐藏文件：读到就作答，并把读到的文字塞进异常
    spy = c.before_exercises(c.notebook(answers={FIRST: LEAKY_ANSWER}), _spy(spied))
    spy = c.after_exercises(spy, _solution_if("stolen", SECOND.key, c.solutions))
    c.save("spy", spy)
    # 同时评的两份：一份做对了，一份想读它
    c.save("reader", c.before_exercises(c.notebook(), READ_CLASSMATE))
    c.save("reader_victim", c.notebook(solved=everything))
    # 往沙箱外写（沙箱里私有的 /tmp 当然写得进去：测试查的是沙箱外有没有留下东西）
    c.save("writer", c.before_exercises(c.notebook(), WRITE_OUTSIDE))
    (subs / "essay.txt").write_text("老师，我的作业在附件里。", encoding="utf-8")
    (subs / "empty.ipynb").write_bytes(b"")
    other = nbformat.read(ROOT / "chapters" / "ch01" / "02_tokens_and_embeddings.ipynb", as_version=4)
    c.save("other_section", student.student_version(other))

    book_files = [*(ROOT / "lib" / "seqlab" / "exercises").glob("*.py"), *(ROOT / "tools" / "classroom").glob("*.py")]
    protected = {p: _sha(p) for p in [*book_files, *subs.iterdir(), *key.iterdir()]}
    gradebook = base / "grades"
    limits = sandbox.Limits(seconds=300, cell_seconds=20)
    path = grade.grade_folder(subs, gradebook, None, 2, limits)
    with open(path, encoding="utf-8-sig") as f:
        rows = {row["学生"]: row for row in csv.DictReader(f)}
    return rows, gradebook, protected, subs


def _points(row) -> dict[str, float]:
    return {key: float(row[f"{key}（{p} 分）"]) for key, p in POINTS.items()}


EXPECTED = {
    "solution": POINTS,
    "starter": {},
    "book_edition": {},
    "wrong": _all_but(FIRST),
    "syntax": _all_but(FIRST),
    "loop": _only(FIRST, SECOND),  # 死循环的单元格被中断，后面照常运行
    "loop_in_answer": _all_but(FIRST),  # 检查调用它时被中断，只丢这一题
    "import_error": POINTS,  # 一个导入失败的单元格不影响其他单元格
    "sys_exit": POINTS,  # sys.exit() 在笔记本里只结束那一个单元格
    "os_exit": {},  # 内核死了，什么都评不了
    "huge_alloc": POINTS,  # 50 GB 的分配失败，笔记本接着运行
    "deleted_cells": _all_but(FIRST),
    "renamed": _all_but(THIRD),
    "flood": POINTS,
    "fork_bomb": POINTS,  # 进程数有上限，炸弹停下来，题照样做对了
    "patch_import_module": {},
    "fake_finder": {},
    "patch_getattr": {},
    "patch_recording": {},
    "patched_library": POINTS,
    "spy": {},
    "reader": {},
    "reader_victim": POINTS,
    "writer": {},
    "essay": {},
    "empty": {},
    "other_section": {},
}

REASONS = {
    "starter": "还没有完成",
    "wrong": "的对数概率应为",
    "syntax": "语法错误（SyntaxError）",
    "loop": "被中断",
    "loop_in_answer": "被中断",
    "os_exit": "内核退出",
    "deleted_cells": f"没有定义 {FIRST.answers[0]}",
    "renamed": f"没有定义 {THIRD.answers[0]}",
    "patch_import_module": "没有得到评分记录",
    "fake_finder": "没有得到评分记录",
    "patch_getattr": "没有得到评分记录",
    "spy": "ValueError",
    "essay": "不是 Jupyter 笔记本",
    "empty": "空文件",
    "other_section": "第 1.2 节",
}


@pytest.mark.slow
def test_every_submission_has_a_row(graded):
    rows, *_ = graded
    assert set(rows) == set(EXPECTED)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_points_are_what_the_genuine_answers_earn_and_every_lost_point_has_a_reason(graded, name):
    rows, gradebook, *_ = graded
    row = rows[name]
    want = {key: float(EXPECTED[name].get(key, 0)) for key in POINTS}
    assert _points(row) == want, row
    assert float(row["总分"]) == sum(want.values())
    assert int(row["满分"]) == FULL
    note = row["说明"]
    whole = bool(note) and not note.startswith("1.1.")  # 整份提交的问题写在最前面
    for key in (k for k in POINTS if want[k] < POINTS[k]):
        assert f"{key}：" in note or whole, f"{name} 的 {key} 丢了分却没有原因：{note!r}"
    if want == {k: float(p) for k, p in POINTS.items()}:
        assert not re.search(r"1\.1\.\d：", note), note
    feedback = (gradebook / "feedback" / f"{name}.md").read_text(encoding="utf-8")
    assert f"总分：**{sum(want.values()):g} / {FULL}**" in feedback


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REASONS))
def test_reasons_say_what_went_wrong(graded, name):
    rows, *_ = graded
    assert REASONS[name] in rows[name]["说明"], rows[name]["说明"]


@pytest.mark.slow
def test_no_foreign_text_reaches_the_gradebook_or_the_feedback(graded):
    """学生代码产生的文字（异常信息里的文件内容、刷屏的输出）不出现在成绩单与反馈里。"""
    _, gradebook, *_ = graded
    texts = [(gradebook / "gradebook.csv").read_text(encoding="utf-8-sig")]
    texts += [p.read_text(encoding="utf-8") for p in (gradebook / "feedback").iterdir()]
    for text in texts:
        for foreign in (TOKEN, "root:x:0", "读到的文件", "喧喧", "xxxx"):
            assert foreign not in text


@pytest.mark.slow
def test_nothing_outside_the_sandbox_changed(graded):
    _, gradebook, protected, subs = graded
    for path, digest in protected.items():
        assert path.exists() and _sha(path) == digest, f"{path} 被提交改掉了"
    folders = ("/tmp", "/dev/shm", "/var/tmp", "/work", str(ROOT), str(subs))
    assert not [p for d in folders for p in Path(d).glob(f"PWNED-{TOKEN}")]
    assert sorted(p.name for p in subs.iterdir()) == sorted(p.name for p in protected if p.parent == subs)
    assert gradebook.stat().st_mode & 0o777 == 0o700


# 下面是不运行笔记本的快速测试（make test-lib 里运行）。


@pytest.mark.parametrize("path", questions.notebooks(), ids=lambda p: p.name)
def test_one_question_per_check_and_the_student_edition_keeps_each(path):
    """每个检查单元格一道题，分值是难度；学生版里每道题的检查单元格仍在，评分认得出它属于哪一节。"""
    book = nbformat.read(path, as_version=4)
    checks = [c for c in book.cells if "exercise-check" in c.metadata.get("tags", [])]
    qs = questions.questions(book)
    assert len(qs) == len(checks)
    for q in qs:
        assert q.points == ex.EXERCISES[q.key].difficulty
        assert q.checker().exercise.key == q.key
    sections = grade.book_sections()
    assert grade.identify_section(student.student_version(book), sections) == questions.section_of(path)


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
    assert reason in grade.precheck(path, "1.1", grade.book_sections())


def test_results_written_in_the_sandbox_are_read_without_following_links(tmp_path):
    """沙箱写出的结果文件可能是指向教师文件的符号链接、管道或巨大的文件：评分程序一概不读。"""
    secret = tmp_path / "secret.json"
    secret.write_text('{"answers": []}', encoding="utf-8")
    (tmp_path / "link.json").symlink_to(secret)
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "big.json").write_text("[" + "0," * 1000 + "0]", encoding="utf-8")
    assert grade._read_result(secret, 100) == {"answers": []}
    assert grade._read_result(tmp_path / "link.json", 100) is None
    assert grade._read_result(tmp_path / "pipe.json", 100) is None
    assert grade._read_result(tmp_path / "big.json", 100) is None
    assert grade._read_result(tmp_path / "missing.json", 100) is None


@pytest.mark.slow
@pytest.mark.parametrize("path", questions.notebooks(), ids=lambda p: p.name)
def test_the_reference_answers_of_every_section_earn_full_marks(path, tmp_path):
    """每一节：学生版填上参考答案，在沙箱里运行、记录，在外面重放判定——每道题都拿满分。
    （记录与重放对每一种答案都要对得上：张量、模型参数的原地修改、回调、运算次数……）"""
    book = nbformat.read(path, as_version=4)
    nb = student.student_version(book)
    solutions = _solutions(book)
    for q, cell in zip(questions.questions(book), Class.starters(nb)):
        cell.source = solutions[q.key]
    subs = tmp_path / "submissions"
    subs.mkdir()
    nbformat.write(nb, subs / path.name)
    section = questions.section_of(path)
    gradebook = grade.grade_folder(subs, tmp_path / "grades", section, 1, sandbox.Limits(seconds=900, cell_seconds=300))
    with open(gradebook, encoding="utf-8-sig") as f:
        (row,) = csv.DictReader(f)
    full = sum(q.points for q in questions.questions(book))
    assert float(row["总分"]) == full, row["说明"]
