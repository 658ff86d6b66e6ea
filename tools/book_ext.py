"""本书的 Sphinx 扩展：让网站离线可用、在慢网络和手机上也好用、中文可搜索。

* plotly.js 用 npm 装的 cartesian 部分包（只含本书用到的散点、柱形、热力图等类型，与 Python 包自带的
  plotly.js 同一版本），复制进网站；含图的页面只延迟加载小小的 ``assets/figures.js``，它在第一张图快要滚进
  屏幕时才加载 plotly.js，每张图的数据也写在单独的小文件里、滚到跟前才加载（见 :func:`externalize_figures`）；
* 公式在构建时由 MathJax 排好版（``tools/mathjax.mjs``，CHTML 输出连同给读屏软件的隐藏 MathML）：
  读者的浏览器不下载、不运行 MathJax，页面里也没有指向 MathJax 的脚本（本书自己的数学渲染器 ``seqlab``
  只写出 ``\\(…\\)`` 与 ``\\[…\\]``，不像 Sphinx 的 mathjax 渲染器那样插入脚本）；
* 每一页延迟加载 ``assets/book.js``（侧栏开关、图的工具栏）；搜索索引只在搜索页加载（见
  ``assets/templates/layout.html``）；主题的图标脚本裁剪到本书用到的几个图标；
* 启动按钮只在给出仓库地址时出现；“下载”按钮给出确实存在的笔记本（学生版，不含答案）；
* 网页实时面：``assets/live/`` 里的 ES 模块原样复制进网站，每个有网页实时面的探索器的说明（参数、常量、
  默认状态的图，见 ``seqlab.explorers.web``）写成 ``_static/seqlab/live/<名字>.json``；两者都只在读者打开
  “实时计算”开关时才加载；
* 主题里没有翻译的界面文字换成中文；
* 不让 myst-nb 从 CDN 加载 ipywidgets 的 JavaScript（实时控件在网站上本来就只显示代码）；
* 用 jieba 加上本书的术语词典为中文建立搜索索引。
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import plotly

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ASSETS = ROOT / "assets"
TERMS = HERE / "zh_terms.txt"
PYTHON_PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PLOTLY_BUNDLE = ROOT / "node_modules" / "plotly.js-cartesian-dist-min" / "plotly-cartesian.min.js"
PLOTLY_STATIC = "seqlab/plotly-cartesian.min.js"
OWN_FILES = ("book.css", "book.js", "figures.js")
FIGURE_DATA = "seqlab/figures"  # _static 下每张图的数据文件所在的文件夹
LIVE = "seqlab/live"  # _static 下网页实时面的模块与说明
MATH_RENDERER = "seqlab"  # 写出与 sphinx.ext.mathjax 相同的 HTML，但不插入 MathJax 脚本：公式在构建结束时排版
NOTEBOOKS = "notebooks"  # 网站里可下载的学生版笔记本所在的文件夹

GLOSSARY = ROOT / "chapters" / "appendix" / "glossary.md"
CJK = re.compile(r"[\u4e00-\u9fff]")

# 主题与 Sphinx 在 zh_CN 下仍是英文（或繁体）的界面文字。
UI_STRINGS = {
    "Color mode": "配色（亮色、暗色、跟随系统）",
    "System Settings": "跟随系统",
    "Light": "浅色",
    "Dark": "深色",
    "Main": "主导航",
    "Page": "本页",
    "Launch interactive content": "在线运行",
    "Link to this heading": "指向本节的链接",
    "Link to this equation": "指向本公式的链接",
    "Link to this image": "指向本图的链接",
    "Link to this table": "指向本表的链接",
    "Link to this code": "指向本代码的链接",
    "Link to this definition": "指向本定义的链接",
    "列印成 PDF": "打印成 PDF",
    "Copy to clipboard": "复制到剪贴板",
}


def glossary_entries(path: Path = GLOSSARY) -> list[list[str]]:
    """术语表 ``{glossary}`` 块里的条目：每条是若干个同义的词条（不缩进的非空行），后面跟缩进的释义。"""
    text = path.read_text(encoding="utf-8")
    block = text[text.index("```{glossary}") : text.rindex("```")]
    entries, names = [], []
    for line in block.splitlines()[1:]:
        if line.strip() and not line.startswith(" "):
            names.append(line.strip())
        elif line.startswith(" ") and names:
            entries.append(names)
            names = []
    return entries


def glossary_terms(path: Path = GLOSSARY) -> list[str]:
    """全部词条（中英文都算）。"""
    return [name for entry in glossary_entries(path) for name in entry]


def _search_dictionary(app) -> Path:
    """jieba 用户词典 = 术语表里的中文词条 + tools/zh_terms.txt，使搜索能找到整个术语。"""
    words = dict.fromkeys(t for t in glossary_terms() if CJK.search(t) and " " not in t)
    lines = [f"{w} 50 n" for w in words] + TERMS.read_text(encoding="utf-8").splitlines()
    target = Path(app.outdir).parent / "zh_search_dict.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def launch_options(environ=os.environ) -> dict:
    """启动按钮（Binder / Colab / JupyterHub）需要知道仓库的公开地址。

    ``_config.yml`` 里配好了按钮，地址则在构建时用 ``SEQLAB_REPOSITORY_URL``（GitHub 或 GitLab 的仓库地址）
    给出：没有给出时网页上就没有这些按钮——网站本身从不依赖它们。返回要并入主题选项的设置；
    值为 ``None`` 的键要从主题选项里删去（否则 Jupyter Book 会填上它自己的仓库）。
    """
    url = environ.get("SEQLAB_REPOSITORY_URL", "").strip()
    if not url:
        return {"launch_buttons": None, "repository_url": None, "use_repository_button": False}
    return {
        "repository_url": url,
        "repository_branch": environ.get("SEQLAB_REPOSITORY_BRANCH", "main"),
        "use_repository_button": True,
    }


def plotly_version(path: Path) -> str:
    """plotly.js 文件头里的版本号，例如 ``"4.1.1"``。"""
    head = path.read_text(encoding="utf-8")[:300]
    match = re.search(r"plotly\.js (?:\([a-z]+ - minified\) )?v(\d+\.\d+\.\d+)", head)
    if not match:
        raise RuntimeError(f"{path} 的文件头里没有 plotly.js 的版本号")
    return match.group(1)


def _check_plotly_bundle() -> None:
    if not PLOTLY_BUNDLE.exists():
        raise RuntimeError(f"没有找到 {PLOTLY_BUNDLE}：请先运行 npm ci（make book 会自动运行）")
    ours, python = plotly_version(PLOTLY_BUNDLE), plotly_version(PYTHON_PLOTLY_JS)
    if ours != python:
        raise RuntimeError(
            f"package.json 里的 plotly.js 部分包是 v{ours}，而 Python 的 plotly 自带 v{python}：请把两者改成同一版本"
        )


def _config_inited(app, config):
    _check_plotly_bundle()
    config.html_search_options = {"dict": str(_search_dictionary(app))}
    options = {**config.html_theme_options, **launch_options()}
    config.html_theme_options = {k: v for k, v in options.items() if v is not None}
    config.html_math_renderer = MATH_RENDERER
    # myst-nb 在页面含控件状态时会从公网加载 require.js 与控件管理器：一律关掉。
    config.nb_ipywidgets_js = {}


def _copy_own_assets(app):
    target = Path(app.outdir) / "_static" / "seqlab"
    target.mkdir(parents=True, exist_ok=True)
    for name in OWN_FILES:
        shutil.copyfile(ASSETS / name, target / name)
    shutil.copyfile(PLOTLY_BUNDLE, target / Path(PLOTLY_STATIC).name)
    _write_live(Path(app.outdir) / "_static" / LIVE)


def _write_live(target: Path) -> None:
    """网页实时面：``assets/live/*.mjs``、第三方代码 ``assets/live/vendor/`` 与每个有网页实时面的探索器的说明（``seqlab.explorers.web.spec``）。"""
    from seqlab import explorers, figures
    from seqlab.explorers import web

    figures.use_book_defaults()  # 默认状态的图用全书的模板（透明背景），与页面上的其他图一样
    target.mkdir(parents=True, exist_ok=True)
    for module in (ASSETS / "live").glob("*.mjs"):
        shutil.copyfile(module, target / module.name)
    shutil.copytree(ASSETS / "live" / "vendor", target / "vendor", dirs_exist_ok=True)  # tools/vendor.py 复制出的第三方代码
    for explorer in explorers.all_explorers():
        if explorer.web is not None:
            text = json.dumps(web.spec(explorer), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
            (target / f"{explorer.name}.json").write_text(text, encoding="utf-8")


def _page_context(app, pagename, templatename, context, doctree):
    app.add_js_file("seqlab/book.js", loading_method="defer", priority=600)
    if "seqlab-figure-spec" in context.get("body", ""):  # plotly.js 由 figures.js 在需要时加载
        app.add_js_file("seqlab/figures.js", loading_method="defer", priority=602)
    _fix_download_button(app, pagename, context)
    if "script_files" in context and pagename != "search":  # 搜索页的脚本在正文里，依赖 head 里的设置先就绪
        context["script_files"] = deferred_scripts(context["script_files"], Path(app.outdir) / "_static" / "seqlab")


def deferred_scripts(scripts, static_dir: Path):
    """``<head>`` 里不留阻塞的脚本：有 ``src`` 的一律 ``defer``；用到 ``DOCUMENTATION_OPTIONS`` 的内联脚本
    写成 ``static_dir`` 里的小文件、同样延迟执行，这样它们仍按原来的先后顺序、在 documentation_options.js
    之后运行。其余内联脚本（只设几个变量，例如 MathJax 的配置）照旧立即执行，它们不需要下载。"""
    from sphinx.builders.html._assets import _JavaScript

    out = []
    for js in scripts:
        attrs = dict(getattr(js, "attributes", {}))
        name = getattr(js, "filename", str(js))
        if name and "async" not in attrs and "defer" not in attrs:
            attrs["defer"] = "defer"
        elif not name and "DOCUMENTATION_OPTIONS" in attrs.get("body", ""):
            body = attrs.pop("body")
            file = f"inline-{hashlib.sha1(body.encode()).hexdigest()[:12]}.js"
            static_dir.mkdir(parents=True, exist_ok=True)
            (static_dir / file).write_text(body, encoding="utf-8")
            name, attrs["defer"] = f"_static/seqlab/{file}", "defer"
        out.append(_JavaScript(name, priority=getattr(js, "priority", 500), **attrs))
    return out


def _is_notebook(app, pagename: str) -> bool:
    return Path(app.env.doc2path(pagename)).suffix == ".ipynb"


def _fix_download_button(app, pagename, context):
    """“下载”菜单：学生版笔记本（网站里确实有这个文件）和“打印成 PDF”；不再指向不存在的 ``_sources/``。"""
    for group in context.get("header_buttons", []):
        if group.get("label") != "download-buttons":
            continue
        buttons = [b for b in group["buttons"] if b.get("type") == "javascript"]
        if _is_notebook(app, pagename):
            buttons.insert(0, {
                "type": "link",
                "url": context["pathto"](f"{NOTEBOOKS}/{pagename}.ipynb", 1),
                "text": ".ipynb",
                "icon": "fas fa-code",
                "tooltip": "下载本节的笔记本（学生版，不含答案）",
                "label": "download-notebook-button",
            })
        group["buttons"] = buttons
        group["tooltip"] = "下载本页"


def _write_notebooks(app):
    """把每个笔记本的学生版（去掉答案、清空输出）写进网站，供“下载”按钮使用。"""
    import nbformat

    from student import student_version

    for docname in app.env.found_docs:
        source = Path(app.env.doc2path(docname))
        if source.suffix != ".ipynb":
            continue
        target = Path(app.outdir) / NOTEBOOKS / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(student_version(nbformat.read(source, as_version=4)), target)


FA_ENTRY = re.compile(r'(?:"([a-z0-9-]+)"|([a-z0-9]+)):\[\d+,\d+,\[[^\]]*\],"[^"]*",(?:"[^"]*"|\[[^\]]*\])\]')
FA_PACK = re.compile(r"var p=\{(.*?)\};")


def used_icons(html_files) -> set[str]:
    """网页里用到的 Font Awesome 图标名（``fa-bars`` → ``bars``）。"""
    names = set()
    for path in html_files:
        for cls in re.findall(r'class="([^"]*\bfa-[^"]*)"', path.read_text(encoding="utf-8")):
            names.update(c[3:] for c in cls.split() if c.startswith("fa-"))
    return names - {"solid", "regular", "brands", "lg", "sm", "xs", "fw"}


def trim_fontawesome(script: str, keep: set[str]) -> str:
    """只留下 ``keep`` 里的图标：主题的 fontawesome.js 有约两千个图标（1.5 MB），本书只用十几个。"""

    def trim_pack(match):
        entries = [m.group(0) for m in FA_ENTRY.finditer(match.group(1)) if (m.group(1) or m.group(2)) in keep]
        return "var p={" + ",".join(entries) + "};"

    return FA_PACK.sub(trim_pack, script)


FA_ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:{1,2}(?:before|after),?)+)\{content:"\\([0-9a-f]+)"\}')
CSS_ESCAPE = re.compile(r'"\\([0-9a-f]{2,6})"')
THEME_CSS = Path("styles") / "pydata-sphinx-theme.css"
ICON_FONTS = Path("vendor") / "fontawesome" / "webfonts"


TTF_SOURCE = re.compile(r',url\([^)]*\.ttf\) format\("truetype"\)')


def trim_icon_css(css: str, keep: set[str]) -> str:
    """删去主题样式表里没用到的图标规则（``.fa-bars:before{content:"\\f0c9"}`` 这样的规则近两千条、约 85 KB），
    以及图标字体的 TrueType 备选（每个浏览器都认得 WOFF2）。"""

    def rule(match):
        return match.group(0) if keep.intersection(re.findall(r"\.fa-([a-z0-9-]+):", match.group(1))) else ""

    return TTF_SOURCE.sub("", FA_ICON_RULE.sub(rule, css))


def icon_codepoints(css_texts) -> set[int]:
    """样式表里写出的全部字符码位（图标规则与 ``content`` 里的 ``"\\f107"`` 等）：图标字体只需要这些字形。"""
    return {int(code, 16) for css in css_texts for code in CSS_ESCAPE.findall(css)}


def subset_font(source: Path, target: Path, codepoints: set[int]) -> None:
    """用 fontTools 把图标字体裁成只含 ``codepoints`` 的字形（WOFF2，Brotli 压缩）。"""
    import logging

    from fontTools import subset

    logging.getLogger("fontTools").setLevel(logging.WARNING)  # 每裁一张表都记一条 INFO，淹没构建日志
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=codepoints)
    subsetter.subset(font)
    subset.save_font(font, str(target), options)


def _theme_static() -> Path:
    import pydata_sphinx_theme

    return Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"


def _trim_icons(app, pages):
    """图标只留本书用到的：图标脚本、主题样式表里的图标规则、图标字体的字形。每次都从主题包里的原件裁起，
    所以重复构建、或者新用了一个图标，结果都对。"""
    static, theme = Path(app.outdir) / "_static", _theme_static()
    keep = used_icons(pages)
    script = static / "scripts" / "fontawesome.js"
    if script.exists():
        original = (theme / "scripts" / "fontawesome.js").read_text(encoding="utf-8")
        script.write_text(trim_fontawesome(original, keep), encoding="utf-8")
    if (static / THEME_CSS).exists():
        (static / THEME_CSS).write_text(trim_icon_css((theme / THEME_CSS).read_text(encoding="utf-8"), keep), encoding="utf-8")
    codepoints = icon_codepoints(p.read_text(encoding="utf-8") for p in static.rglob("*.css"))
    for font in (static / ICON_FONTS).glob("*.woff2"):
        subset_font(theme / ICON_FONTS / font.name, font, codepoints)
    for font in (static / ICON_FONTS).glob("*.ttf"):  # 只为不认识 WOFF2 的老浏览器准备：本书的读者用不到，样式表里也删去了它
        font.unlink()


# 主题模板里读屏软件读不准的几处（axe-core 报告为严重问题）：
ACCESSIBILITY_FIXES = [
    # 搜索按钮上看得见“搜索 Ctrl+K”，读出来的名字却只有“搜索”：让它的名字就取看得见的文字
    (re.compile(r'(<button class="btn search-button[^"]*"[^>]*?) aria-label="搜索"'), r"\1"),
    # 侧栏目录里展开子目录的 <summary> 只有一个图标，没有名字
    (re.compile(r'<summary>(<span class="toctree-toggle" role="presentation">)'), r'<summary aria-label="展开或收起子目录">\1'),
    # 配色按钮上的三个图标各带一个提示（图标脚本把它们变成读得出的文字），与按钮的名字对不上：名字只放在按钮上
    (re.compile(r'(<i class="theme-switch [^"]*" data-mode="[a-z]+")\s+title="[^"]*"'), r"\1"),
    # 折叠的代码格（myst-nb 的 hide-cell 等标签）：<summary> 的名字是英文的 “Toggle hidden content”，与看得见的
    # 文字对不上（label-content-name-mismatch）：去掉它，名字就取看得见的那行中文（见 UI_STRINGS）
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
    # 参考文献列表标成 role="list"，条目却不是 listitem
    (re.compile(r'<div role="list" class="citation-list">'), '<div class="citation-list">'),
]


# myst-nb 折叠代码格时 <summary> 里看得见的文字
CELL_TOGGLES = {
    f"{verb} code cell {part}": f"{zh_verb}{zh_part}"
    for verb, zh_verb in (("Show", "显示"), ("Hide", "隐藏"))
    for part, zh_part in (("content", "代码格"), ("source", "代码"), ("outputs", "输出"))
}


def fix_theme_html(html: str) -> str:
    """主题界面里仍是英文的提示（title、aria-label 等属性）换成中文，并修好几处无障碍问题。"""
    for english, chinese in CELL_TOGGLES.items():
        html = html.replace(f'admonition-title">{english}</p>', f'admonition-title">{chinese}</p>')
    for english, chinese in UI_STRINGS.items():
        html = re.sub(rf'((?:title|aria-label|data-bs-title|data-tooltip)=")({re.escape(english)})(")', rf"\g<1>{chinese}\3", html)
    for pattern, replacement in ACCESSIBILITY_FIXES:
        html = pattern.sub(replacement, html)
    return html


# 插图（{figure} 里的 SVG 示意图）没有写 :alt: 时，Sphinx 把文件路径当成替代文字，读屏软件念出一串路径：
# 换成图注的第一句（图注的其余部分紧跟在图后面，读屏软件照样会读到）。
FIGURE_BLOCK = re.compile(r"<figure\b[^>]*>.*?</figure>", re.S)
PATH_ALT = re.compile(r'<img alt="([^"]*)"(?=[^>]*\bsrc="\1")')
CAPTION_TEXT = re.compile(r'<span class="caption-text">(.*?)</span>(?:<a class="headerlink"|\s*</p>)', re.S)


def caption_alt_text(html: str) -> str:
    """每张用文件路径作替代文字的插图，替代文字改成“示意图：”加图注的第一句。"""

    def fix(match):
        block = match.group(0)
        caption = CAPTION_TEXT.search(block)
        if not PATH_ALT.search(block) or not caption:
            return block
        text = re.sub(r"<mjx-assistive-mml.*?</mjx-assistive-mml>", "", caption.group(1), flags=re.S)
        text = re.sub(r"<[^>]+>", "", text)
        first = re.split(r"[。；]", text.strip(), maxsplit=1)[0].strip()
        return PATH_ALT.sub(lambda m: f'<img alt="示意图：{html_escape(first)}"', block, count=1) if first else block

    return FIGURE_BLOCK.sub(fix, html)


def html_escape(text: str) -> str:
    import html

    return html.escape(html.unescape(text), quote=True)


# 本页第一张图之前的跳转链接：页眉、侧栏与正文里的链接有八九十个 Tab 停靠点，读者可以直接跳到图与它的控件。
# 链接与主题的“跳转到主要内容”一样，平时藏着，用 Tab 聚焦时才出现在页面顶端。
SKIP_LINK = re.compile(r'(<div id="pst-skip-link" class="skip-link d-print-none">.*?</div>)', re.S)
FIRST_FIGURE = re.compile(r'<figure class="seqlab-figure"')
FIRST_FIGURE_ID = "seqlab-first-figure"


def add_figure_skip_link(html: str) -> str:
    """有图的页面：主题的跳转链接后面再加一个“跳到本节的第一张图”，第一张图带上它指向的 id。"""
    if not FIRST_FIGURE.search(html) or FIRST_FIGURE_ID in html:
        return html
    html = FIRST_FIGURE.sub(f'<figure class="seqlab-figure" id="{FIRST_FIGURE_ID}" tabindex="-1"', html, count=1)
    link = f'<div class="skip-link seqlab-skip-figure d-print-none"><a href="#{FIRST_FIGURE_ID}">跳到本节的第一张图</a></div>'
    return SKIP_LINK.sub(lambda m: m.group(1) + link, html, count=1)


# sphinx-togglebutton 在读者的浏览器里给答案等可折叠块加的按钮，名字是英文的
TOGGLEBUTTON_LABEL = 'aria-label="Toggle hidden content"'


def _fix_togglebutton(out: Path) -> None:
    script = out / "_static" / "togglebutton.js"
    if script.exists():
        text = script.read_text(encoding="utf-8")
        script.write_text(text.replace(TOGGLEBUTTON_LABEL, 'aria-label="展开或收起"'), encoding="utf-8")


# 构建时把文本文件预先压缩一份 .gz：支持预压缩文件的静态托管（以及 make serve、测试用的服务器，见 tools/browser.py）
# 在浏览器接受 gzip 时直接发它。慢网络上首屏要下载的 HTML 与 CSS 因此只剩几分之一。
COMPRESSIBLE = {".html", ".css", ".js", ".mjs", ".json", ".svg", ".txt", ".ipynb", ".xml", ".map", ".wasm", ".ttf", ".otf"}


def precompress(out: Path, min_bytes: int = 1024) -> int:
    """给 ``out`` 下每个可压缩的文件写一份 ``.gz``（最高压缩级别，时间戳为 0，同样的内容得到同样的字节）；
    只留确实更小的那些。已有的 ``.gz`` 先全部删掉，免得留下已经删掉的文件的旧压缩版。返回写出的个数。"""
    import gzip

    for old in out.rglob("*.gz"):
        old.unlink()
    written = 0
    for path in out.rglob("*"):
        if not path.is_file() or path.suffix not in COMPRESSIBLE or path.stat().st_size < min_bytes:
            continue
        data = path.read_bytes()
        packed = gzip.compress(data, compresslevel=9, mtime=0)
        if len(packed) < 0.9 * len(data):
            path.with_name(path.name + ".gz").write_bytes(packed)
            written += 1
    return written


FIGURE_SPEC = re.compile(r'<script type="application/json" class="seqlab-figure-spec">(.*?)</script>', re.S)


def externalize_figures(html: str, page: Path, outdir: Path) -> str:
    """把页面里内联的图数据（每张图几十到几百 KB）搬进 ``_static/seqlab/figures/`` 里的小脚本，
    页面只留下它的地址；``assets/figures.js`` 在图快要滚进屏幕时才加载它。文件名取内容的散列：
    同一张图只存一份，内容变了地址也变（不会用到浏览器缓存里的旧数据）。用脚本而不是 JSON 文件，
    这样从本地磁盘（file://）打开网站时也能加载。"""
    folder = outdir / "_static" / FIGURE_DATA
    folder.mkdir(parents=True, exist_ok=True)

    def move(match):
        text = match.group(1)
        name = hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
        (folder / f"{name}.js").write_text(f'seqlabFigureData("{name}",{text});\n', encoding="utf-8")
        src = os.path.relpath(folder / f"{name}.js", page.parent).replace(os.sep, "/")
        return f'<script type="application/json" class="seqlab-figure-spec" data-key="{name}" data-src="{src}"></script>'

    return FIGURE_SPEC.sub(move, html)


def _build_finished(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    pages = [p for p in out.rglob("*.html") if "_static" not in p.parts]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        fixed = externalize_figures(add_figure_skip_link(caption_alt_text(fix_theme_html(text))), page, out)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")
    _trim_icons(app, pages)
    _typeset_math(out, pages)
    _write_notebooks(app)
    _fix_togglebutton(out)
    shutil.copyfile(ASSETS / "favicon.ico", out / "favicon.ico")  # 浏览器不看 <link rel="icon"> 时也会要 /favicon.ico
    precompress(out)


def _typeset_math(out: Path, pages: list[Path]) -> None:
    """用 node 运行 ``tools/mathjax.mjs``：把每页的公式排成 CHTML（npm 装的 mathjax-full，版本锁在 package-lock.json）。"""
    if shutil.which("node") is None:
        raise RuntimeError("构建网站需要 node 来排版公式：请安装 Node.js（make book 之前先 npm ci）")
    subprocess.run(["node", str(HERE / "mathjax.mjs"), str(out), *map(str, pages)], check=True)


def setup(app):
    from sphinx.ext import mathjax

    app.add_html_math_renderer(MATH_RENDERER, (mathjax.html_visit_math, None), (mathjax.html_visit_displaymath, None))
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _copy_own_assets)
    app.connect("html-page-context", _page_context, priority=900)
    app.connect("build-finished", _build_finished, priority=900)  # 在主题改写 pygments.css 之后：预压缩要看到最终的文件
    app.add_css_file("seqlab/book.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
