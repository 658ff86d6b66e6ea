"""生成学生版：去掉答案的笔记本、一个可以直接分发的 zip，以及给教师的答案。

完全由单元格标签驱动（不做文本匹配）：
* 标签 ``solution`` 的单元格（答案代码、答案的 {solution-start}/{solution-end} 说明）被删除；
* 标签 ``exercise-starter`` 的起始代码和 ``exercise-check`` 的检查保留；
* 所有输出与执行计数被清空。

用法：``python tools/student.py [输出目录]``（默认 ``_build/student``）。
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
SOLUTION_TAG = "solution"
# 学生需要的库文件与安装说明（检查点在 lib/seqlab/checkpoints 里，随库一起打包）。
SUPPORT = ["lib", "pyproject.toml", "requirements.txt", "constraints.txt"]


def notebooks() -> list[Path]:
    return sorted(CHAPTERS.glob("*/[0-9][0-9]_*.ipynb"))


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
    archive = out / "seqlab-student.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((out / "notebooks").glob("*.ipynb")):
            zf.write(path, f"seqlab-student/{path.name}")
        for name in SUPPORT:
            src = ROOT / name
            files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
            for f in files:
                if "__pycache__" in f.parts or f.suffix == ".pyc" or ".egg-info" in str(f):
                    continue
                zf.write(f, f"seqlab-student/{f.relative_to(ROOT)}")
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
