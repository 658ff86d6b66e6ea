"""构建好的网站：离线可用、页面大小在预算内、中文搜索可用、答案默认折叠。"""

import json
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


def test_local_assets_exist():
    assert (HTML / "_static" / "seqlab" / "plotly.min.js").stat().st_size > 1_000_000
    assert (HTML / "_static" / "mathjax" / "tex-chtml.js").exists()
    woff = list((HTML / "_static" / "mathjax").rglob("*.woff"))
    assert woff, "MathJax 的字体没有复制进网站"


def test_pages_are_within_budget_and_plotly_is_shared_not_inlined():
    for page in pages():
        text = page.read_text(encoding="utf-8")
        assert page.stat().st_size <= PAGE_BUDGET_BYTES, f"{page.name} 有 {page.stat().st_size / 2**20:.2f} MB"
        assert "widget-state+json" not in text, f"{page.name} 嵌入了控件状态"
        assert not re.search(r"plotly\.js v\d", text), f"{page.name} 内联了 plotly.js"
        if "plotly-graph-div" in text:
            assert text.count("_static/seqlab/plotly.min.js") == 1, f"{page.name} 应当恰好引用一次共享的 plotly.min.js"


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
