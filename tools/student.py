"""生成学生版：去掉答案的笔记本、一个可以直接分发的 zip，以及给教师的答案。

完全由单元格标签驱动（不做文本匹配）：
* 标签 ``solution`` 的单元格（答案代码、答案的 {solution-start}/{solution-end} 说明）被删除；
* 标签 ``exercise-starter`` 的起始代码和 ``exercise-check`` 的检查保留；
* 所有输出与执行计数被清空；
* 笔记本引用的插图（每章的 ``images/`` 文件夹）复制到笔记本旁边，相对路径不变。

用法：``python tools/student.py [输出目录]``（默认 ``_build/student``）。
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

import nbformat

from labext import install as install_labext

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
SOLUTION_TAG = "solution"
# 学生需要的库文件（检查点在 lib/seqlab/checkpoints 里，随库一起打包）。压缩包里的 requirements.txt
# 不是本书的那份（那份还有 Jupyter Book、Sphinx、pytest、Playwright……），而是 requirements-student.txt
# 加上安装 seqlab 的一行；间接依赖仍由本书的 constraints.txt 固定。
SUPPORT = ["lib", "pyproject.toml", "constraints.txt"]
STUDENT_REQUIREMENTS = ROOT / "requirements-student.txt"
# JupyterLab 的默认设置（中文界面、不弹新闻），与 make lab 用的是同一份。
LAB_SETTINGS = ROOT / "tools" / "jupyterlab" / "overrides.json"
# 本书自己的 JupyterLab 扩展（glue 的数值、参考文献、练习编号），预先装好放进压缩包的 jupyterlab/labextensions/，
# 学生的环境里不需要 pybtex 或任何构建工具。
LAB_EXTENSIONS = "jupyterlab/labextensions"
ZIP_ROOT = "seqlab-student"
# 压缩包里给学生的说明（学生拿到的只有压缩包，看不到本书的 README）。
STUDENT_README = """\
# 《从序列建模到 Transformer》第 1 章 · 学生版

这里是第 1 章每一节的笔记本（01_…ipynb … 06_…ipynb），练习的参考答案已经去掉；
lib/ 是笔记本用到的小型库 seqlab（含训练好的检查点）。

## 第一次使用（需要 Python 3.11 或更新的版本，不需要 GPU）

    cd seqlab-student
    python3 -m venv .venv
    .venv/bin/python -m pip install -r requirements.txt
    .venv/bin/jupyter lab --LabApp.app_settings_dir=jupyterlab --LabApp.extra_labextensions_path=jupyterlab/labextensions

第一个参数让 JupyterLab 以中文界面打开、不弹出“Jupyter 新闻”的询问（设置在 jupyterlab/overrides.json 里，
随时可以在“设置 → 语言”里换回英文）；第二个参数加载本书自己的一个小扩展，让正文里的数值、
参考文献和练习编号与网站上的一样。

Windows 上把 .venv/bin/ 换成 .venv\\Scripts\\。

## 做练习

每道练习下面有一格“检查”：写完代码后运行它，会看到 ✅ 或 ❌ 和一句说明。
还没做完的练习只会显示 ❌，不会打断“全部运行”。
"""


def notebooks() -> list[Path]:
    return sorted(CHAPTERS.glob("*/[0-9][0-9]_*.ipynb"))


def image_dirs() -> list[Path]:
    """笔记本旁边的插图文件夹（笔记本用相对路径 ``images/…`` 引用它们）。"""
    return sorted({path.parent / "images" for path in notebooks() if (path.parent / "images").is_dir()})


def _support_files(name: str) -> list[Path]:
    src = ROOT / name
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
    return [f for f in files if "__pycache__" not in f.parts and f.suffix != ".pyc" and ".egg-info" not in str(f)]


def student_requirements() -> str:
    """压缩包里的 requirements.txt：学生版的固定依赖，最后以可编辑方式安装随包的 seqlab。"""
    return STUDENT_REQUIREMENTS.read_text(encoding="utf-8") + "-e .\n"


def is_solution(cell) -> bool:
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def clear_outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    return nb


def student_version(nb):
    """返回去掉全部答案单元格、清空输出的副本。"""
    nb = nbformat.from_dict(nb)
    nb.cells = [cell for cell in nb.cells if not is_solution(cell)]
    return clear_outputs(nb)


def build(out: Path) -> Path:
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    (out / "answer_key").mkdir()
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        nbformat.write(student_version(nb), out / "notebooks" / path.name)
        nbformat.write(clear_outputs(nbformat.from_dict(nb)), out / "answer_key" / path.name)
    # 插图：(源文件, 相对笔记本的路径)，例如 images/02_lookup_vs_onehot.svg
    images = [(f, f.relative_to(d.parent)) for d in image_dirs() for f in sorted(d.rglob("*")) if f.is_file()]
    for folder in ("notebooks", "answer_key"):
        for f, rel in images:
            target = out / folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
    archive = out / "seqlab-student.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{ZIP_ROOT}/README.md", STUDENT_README)
        for path in sorted((out / "notebooks").glob("*.ipynb")):
            zf.write(path, f"{ZIP_ROOT}/{path.name}")
        for f, rel in images:
            zf.write(f, f"{ZIP_ROOT}/{rel.as_posix()}")
        zf.writestr(f"{ZIP_ROOT}/requirements.txt", student_requirements())
        zf.write(LAB_SETTINGS, f"{ZIP_ROOT}/jupyterlab/overrides.json")
        labext = install_labext(out / "labextensions")
        for f in sorted(p for p in labext.rglob("*") if p.is_file()):
            zf.write(f, f"{ZIP_ROOT}/{LAB_EXTENSIONS}/{f.relative_to(labext.parent).as_posix()}")
        for name in SUPPORT:
            for f in _support_files(name):
                zf.write(f, f"{ZIP_ROOT}/{f.relative_to(ROOT)}")
    return archive


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "_build" / "student"
    archive = build(out)
    print(f"学生版笔记本：{out / 'notebooks'}")
    print(f"教师答案：    {out / 'answer_key'}")
    print(f"分发用压缩包：{archive}（{archive.stat().st_size / 2**20:.1f} MiB）")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
