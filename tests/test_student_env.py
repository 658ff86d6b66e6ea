"""学生拿到的环境：笔记本的格式、缺少库时的第一格、学生版压缩包在干净虚拟环境里的安装与运行。

* 每个笔记本都是合法的 nbformat 4.5（有单元格 id），声明了 kernelspec 与 language_info——
  VS Code、Colab 与 JupyterHub 打开笔记本时依赖这些字段。
* （slow）解压学生版压缩包，在一个全新的虚拟环境里只装它的 requirements.txt 里的第三方包（先不装 seqlab）：
  第一格用中文说明缺了什么、该运行哪几行命令，不出现 Python 的报错堆栈；然后装上 seqlab，
  从头到尾执行一个学生版笔记本。报告这个环境安装后的大小。
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import nbformat
import pytest

from student import ZIP_ROOT, build, notebooks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = notebooks()
# 装一个干净的虚拟环境、再在里面执行笔记本：每个测试的时限放宽到 30 分钟（默认 10 分钟，见 pyproject.toml）。
pytestmark = pytest.mark.timeout(1800)
# 在学生环境里执行一个笔记本（用它自己的 nbclient 与 ipykernel），把每格的输出写成 JSON。
RUNNER = textwrap.dedent("""\
    import json, sys
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(sys.argv[1], as_version=4)
    NotebookClient(nb, timeout=600, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": sys.argv[2]}}).execute()
    json.dump([c.get("outputs", []) for c in nb.cells if c.cell_type == "code"], sys.stdout)
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


def _guard_only(path: Path, target: Path) -> Path:
    """只含第一个代码单元格（环境检查）的笔记本。"""
    nb = nbformat.read(path, as_version=4)
    nb.cells = [next(c for c in nb.cells if c.cell_type == "code")]
    nbformat.write(nb, target)
    return target


def _run(python: Path, notebook: Path, cwd: Path) -> list[list[dict]]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    env["SEQLAB_STRICT_CHECKS"] = "0"
    out = subprocess.run([str(python), "-c", RUNNER, str(notebook), str(cwd)], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=900, check=True)
    return json.loads(out.stdout)


def _text(outputs: list[dict]) -> str:
    return "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink())


@pytest.fixture(scope="module")
def student_env(tmp_path_factory):
    """解压学生版、建一个全新的虚拟环境，只装第三方依赖（不装 seqlab）。产出 ``(解压目录, python)``。"""
    tmp = tmp_path_factory.mktemp("student-env")
    archive = build(tmp / "build")
    with zipfile.ZipFile(archive) as zf:
        zf.extractall(tmp)
    folder = tmp / ZIP_ROOT
    venv.create(tmp / "venv", with_pip=True)
    python = tmp / "venv" / "bin" / "python"
    requirements = (folder / "requirements.txt").read_text(encoding="utf-8")
    assert requirements.rstrip().endswith("-e ."), "压缩包的 requirements.txt 最后一行应当安装 seqlab"
    third_party = folder / "third-party.txt"  # 与 constraints.txt 同一层：-c 的相对路径才对
    third_party.write_text(requirements.rstrip().removesuffix("-e ."), encoding="utf-8")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(third_party)], cwd=folder,
                   check=True, timeout=1200)
    return folder, python


@pytest.mark.slow
def test_student_requirements_are_lean(student_env):
    folder, python = student_env
    out = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True,
                         check=True)
    installed = {p["name"].lower() for p in json.loads(out.stdout)}
    workshop = {"jupyter-book", "sphinx", "pytest", "playwright", "ruff", "pypdf", "nbval", "jupyterquiz"}
    assert not installed & workshop, f"学生环境里装了只有写书才需要的包：{sorted(installed & workshop)}"
    size = _size(python.parent.parent)
    report = ROOT / "_build" / "student-env.json"
    report.parent.mkdir(exist_ok=True)
    report.write_text(json.dumps({"packages": len(installed), "installed_bytes": size}), encoding="utf-8")
    print(f"\n学生环境：{len(installed)} 个包，安装后 {size / 2**20:.0f} MiB（{report}）")


@pytest.mark.slow
def test_first_cell_explains_what_is_missing(student_env, tmp_path):
    folder, python = student_env
    path = NOTEBOOKS[0]
    # 学生版压缩包里：说明应当给出压缩包的安装命令
    outputs = _run(python, _guard_only(path, folder / "guard.ipynb"), folder)[0]
    message = _text(outputs)
    assert "缺少本书需要的包：seqlab" in message and "%pip install -r requirements.txt" in message, message
    errors = [o for o in outputs if o["output_type"] == "error"]
    assert len(errors) == 1 and errors[0]["traceback"] == [], "说明之后应当停下，但不显示 Python 的报错堆栈"
    assert "Traceback" not in message and "ModuleNotFoundError" not in message
    # 只有笔记本本身（例如上传到了 Colab）：说明应当先解压学生版
    lone = tmp_path / "lone"
    lone.mkdir()
    message = _text(_run(python, _guard_only(path, lone / "guard.ipynb"), lone)[0])
    assert "!unzip -q seqlab-student.zip" in message and "%cd seqlab-student" in message, message
    # 本书仓库的克隆：笔记本在 chapters/ch01/ 里
    clone = tmp_path / "clone" / "chapters" / "ch01"
    clone.mkdir(parents=True)
    (tmp_path / "clone" / "requirements-student.txt").write_text("", encoding="utf-8")
    message = _text(_run(python, _guard_only(path, clone / "guard.ipynb"), clone)[0])
    assert "%pip install -r ../../requirements-student.txt -e ../.." in message, message


@pytest.mark.slow
def test_a_student_notebook_runs_end_to_end(student_env):
    folder, python = student_env
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-e", "."], cwd=folder,
                   check=True, timeout=600)
    notebook = folder / NOTEBOOKS[0].name
    outputs = _run(python, notebook, folder)
    errors = [o for cell in outputs for o in cell if o["output_type"] == "error"]
    assert not errors, [(e["ename"], e["evalue"]) for e in errors]
    shown = json.dumps(outputs, ensure_ascii=False)
    assert "❌" in shown, "学生版的练习检查应当报告 ❌（答案已经去掉）"


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
