"""构建好的网站：离线可用、页面大小在预算内、中文搜索可用、答案默认折叠。"""

import json
import os
import re

import pytest

from sitecheck import HTML, PAGE_BUDGET_BYTES, content_pages, external_resources, pages, require_site

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def site():
    return require_site()


def test_every_notebook_has_a_page():
    from student import notebooks

    for nb in notebooks():
        page = HTML / nb.relative_to(nb.parents[2]).with_suffix(".html")
        assert page.exists(), f"{nb.name} 没有对应的网页 {page}"


def test_no_page_loads_anything_from_outside_the_site():
    offenders = {p.name: external_resources(p) for p in pages()}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"这些页面引用了站外资源：{offenders}"


def test_local_assets_exist_and_plotly_js_matches_the_python_package():
    from book_ext import PYTHON_PLOTLY_JS, plotly_version

    bundle = HTML / "_static" / "seqlab" / "plotly-cartesian.min.js"
    assert bundle.stat().st_size > 500_000
    assert plotly_version(bundle) == plotly_version(PYTHON_PLOTLY_JS) == "4.1.1"
    assert not (HTML / "_static" / "seqlab" / "plotly.min.js").exists(), "完整的 plotly.min.js 不应再复制进网站"


MATH_ELEMENT = re.compile(r'<(span|div) class="math notranslate nohighlight"[^>]*>(.*?)</\1>', re.S)
FONT_URL = re.compile(r"url\(([^)]+\.woff)\)")


def test_math_is_typeset_at_build_time_and_its_fonts_are_in_the_site():
    """公式在构建时排好版：页面里没有 MathJax 的脚本、没有没排的 TeX，每个公式元素里都是 <mjx-container>
    （连同给读屏软件的 MathML），样式引用的每个字体文件都在网站里。"""
    typeset = 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        assert "mathjax" not in " ".join(re.findall(r"<script[^>]*>", text)).lower(), f"{page.name} 还在加载 MathJax"
        for _, body in MATH_ELEMENT.findall(text):
            assert "<mjx-container" in body and "<mjx-assistive-mml" in body, f"{page.name} 有没排版的公式：{body[:80]}"
            assert "\\(" not in body and "\\[" not in body, f"{page.name} 有没排版的公式：{body[:80]}"
            typeset += 1
        for font in set(FONT_URL.findall(text)):
            assert (page.parent / font).resolve().is_file(), f"{page.name} 的公式字体 {font} 不在网站里"
    assert typeset > 300, f"全书只排了 {typeset} 个公式"


def test_pages_are_within_budget_and_plotly_is_shared_not_inlined():
    for page in pages():
        text = page.read_text(encoding="utf-8")
        assert page.stat().st_size <= PAGE_BUDGET_BYTES, f"{page.name} 有 {page.stat().st_size / 2**20:.2f} MB"
        assert "widget-state+json" not in text, f"{page.name} 嵌入了控件状态"
        assert not re.search(r"plotly\.js v\d", text), f"{page.name} 内联了 plotly.js"
        if "plotly-graph-div" in text:
            # plotly.js 不在页面里：由延迟加载的 figures.js 在第一张图快要滚进屏幕时加载（全站共用一份）
            assert "plotly-cartesian" not in text, f"{page.name} 直接引用了 plotly.js，它应当由 figures.js 按需加载"
            assert len(re.findall(r'<script defer="defer" src="[./]*_static/seqlab/figures\.js', text)) == 1, (
                f"{page.name} 应当恰好引用一次、并且延迟加载 figures.js"
            )
            assert "Plotly.newPlot" not in text, f"{page.name} 里有立即执行的 Plotly.newPlot"
            # 图的数据不内联在页面里，而是放在单独的文件里，图快要滚进屏幕时才加载
            specs = re.findall(r'<script type="application/json" class="seqlab-figure-spec"([^>]*)>(.*?)</script>', text, re.S)
            assert specs and len(specs) == text.count('class="seqlab-figure"'), f"{page.name}：图与图的数据对不上"
            for attrs, body in specs:
                assert not body.strip(), f"{page.name} 内联了图的数据"
                src = re.search(r'data-src="([^"]+)"', attrs).group(1)
                assert (page.parent / src).is_file(), f"{page.name} 的图数据 {src} 不存在"
        else:
            assert "plotly-cartesian" not in text and "figures.js" not in text, f"{page.name} 没有图，却加载了画图的脚本"
    assert "plotly-cartesian.min.js" in (HTML / "_static" / "seqlab" / "figures.js").read_text(encoding="utf-8")


def _search_index():
    raw = (HTML / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(raw[raw.index("(") + 1 : raw.rindex(")")])


@pytest.mark.parametrize("term", ["链式法则", "困惑度", "条件生成"])
def test_chinese_terms_are_in_the_search_index_and_point_to_section_1_1(term):
    index = _search_index()
    docs = []
    for table in ("terms", "titleterms"):  # 出现在标题里的词只记在 titleterms 中
        hit = index[table].get(term, [])
        docs += hit if isinstance(hit, list) else [hit]
    assert docs, f"搜索索引里没有「{term}」：中文分词没有生效？"
    names = [index["docnames"][d] for d in docs]
    assert any(n.endswith("01_language_as_sequence") for n in names), names


def test_solutions_are_collapsed_behind_a_toggle():
    page = next(p for p in content_pages() if p.name.startswith("01_"))
    text = page.read_text(encoding="utf-8")
    solutions = re.findall(r'<div class="solution[ "][^>]*', text)
    assert solutions, "没有找到答案块"
    assert all("dropdown" in s for s in solutions), "答案块应当默认折叠（dropdown）"


def _visible_text(page):
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"<(pre|script|style|code|kbd)\b[^>]*>.*?</\1>", " ", text, flags=re.S)
    return re.sub(r"<[^>]+>", " ", text)


def test_no_literal_markdown_bold_in_any_page():
    offenders = {p.name: m.group(0) for p in content_pages() for m in [re.search(r".{0,20}\*\*.{0,20}", _visible_text(p))] if m}
    assert not offenders, f"网页上出现了没有渲染的 **：{offenders}"


def test_interface_strings_are_chinese():
    english = ["Click to show", "Click to hide", "Toggle primary sidebar", "Toggle secondary sidebar", "Color mode",
               "System Settings", "Link to this heading", "列印", "Toggle hidden content", "code cell content"]
    for page in pages():
        text = page.read_text(encoding="utf-8")
        found = [e for e in english if e in text]
        assert not found, f"{page.name} 里还有英文（或繁体）的界面文字：{found}"


def test_search_index_loads_only_on_the_search_page():
    for page in pages():
        loads = "searchindex.js" in page.read_text(encoding="utf-8")
        assert loads == (page.name == "search.html"), f"{page.name}：搜索索引只应在搜索页加载"


def test_no_launch_buttons_without_a_repository_address():
    if os.environ.get("SEQLAB_REPOSITORY_URL"):
        pytest.skip("构建时给出了仓库地址")
    for page in pages():
        text = page.read_text(encoding="utf-8")
        assert not re.search(r'href="https://(mybinder\.org|colab\.research)|executablebooks|launch-buttons', text), (
            f"{page.name} 里有启动按钮"
        )


def test_icon_script_holds_only_the_icons_the_pages_use():
    from book_ext import used_icons

    script = (HTML / "_static" / "scripts" / "fontawesome.js").read_text(encoding="utf-8")
    assert len(script) < 150_000, f"图标脚本还有 {len(script) / 1e6:.1f} MB"
    for name in used_icons(pages()):
        assert re.search(rf'(?:"{name}"|\b{name}):\[', script), f"图标 {name} 被裁掉了"


def test_icon_fonts_and_styles_hold_only_the_icons_the_pages_use():
    """图标字体裁到只剩样式表用到的字形（主题原来的字体有 150 KB），主题样式表里没有没用到的图标规则；
    每一个用到的图标，字体里都有它的字形（用 fontTools 读字体的字符表核对）。"""
    from fontTools.ttLib import TTFont

    from book_ext import CSS_ESCAPE, FA_ICON_RULE, used_icons

    static = HTML / "_static"
    css = (static / "styles" / "pydata-sphinx-theme.css").read_text(encoding="utf-8")
    used = used_icons(pages())
    rules = {name: int(code, 16) for names, code in FA_ICON_RULE.findall(css) for name in re.findall(r"\.fa-([a-z0-9-]+):", names)}
    assert "bars" in rules and "house" not in rules, "样式表里应只留用到的图标规则"
    solid = TTFont(static / "vendor" / "fontawesome" / "webfonts" / "fa-solid-900.woff2")
    glyphs = set(solid.getBestCmap())
    missing = sorted(name for name in used if name in rules and rules[name] not in glyphs)
    assert not missing, f"字体里缺这些图标的字形：{missing}"
    in_css = {int(c, 16) for c in CSS_ESCAPE.findall((static / "styles" / "sphinx-book-theme.css").read_text(encoding="utf-8"))}
    assert {c for c in in_css if c >= 0xE000} <= glyphs, "书的主题样式表（目录的折叠箭头）用到的字形被裁掉了"
    for font in (static / "vendor" / "fontawesome" / "webfonts").iterdir():
        assert font.suffix == ".woff2" and font.stat().st_size < 20_000, f"{font.name} 没有裁小"
    assert ".ttf" not in css


def test_every_figure_has_a_chinese_text_alternative():
    for page in content_pages():
        text = page.read_text(encoding="utf-8")
        figures = text.count('class="seqlab-figure"')
        alts = re.findall(r'<p class="seqlab-alt" id="[^"]+">([^<]+)</p>', text)
        assert len(alts) == figures, f"{page.name}：{figures} 张图，{len(alts)} 段文字说明"
        assert all(re.search(r"[\u4e00-\u9fff]", a) and len(a) >= 6 for a in alts), alts


def test_make_bench_reports_the_built_site():
    """``make bench`` 的网站部分读得到它列出的每个文件（网站的布局变了，它也要跟着变）。"""
    import bench

    page_rows, shared = bench.bench_site()
    assert {name for name, _, _ in page_rows} == {p.relative_to(HTML).as_posix() for p in pages()}
    assert all(size > 0 for size in shared.values()), shared


def test_text_files_are_precompressed_with_gzip_for_static_hosts():
    """每个页面、样式表与脚本旁边有一份 .gz（服务器在浏览器接受 gzip 时发它），解压后与原文件逐字节相同，而且小得多。"""
    import gzip

    texts = [p for p in HTML.rglob("*") if p.is_file() and p.suffix in {".html", ".css", ".js"} and p.stat().st_size >= 4096]
    assert texts
    missing = [p.relative_to(HTML).as_posix() for p in texts if not p.with_name(p.name + ".gz").exists()]
    assert not missing, f"这些文件没有预压缩：{missing[:10]}"
    for gz in HTML.rglob("*.gz"):
        original = gz.with_suffix("")
        assert original.exists(), f"{gz.name} 的原文件已经不在了"
        assert gzip.decompress(gz.read_bytes()) == original.read_bytes(), f"{gz.name} 与原文件不同"
    page, css = HTML / "chapters" / "ch01" / "03_rnn_history.html", HTML / "_static" / "styles" / "pydata-sphinx-theme.css"
    for path in (page, css):
        assert path.with_name(path.name + ".gz").stat().st_size < 0.35 * path.stat().st_size
