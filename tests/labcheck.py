"""在 127.0.0.1 上启动一个真实的 JupyterLab，并用无头 Chromium 打开笔记本（tests/test_lab.py 用）。

笔记本先复制到临时文件夹再打开：“全部运行”的输出与自动保存永远不会写回仓库里的笔记本。
JupyterLab 的设置用 ``make lab`` 的同一份默认值（tools/jupyterlab/overrides.json：中文界面、
不弹新闻），测试只额外关掉自动保存。笔记本的窗口化保持 JupyterLab 的默认（``contentVisibility``：
屏幕外的单元格照样在页面里，只是浏览器暂不排版它们），与学生看到的一样——量出的重画时间才是学生感到的时间。
本书自己的 JupyterLab 扩展（tools/labext.py）按仓库里的当前源码装进临时文件夹，与学生版一样用
``--LabApp.extra_labextensions_path`` 指给 JupyterLab（优先于 .venv 里 make setup 装的那份）。

:func:`make_lab` 则由 ``make lab`` 本身启动 JupyterLab：内核拿到的环境变量就是 Makefile 给 ``lab`` 目标的那些
（例如 Makefile 若导出 ``SEQLAB_STRICT_CHECKS``，内核就会看到它），测试不替它设置任何一个。
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

from labext import install as install_labext

ROOT = Path(__file__).resolve().parent.parent
OVERRIDES = ROOT / "tools" / "jupyterlab" / "overrides.json"
JUPYTER = Path(sys.executable).parent / "jupyter"

# jupyterlab-myst 把它解析不了的引用（术语表、其他节、参考文献都在别的文件里）用 console.error
# 逐行报出；它们在页面上显示为链接文字，不是程序错误。只有每一行都是这种诊断的消息才算作它。
# 渲染好的 Markdown：jupyterlab-myst 的 ``.myst``（没有它时是 JupyterLab 自己的 ``.jp-RenderedMarkdown``）
RENDERED = ".jp-MarkdownCell .myst, .jp-MarkdownCell .jp-RenderedMarkdown"
MYST_DIAGNOSTICS = ("Cross reference target was not found: ", "Citation not found: ")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(proc, url: str, token: str, log: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2).read()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab 没有启动，见 {log}") from None
            time.sleep(0.5)


def _settings(folder: Path) -> Path:
    settings = json.loads(OVERRIDES.read_text(encoding="utf-8"))
    settings.setdefault("@jupyterlab/docmanager-extension:plugin", {})["autosave"] = False
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "overrides.json").write_text(json.dumps(settings, ensure_ascii=False), encoding="utf-8")
    return folder


@contextlib.contextmanager
def jupyterlab(notebook_dirs: list[Path], tmp: Path):
    """复制 ``notebook_dirs``（连同插图）到 ``tmp/root`` 并在那里启动 JupyterLab，产出 ``(根地址, token, 副本的根)``。"""
    root = tmp / "root"
    for folder in notebook_dirs:
        shutil.copytree(folder, root / folder.name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_DATA_DIR=str(tmp / "data"), SEQLAB_STRICT_CHECKS="0")
    cmd = [str(JUPYTER), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
           f"--LabApp.app_settings_dir={_settings(tmp / 'app-settings')}",
           f"--LabApp.extra_labextensions_path={install_labext(tmp / 'labextensions').parent}",
           f"--LabApp.user_settings_dir={tmp / 'user-settings'}", f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
           f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp / "jupyterlab.log", "w")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(proc, url, token, tmp / "jupyterlab.log")
        yield url, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


# 学生的终端里没有这些变量：SEQLAB_STRICT_CHECKS 是 tests/conftest.py 给库测试设的，MAKE* 是外层 make（make test）传下来的
NOT_IN_A_STUDENTS_SHELL = ("SEQLAB_STRICT_CHECKS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")


@contextlib.contextmanager
def make_lab(tmp: Path, makefile: Path = ROOT / "Makefile"):
    """用 ``make lab`` 本身启动 JupyterLab，产出 ``(根地址, token, 服务器根目录里笔记本所在的相对路径, 副本的根)``。

    make 照常展开 ``lab`` 目标的命令、导出 Makefile 里的变量，只是 ``BIN`` 指向一个小脚本：它进入仓库的副本
    （``chapters/`` 复制到 ``tmp/root``，“全部运行”与自动保存都不会写回仓库），再把命令原样交给 .venv 里的
    ``jupyter``，只在后面补上测试需要的端口、token、不开浏览器，以及当前源码的本书扩展。``lab`` 的前提
    （.venv 的安装标记、扩展）当作已经做好（``make -o``），测试不会去重装什么。
    """
    root = tmp / "root"
    shutil.copytree(ROOT / "chapters", root / "chapters", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "_build"))
    port, token = _free_port(), secrets.token_hex(16)
    extra = [f"--port={port}", "--ip=127.0.0.1", "--no-browser", "--ServerApp.open_browser=False",
             f"--IdentityProvider.token={token}", "--LabApp.expose_app_in_browser=True",
             f"--LabApp.extra_labextensions_path={install_labext(tmp / 'labextensions').parent}",
             f"--LabApp.user_settings_dir={tmp / 'user-settings'}", f"--LabApp.workspaces_dir={tmp / 'workspaces'}"]
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "jupyter"
    wrapper.write_text(f'#!/bin/sh\ncd {shlex.quote(str(root))} || exit 1\n'
                       f'exec {shlex.quote(str(JUPYTER))} "$@" {" ".join(shlex.quote(a) for a in extra)}\n')
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in NOT_IN_A_STUDENTS_SHELL}
    env.update(JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_DATA_DIR=str(tmp / "data"))
    make = ["make", "--no-print-directory", "-C", str(ROOT), "-f", str(makefile), f"BIN={bin_dir}"]
    database = subprocess.run([*make, "-p", "-n", "lab"], env=env, capture_output=True, text=True, check=True).stdout
    # 数据库里 “lab: 先决条件…” 那一行（“lab: 变量 := 值” 是目标专属的变量，不是它）
    prerequisites = next(m for m in re.findall(r"^lab:(.*)$", database, flags=re.M) if "=" not in m).split()
    log = open(tmp / "make-lab.log", "w")
    proc = subprocess.Popen([*make, *(f"--old-file={p}" for p in prerequisites), "lab"], env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(proc, url, token, tmp / "make-lab.log")
        # make lab 打开的是 chapters/ch01：服务器的根目录就是它，笔记本在根目录下，或者在 chapters/ch01/ 下
        listing = json.load(urllib.request.urlopen(f"{url}/api/contents?token={token}", timeout=10))
        prefix = "" if any(i["name"].endswith(".ipynb") for i in listing["content"]) else "chapters/ch01/"
        yield url, token, prefix, root / "chapters" / "ch01"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # make 与它启动的 JupyterLab 在测试新建的进程组里
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


class LabPage:
    """一个浏览器页面：记录控制台错误（jupyterlab-myst 的引用诊断单独记下）和所有离开 127.0.0.1 的请求。"""

    def __init__(self, browser, url: str, token: str, notebook: str, workspace: str):
        self.errors: list[str] = []
        self.myst_diagnostics: set[str] = set()
        self.outside: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
        self.page = self.context.new_page()
        self.page.route("**/*", self._route)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(f"{url}/lab/workspaces/{workspace}/tree/{notebook}?reset&token={token}")
        self.page.wait_for_selector(f".jp-Notebook :is({RENDERED})", timeout=90_000)
        # 等 jupyterlab-myst 把每个 Markdown 单元格都渲染完，插图都加载完
        self.page.wait_for_function(
            """rendered => {
                const nb = window.jupyterapp.shell.currentWidget.content;
                const md = nb.widgets.filter(c => c.model.type === 'markdown');
                return md.length > 0 && md.every(c => c.rendered && c.node.querySelector(rendered))
                    && [...document.images].every(i => i.complete);
            }""", arg=RENDERED, timeout=180_000)  # 机器繁忙时，最长的第 1.6 节要渲染一分多钟
        self.page.wait_for_timeout(500)

    def lay_out_every_cell(self) -> None:
        """让屏幕外的单元格也排版出来：JupyterLab 默认只排版屏幕附近的单元格（``content-visibility: auto``），
        没排版的单元格 ``innerText`` 读不到学生滚动到那里时看到的文字。只在检查整本笔记本的文字时用。"""
        self.page.add_style_tag(content=".jp-Notebook .jp-Cell { content-visibility: visible !important; }")

    def _route(self, route):
        u = route.request.url
        if u.startswith(("data:", "blob:")) or urlparse(u).hostname == "127.0.0.1":
            route.continue_()
        else:
            self.outside.append(u)
            route.abort()

    def _console(self, message):
        if message.type != "error":
            return
        lines = message.text.splitlines()
        if lines and all(line.startswith(MYST_DIAGNOSTICS) for line in lines):
            self.myst_diagnostics.update(lines)
        else:
            self.errors.append(message.text)

    def command(self, name: str, args: dict | None = None):
        return self.page.evaluate("([n, a]) => window.jupyterapp.commands.execute(n, a)", [name, args or {}])

    def close(self):
        self.context.close()
