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
    for key, exercise in ex.EXERCISES.items():
        m = re.search(rf"^\*\*{re.escape(key)}\*\* (.*)$", mistakes, re.M)
        assert m, f"“常见错误”一节里没有练习 {key}"
        assert m[1].strip() == exercise.title, f"“常见错误”里练习 {key} 的题目是「{m[1]}」，库里是「{exercise.title}」"


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


# ---------------------------------------------------------------- 指南里的数都来自代码
import collections  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

import runtime  # noqa: E402 —— tools/runtime.py：运行时间的测量与换算

sys.path.insert(0, str(ROOT / "hub"))
import sizing  # noqa: E402 —— hub/sizing.py

INDEX = ROOT / "chapters" / "ch01" / "index.md"
KEY = r"1\.\d\.\d+"


def _sections() -> dict[str, int]:
    """库里每节登记了几道自动检查的练习。"""
    return dict(collections.Counter(k.rsplit(".", 1)[0] for k in ex.EXERCISES))


def _sort_key(key: str) -> list[int]:
    return [int(x) for x in key.split(".")]


def test_each_section_registers_the_exercises_its_notebook_checks():
    """库里登记的练习 = 笔记本里带 exercise-check 标签的检查单元格调用的练习（逐节同样多）。"""
    sections = _sections()
    for path in student.notebooks():
        nb = nbformat.read(path, as_version=4)
        checks = [c for c in nb.cells if "exercise-check" in _tags(c)]
        section = f"1.{int(path.name[:2])}"
        assert len(checks) == sections.get(section, 0), (
            f"{path.name} 有 {len(checks)} 个检查单元格，库里登记了 {sections.get(section, 0)} 道练习")
        labels = set(re.findall(r"ex-1-\d-(\d+)", "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")))
        for key in (k for k in ex.EXERCISES if k.startswith(section + ".")):
            assert key.rsplit(".", 1)[1] in labels, f"{path.name} 里没有练习 {key} 的标签 ex-{key.replace('.', '-')}"


@pytest.mark.parametrize("page", [GUIDE, INDEX], ids=lambda p: p.name)
def test_exercise_counts_in_prose_come_from_the_library(page):
    text = page.read_text(encoding="utf-8")
    counts = _sections().values()
    per_section = re.findall(r"(?:每节|末尾)有 (\d+)～(\d+) 道(?:带)?自动检查的练习", text)
    assert per_section, f"{page.name} 没有写每节有几道自动检查的练习（“每节…有 a～b 道…自动检查的练习”）"
    for low, high in per_section:
        assert (int(low), int(high)) == (min(counts), max(counts)), (
            f"{page.name} 写每节 {low}～{high} 道，库里每节 {min(counts)}～{max(counts)} 道（{_sections()}）")
    for total in re.findall(r"全章 (\d+) 道", text):
        assert int(total) == len(ex.EXERCISES), f"{page.name} 写全章 {total} 道，库里登记了 {len(ex.EXERCISES)} 道"
    assert re.search(r"\d+ 道|(?<!\d)\d+～\d+ 道", text)


def test_total_minutes_in_the_guide_is_the_sum_of_the_library():
    total = sum(e.minutes for e in ex.EXERCISES.values())
    stated = re.findall(r"练习加起来要 (\d+) 分钟", _guide())
    assert stated == [str(total)], f"指南写的练习总用时是 {stated}，库里每道题的用时加起来是 {total} 分钟"


def _plans() -> dict[str, str]:
    text = _section(_guide(), "## 课时安排")
    return {"两节课": _section(text, "### 两节课（2 × 45 分钟）"), "四节课": _section(text, "### 扩展为四节课")}


@pytest.mark.parametrize("plan", ["两节课", "四节课"])
def test_each_lesson_plan_assigns_every_exercise_exactly_once(plan):
    # 分派写在表格行与“课后作业：”行里；其余段落（例如介绍三个挑战的那一段）只是提到练习
    text = "\n".join(line for line in _plans()[plan].splitlines() if line.startswith(("| ", "课后作业：")))
    assigned = re.findall(rf"(?<![\d.])({KEY})(?![\d.])", text)
    # 表格说明里提到、但不是布置的练习（例如“练习 1.3.2 让学生课后……”）用“练习 ”前缀写，不算分派
    mentioned = re.findall(rf"练习 ({KEY})(?![\d.]) 让", text)
    for key in mentioned:
        assigned.remove(key)
    counts = collections.Counter(assigned)
    twice = sorted(k for k, n in counts.items() if n > 1)
    assert not twice, f"{plan}的安排里这些练习出现了不止一次：{twice}"
    missing = sorted(set(ex.EXERCISES) - set(counts), key=_sort_key)
    extra = sorted(set(counts) - set(ex.EXERCISES), key=_sort_key)
    assert not missing, f"{plan}的安排没有分派这些自动检查的练习：{missing}"
    assert not extra, f"{plan}的安排里有库里没有的练习：{extra}"


@pytest.mark.parametrize("plan", ["两节课", "四节课"])
def test_minutes_stated_in_the_plans_are_sums_of_the_library(plan):
    text = _plans()[plan]
    groups = re.findall(rf"((?:{KEY}、)*{KEY})（约?\s*(\d+) 分钟）", text)
    assert groups, f"{plan}的安排里没有写用时"
    for keys, minutes in groups:
        want = sum(ex.EXERCISES[k].minutes for k in keys.split("、"))
        assert int(minutes) == want, f"{plan}：{keys} 写的是 {minutes} 分钟，库里加起来是 {want} 分钟"


def test_two_lesson_plan_fills_45_minutes_and_in_class_exercises_fit_their_slots():
    text = _plans()["两节课"]
    lessons = re.split(r"^\*\*第[一二]课", text, flags=re.M)[1:]
    assert len(lessons) == 2
    for lesson in lessons:
        slots = [(int(a), int(b), rest) for a, b, rest in re.findall(r"^\| (\d+)—(\d+) 分钟 \|(.*)$", lesson, re.M)]
        assert slots[0][0] == 0 and slots[-1][1] == 45, "一节课应当从 0 分钟排到 45 分钟"
        assert all(b == a2 for (_, b, _), (a2, _, _) in zip(slots, slots[1:])), "时间段之间不连续"
        for a, b, rest in slots:
            m = re.search(rf"课堂练习 ({KEY})\s*\|\s*(\d+) 分钟，([★☆]+)", rest)
            if m:
                exercise = ex.EXERCISES[m[1]]
                assert int(m[2]) == exercise.minutes and m[3] == exercise.stars, (
                    f"课堂练习 {m[1]}：写的是 {m[2]} 分钟 {m[3]}，库里是 {exercise.minutes} 分钟 {exercise.stars}")
                assert b - a >= exercise.minutes, f"课堂练习 {m[1]} 要 {exercise.minutes} 分钟，只排了 {b - a} 分钟"


def test_four_lesson_plan_keeps_in_class_exercises_within_15_minutes():
    text = _plans()["四节课"]
    assert "15 分钟以内的课堂练习" in text
    for row in re.findall(r"^\| 第 \d 课 \|.*$", text, re.M):
        in_class = _cells(row)[2]
        keys = re.findall(KEY, in_class)
        assert keys, row
        assert sum(ex.EXERCISES[k].minutes for k in keys) <= 15, f"课堂练习超过 15 分钟：{row}"


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


# ---------------------------------------------------------------- 运行时间：chapters/teacher/runtime.json
@pytest.fixture(scope="module")
def measured() -> dict:
    return json.loads(runtime.REPORT.read_text(encoding="utf-8"))


def test_runtime_table_is_rendered_from_the_measurement(measured):
    assert runtime.TABLE.read_text(encoding="utf-8") == runtime.markdown(measured), (
        "chapters/teacher/runtime.md 与 runtime.json 不一致：运行 .venv/bin/python tools/runtime.py --render")
    assert "```{include} runtime.md" in _section(_guide(), "## 运行时间")


def test_runtime_measurement_covers_every_notebook_without_errors(measured):
    assert list(measured["notebooks"]) == [p.name for p in student.notebooks()], (
        "runtime.json 测的笔记本与现有的不一致：重新运行 .venv/bin/python tools/runtime.py")
    for name, row in measured["notebooks"].items():
        for edition in runtime.EDITIONS:
            assert row[edition]["errors"] == 0, f"测量 {name}（{edition}）时有单元格出错：请修好后重新测量"
            assert row[edition]["peak_bytes"] > 50 * 2**20 and row[edition]["cpu_s"] > 0


def test_guide_prose_numbers_come_from_the_runtime_measurement(measured):
    text = _guide()
    low, high = runtime.peak_range_gb(measured)
    stated = re.findall(r"峰值内存，在 (\d+\.\d+)～(\d+\.\d+) GB 之间", text)
    assert stated == [(f"{low:.2f}", f"{high:.2f}")], f"指南写的峰值内存范围是 {stated}，实测 {low:.2f}～{high:.2f} GB"
    estimate = re.findall(r"估算了 (\d+) 人在 (\d+) 核与 (\d+) 核的 hub 上", text)
    assert estimate == [(str(runtime.CLASS_SIZE), *map(str, runtime.HUB_CORES))], estimate


# ---------------------------------------------------------------- hub 的资源：hub/sizing.md
def _sizing_tables() -> tuple[list[list[str]], dict[str, str]]:
    text = (ROOT / "hub" / "sizing.md").read_text(encoding="utf-8")
    students = [_cells(r) for r in re.findall(r"^\| student\d+ .*$", text, re.M)]
    summary = {c[0]: c[1] for c in (_cells(r) for r in re.findall(r"^\| [^s|-].*$", text, re.M)) if len(c) == 2}
    return students, summary


def _number(cell: str) -> float:
    return float(re.match(r"(\d+(?:\.\d+)?)", cell)[1])


def test_hub_sizing_summary_and_resources_follow_from_its_own_measurements():
    """hub/sizing.md 的汇总与 Kubernetes 片段，由它自己的逐人实测行（两位小数）按 hub/sizing.py 重算，误差只来自舍入。"""
    rows, summary = _sizing_tables()
    assert len(rows) >= 8
    students = [{"kernel_cpu_s": _number(r[4]), "kernel_peak_bytes": _number(r[5]) * sizing.GB,
                 "server_peak_bytes": _number(r[6]) * sizing.GB} for r in rows]
    memory = sizing.per_student_bytes(students) / sizing.GB
    cpu = max(s["kernel_cpu_s"] for s in students)
    assert abs(_number(summary["每个学生的峰值内存（内核 + 服务器，最多的一人）"]) - memory) <= 0.011
    assert abs(_number(summary["一整节笔记本的内核 CPU 时间（最重的一节，含启动内核）"]) - cpu) <= 0.051
    assert abs(_number(summary["全班执行一遍的 CPU 时间合计"]) - sum(s["kernel_cpu_s"] for s in students)) <= 1
    assert str(len(rows)) + " 人" in summary["同时上课的学生"]
    text = (ROOT / "hub" / "sizing.md").read_text(encoding="utf-8")
    stated = {k: float(v) for k, v in re.findall(r"^\s+(guarantee|limit): ([\d.]+)G?$", text, re.M)[:2]}
    k8s = sizing.kubernetes(students)
    assert stated["guarantee"] == k8s["memory_guarantee_gb"] and stated["limit"] == k8s["memory_limit_gb"], (stated, k8s)


def test_hub_sizing_page_is_the_latest_measurement_when_there_is_one():
    report = ROOT / "_build" / "hub" / "sizing.json"
    if not report.exists():
        pytest.skip("本机还没有运行过 make test-hub（_build/hub/sizing.json 不存在）")
    assert (ROOT / "hub" / "sizing.md").read_text(encoding="utf-8") == sizing.markdown(
        json.loads(report.read_text(encoding="utf-8"))), "hub/sizing.md 不是最近一次 make test-hub 的结果：把 _build/hub/sizing.md 复制过去"


def test_guide_prose_about_the_hub_test_matches_its_table():
    rows, summary = _sizing_tables()
    text = _section(_guide(), "## 在 JupyterHub 上给一个班使用")
    assert re.findall(r"让 (\d+) 个模拟的学生", text) == [str(len(rows))]
    cores = re.search(r"(\d+) 核、", summary["同时上课的学生"])[1]
    assert re.findall(r"测试机只有 (\d+) 个核", text) == [cores]


def test_install_size_and_torch_share_match_the_student_environment_measurement():
    """“装好后的环境约 N GB”由 tests/test_student_env.py 对照实测；这里再核对“其中 PyTorch 占一半以上”。"""
    report = ROOT / "_build" / "student-env.json"
    if not report.exists():
        pytest.skip("本机还没有运行过 tests/test_student_env.py（_build/student-env.json 不存在）")
    env = json.loads(report.read_text(encoding="utf-8"))
    assert "一半以上是 PyTorch" in _guide()
    assert env["torch_bytes"] / env["installed_bytes"] > 0.5


# ---------------------------------------------------------------- 菜单用 JupyterLab 中文界面的叫法
LANGUAGE_PACK = next((ROOT / ".venv").glob("lib/python*/site-packages/jupyterlab_language_pack_zh_CN/locale/zh_CN/"
                                           "LC_MESSAGES/jupyterlab.json"), None)
SCHEMAS = ROOT / ".venv" / "share" / "jupyter" / "lab" / "schemas"
# 指南、前言、章导读里出现的菜单路径 → (英文界面里的菜单名…, 最后一项在菜单设置里的命令或子菜单 id)
MENUS = {
    "运行 → 运行所有单元格": (("Run", "Run All Cells"), "runmenu:run-all"),
    "内核 → 关闭内核": (("Kernel", "Shut Down Kernel"), "kernelmenu:shutdown"),
    "内核 → 重启内核…": (("Kernel", "Restart Kernel…"), "kernelmenu:restart"),
    "设置 → 语言": (("Settings", "Language"), "jp-mainmenu-settings-language"),
}
MENU_IDS = {"Run": "jp-mainmenu-run", "Kernel": "jp-mainmenu-kernel", "Settings": "jp-mainmenu-settings"}
MENU_PATH = re.compile(r"“([^“”]*? → [^“”]*?)”")


def _translations() -> dict[str, list[str]]:
    if LANGUAGE_PACK is None:
        pytest.skip(".venv 里没有 jupyterlab-language-pack-zh-cn")
    return json.loads(LANGUAGE_PACK.read_text(encoding="utf-8"))


def _menu_entries() -> dict[str, set[str]]:
    """JupyterLab 各插件的菜单设置里，每个主菜单 id 下的命令与子菜单 id。"""
    entries: dict[str, set[str]] = collections.defaultdict(set)
    for path in SCHEMAS.rglob("*.json"):
        for menu in json.loads(path.read_text(encoding="utf-8")).get("jupyter.lab.menus", {}).get("main", []):
            for item in menu.get("items", []):
                if "command" in item:
                    entries[menu["id"]].add(item["command"])
                if item.get("type") == "submenu":
                    entries[menu["id"]].add(item["submenu"]["id"])
    return entries


@pytest.mark.parametrize("page", [GUIDE, INDEX, ROOT / "intro.md"], ids=lambda p: p.name)
def test_menu_paths_in_the_prose_are_known(page):
    named = set(MENU_PATH.findall(page.read_text(encoding="utf-8")))
    unknown = sorted(p for p in named if p not in MENUS and not p.startswith(("登录", "课堂")))
    assert not unknown, f"{page.name} 写了这些菜单路径，测试里还没有核对：{unknown}"


@pytest.mark.parametrize("path", list(MENUS))
def test_menu_path_is_what_the_chinese_jupyterlab_shows(path):
    zh = _translations()
    (top, *rest), target = MENUS[path]
    shown = path.split(" → ")
    assert zh.get(f"menu\x04{top}") == [shown[0]], f"菜单 {top} 在中文界面里叫 {zh.get(f'menu{chr(4)}{top}')}"
    for english, chinese in zip(rest, shown[1:]):
        assert chinese in (zh.get(english, []) + zh.get(f"menu\x04{english}", [])), (
            f"{english} 在中文界面里叫 {zh.get(english) or zh.get(f'menu{chr(4)}{english}')}，不是 {chinese}")
    assert target in _menu_entries()[MENU_IDS[top]], f"{target} 不在 JupyterLab 的 {top} 菜单里"
