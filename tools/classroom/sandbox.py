"""评分时学生代码所在内核的启动器：先加上限制，再变成普通的 ipykernel。

由评分用的内核规格（kernelspec）调用：``python sandbox.py {connection_file}``。环境变量（由 worker.py 设置）：

* ``SEQLAB_GRADE_MEMORY``：地址空间上限（字节，RLIMIT_AS）——分配 50 GB 的单元格只会得到 MemoryError；
* ``SEQLAB_GRADE_CPU``：CPU 秒数上限（RLIMIT_CPU）——到时内核被系统终止；
* ``SEQLAB_GRADE_HOME``：内核的 HOME（可写的私有文件夹）；
* ``SEQLAB_GRADE_PIDFILE``：写下内核的进程号，评分结束后由 grade.py 终止它留下的一切。

以 root 运行评分时，worker.py 让内核在自己的挂载命名空间里启动（``unshare --mount``），内核在启动前换成
无权限用户 ``nobody``：学生代码读不到只给教师的文件（答案、评分包、成绩单），改不了评分程序、其他学生的文件和
本书的库，也终止不了别的进程；它能写的只有自己的 HOME。如果 Python、虚拟环境或本书的库在 ``nobody``
进不去的文件夹里（例如 ``/root/.pyenv``、0750 的家目录），就在这个命名空间里用一个空文件夹盖住那一层，
只把内核需要的子文件夹挂回去。
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import resource
import shutil
import subprocess
import sys
import tempfile

SANDBOX_USER = "nobody"
MAX_FILE_BYTES = 200 * 2**20  # 学生代码写出的单个文件最多 200 MiB
MAX_PROCESSES = 256


def _limit(kind: int, value: int) -> None:
    resource.setrlimit(kind, (value, value))


def _closed_ancestor(path: str) -> str | None:
    """``path`` 的祖先里第一个别人进不去的文件夹（没有 o+x），没有则返回 None。"""
    parts = os.path.abspath(path).split(os.sep)
    for k in range(2, len(parts)):
        folder = os.sep.join(parts[:k])
        if not os.stat(folder).st_mode & 0o001:
            return folder
    return None


def _needed_paths() -> list[str]:
    """内核要走到的文件夹：Python 本身、虚拟环境、本书的库、这个启动器、内核的工作目录。"""
    seqlab = importlib.util.find_spec("seqlab")
    paths = [sys.base_prefix, sys.prefix, os.path.dirname(os.path.abspath(__file__)), os.getcwd()]
    if seqlab is not None and seqlab.origin:
        paths.append(os.path.dirname(os.path.dirname(seqlab.origin)))
    return paths


def _open_needed_paths() -> None:
    """在私有的挂载命名空间里，让 ``nobody`` 走得到内核需要的文件夹，同时看不到那些文件夹旁边的东西。

    每遇到一个别人进不去的祖先（例如 ``/root`` 或 0750 的家目录），就用一个空的 tmpfs 盖住它，只把需要的
    子文件夹原样挂回去。
    """
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    for _ in range(16):  # 每一轮打开一层；嵌套再深也只有几层
        paths = _needed_paths()
        closed = next((c for c in map(_closed_ancestor, paths) if c), None)
        if closed is None:
            return
        children = sorted(
            {
                os.path.join(closed, os.path.relpath(p, closed).split(os.sep)[0])
                for p in paths
                if p.startswith(closed + os.sep)
            }
        )
        kept = []
        for child in children:
            keep = tempfile.mkdtemp(prefix="seqlab-keep-")
            subprocess.run(["mount", "--bind", child, keep], check=True)
            kept.append((keep, child))
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=755,size=1m", "seqlab", closed], check=True)
        for keep, child in kept:
            os.mkdir(child)
            subprocess.run(["mount", "--move", keep, child], check=True)
            os.rmdir(keep)


def main(connection_file: str) -> None:
    home = os.environ["SEQLAB_GRADE_HOME"]
    with open(os.environ["SEQLAB_GRADE_PIDFILE"], "w") as f:
        f.write(str(os.getpid()))
    _limit(resource.RLIMIT_AS, int(os.environ["SEQLAB_GRADE_MEMORY"]))
    _limit(resource.RLIMIT_CPU, int(os.environ["SEQLAB_GRADE_CPU"]))
    _limit(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)
    _limit(resource.RLIMIT_CORE, 0)
    if os.getuid() == 0:
        user = pwd.getpwnam(SANDBOX_USER)
        # 连接文件只有 root 能读：复制一份给内核。
        own = os.path.join(home, "kernel.json")
        shutil.copyfile(connection_file, own)
        os.chown(own, user.pw_uid, user.pw_gid)
        connection_file = own
        if os.environ.get("SEQLAB_GRADE_NAMESPACE") == "1":
            _open_needed_paths()
        _limit(resource.RLIMIT_NPROC, MAX_PROCESSES)
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
    os.environ.update(HOME=home, TMPDIR=home, IPYTHONDIR=os.path.join(home, ".ipython"), MPLCONFIGDIR=home)
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file])


if __name__ == "__main__":
    main(sys.argv[1])
