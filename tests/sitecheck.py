"""网站测试共用的小工具：找到构建好的网站、列出页面、解析外部引用。"""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("SEQLAB_SITE", ROOT / "_build" / "html"))
PAGE_BUDGET_BYTES = int(1.5 * 2**20)


def require_site() -> Path:
    if not (HTML / "index.html").exists():
        raise AssertionError(f"没有找到构建好的网站 {HTML}：请先运行 make book")
    return HTML


def pages() -> list[Path]:
    """网站上的所有 HTML 页面（不含 _static 里的第三方文件）。"""
    return sorted(p for p in HTML.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def content_pages() -> list[Path]:
    """本书自己的页面：前言、各章节、附录（不含 Sphinx 生成的索引页和搜索页）。"""
    return [
        p for p in pages()
        if p.name not in {"genindex.html", "search.html"} and "http-equiv=\"Refresh\"" not in p.read_text(encoding="utf-8")[:200]
    ]


class ResourceParser(HTMLParser):
    """收集 <script src>、<link href>、<img src>、<iframe src> 的地址。"""

    ATTRS = {"script": "src", "link": "href", "img": "src", "iframe": "src"}

    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        want = self.ATTRS.get(tag)
        for name, value in attrs:
            if name == want and value:
                self.urls.append((tag, value))


def external_resources(path: Path) -> list[tuple[str, str]]:
    parser = ResourceParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return [(tag, url) for tag, url in parser.urls if url.startswith(("http:", "https:", "//", "ftp:"))]
