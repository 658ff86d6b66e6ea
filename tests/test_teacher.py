"""教师指南与学生版：指南里的练习表与库一致；学生版压缩包齐全，学生笔记本里没有答案。

都是快速测试：学生版只在临时目录里生成一次（tools/student.py 的 build），不执行笔记本。
"""

import importlib
import pkgutil
import re
import zipfile
from pathlib import Path

import nbformat
import pytest

import seqlab.exercises as ex

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "chapters" / "teacher" / "guide.md"
import student  # noqa: E402 —— tests/conftest.py 已把 tools/ 放进 sys.path

for info in pkgutil.iter_modules(ex.__path__):
    importlib.import_module(f"seqlab.exercises.{info.name}")

# 练习表的一行：| {ref}`1.1.1 <ex-1-1-1>` | 题目 | ★☆☆ | 5 分钟 | 目标 |
ROW = re.compile(
    r"^\|\s*\{ref\}`(?P<key>\d+\.\d+\.\d+) <(?P<label>[^>`]+)>`\s*"
    r"\|(?P<title>[^|]*)\|\s*(?P<stars>[★☆]+)\s*\|\s*(?P<minutes>\d+) 分钟\s*\|(?P<objective>[^|]*)\|\s*$",
    re.M,
)
ZIP_ROOT = "seqlab-student"


def _guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    """从标题 ``heading`` 到下一个同级或更高级标题之间的文字。"""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n")
    rest = text[start + len(heading) :]
    nxt = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: nxt.start()] if nxt else rest


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def test_guide_keeps_its_label_and_title():
    lines = _guide().splitlines()
    assert lines[0] == "(teacher-guide)="
    assert lines[1] == "# 教师指南"


def test_exercise_table_lists_every_exercise_with_the_same_stars_and_minutes():
    assert ex.EXERCISES, "seqlab.exercises 里没有登记任何练习"
    rows = {}
    for m in ROW.finditer(_section(_guide(), "## 练习一览")):
        assert m["key"] not in rows, f"练习 {m['key']} 在表里出现了两次"
        rows[m["key"]] = m
    assert set(rows) == set(ex.EXERCISES), (
        f"指南的练习表缺少 {sorted(set(ex.EXERCISES) - set(rows))}，多出 {sorted(set(rows) - set(ex.EXERCISES))}"
    )
    for key, exercise in ex.EXERCISES.items():
        row = rows[key]
        assert row["stars"] == exercise.stars, f"练习 {key}：表里是 {row['stars']}，库里是 {exercise.stars}"
        assert int(row["minutes"]) == exercise.minutes, f"练习 {key}：表里 {row['minutes']} 分钟，库里 {exercise.minutes}"
        assert row["title"].strip() == exercise.title, f"练习 {key} 的题目与库里不一致"
        assert row["objective"].strip() == exercise.objective, f"练习 {key} 的目标与库里不一致"
        assert row["label"] == "ex-" + key.replace(".", "-"), f"练习 {key} 的链接指向了 {row['label']}"


def test_every_exercise_has_common_mistakes():
    mistakes = _section(_guide(), "## 常见错误")
    for key in ex.EXERCISES:
        assert re.search(rf"^\*\*{re.escape(key)}\b", mistakes, re.M), f"“常见错误”一节里没有练习 {key}"


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    out = tmp_path_factory.mktemp("student") / "student"
    archive = student.build(out)
    return out, archive


def _library_files() -> list[Path]:
    lib = ROOT / "lib" / "seqlab"
    return [p for p in lib.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]


def test_zip_holds_every_notebook_the_library_checkpoints_and_requirements(edition):
    _, archive = edition
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
    for path in student.notebooks():
        assert f"{ZIP_ROOT}/{path.name}" in names, f"压缩包里没有 {path.name}"
    library = _library_files()
    assert any(p.suffix == ".py" for p in library)
    for path in library:
        assert f"{ZIP_ROOT}/{path.relative_to(ROOT).as_posix()}" in names, f"压缩包里没有 {path.relative_to(ROOT)}"
    checkpoints = sorted((ROOT / "lib" / "seqlab" / "checkpoints").glob("*.safetensors"))
    assert checkpoints, "lib/seqlab/checkpoints 里没有检查点"
    for path in checkpoints:
        assert f"{ZIP_ROOT}/lib/seqlab/checkpoints/{path.name}" in names, f"压缩包里没有检查点 {path.name}"
    for name in ("requirements.txt", "constraints.txt", "pyproject.toml", "README.md"):
        assert f"{ZIP_ROOT}/{name}" in names, f"压缩包里没有 {name}"
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_zip_holds_the_images_the_notebooks_refer_to(edition):
    _, archive = edition
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
    for path in student.notebooks():
        for ref in set(re.findall(r"images/[\w.-]+", path.read_text(encoding="utf-8"))):
            assert (path.parent / ref).exists(), f"{path.name} 引用了不存在的 {ref}"
            assert f"{ZIP_ROOT}/{ref}" in names, f"{path.name} 引用的 {ref} 不在压缩包里"


def test_student_notebooks_have_no_solution_and_keep_every_check(edition):
    out, archive = edition
    with zipfile.ZipFile(archive) as zf:
        zipped = {Path(n).name: zf.read(n).decode("utf-8") for n in zf.namelist() if n.endswith(".ipynb")}
    for path in student.notebooks():
        full = nbformat.read(path, as_version=4)
        solutions = [
            c.source.strip()
            for c in full.cells
            if "solution" in _tags(c) and "solution-check" not in _tags(c) and c.cell_type == "code"
        ]
        assert solutions, f"{path.name} 没有参考答案，无从检查"
        for nb in (nbformat.read(out / "notebooks" / path.name, as_version=4), nbformat.reads(zipped[path.name], 4)):
            assert not [c for c in nb.cells if "solution" in _tags(c)], f"{path.name} 的学生版里有 solution 单元格"
            source = "\n".join(c.source for c in nb.cells)
            assert not any(code in source for code in solutions), f"{path.name} 的学生版里出现了答案代码"
            checks = [c for c in nb.cells if "exercise-check" in _tags(c)]
            assert len(checks) == sum("exercise-check" in _tags(c) for c in full.cells), f"{path.name} 丢了检查单元格"
            assert all(not c.outputs and c.execution_count is None for c in nb.cells if c.cell_type == "code")


def test_answer_key_keeps_the_solutions(edition):
    out, _ = edition
    for path in student.notebooks():
        nb = nbformat.read(out / "answer_key" / path.name, as_version=4)
        assert any("solution" in _tags(c) for c in nb.cells), f"教师答案 {path.name} 里没有参考答案"
