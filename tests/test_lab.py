"""学生在 JupyterLab 里看到的笔记本：在 127.0.0.1 上启动真实的 JupyterLab，用无头 Chromium 打开每一节。

* 渲染：jupyterlab-myst 把 MyST 渲染出来——任何 Markdown 单元格里都看不到原样的 ``{term}``、
  ``{ref}``、``{numref}``、``{cite``、``:label:``；每张插图都加载出来（naturalWidth > 0）；每道练习的标题都在。
* 全部运行：每个实时探索器都渲染出来，并且真的响应一次控件操作（拖动滑块、选择下拉菜单、输入文字）；
  没有控制台错误；没有任何请求离开 127.0.0.1。
* 本书自己的扩展（tools/labext.py）：``{glue:text}`` 显示粘贴的值（运行前是占位文字，运行后与 myst-nb 在网站上
  按同一格式算出的文字相同）；``{cite:t}``/``{cite:p}`` 显示“作者（年份）”“（作者，年份）”，看不到 BibTeX 的键；
  {cite:p} 两边只有一层括号（算上 jupyterlab-myst 用样式表加的括号与分隔符）；练习写成“练习 1.N.k”，
  没有 jupyterlab-myst 的英文 “Start of Exercise”；{exercise-end}/{solution-end} 与网站上一样什么也不显示。
* 编号与网站相同：插图是“图 1.N.k”，带标签的公式是“(1.N.k)”，不带标签的公式没有编号，{numref}/{eq}
  （包括指向代码单元格的插图、别一节的公式）显示同样的编号，看不到标签名。
* 公式以外的文字里看不到原样的 TeX（例如练习目标里的 ``h_{t-1}``）。
* ``make lab`` 本身启动的 JupyterLab（内核的环境就是 Makefile 给它的）：在 1.1 节写一个错误的答案，
  检查显示 ❌ 和一句说明而不是异常，“全部运行”一直走到最后一个单元格。
* 每节保存一张截图到 ``_build/screenshots/lab/``，供人查看。

没有 Chromium 时整体跳过（CI 设置 SEQLAB_REQUIRE_BROWSER=1，此时直接失败）。
"""

from __future__ import annotations

import ast
import json
import os
import re

import nbformat
import pytest

from browser import CHROMIUM, has_chromium, launch
from labcheck import RENDERED, LabPage, jupyterlab, make_lab
from student import notebooks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOTS = os.path.join(ROOT, "_build", "screenshots", "lab")
NOTEBOOKS = notebooks()
RAW = ["{term}", "{ref}", "{numref}", "{cite", ":label:", ":name:", "{exercise", "{solution", "{figure"]
# jupyterlab-myst 自己的英文（本书的扩展换成中文）
ENGLISH = ["Start of", "End of", "Exercise", "Solution", "Citation", "Figure", "Equation"]
GLUE = re.compile(r"\{glue(?::text)?\}`([^`]+)`")
PENDING = {"above": "〔运行上面的代码后显示〕", "below": "〔运行下面的代码后显示〕"}

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
    """打开 JupyterLab 里的副本；返回页面和副本的路径（测试按副本检查：仓库里的笔记本可能正被编辑）。"""
    url, token, root = lab
    copy = root / path.parent.name / path.name
    return LabPage(browser, url, token, f"{path.parent.name}/{path.name}", workspace), copy


def _markdown(path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


def _figures(path) -> list[str]:
    return [m for s in _markdown(path) for m in re.findall(r"^`{3,}\{figure\}\s+(\S+)", s, flags=re.M)]


def _exercise_titles(path) -> list[str]:
    return [m.strip() for s in _markdown(path) for m in re.findall(r"^`{3,}\{exercise(?:-start)?\}(.*)$", s, flags=re.M)]


def _glue_keys(path) -> list[str]:
    return [m for s in _markdown(path) for m in GLUE.findall(s)]


def _placeholders(path) -> list[str]:
    """还没运行时每个 {glue:text} 应显示的占位文字：粘贴它的代码单元格在这个 Markdown 单元格的上面还是下面。"""
    cells = nbformat.read(path, as_version=4).cells
    glued_at, patterns = {}, []  # glue("名字", …)；循环里的 glue(f"前缀{…}", …) 按模式匹配
    for i, c in enumerate(cells):
        if c.cell_type == "code":
            for f, _, name in re.findall(r"\bglue\(\s*(f?)([\"'])(.*?)\2", c.source):
                if f:
                    patterns.append((re.compile(re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(name)) + "$"), i))
                else:
                    glued_at.setdefault(name, i)

    def where(name):
        return glued_at[name] if name in glued_at else next(i for pattern, i in patterns if pattern.match(name))

    return [PENDING["below" if where(key.split(":")[0]) > i else "above"]
            for i, c in enumerate(cells) if c.cell_type == "markdown" for key in GLUE.findall(c.source)]


# 网站的编号（Sphinx 的 numfig，numfig_secnum_depth: 2）：第 1.N 节里的插图按出现的顺序是“图 1.N.k”——Markdown 里的
# {figure} 与元数据 mystnb.figure 带图注的代码单元格都算；只有带标签的公式编号，是“(1.N.k)”。
FIGURE = re.compile(r"^(?:`{3,}|:{3,})\{figure\}.*\n((?:[ \t]*:[\w-]+:.*\n)*)", re.M)
LABELLED_MATH = re.compile(r"\$\$.*?\$\$[ \t]*\(([^()\s]+)\)", re.S)
# 公式以外的文字里不该出现的 TeX：下标、上标的花括号与命令
RAW_TEX = re.compile(r"[_^]\{|\\[A-Za-z]{2,}")


def _site_numbers(folder) -> dict[str, str]:
    """``folder`` 里每节笔记本的插图与公式在网站上的编号（按上面的规则数），键是名字。"""
    out = {}
    for path in sorted(folder.glob("[0-9]*_*.ipynb")):
        section = f"{int(folder.name[2:])}.{int(path.name[:2])}"
        figures = equations = 0
        for cell in nbformat.read(path, as_version=4).cells:
            figure = cell.metadata.get("mystnb", {}).get("figure", {}) if cell.cell_type == "code" else {}
            if figure.get("caption"):
                figures += 1
                out[figure.get("name")] = f"图 {section}.{figures}"
            if cell.cell_type != "markdown":
                continue
            for options in FIGURE.findall(cell.source):
                figures += 1
                out[(re.findall(r":name:\s*(\S+)", options) or [None])[0]] = f"图 {section}.{figures}"
            for label in LABELLED_MATH.findall(cell.source):
                equations += 1
                out[label] = f"({section}.{equations})"
    out.pop(None, None)
    return out


def _bibtex_keys() -> list[str]:
    with open(os.path.join(ROOT, "references.bib"), encoding="utf-8") as f:
        return re.findall(r"^@\w+\{([^,\s]+),", f.read(), flags=re.M)


def _exercise_labels(path) -> list[str]:
    return [m for s in _markdown(path)
            for m in re.findall(r"^`{3,}\{exercise(?:-start)?\}.*\n(?::\w+:.*\n)*?:label:\s*(\S+)", s, flags=re.M)]


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
    view, path = _open(browser, lab, path, f"render-{path.stem}")
    p = view.page
    try:
        view.lay_out_every_cell()
        texts = p.evaluate("r => [...document.querySelectorAll(r)].map(e => e.innerText)", RENDERED)
        assert len(texts) == len(_markdown(path))
        raw = {pat: [t[:80] for t in texts if pat in t] for pat in RAW}
        assert not any(raw.values()), f"JupyterLab 里看得到原样的 MyST：{ {k: v for k, v in raw.items() if v} }"
        labels = sorted({m for t in texts for m in re.findall(r"(?<![\w-])sec-1-\d\b", t)})
        assert not labels, f"指向别的节的引用显示成了标签名（写成 {{ref}}`第 1.N 节 <sec-1-N>`）：{labels}"
        labels = sorted({m for t in texts for m in re.findall(r"(?<![\w-])(?:fig|eq)-\d+-\d+-[\w-]+", t)})
        assert not labels, f"插图或公式的引用显示成了标签名：{labels}"
        images = p.evaluate("r => [...document.querySelectorAll(r)].flatMap(e => [...e.querySelectorAll('img')])"
                            ".map(i => [i.getAttribute('src'), i.naturalWidth])", RENDERED)
        assert len(images) >= len(_figures(path)), (images, _figures(path))
        assert all(width > 0 for _, width in images), f"有插图没有加载出来：{images}"
        shown = "\n".join(texts)
        missing = [t for t in _exercise_titles(path) if t not in shown]
        assert not missing, f"这些练习的标题没有显示：{missing}"
        _book_extension_rendered(p, path, texts)
        _numbered_like_the_site(p, path, texts)
        prose = p.evaluate(PROSE, RENDERED)
        tex = [t[max(0, m.start() - 30):m.end() + 30] for t in prose for m in RAW_TEX.finditer(t)]
        assert not tex, f"公式以外的文字里有原样的 TeX（应写成 $…$ 公式）：{tex}"
        _screenshots(p, path.stem)
        assert not view.outside, f"请求离开了本机：{view.outside}"
        assert not view.errors, f"控制台错误：{view.errors}"
    finally:
        view.close()


def _book_extension_rendered(p, path, texts):
    """本书的扩展：glue、参考文献、练习编号都写成网站上的样子（笔记本还没有运行过）。"""
    shown = "\n".join(texts)
    keys = _glue_keys(path)
    glued = p.evaluate("r => [...document.querySelectorAll(r)].flatMap(e => [...e.querySelectorAll('[data-seqlab-glue]')])"
                       ".map(s => [s.dataset.seqlabGlue, s.textContent])", RENDERED)
    assert [k for k, _ in glued] == keys, "有 {glue:text} 没有被认出来"
    assert [text for _, text in glued] == _placeholders(path), f"还没运行时应显示占位文字：{glued[:5]}"
    raw = p.evaluate("([r, keys]) => [...document.querySelectorAll(r)].flatMap(e => [...e.querySelectorAll('span')])"
                     ".map(s => s.textContent).filter(t => keys.includes(t))", [RENDERED, keys])
    assert not raw and not [k for k in keys if ":" in k and k in shown], f"看得到原样的 glue 键：{raw}"
    bib = [k for k in _bibtex_keys() if k in shown]
    assert not bib, f"看得到原样的 BibTeX 键：{bib}"
    cites = p.evaluate(CITES, RENDERED)
    author = r"[^\s，（）；][^，（）；]*?"
    bad = [t for narrative, t in cites
           if not re.fullmatch(rf"{author}（\d{{4}}）" if narrative else rf"（{author}，\d{{4}}(；{author}，\d{{4}})*）", t)]
    assert not bad, f"引用没有写成“作者（年份）”或“（作者，年份）”：{bad}"
    english = {w: [t[:80] for t in texts if w in t] for w in ENGLISH}
    assert not any(english.values()), f"jupyterlab-myst 的英文还在：{ {k: v for k, v in english.items() if v} }"
    boxes = p.evaluate("r => [...document.querySelectorAll(r)].flatMap(e => [...e.querySelectorAll('.myst-exercise')])"
                       ".map(b => [b.querySelector('.myst-exercise-title')?.innerText.trim() ?? '', b.checkVisibility()])",
                       RENDERED)
    titles = [t for t, visible in boxes if visible]
    starts = re.findall(r"^`{3,}\{(?:exercise|exercise-start|solution|solution-start)\}", "\n".join(_markdown(path)), flags=re.M)
    ends = [t or "（标题为空）" for t in titles if not t or t.endswith("完")]
    assert not ends and len(titles) == len(starts), \
        f"{{exercise-end}}/{{solution-end}} 在网站上什么也不显示，这里却显示成框：{ends or titles}"
    for label, title in zip(_exercise_labels(path), _exercise_titles(path), strict=True):
        number = "练习 " + ".".join(label.split("-")[1:])
        assert f"{number} ({title})" in titles, f"{label} 的标题不是“{number} ({title})”：{titles}"
    for label in re.findall(r"^`{3,}\{solution-start\}\s*(\S+)", "\n".join(_markdown(path)), flags=re.M):
        number = "练习 " + ".".join(label.split("-")[1:])
        assert f"{number} 的参考答案" in titles, f"{label} 的参考答案没有写成“{number} 的参考答案”：{titles}"
    assert all(titles), f"有练习框的标题是空的：{titles}"


# 每个 {cite:p}/{cite:t} 在屏幕上的全部文字：连同 jupyterlab-myst 用样式表（::before/::after）加的括号与分隔符
CITES = """r => [...document.querySelectorAll(r)].flatMap(e => [...e.querySelectorAll('.cite-group')]).map(g => {
    const pseudo = (el, which) => {
        const c = getComputedStyle(el, which).content;
        return c === 'none' || c === 'normal' ? '' : c.replace(/^"|"$/g, '');
    };
    const items = [...g.children].map(c => c.textContent + pseudo(c, '::after')).join('');  // textContent：收起的下拉框里的引用也读得到
    return [g.classList.contains('narrative'), pseudo(g, '::before') + items + pseudo(g, '::after')];
})"""
# 公式（KaTeX/MathJax）与代码以外、屏幕上看得见的文字，每个 Markdown 单元格一段
PROSE = """r => [...document.querySelectorAll(r)].map(root => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {acceptNode: n =>
        n.parentElement.closest('.katex, .math-display, mjx-container, math, code, pre') || !n.parentElement.checkVisibility()
            ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
    let text = '';
    while (walker.nextNode()) text += walker.currentNode.nodeValue;
    return text;
})"""
# 页面里每个指向本页锚点的链接：[标签, 文字, 看得见]
LINKS = """r => [...document.querySelectorAll(r)].flatMap(e => [...e.querySelectorAll("a[href^='#']")])
    .map(a => [a.getAttribute('href').slice(1), a.textContent.trim(), a.checkVisibility()])"""
NUMBER_LIKE = re.compile(r"(?:Figure|Fig\.|Equation|Eq\.|图)\s*[\d.]+:?|\(\d+(?:\.\d+)*\)")


def _numbered_like_the_site(p, path, texts):
    """插图与公式的编号、正文里的 {numref}/{eq} 都与网站相同；不带标签的公式没有编号。"""
    numbers = {label.lower(): number for label, number in _site_numbers(path.parent).items()}  # 锚点都是小写
    links = p.evaluate(LINKS, RENDERED)
    wrong = [(label, text, numbers[label]) for label, text, _ in links if label in numbers and text != numbers[label]]
    assert not wrong, f"编号与网站不同（标签、这里显示的、网站上的）：{wrong[:8]}"
    extra = [(label, text) for label, text, visible in links
             if visible and label not in numbers and NUMBER_LIKE.fullmatch(text)]
    assert not extra, f"网站上没有编号的东西（例如不带标签的公式）这里有编号：{extra}"
    source = "\n".join(_markdown(path))
    # 本节 Markdown 里的插图（图注前）与带标签的公式（公式右边）都显示编号；代码单元格的插图在 JupyterLab 里没有图注
    own = [label.lower() for label in re.findall(r"^[ \t]*:name:\s*(\S+)", "".join(FIGURE.findall(source)), flags=re.M)
           + LABELLED_MATH.findall(source)]
    shown = {label for label, _, _ in links}  # 折叠着的（例如 dropdown 里的）公式也算：展开就看得见
    missing = [label for label in own if label not in shown]
    assert not missing, f"这些插图或公式没有显示编号：{missing}"
    # 折叠着的 dropdown 里的引用也算（innerText 不含没有展开的部分）
    shown_text = "\n".join(p.evaluate("r => [...document.querySelectorAll(r)].map(e => e.textContent)", RENDERED))
    for label in re.findall(r"\{(?:numref|eq)\}`([^`<>]+)`", source):
        assert numbers[label.lower()] in shown_text, f"引用 {label} 应显示为“{numbers[label.lower()]}”"


# 运行 1.1 节开头到粘贴 ppl_blind 的那一格（几秒钟的计算），之后每个已粘贴的 {glue:text} 都显示它的值
GLUED_NOTEBOOK, GLUED_LAST = "01_language_as_sequence.ipynb", "ppl_blind"
# 本书用到的格式说明都在这里；页面里的格式化函数逐个与 Python 的 format 比较
FORMATS = [(0.125, ".2f"), (2.675, ".2f"), (0.0049999, ".3f"), (-0.001, ".2f"), (99.5, ".0f"), (0.375, ".0%"),
           (0.12345, ".2%"), (1234.5, ".1e"), (9.96e-7, ".1e"), (1234567, ",d"), (-4096, ",d"), (0, ",d"),
           (123456.789, ",.2f"), (0.000123456, ".3g"), (1e20 * 3, ".2f")]


def test_glued_values_show_after_running(browser, lab):
    path = next(p for p in NOTEBOOKS if p.name == GLUED_NOTEBOOK)
    view, copy = _open(browser, lab, path, "glue")
    p = view.page
    try:
        url = lab[0]
        got = p.evaluate("([u, cases]) => import(u + '/lab/extensions/seqlab-lab/static/pyformat.js')"
                         ".then(m => cases.map(([v, s]) => m.pyformat(v, s)))", [url, FORMATS])
        assert got == [format(v, s) for v, s in FORMATS]
        cells = nbformat.read(copy, as_version=4).cells
        last = next(i for i, c in enumerate(cells) if c.cell_type == "code" and f'glue("{GLUED_LAST}"' in c.source)
        p.evaluate("i => { const nb = window.jupyterapp.shell.currentWidget.content; nb.activeCellIndex = i; }", last + 1)
        view.command("notebook:run-all-above")
        p.wait_for_function(
            """i => {
                const panel = window.jupyterapp.shell.currentWidget;
                const code = panel.content.widgets.slice(0, i).filter(c => c.model.type === 'code');
                return panel.sessionContext.session?.kernel?.status === 'idle'
                    && code.every(c => c.model.executionCount !== null);
            }""", arg=last + 1, timeout=300_000, polling=500)
        p.wait_for_timeout(500)
        glued = p.evaluate("""() => {
            const values = {};
            for (const cell of window.jupyterapp.shell.currentWidget.content.widgets) {
                if (cell.model.type !== 'code') continue;
                for (let i = 0; i < cell.model.outputs.length; i++) {
                    const o = cell.model.outputs.get(i), b = o.metadata.scrapbook;
                    if (b) values[b.name] = o.data[(b.mime_prefix || '') + 'text/plain'];
                }
            }
            return values;
        }""")
        assert GLUED_LAST in glued, glued
        spans = p.evaluate("r => [...document.querySelectorAll(r)].flatMap(e => [...e.querySelectorAll('[data-seqlab-glue]')])"
                           ".map(s => [s.dataset.seqlabGlue, s.textContent])", RENDERED)
        checked = 0
        for key, text in spans:
            name, _, spec = key.rpartition(":") if ":" in key else (key, "", "")
            if name not in glued:
                assert text in PENDING.values(), (key, text)
                continue
            value = ast.literal_eval(glued[name])
            # 网站上 myst-nb 的做法：字面量求值，格式以 f/e/g/% 结尾先转 float、以 d 结尾先转 int
            expected = format(float(value) if spec[-1:] in "efg%" else int(value) if spec.endswith("d") else value, spec) \
                if spec else str(value)
            assert text == expected, f"{key}：显示 {text!r}，Python 算出 {expected!r}"
            checked += 1
        assert checked >= 8, spans
        p.locator("[data-seqlab-glue='ppl_blind:.2f']").first.scroll_into_view_if_needed()
        p.wait_for_timeout(200)
        p.screenshot(path=os.path.join(SHOTS, f"{path.stem}-glued.png"))
        assert not view.outside, f"请求离开了本机：{view.outside}"
        assert not view.errors, f"控制台错误：{view.errors}"
    finally:
        view.close()


# 在页面里给每个实时单元格的输出做标记，并在每次控件操作后记下图重画完的时刻。
MARK_LIVE = """() => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    const names = [];
    nb.widgets.forEach((cell, i) => {
        const m = cell.model.type === 'code' && cell.model.sharedModel.source.match(/explorers\\.get\\("(\\w+)"\\)\\.live\\(\\)/);
        if (m) { cell.outputArea.node.dataset.seqlabLive = m[1]; names.push(m[1]); }
    });
    return names;
}"""
# 从最后一次控件操作（拖动中的移动、松开鼠标、选择、按键、输入）到图里最后一次 DOM 变化；
# 图安静 600 ms 才算画完。拖动中图已经跟着变的（continuous_update），量的是最后一次移动之后还要等多久。
WATCH = """name => new Promise(resolve => {
    const root = document.querySelector(`[data-seqlab-live="${name}"]`);
    const plots = [...root.querySelectorAll('.js-plotly-plot')];
    const inputs = [], changes = [];
    let timer = null;
    const onEvent = e => { if (e.type !== 'pointermove' || e.buttons) inputs.push(performance.now()); };
    const events = ['pointerdown', 'pointermove', 'pointerup', 'change', 'keyup', 'input'];
    events.forEach(e => root.addEventListener(e, onEvent, true));
    const done = () => {
        obs.disconnect(); clearTimeout(giveUp);
        events.forEach(e => root.removeEventListener(e, onEvent, true));
        const last = changes.at(-1), cause = inputs.filter(t => t <= last).at(-1);
        resolve(last === undefined || cause === undefined ? null : last - cause);
    };
    const obs = new MutationObserver(() => {
        if (!inputs.length) return;
        changes.push(performance.now()); clearTimeout(timer); timer = setTimeout(done, 600);
    });
    plots.forEach(p => obs.observe(p, {subtree: true, childList: true, attributes: true, characterData: true}));
    const giveUp = setTimeout(done, 8000);
})"""
CHANGES = 5
# 图安静 300 ms（没有任何 DOM 变化）才做下一次操作：上一次重画的尾巴不算进下一次，也不挪动要点的控件；最多等 10 秒
SETTLE = """root => new Promise(resolve => {
    let timer = setTimeout(finish, 300);
    const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(finish, 300); });
    root.querySelectorAll('.js-plotly-plot').forEach(p => obs.observe(p, {subtree: true, childList: true, attributes: true, characterData: true}));
    const giveUp = setTimeout(finish, 10000);
    function finish() { obs.disconnect(); clearTimeout(timer); clearTimeout(giveUp); resolve(); }
})"""
# 色条（连同刻度与标题）与任何坐标轴标题的包围盒相交就算重叠
OVERLAPS = """root => {
    const boxes = sel => [...root.querySelectorAll(sel)].map(e => [e.getAttribute('class'), e.getBoundingClientRect()]);
    const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const titles = boxes('[class*="xtitle"], [class*="ytitle"]').filter(([, r]) => r.width > 0);
    return boxes('.colorbar').flatMap(([, c]) => titles.filter(([, t]) => hit(c, t)).map(([k]) => k));
}"""


def _run_all(view):
    view.command("notebook:run-all-cells")
    view.page.wait_for_function(
        """() => {
            const panel = window.jupyterapp.shell.currentWidget;
            const code = panel.content.widgets.filter(c => c.model.type === 'code');
            return panel.sessionContext.session?.kernel?.status === 'idle'
                && code.every(c => c.model.executionCount !== null);
        }""", timeout=600_000, polling=500)


def _act(page, root, step: int) -> str:
    """对一个实时探索器做一次真实的控件操作：优先拖动滑块，其次选下拉菜单、点切换按钮、输入文字。"""
    handle = root.locator(".widget-slider .noUi-handle, .widget-slider .ui-slider-handle").first
    if handle.count():
        handle.scroll_into_view_if_needed()
        box = handle.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + (25 if step % 2 == 0 else -25), y, steps=4)
        page.mouse.up()
        return "拖动滑块"
    select = root.locator(".widget-dropdown select").first
    if select.count():
        options = select.locator("option").all_inner_texts()
        select.select_option(index=(step + 1) % len(options))
        return "选择下拉菜单"
    buttons = root.locator(".widget-toggle-buttons button:not(.mod-active)").first
    if buttons.count():
        button = buttons.element_handle()
        # 繁忙的机器上，上一次重画还在挪动版面时，点击可能落在按钮旁边：前端没收到的点击不算探索器的错，再点一次
        for _ in range(3):
            button.click()
            if button.evaluate("b => b.classList.contains('mod-active')"):
                break
            page.wait_for_timeout(500)
        else:
            raise AssertionError("点了三次，切换按钮都没有变成选中状态")
        return "点切换按钮"
    text = root.locator(".widget-text input[type=text], .widget-combobox input").first
    text.click()
    page.keyboard.press("End")
    if step % 2 == 0:  # 交替地加一个字、再删掉它：输入始终合法
        page.keyboard.type("好", delay=60)
    else:
        page.keyboard.press("Backspace")
    page.keyboard.press("Enter")
    return "输入文字"


def _figure_state(root) -> str:
    """图上画出的内容：数据、标题和标注（有的操作只改标题，例如因果模型里在句尾加字）。"""
    return root.evaluate("r => [...r.querySelectorAll('.js-plotly-plot')].map(p => JSON.stringify("
                         "[p.data, p.layout.title, p.layout.annotations])).join('|')")


# make bench 也用它量每个实时探索器的重画时间（只报告，不断言）。
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_run_all_and_live_explorers_answer_real_controls(browser, lab, path):
    view, copy = _open(browser, lab, path, f"run-{path.stem}")
    p = view.page
    latency, problems = {}, []
    try:
        _run_all(view)
        names = p.evaluate(MARK_LIVE)
        assert names == [n for s in _live_sources(copy) for n in re.findall(r'explorers\.get\("(\w+)"\)\.live\(\)', s)]
        for name in names:
            problems += _drive(p, name, latency)
        quiz = p.locator(".seqlab-quiz label").first
        quiz.scroll_into_view_if_needed()
        quiz.click()
        if not p.evaluate("[...document.querySelectorAll('.seqlab-quiz .sq-feedback')].some(e => e.checkVisibility())"):
            problems.append("点选自测题的选项后没有出现反馈")
        assert not problems, "；".join(problems)
        assert not view.outside, f"请求离开了本机：{view.outside}"
        assert not view.errors, f"控制台错误：{view.errors}"
    finally:
        _save_latency(path, latency)
        view.close()


def _drive(p, name, latency) -> list[str]:
    """对一个实时探索器做 CHANGES 次真实的控件操作，记下每次的重画时间；返回发现的问题。"""
    root = p.locator(f'[data-seqlab-live="{name}"]')
    root.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    root.scroll_into_view_if_needed()
    stem = p.evaluate("() => window.jupyterapp.shell.currentWidget.context.path").split("/")[-1].removesuffix(".ipynb")
    if not root.evaluate("r => [...r.querySelectorAll('.js-plotly-plot')].some(g => (g.data || []).length > 0)"):
        p.screenshot(path=os.path.join(SHOTS, f"{stem}-live-{name}-failed.png"))
        return [f"{name}：图是空的（前端没有画出实时面的数据）"]
    samples, problems = [], []
    for step in range(CHANGES):
        root.evaluate(SETTLE)
        before = _figure_state(root)
        p.evaluate(f"name => {{ window.__seqlabWatch = ({WATCH})(name); }}", name)
        try:
            action = _act(p, root, step)
        except AssertionError as err:
            problems.append(f"{name}：{err}")
            break
        ms = p.evaluate("() => window.__seqlabWatch")
        for _ in range(30):  # 机器繁忙时重画可能在计时窗口关上之后才到：再等它最多 15 秒（这一次不计时）
            if _figure_state(root) != before:
                break
            p.wait_for_timeout(500)
        else:
            shown = " / ".join(t.strip() for t in root.locator(".widget-html").all_inner_texts() if t.strip())
            problems.append(f"{name}：{action}之后图没有重画（探索器显示的消息：{shown}）")
            break
        if ms is not None:
            samples.append(ms)
    latency[name] = {"action": action, "ms": samples}
    overlaps = root.evaluate(OVERLAPS)
    if overlaps:
        problems.append(f"{name}：色条与坐标轴标题重叠：{overlaps}")
    p.screenshot(path=os.path.join(SHOTS, f"{stem}-live-{name}{'-failed' if problems else ''}.png"))
    return problems


def _live_sources(path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code" and ".live()" in c.source]


def _save_latency(path, latency):
    folder = os.path.join(ROOT, "_build", "lab-latency")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{path.stem}.json"), "w", encoding="utf-8") as f:
        json.dump(latency, f, ensure_ascii=False, indent=1)


# make lab 里学生答错：1.1.1 的起始代码换成一个返回 42.0 的函数（对数概率不可能是正数）
WRONG_NOTEBOOK, WRONG_FUNCTION = "01_language_as_sequence.ipynb", "sentence_log_prob"
WRONG_ANSWER = "def sentence_log_prob(model, text):\n    return 42.0"
# 内核空闲，并且每个代码单元格都运行过、或者有一个单元格以异常结束（“全部运行”停在那里）
SETTLED = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const code = panel.content.widgets.filter(c => c.model.type === 'code');
    const failed = code.some(c => Array.from({length: c.model.outputs.length}, (_, j) => c.model.outputs.get(j))
        .some(o => o.type === 'error'));
    return panel.sessionContext.session?.kernel?.status === 'idle'
        && (failed || code.every(c => c.model.executionCount !== null));
}"""
# 每个代码单元格：[序号, 执行计数, 输出的文字（text/plain 与流）, 异常]
CODE_CELLS = """() => window.jupyterapp.shell.currentWidget.content.widgets.map((c, i) => [c, i])
    .filter(([c]) => c.model.type === 'code').map(([c, i]) => {
        const outs = Array.from({length: c.model.outputs.length}, (_, j) => c.model.outputs.get(j).toJSON());
        const text = t => (Array.isArray(t) ? t.join('') : t || '');
        return [i, c.model.executionCount, outs.map(o => text(o.text) + text(o.data?.['text/plain'])).join('\\n'),
                outs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)];
    })"""


def test_make_lab_shows_a_wrong_answer_and_run_all_finishes(browser, tmp_path):
    """学生在 make lab 里答错：检查显示 ❌ 和说明，不抛异常；“全部运行”不会停在检查那里。"""
    with make_lab(tmp_path) as (url, token, prefix, root):
        cells = nbformat.read(root / WRONG_NOTEBOOK, as_version=4).cells
        starter = next(i for i, c in enumerate(cells) if "exercise-starter" in c.metadata.get("tags", [])
                       and f"def {WRONG_FUNCTION}(" in c.source)
        check = next(i for i, c in enumerate(cells) if i > starter and c.cell_type == "code")
        assert "exercise-check" in cells[check].metadata.get("tags", []), "起始代码后面的第一个代码单元格应是它的检查"
        view = LabPage(browser, url, token, prefix + WRONG_NOTEBOOK, "make-lab")
        p = view.page
        try:
            # 像学生一样在起始代码的单元格里全选、输入错误的答案
            p.evaluate("i => { window.jupyterapp.shell.currentWidget.content.widgets[i].node.dataset.seqlabStarter = ''; }",
                       starter)
            editor = p.locator("[data-seqlab-starter] .cm-content")
            editor.scroll_into_view_if_needed()
            editor.click()
            p.keyboard.press("Control+a")
            p.keyboard.insert_text(WRONG_ANSWER)
            typed = p.evaluate("i => window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.getSource()",
                               starter)
            assert typed == WRONG_ANSWER, typed
            view.command("notebook:run-all-cells")
            p.wait_for_function(SETTLED, timeout=600_000, polling=500)
            p.wait_for_timeout(500)
            code = p.evaluate(CODE_CELLS)
            errors = [(i, e) for i, _, _, e in code if e]
            assert not errors, f"“全部运行”停在了有异常的单元格（答错的检查抛出了异常？）：{errors}"
            assert code[-1][1] is not None, "“全部运行”没有走到最后一个代码单元格"
            verdict = next(text for i, _, text, _ in code if i == check)
            _assert_wrong_answer_explained(verdict)
            _assert_box_shown(p, check)
            p.screenshot(path=os.path.join(SHOTS, "make-lab-wrong-answer-run-all.png"))
            # 再单独运行一次：“全部运行”之后参考答案已经重新定义了函数，所以先运行起始代码（学生的答案），再运行检查
            count = next(n for i, n, _, _ in code if i == check)
            for index in (starter, check):
                p.evaluate("i => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = i; }", index)
                view.command("notebook:run-cell")
            p.wait_for_function("""([i, n]) => {
                const panel = window.jupyterapp.shell.currentWidget;
                return panel.sessionContext.session?.kernel?.status === 'idle'
                    && panel.content.widgets[i].model.executionCount > n;
            }""", arg=[check, count], timeout=60_000, polling=200)
            again = next(c for c in p.evaluate(CODE_CELLS) if c[0] == check)
            assert not again[3], f"单独运行检查时抛出了异常：{again[3]}"
            _assert_wrong_answer_explained(again[2])
            _assert_box_shown(p, check)
            p.screenshot(path=os.path.join(SHOTS, "make-lab-wrong-answer.png"))
            assert not view.outside, f"请求离开了本机：{view.outside}"
            assert not view.errors, f"控制台错误：{view.errors}"
        finally:
            view.close()


def _assert_wrong_answer_explained(text: str) -> None:
    assert "❌ 练习 1.1.1" in text, f"检查没有显示 ❌：{text[:300]}"
    assert "你的结果是 42" in text, f"❌ 后面没有说明哪里不对：{text[:300]}"


def _assert_box_shown(p, index: int) -> None:
    """检查单元格的输出里看得见 ❌ 框（seqlab.exercises 的 HTML 输出）。"""
    p.evaluate("i => { const w = window.jupyterapp.shell.currentWidget.content.widgets[i];"
               " w.node.dataset.seqlabCheck = ''; }", index)
    box = p.locator("[data-seqlab-check] .jp-OutputArea-output .seqlab-check")
    box.scroll_into_view_if_needed()
    p.wait_for_timeout(200)
    assert box.is_visible(), "检查的 ❌ 框没有显示出来"
    _assert_wrong_answer_explained(box.inner_text())
