"""给一份提交评分：``otter run`` 的同一个入口（``otter.run.main``），只多加了评分所需的限制。

由 grade.py 为每份提交单独启动一个进程（互不影响）：

    python worker.py 提交.ipynb 评分包.zip 工作目录 结果目录

与直接运行 ``otter run`` 的区别只有三点：

* 学生的笔记本在 sandbox.py 启动的内核里运行（内存、CPU、文件大小都有上限；以 root 评分时换成 ``nobody``），
  不管笔记本的元数据里写的是哪个内核；
* 每个单元格最多运行 ``SEQLAB_GRADE_CELL_SECONDS`` 秒，超时就中断它，接着运行下一个单元格——死循环只让
  这一格失败，其余的题照常评分；
* otter 的临时文件夹放在工作目录里，对内核只读；只有 otter 收集结果的那个文件归内核所有。
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL = "seqlab-grading"
CELL_ERROR = {"ename": "TimeoutError", "evalue": "单元格运行超时，已被中断", "traceback": []}


def _sandbox_ids() -> tuple[int, int] | None:
    if os.getuid() != 0:
        return None
    user = pwd.getpwnam("nobody")
    return user.pw_uid, user.pw_gid


def _kernelspec(scratch: Path) -> None:
    """评分专用的内核规格：sandbox.py 加上限制后再启动 ipykernel。"""
    spec = scratch / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, str(HERE / "sandbox.py"), "{connection_file}"]
    if os.getuid() == 0 and shutil.which("unshare"):
        argv = [shutil.which("unshare"), "--mount", "--propagation", "private", *argv]
        os.environ["SEQLAB_GRADE_NAMESPACE"] = "1"
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "seqlab grading", "language": "python"}), encoding="utf-8"
    )
    os.environ["JUPYTER_PATH"] = str(scratch / "jupyter")


def _limit_execution(cell_seconds: int) -> None:
    """otter 用 nbconvert 的 ExecutePreprocessor 执行笔记本：换成固定内核、单元格超时即中断的版本。"""
    import nbconvert.preprocessors

    base = nbconvert.preprocessors.ExecutePreprocessor

    class LimitedExecutePreprocessor(base):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.kernel_name = KERNEL
            self.timeout = cell_seconds
            self.interrupt_on_timeout = True
            self.error_on_timeout = CELL_ERROR
            self.startup_timeout = 120

    nbconvert.preprocessors.ExecutePreprocessor = LimitedExecutePreprocessor


def _share_temp_files(ids: tuple[int, int] | None) -> None:
    """otter 的临时文件夹让内核能读（不能写）；otter 收集结果的临时文件交给内核来写。"""
    make_dir, make_file = tempfile.mkdtemp, tempfile.mkstemp

    def mkdtemp(*args, **kwargs):
        path = make_dir(*args, **kwargs)
        os.chmod(path, 0o755)
        return path

    def mkstemp(*args, **kwargs):
        fd, path = make_file(*args, **kwargs)
        if ids is not None:
            os.chown(path, *ids)
        return fd, path

    tempfile.mkdtemp, tempfile.mkstemp = mkdtemp, mkstemp


def main(submission: str, autograder: str, scratch: str, results: str) -> int:
    scratch_dir = Path(scratch)
    ids = _sandbox_ids()
    home = scratch_dir / "home"
    home.mkdir(mode=0o700)
    if ids is not None:
        os.chown(home, *ids)
    (scratch_dir / "tmp").mkdir()
    tempfile.tempdir = str(scratch_dir / "tmp")
    os.environ.update(
        SEQLAB_GRADE_HOME=str(home),
        SEQLAB_GRADE_PIDFILE=str(scratch_dir / "kernel.pid"),
        SEQLAB_STRICT_CHECKS="0",
        MALLOC_ARENA_MAX="2",
    )
    _kernelspec(scratch_dir)
    _limit_execution(int(os.environ.get("SEQLAB_GRADE_CELL_SECONDS", "60")))
    _share_temp_files(ids)

    import otter.run

    otter.run.main(submission, autograder=autograder, output_dir=results, no_logo=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:5]))
