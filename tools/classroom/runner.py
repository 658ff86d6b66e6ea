"""在评分沙箱里运行一份提交（由 sandbox.py 启动；这里的一切都可能被学生的代码改掉，所以它只记录、不判分）。

    python runner.py 单元格秒数

读 ``/grading/work/submission.ipynb`` 与 ``/grading/work/questions.json``（每道题：记录文件名、检查函数所在的
模块与名字、答案的名字），用 nbclient 在真正的 Jupyter 内核里从头到尾运行笔记本（出错的单元格不打断后面的，
和学生点“全部运行”一样；每格最多运行给定的秒数，超时就中断），然后每道题追加一格记录单元格
（``seqlab.exercises.recording.save``），把学生答案的效果写成 ``/grading/out/<题>.json``。
每个单元格的结果（正常、出错的异常类型、超时）写进 ``/grading/out/cells.json``。单元格的输出一概丢掉：
评分用不着，学生刷屏的输出也就占不了内存。
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

WORK = Path("/grading/work")
OUT = Path("/grading/out")
TIMEOUT = "CellTimeout"


class QuietClient(NotebookClient):
    """丢掉所有输出的 NotebookClient：只关心每个单元格是否出错。"""

    def output(self, outs, msg, display_id, cell_index):
        return None


def recording_cell(q: dict) -> str:
    return (
        "__import__('seqlab.exercises.recording', fromlist=['save']).save("
        f"{q['module']!r}, {q['check']!r}, {q['answers']!r}, globals(), {str(OUT / (q['name'] + '.json'))!r})"
    )


def main(cell_seconds: int) -> int:
    nb = nbformat.read(WORK / "submission.ipynb", as_version=4)
    questions = json.loads((WORK / "questions.json").read_text(encoding="utf-8"))
    submitted = len(nb.cells)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    nb.cells += [nbformat.v4.new_code_cell(recording_cell(q)) for q in questions]
    cells: dict[int, str] = {}

    def executed(cell, cell_index, execute_reply):
        content = execute_reply.get("content", {}) if execute_reply else {}
        cells[cell_index] = "ok" if content.get("status") == "ok" else str(content.get("ename", "Error"))[:40]

    client = QuietClient(
        nb,
        timeout=cell_seconds,
        interrupt_on_timeout=True,
        error_on_timeout={"ename": TIMEOUT, "evalue": "", "traceback": []},
        allow_errors=True,
        kernel_name="python3",
        startup_timeout=120,
        resources={"metadata": {"path": str(WORK)}},
        on_cell_executed=executed,
    )
    died = None
    try:
        client.execute()
    except DeadKernelError:
        died = max(cells, default=-1) + 1
    report = {
        "submitted_cells": submitted,
        "cells": [[i, status] for i, status in sorted(cells.items())],
        "kernel_died_at": died,
    }
    (OUT / "cells.json").write_text(json.dumps(report), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1])))
