"""学生在 JupyterLab 里看到的笔记本：在 127.0.0.1 上启动真实的 JupyterLab，用无头 Chromium 打开每一节。

* 渲染：jupyterlab-myst 把 MyST 渲染出来——任何 Markdown 单元格里都看不到原样的 ``{term}``、
  ``{ref}``、``{numref}``、``{cite``、``:label:``；每张插图都加载出来（naturalWidth > 0）；每道练习的标题都在。
* 全部运行：每个实时探索器都渲染出来，并且真的响应一次控件操作（拖动滑块、选择下拉菜单、输入文字）；
  没有控制台错误；没有任何请求离开 127.0.0.1。
* 每节保存一张截图到 ``_build/screenshots/lab/``，供人查看。

没有 Chromium 时整体跳过（CI 设置 SEQLAB_REQUIRE_BROWSER=1，此时直接失败）。
"""

from __future__ import annotations

import os
import re

import nbformat
import pytest

from browser import CHROMIUM, has_chromium, launch
from labcheck import RENDERED, LabPage, jupyterlab
from student import notebooks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOTS = os.path.join(ROOT, "_build", "screenshots", "lab")
NOTEBOOKS = notebooks()
RAW = ["{term}", "{ref}", "{numref}", "{cite", ":label:", ":name:", "{exercise", "{solution", "{figure"]

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.lab]

if not has_chromium():
    if os.environ.get("SEQLAB_REQUIRE_BROWSER") == "1":
        raise RuntimeError(f"SEQLAB_REQUIRE_BROWSER=1，但没有找到 Chromium：{CHROMIUM}")
    pytest.skip(f"没有找到 Chromium（{CHROMIUM}）：跳过 JupyterLab 浏览器测试。", allow_module_level=True)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with jupyterlab(sorted({p.parent for p in NOTEBOOKS}), tmp_path_factory.mktemp("lab")) as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    os.makedirs(SHOTS, exist_ok=True)
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


def _open(browser, lab, path, workspace):
    url, token = lab
    return LabPage(browser, url, token, f"{path.parent.name}/{path.name}", workspace)


def _markdown(path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def _figures(path) -> list[str]:
    return [m for s in _markdown(path) for m in re.findall(r"^`{3,}\{figure\}\s+(\S+)", s, flags=re.M)]


def _exercise_titles(path) -> list[str]:
    return [m.strip() for s in _markdown(path) for m in re.findall(r"^`{3,}\{exercise(?:-start)?\}(.*)$", s, flags=re.M)]


def _screenshots(page, stem):
    """三张截图：开头、第一张插图、第一道练习（笔记本在 JupyterLab 里自己滚动，整页截图只有一屏）。"""
    page.screenshot(path=os.path.join(SHOTS, f"{stem}.png"))
    for name, selector in [("figure", ".jp-MarkdownCell figure"), ("exercise", ".jp-MarkdownCell:has-text('难度')")]:
        target = page.locator(selector).first
        if target.count():
            target.scroll_into_view_if_needed()
            page.wait_for_timeout(200)
            page.screenshot(path=os.path.join(SHOTS, f"{stem}-{name}.png"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_markdown_reads_like_the_book(browser, lab, path):
    view = _open(browser, lab, path, f"render-{path.stem}")
    p = view.page
    try:
        texts = p.evaluate("r => [...document.querySelectorAll(r)].map(e => e.innerText)", RENDERED)
        assert len(texts) == len(_markdown(path))
        raw = {pat: [t[:80] for t in texts if pat in t] for pat in RAW}
        assert not any(raw.values()), f"JupyterLab 里看得到原样的 MyST：{ {k: v for k, v in raw.items() if v} }"
        images = p.evaluate("r => [...document.querySelectorAll(r)].flatMap(e => [...e.querySelectorAll('img')])"
                            ".map(i => [i.getAttribute('src'), i.naturalWidth])", RENDERED)
        assert len(images) >= len(_figures(path)), (images, _figures(path))
        assert all(width > 0 for _, width in images), f"有插图没有加载出来：{images}"
        shown = "\n".join(texts)
        missing = [t for t in _exercise_titles(path) if t not in shown]
        assert not missing, f"这些练习的标题没有显示：{missing}"
        _screenshots(p, path.stem)
        assert not view.outside, f"请求离开了本机：{view.outside}"
        assert not view.errors, f"控制台错误：{view.errors}"
    finally:
        view.close()
