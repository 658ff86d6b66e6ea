"""打印每一节的 nbgitpuller 链接（教师指南“发链接”一节的格式）。

    python tools/classroom/links.py https://hub.example.edu https://git.example.edu/course/seqlab-student [分支]

学生点链接：hub 让他登录、启动他的服务器，nbgitpuller 把学生版仓库拉到他主目录下与仓库同名的文件夹里
（以后再点只合并老师的新提交），然后在 JupyterLab 里打开这一节的笔记本。
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlencode, urlparse

import nbformat

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from student import notebooks  # noqa: E402


def folder_of(repo: str) -> str:
    """nbgitpuller 默认把仓库放进以仓库名命名的文件夹（地址的最后一段）。"""
    return repo.rstrip("/").split("/")[-1]


def link(hub: str, repo: str, branch: str, notebook: str) -> str:
    query = urlencode({"repo": repo, "branch": branch, "urlpath": f"lab/tree/{folder_of(repo)}/{notebook}"})
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def title(path: Path) -> str:
    """笔记本第一个一级标题。"""
    for cell in nbformat.read(path, as_version=4).cells:
        for line in cell.source.splitlines():
            if cell.cell_type == "markdown" and line.startswith("# "):
                return line[2:].strip()
    return path.stem


def _is_url(text: str) -> bool:
    parsed = urlparse(text)
    return parsed.scheme in ("http", "https", "file") and bool(parsed.netloc or parsed.path)


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0]:
        print(
            "用法：make links HUB=https://hub.example.edu REPO=https://git.example.edu/course/seqlab-student"
        )
        print("HUB 是学校 JupyterHub 的地址，REPO 是放学生版（make student）的 git 仓库地址。")
        return 2
    hub, repo, branch = argv[0], argv[1], argv[2] if len(argv) > 2 else "main"
    for name, value in (("HUB", hub), ("REPO", repo)):
        if not _is_url(value) or (name == "HUB" and urlparse(value).scheme == "file"):
            print(f"{name} 应当是一个以 https:// 开头的地址，你给的是「{value}」。")
            return 2
    print(f"nbgitpuller 链接（hub：{hub}，仓库：{repo}，分支：{branch}）\n")
    for path in notebooks():
        print(f"{title(path)}\n{link(hub, repo, branch, path.name)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
