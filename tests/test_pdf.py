"""make pdf：讲义 PDF 有页、有中文文字、含每一节的标题。"""

import unicodedata

import pytest

from browser import has_chromium
from sitecheck import require_site

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.skipif(not has_chromium(), reason="没有 Chromium：无法打印 PDF（CI 总会安装它）")
def test_pdf_has_pages_and_every_section_title(tmp_path):
    import nbformat
    from pypdf import PdfReader

    import pdf
    from student import notebooks

    require_site()
    out = pdf.render(tmp_path / "book.pdf")
    reader = PdfReader(out)
    assert len(reader.pages) >= 10
    # Noto CJK 把部分汉字映射到康熙部首码位（⾔ U+2F94）；NFKC 把它们还原成常用汉字。
    text = unicodedata.normalize("NFKC", "".join(page.extract_text() for page in reader.pages))
    text = "".join(text.split())
    titles = [nbformat.read(p, as_version=4).cells[0].source.splitlines()[1].removeprefix("# ") for p in notebooks()]
    for title in titles + ["从序列建模到Transformer", "参考文献"]:
        assert "".join(title.split()) in text, f"PDF 里找不到标题「{title}」"
    # 只比较说明的前半句：个别字（如「页」）被映射到 NFKC 也不还原的部首码位。
    note = "".join(unicodedata.normalize("NFKC", pdf.NOTE).split())[:16]
    assert note in text, "交互图下应当有指向网站的说明"
