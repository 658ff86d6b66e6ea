"""学生拿到的环境：笔记本的格式、压缩包里文件的权限与安装说明、学生版在干净虚拟环境里的安装与运行。

* 每个笔记本都是合法的 nbformat 4.5（有单元格 id），声明了 kernelspec 与 language_info——
  VS Code、Colab 与 JupyterHub 打开笔记本时依赖这些字段。
* 压缩包里每个文件都是 0644（人人可读），README 与 requirements.txt 说明怎样装 PyTorch 的 CPU 版。
* （slow）照压缩包自己的 README 安装：解压、建一个全新的虚拟环境、``pip install -r requirements.txt``。
  先只装第三方包（不装 seqlab），每一节的第一格都用中文说明缺了什么、该运行哪几行命令，不出现 Python 的
  报错堆栈；装上 seqlab 以后，**每一个**学生版笔记本都从头到尾执行（两个进程并行），没有一格出错，
  每个练习的检查都报告 ❌（答案已经去掉），而不是报错。环境安装后的大小、安装与执行的用时写进
  ``_build/student-env.json``（make bench 汇总它），教师指南与 README 里写的安装大小必须与实测相符。

本机只连得上软件包仓库，连不上 download.pytorch.org：安装时去掉 requirements.txt 里指向 PyTorch CPU 源的那一行，
torch 2.13.0+cpu 由本机 pip 配置的本地软件源提供（与 PyTorch 的 CPU 源上是同一个文件），其余完全照 README 做。
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
import venv
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from student import FILE_MODE, ZIP_ROOT, build, notebooks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = notebooks()
GUIDE = ROOT / "chapters" / "teacher" / "guide.md"
REPORT = ROOT / "_build" / "student-env.json"
TORCH_CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
# README 里学生要照做的命令（缩进四格的代码块）
README_STEPS = [
    "cd seqlab-student",
    "python3 -m venv .venv",
    ".venv/bin/python -m pip install -r requirements.txt",
]
# 本机两个核：学生版笔记本两个一起执行
WORKERS = 2
# 装一个干净的虚拟环境、再在里面执行全部笔记本：时限放宽到 30 分钟（默认 10 分钟，见 pyproject.toml）。
pytestmark = pytest.mark.timeout(1800)
# 在学生环境里执行一个笔记本（用它自己的 nbclient 与 ipykernel），把用时和每格的输出写成 JSON。
# 标签 skip-execution 的单元格（实时探索器）网站构建时不执行，学生点“全部运行”时却会执行，这里也执行。
RUNNER = textwrap.dedent("""\
    import json, sys, time
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(sys.argv[1], as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, allow_errors=True, kernel_name="python3", skip_cells_with_tag="",
                   resources={"metadata": {"path": sys.argv[2]}}).execute()
    json.dump({"seconds": time.perf_counter() - start,
               "outputs": [c.get("outputs", []) for c in nb.cells if c.cell_type == "code"]}, sys.stdout)
""")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_format_that_other_editors_expect(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
    ids = [c.get("id") for c in nb.cells]
    assert all(ids) and len(set(ids)) == len(ids)
    assert nb.metadata["kernelspec"]["name"] == "python3" and nb.metadata["kernelspec"]["language"] == "python"
    assert nb.metadata["language_info"]["name"] == "python"


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("student-build"))


def test_zip_files_are_plain_readable_files(archive):
    with zipfile.ZipFile(archive) as zf:
        modes = {info.filename: info.external_attr >> 16 for info in zf.infolist()}
    wrong = {name: oct(mode) for name, mode in modes.items() if mode != 0o100000 | FILE_MODE}
    assert not wrong, f"压缩包里这些条目的权限不是 rw-r--r--：{wrong}"


def test_zip_says_how_to_get_the_cpu_build_of_pytorch(archive):
    with zipfile.ZipFile(archive) as zf:
        readme = zf.read(f"{ZIP_ROOT}/README.md").decode()
        requirements = zf.read(f"{ZIP_ROOT}/requirements.txt").decode().splitlines()
    torch = next(i for i, line in enumerate(requirements) if line.startswith("torch=="))
    assert TORCH_CPU_INDEX in requirements[:torch], "PyTorch 的 CPU 源应当写在 torch 之前"
    assert TORCH_CPU_INDEX in readme and "+cpu" in readme
    for step in README_STEPS:
        assert f"    {step}\n" in readme, f"README 的安装步骤里没有：{step}"


def _run(python: Path, notebook: Path, cwd: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["SEQLAB_STRICT_CHECKS"] = "0"
    out = subprocess.run([str(python), "-c", RUNNER, str(notebook), str(cwd)], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=900, check=True)
    return json.loads(out.stdout)


def _guards(target: Path, hide: tuple[str, ...] = ()) -> Path:
    """一个笔记本，依次是每一节的第一个代码单元格（环境检查）；``hide`` 里的模块先被挡住，像没装一样。"""
    cells = [nbformat.v4.new_code_cell(f"import sys\nsys.modules.update(dict.fromkeys({list(hide)!r}))")]
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        cells.append(next(c for c in nb.cells if c.cell_type == "code"))
    nb = nbformat.v4.new_notebook(cells=cells)
    nbformat.write(nb, target)
    return target


def _text(outputs: list[dict]) -> str:
    return "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")


def _pip(python: Path, folder: Path, requirements: str) -> None:
    """照 README 装 requirements.txt（去掉本机连不上的 PyTorch CPU 源那一行，见模块说明）。"""
    local = folder / "requirements-local.txt"  # 与 constraints.txt 同一层：-c 的相对路径才对
    local.write_text("\n".join(l for l in requirements.splitlines() if l.strip() != TORCH_CPU_INDEX) + "\n",
                     encoding="utf-8")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", local.name], cwd=folder, check=True,
                   timeout=1200)


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())


@pytest.fixture(scope="module")
def student(archive, tmp_path_factory):
    """照压缩包的 README 安装并运行一遍学生版，把看到的一切收进一个字典，各个测试只检查它。"""
    tmp = tmp_path_factory.mktemp("student-env")
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(tmp)
    folder = tmp / ZIP_ROOT
    requirements = (folder / "requirements.txt").read_text(encoding="utf-8")
    assert requirements.rstrip().endswith("-e ."), "压缩包的 requirements.txt 最后一行应当安装 seqlab"
    result: dict = {"folder": folder}
    start = time.perf_counter()
    venv.create(folder / ".venv", with_pip=True)  # python3 -m venv .venv
    python = folder / ".venv" / "bin" / "python"
    # 先只装第三方包：这时第一格应当说明缺了 seqlab
    _pip(python, folder, requirements.rstrip().removesuffix("-e ."))
    first_install = time.perf_counter() - start
    result["guard_zip"] = _run(python, _guards(folder / "guards.ipynb"), folder)["outputs"]
    lone = tmp / "lone"  # 只有笔记本本身（例如上传到了 Colab）
    lone.mkdir()
    result["guard_lone"] = _run(python, _guards(lone / "guards.ipynb"), lone)["outputs"]
    clone = tmp / "clone" / "chapters" / "ch01"  # 本书仓库的克隆：笔记本在 chapters/ch01/ 里
    clone.mkdir(parents=True)
    (tmp / "clone" / "requirements-student.txt").write_text("", encoding="utf-8")
    result["guard_clone"] = _run(python, _guards(clone / "guards.ipynb"), clone)["outputs"]
    # 再照 README 装一遍完整的 requirements.txt（最后一行以可编辑方式装上 seqlab）
    start = time.perf_counter()
    _pip(python, folder, requirements)
    result["install_seconds"] = first_install + time.perf_counter() - start
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True,
                            check=True)
    result["packages"] = {p["name"].lower(): p["version"] for p in json.loads(listed.stdout)}
    site = next((folder / ".venv" / "lib").glob("python3.*/site-packages"))
    result["installed_bytes"] = _size(folder / ".venv")
    result["torch_bytes"] = _size(site / "torch")
    # 装上 seqlab 之后：只挡住两个第三方模块，第一格应当说出提供它们的 pip 包
    result["guard_hidden"] = _run(python, _guards(folder / "hidden.ipynb", ("tqdm", "_plotly_utils")), folder)[
        "outputs"]
    # 每一个学生版笔记本从头到尾执行，两个一起
    start = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as pool:
        runs = dict(zip(NOTEBOOKS, pool.map(lambda p: _run(python, folder / p.name, folder), NOTEBOOKS)))
    result["runs"] = runs
    result["notebooks_seconds"] = time.perf_counter() - start
    report = {
        "packages": len(result["packages"]),
        "installed_bytes": result["installed_bytes"],
        "torch": result["packages"]["torch"],
        "torch_bytes": result["torch_bytes"],
        "install_seconds": round(result["install_seconds"], 1),
        "notebook_seconds": {p.name: round(r["seconds"], 1) for p, r in runs.items()},
        "notebooks_wall_seconds": round(result["notebooks_seconds"], 1),
    }
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"\n学生环境：{report['packages']} 个包，安装后 {report['installed_bytes'] / 1e9:.2f} GB"
          f"（PyTorch {report['torch_bytes'] / 1e9:.2f} GB），安装 {report['install_seconds']:.0f} 秒；"
          f"{len(runs)} 个笔记本用 {WORKERS} 个进程执行共 {report['notebooks_wall_seconds']:.0f} 秒"
          f"（{'、'.join(f'{s:.0f}' for s in report['notebook_seconds'].values())} 秒）→ {REPORT}")
    return result


@pytest.mark.slow
def test_student_environment_is_lean_and_uses_the_cpu_build_of_pytorch(student):
    installed = set(student["packages"])
    workshop = {"jupyter-book", "sphinx", "myst-nb", "pytest", "playwright", "ruff", "pypdf", "nbval", "pandas"}
    assert not installed & workshop, f"学生环境里装了只有写书才需要的包：{sorted(installed & workshop)}"
    assert student["packages"]["torch"].endswith("+cpu"), student["packages"]["torch"]
    assert not any(name.startswith("nvidia-") for name in installed), "学生环境里装了 CUDA 的库"


@pytest.mark.slow
@pytest.mark.parametrize("document", [GUIDE, ROOT / "README.md"], ids=lambda p: p.name)
def test_documents_state_the_measured_install_size(student, document):
    """教师指南与 README 里“装好后的环境约 N GB”与实测相差不超过 0.1 GB（1 GB = 10⁹ 字节）。"""
    stated = re.findall(r"装好后的环境约 (\d+(?:\.\d+)?) GB", document.read_text(encoding="utf-8"))
    measured = student["installed_bytes"] / 1e9
    assert stated, f"{document.name} 没有写学生环境装好后的大小（“装好后的环境约 … GB”）"
    assert all(abs(float(s) - measured) <= 0.1 for s in stated), f"{document.name} 写的是 {stated} GB，实测 {measured:.2f} GB"


@pytest.mark.slow
@pytest.mark.parametrize("where, fix", [
    ("guard_zip", "%pip install -r requirements.txt"),  # 学生版压缩包：说明应当给出压缩包的安装命令
    ("guard_lone", "!unzip -q seqlab-student.zip\n%cd seqlab-student\n%pip install -r requirements.txt"),
    ("guard_clone", "%pip install -r ../../requirements-student.txt -e ../.."),
])
def test_first_cell_explains_what_is_missing(student, where, fix):
    cells = student[where][1:]
    assert len(cells) == len(NOTEBOOKS)
    for path, outputs in zip(NOTEBOOKS, cells):
        message = _text(outputs)
        assert "缺少本书需要的包：seqlab。" in message and fix in message, (path.name, message)
        errors = [o for o in outputs if o["output_type"] == "error"]
        assert len(errors) == 1 and errors[0]["traceback"] == [], "说明之后应当停下，但不显示 Python 的报错堆栈"
        assert "Traceback" not in message and "ModuleNotFoundError" not in message


@pytest.mark.slow
def test_first_cell_names_the_pip_package_of_a_missing_module(student):
    for path, outputs in zip(NOTEBOOKS, student["guard_hidden"][1:]):
        assert "缺少本书需要的包：plotly、tqdm。" in _text(outputs), (path.name, _text(outputs))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_student_notebook_runs_end_to_end(student, path):
    outputs = student["runs"][path]["outputs"]
    errors = [(i, o["ename"], o["evalue"]) for i, cell in enumerate(outputs) for o in cell
              if o["output_type"] == "error"]
    assert not errors, f"{path.name} 有单元格出错：{errors}"
    nb = nbformat.read(student["folder"] / path.name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    checks = [i for i, c in enumerate(code) if "exercise-check" in c.metadata.get("tags", [])]
    assert len(checks) >= 3, f"{path.name} 的练习检查太少"
    for i in checks:
        shown = json.dumps(outputs[i], ensure_ascii=False)
        assert "❌" in shown and "✅" not in shown, f"{path.name} 的检查 {code[i].source!r} 应当报告 ❌：{shown[:300]}"


@pytest.mark.parametrize("display", [True, False])
def test_glue_without_myst_nb_writes_what_myst_nb_writes(monkeypatch, display):
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from myst_nb import glue as myst_glue

    from seqlab.glue import glue

    InteractiveShell.instance()
    value = {"ratio": 7.25}
    with capture_output() as real:
        myst_glue("x", value, display)
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # 学生环境：没有 myst-nb
    with capture_output() as ours:
        glue("x", value, display)
    assert len(real.outputs) == 1 and real.outputs[0].metadata["scrapbook"]["name"] == "x"
    assert [(o.data, o.metadata) for o in ours.outputs] == [(o.data, o.metadata) for o in real.outputs]
