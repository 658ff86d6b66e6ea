"""在真实的无头 Chromium 里打开网站的每一页。

检查：没有控制台错误；没有任何请求离开 127.0.0.1；公式已由 MathJax 排版；每张 plotly 图都画出来了；
拖动静态探索器的滑块（或选择下拉菜单）会改变图；中文搜索能找到第 1.1 节。每页的截图保存在
``_build/screenshots/``，供人查看。

没有安装 Chromium 时本文件整体跳过并说明原因；CI 设置 SEQLAB_REQUIRE_BROWSER=1，此时缺少浏览器直接失败。
"""

from __future__ import annotations

import os
import shutil
from urllib.parse import urlparse

import pytest

from browser import CHROMIUM, has_chromium, launch, serve
from sitecheck import HTML, ROOT, content_pages, require_site

SHOTS = ROOT / "_build" / "screenshots"

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if not has_chromium():
    if os.environ.get("SEQLAB_REQUIRE_BROWSER") == "1":
        raise RuntimeError(f"SEQLAB_REQUIRE_BROWSER=1，但没有找到 Chromium：{CHROMIUM}")
    pytest.skip(f"没有找到 Chromium（{CHROMIUM}）：跳过浏览器测试。安装：apt-get install -y chromium fonts-noto-cjk fonts-noto-color-emoji",
                allow_module_level=True)


@pytest.fixture(scope="module")
def server():
    require_site()
    with serve(HTML) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if SHOTS.exists():
        shutil.rmtree(SHOTS)
    SHOTS.mkdir(parents=True)
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


class Visit:
    """打开一页，记录控制台错误、页面异常和所有试图离开本机的请求。"""

    def __init__(self, browser, url, *, color_scheme="light"):
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=color_scheme)
        self.page = self.context.new_page()
        self.page.route("**/*", self._route)
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url, wait_until="load")
        self.page.wait_for_timeout(300)

    def _route(self, route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith("data:") or host == "127.0.0.1":
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def close(self):
        self.context.close()


PAGES = [p.relative_to(HTML).as_posix() for p in content_pages()] if (HTML / "index.html").exists() else []


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_offline_without_errors_and_renders_math_and_figures(browser, server, page):
    visit = Visit(browser, f"{server}/{page}")
    p = visit.page
    try:
        has_math = p.evaluate("document.querySelectorAll('.math').length") > 0
        if has_math:
            p.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=15000)
            p.evaluate("MathJax.startup.promise")
            p.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=15000)
            raw = p.evaluate("document.querySelector('main').innerText")
            assert "$$" not in raw and "\\frac" not in raw, "页面上还有没排版的公式"
        figures = p.evaluate("document.querySelectorAll('.plotly-graph-div').length")
        if figures:
            p.wait_for_function(
                "[...document.querySelectorAll('.plotly-graph-div')].every(g => g._fullLayout && g.querySelector('.main-svg'))",
                timeout=15000,
            )
        shot = SHOTS / (page.replace("/", "__").removesuffix(".html") + ".png")
        p.screenshot(path=str(shot), full_page=True)
        assert not visit.outside, f"请求离开了本机：{visit.outside}"
        assert not visit.errors, f"控制台错误：{visit.errors}"
    finally:
        visit.close()


STATE = """g => JSON.stringify(g.data.map(t => [t.visible, t.y && Array.from(t.y).slice(0, 50), t.z && Array.from(t.z).slice(0, 5)]))"""


def _figures_with_controls(p):
    return p.evaluate(
        """() => [...document.querySelectorAll('.plotly-graph-div')].map((g, i) => [i,
              (g.layout.sliders || []).length, (g.layout.updatemenus || []).length])"""
    )


@pytest.mark.parametrize("page", [p for p in PAGES if "/ch01/0" in p])
def test_static_explorer_controls_change_the_plot(browser, server, page):
    visit = Visit(browser, f"{server}/{page}")
    p = visit.page
    try:
        p.wait_for_function(
            "[...document.querySelectorAll('.plotly-graph-div')].every(g => g._fullLayout)", timeout=15000
        )
        controls = [c for c in _figures_with_controls(p) if c[1] or c[2]]
        assert controls, f"{page} 上没有带滑块或下拉菜单的静态探索器"
        for index, n_sliders, _n_menus in controls:
            gd = p.locator(".plotly-graph-div").nth(index)
            gd.scroll_into_view_if_needed()
            before = gd.evaluate(STATE)
            if n_sliders:
                rail = gd.locator(".slider-rail-touch-rect").first
                box = rail.bounding_box()
                active = gd.evaluate("g => g.layout.sliders[0].active || 0")
                n_steps = gd.evaluate("g => g.layout.sliders[0].steps.length")
                # 点到离当前位置最远的一端
                frac = 0.02 if active > (n_steps - 1) / 2 else 0.98
                p.mouse.click(box["x"] + frac * box["width"], box["y"] + box["height"] / 2)
            else:
                header = gd.locator(".updatemenu-header-group")
                if header.count():  # 下拉菜单：先展开
                    header.first.click()
                items = gd.locator(".updatemenu-dropdown-button, .updatemenu-button")
                active = gd.evaluate("g => g.layout.updatemenus[0].active || 0")
                items.nth(1 if active == 0 else 0).click()
            p.wait_for_timeout(400)
            after = gd.evaluate(STATE)
            assert after != before, f"{page} 第 {index} 张图：操作控件后图没有变化"
        assert not visit.errors, f"控制台错误：{visit.errors}"
    finally:
        visit.close()


def test_chinese_search_finds_section_1_1(browser, server):
    visit = Visit(browser, f"{server}/search.html?q=链式法则")
    p = visit.page
    try:
        p.wait_for_selector("#search-results li a", timeout=15000)
        hrefs = p.eval_on_selector_all("#search-results li a", "els => els.map(e => e.getAttribute('href'))")
        assert any("01_language_as_sequence" in h for h in hrefs), hrefs
        p.screenshot(path=str(SHOTS / "search.png"))
        assert not visit.outside and not visit.errors, (visit.outside, visit.errors)
    finally:
        visit.close()


@pytest.mark.parametrize("page", PAGES)
def test_dark_mode_keeps_figures_readable(browser, server, page):
    visit = Visit(browser, f"{server}/{page}", color_scheme="dark")
    p = visit.page
    try:
        assert p.evaluate("document.documentElement.dataset.theme") == "dark"
        if p.evaluate("document.querySelectorAll('.plotly-graph-div').length"):
            p.wait_for_function(
                "[...document.querySelectorAll('.plotly-graph-div')].every(g => g.querySelector('.main-svg'))",
                timeout=15000,
            )
            # 图所在的输出区是透明的，图中文字是浅色的：深色背景上看得清。
            backgrounds = p.evaluate(
                """() => [...document.querySelectorAll('.plotly-graph-div')].map(g =>
                      getComputedStyle(g.closest('.output') || g).backgroundColor)"""
            )
            assert all(b in ("rgba(0, 0, 0, 0)", "transparent") for b in backgrounds), backgrounds
            fills = p.evaluate(
                """() => [...document.querySelectorAll('.plotly-graph-div .main-svg text')].slice(0, 50)
                      .map(t => getComputedStyle(t).fill)"""
            )
            light = [f for f in fills if sum(map(int, f[f.index("(") + 1 : f.index(")")].split(",")[:3])) > 450]
            assert len(light) == len(fills), f"深色模式下有看不清的图中文字：{set(fills) - set(light)}"
        dark = SHOTS / "dark"
        dark.mkdir(exist_ok=True)
        p.screenshot(path=str(dark / (page.replace("/", "__").removesuffix(".html") + ".png")), full_page=True)
        assert not visit.errors, f"控制台错误：{visit.errors}"
    finally:
        visit.close()


@pytest.mark.parametrize("page", [p for p in PAGES if "/ch01/0" in p])
def test_self_test_quiz_gives_feedback_offline(browser, server, page):
    visit = Visit(browser, f"{server}/{page}")
    p = visit.page
    try:
        p.wait_for_selector(".seqlab-quiz label", timeout=15000)
        first = p.locator(".seqlab-quiz label").first
        first.scroll_into_view_if_needed()
        first.click()
        p.wait_for_timeout(300)
        feedback = p.evaluate("[...document.querySelectorAll('.seqlab-quiz .sq-feedback')]"
                              ".filter(e => e.checkVisibility()).map(e => e.innerText).join('')")
        assert feedback.strip(), "点选自测题的选项后应当出现反馈"
        assert not visit.outside and not visit.errors, (visit.outside, visit.errors)
    finally:
        visit.close()
