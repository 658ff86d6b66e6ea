"""评分沙箱：学生的笔记本在 bubblewrap（Debian 的 ``bubblewrap`` 包）里运行，只看得见运行它所需要的东西。

为什么是 bubblewrap：它只用 Linux 的用户与挂载命名空间，不需要守护进程、不需要 root（一个普通账户也能用它评分），
而且“看得见什么”是一张白名单——不在名单上的文件夹在沙箱里根本不存在，不必依赖每个文件的权限都设得对。
沙箱里：

* 只读：系统（``/usr``、``/etc``）、Python、虚拟环境、本书的库（``lib/``）、``runner.py``；
* 可写：这份提交自己的文件夹（``/grading/work``，里面只有它的笔记本）、结果文件夹（``/grading/out``），
  以及各自私有、有大小上限的 ``/tmp``、``/dev/shm`` 和家目录——评完就随沙箱消失；
* 看不见：本书仓库的其余部分（``_build/`` 里的教师答案、执行缓存、成绩单）、别的学生的提交、评分程序的
  临时文件夹；没有网络（新的网络命名空间里只有回环）；看不见也发不了信号给沙箱外的进程（新的 PID 命名空间）。
* 上限（``prlimit``）：地址空间、CPU 秒数、进程与线程数、写出的单个文件大小、打开的文件数；墙钟时间由
  grade.py 在外面计。以 root 评分时，每个同时运行的沙箱先换成一个只属于它的、没有任何文件的用户号
  （``setpriv``），于是进程数的上限是每份提交各自的：一份提交的 fork 炸弹挤不掉另一份的内核。

沙箱里的结论一概不用：runner.py 只记录学生答案的效果，对错由 grade.py 在沙箱外判（seqlab.exercises.recording）。
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "runner.py"
INSIDE = Path("/grading")
UID_BASE = 3_000_000  # 以 root 评分时，第 k 个沙箱用用户号 UID_BASE + k（系统里没有这样的账户，也没有属于它的文件）


@dataclass(frozen=True)
class Limits:
    seconds: int = 600  # 整份提交（含启动内核）的墙钟时间，也是每个进程的 CPU 秒数上限
    cell_seconds: int = 60  # 每个单元格、每道题的记录
    memory: int = 3 * 2**30  # 每个进程的地址空间（字节）
    processes: int = 128  # 进程与线程
    file_bytes: int = 64 * 2**20  # 写出的单个文件
    tmp_bytes: int = 64 * 2**20  # /tmp、/dev/shm、家目录各自的大小


class SandboxUnavailable(RuntimeError):
    """这台机器上建不起沙箱：说明原因与补救办法。"""


def _library_root() -> Path:
    spec = importlib.util.find_spec("seqlab")
    if spec is None or not spec.origin:
        raise SandboxUnavailable("找不到本书的库 seqlab：请在本书的虚拟环境里运行评分。")
    return Path(spec.origin).resolve().parent.parent


def _read_only_paths() -> list[Path]:
    """沙箱里只读可见的文件夹：系统、Python、虚拟环境、本书的库（去掉彼此包含的）。"""
    wanted = [Path("/usr"), Path("/etc"), Path(sys.base_prefix), Path(sys.prefix), _library_root()]
    wanted = [p.resolve() for p in wanted if p.exists()]
    return [p for p in dict.fromkeys(wanted) if not any(q != p and q in p.parents for q in wanted)]


def check_available() -> None:
    """评分之前确认 bubblewrap 能用；不能用就给出中文的说明。"""
    if shutil.which("bwrap") is None:
        raise SandboxUnavailable(
            "评分需要 bubblewrap 把学生的代码隔离起来，这台机器上没有它。"
            "Debian / Ubuntu：sudo apt-get install bubblewrap；其他系统请用包管理器安装 bubblewrap。"
        )
    probe = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "/bin/true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise SandboxUnavailable(
            "bubblewrap 建不起沙箱（" + probe.stderr.strip()[-200:] + "）。这台机器可能禁止了普通账户的用户命名空间："
            "请在允许它的机器或容器里评分（例如 sysctl kernel.unprivileged_userns_clone=1）。"
        )


def _system_links() -> list[str]:
    """``/bin``、``/lib`` 等在现在的 Debian 上是指向 ``/usr`` 的链接：沙箱里照样建出链接。"""
    args = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def command(work: Path, out: Path, slot: int, limits: Limits) -> list[str]:
    """在沙箱里评 ``work/submission.ipynb`` 的命令：结果写进 ``out``（两者在沙箱外由 grade.py 建好）。

    以 root 评分时，bubblewrap 以 root 搭好沙箱（所以能挂载 ``/root`` 这种别人进不去的文件夹里的 Python），
    只给沙箱里的第一个进程留下换用户所需的两种权限；它用 ``setpriv`` 换成这个沙箱自己的用户号、丢掉一切权限、
    禁止再提权，然后才启动 runner.py。普通账户评分时，bubblewrap 建一个用户命名空间，里面的进程就是这个账户。
    """
    tmp = str(limits.tmp_bytes)
    bwrap = ["bwrap", "--die-with-parent", "--new-session", "--clearenv"]
    bwrap += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    bwrap += _system_links()
    # 私有的 /tmp 先挂上：书或它的虚拟环境本身放在 /tmp 下面时（例如克隆到了 /tmp），下面的只读挂载叠在它上面，不被它盖住
    bwrap += ["--perms", "1777", "--size", tmp, "--tmpfs", "/tmp"]
    read_only = _read_only_paths()
    # 挂载点的上级文件夹由 bubblewrap 建在沙箱的根里；先以 0755 建好，沙箱的用户才走得进去
    for folder in sorted({str(a) for p in [*read_only, INSIDE / "runner.py"] for a in p.parents if a != Path("/")}):
        bwrap += ["--perms", "0755", "--dir", folder]
    for path in read_only:
        bwrap += ["--ro-bind", str(path), str(path)]
    bwrap += [
        "--ro-bind", str(RUNNER), str(INSIDE / "runner.py"),
        "--bind", str(work), str(INSIDE / "work"),
        "--bind", str(out), str(INSIDE / "out"),
        "--perms", "1777", "--size", tmp, "--tmpfs", str(INSIDE / "home"),
        "--proc", "/proc",
        "--dev", "/dev",
        "--perms", "1777", "--size", tmp, "--tmpfs", "/dev/shm",
        "--chdir", str(INSIDE / "work"),
    ]
    env = {
        "PATH": f"{Path(sys.prefix) / 'bin'}:/usr/bin:/bin",
        "HOME": str(INSIDE / "home"),
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
        "PYTHONDONTWRITEBYTECODE": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "SEQLAB_STRICT_CHECKS": "0",
    }
    for key, value in env.items():
        bwrap += ["--setenv", key, value]
    runner = [str(Path(sys.prefix) / "bin" / "python"), str(INSIDE / "runner.py"), str(limits.cell_seconds)]
    owner = sandbox_owner(slot)
    if owner is None:
        bwrap += ["--unshare-user", *runner]
        processes = _own_processes() + limits.processes
    else:
        bwrap += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
        bwrap += ["setpriv", f"--reuid={owner}", f"--regid={owner}", "--clear-groups", "--no-new-privs"]
        bwrap += ["--inh-caps=-all", "--bounding-set=-all", "--", *runner]
        processes = limits.processes
    limit = [
        "prlimit",
        f"--as={limits.memory}",
        f"--cpu={limits.seconds}",
        f"--nproc={processes}",
        f"--fsize={limits.file_bytes}",
        "--nofile=512",
        "--core=0",
        "--",
    ]
    return limit + bwrap


def sandbox_owner(slot: int) -> int | None:
    """第 ``slot`` 个沙箱里进程的用户号（以 root 评分时）；普通账户评分时就是自己，返回 None。"""
    return UID_BASE + slot if os.getuid() == 0 else None


def _own_processes() -> int:
    """这个账户现在有多少个进程与线程（普通账户评分时，进程数的上限是在它之上再加几个）。"""
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(entry / "task"))
            except OSError:
                pass
    return count
