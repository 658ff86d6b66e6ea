"""make pdf：把构建好的网站按阅读顺序打印成一份 PDF（课堂讲义用）。

用测试所用的同一个无头 Chromium 逐页“打印为 PDF”，再用 pypdf 合并。阅读顺序沿着每页底部的
“下一页”链接，从首页走到最后一页。交互图以默认状态打印，图下加一行说明，指向网站上的交互版本。

用法：``python tools/pdf.py [输出文件]``（默认 ``_build/pdf/seqlab-ch01.pdf``）。
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from urllib.parse import urljoin

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from browser import has_chromium, launch, serve  # noqa: E402

HTML = ROOT / "_build" / "html"
NOTE = "（交互图：此处为默认状态。拖动滑块、切换选项请打开网站上的同一页面。）"
# 主题的打印样式会藏起代码和输出（连同图）；讲义要保留它们，所以按屏幕样式打印，只去掉导航（与网页实时面的开关：纸上用不了）。
SCREEN_FOR_PRINT = """
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .header-article, .prev-next-area, footer,
.bd-footer, .bd-footer-article, .bd-footer-content, .skip-link, #pst-back-to-top,
.seqlab-live-row { display: none !important; }
.bd-main .bd-content .bd-article-container { max-width: 100% !important; }
.bd-page-width { max-width: 100% !important; }
.cell_output, .cell_input, figure, .plotly-graph-div, pre { break-inside: avoid; }
pre { white-space: pre-wrap !important; overflow-wrap: anywhere; overflow: visible !important; }
"""
PRINT_PREP = """note => {
  for (const gd of document.querySelectorAll('.plotly-graph-div')) {
    const p = document.createElement('p');
    p.className = "seqlab-print-note";
    p.textContent = note;
    gd.parentElement.after(p);
  }
  for (const d of document.querySelectorAll('details')) d.open = true;
}"""


def root_page() -> str:
    """_toc.yml 里的 ``root``：全书的第一页。"""
    import yaml

    return yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["root"] + ".html"


def reading_order(page, base: str) -> list[str]:
    urls, url = [], urljoin(base, root_page())
    while url and url not in urls and len(urls) < 100:
        page.goto(url, wait_until="load")
        urls.append(page.url)
        nxt = page.query_selector("a.right-next")
        url = urljoin(page.url, nxt.get_attribute("href")) if nxt else None
    return urls


def render(out: Path) -> Path:
    from playwright.sync_api import sync_playwright
    from pypdf import PdfWriter

    if not (HTML / "index.html").exists():
        raise SystemExit("还没有构建网站：请先运行 make book")
    if not has_chromium():
        raise SystemExit("没有找到 Chromium：apt-get install -y chromium fonts-noto-cjk fonts-noto-color-emoji")
    writer = PdfWriter()
    with serve(HTML) as base, sync_playwright() as p:
        browser = launch(p)
        # 视口宽度等于 A4 纸去掉左右边距后的宽度（186 mm ≈ 703 px），图按纸宽排版，不会被裁掉。
        page = browser.new_page(viewport={"width": 703, "height": 1000})
        page.emulate_media(media="screen")
        for url in reading_order(page, base + "/"):
            page.goto(url, wait_until="load")
            page.add_style_tag(content=SCREEN_FOR_PRINT)
            page.evaluate("document.fonts.ready")  # 公式在构建时排好版，只需等它的字体
            # 网页上的图滚到跟前才画；讲义里要全部画出来
            page.evaluate("window.seqlabDrawAllFigures ? seqlabDrawAllFigures() : null")
            page.wait_for_timeout(500)
            page.evaluate(PRINT_PREP, NOTE)
            pdf = page.pdf(format="A4", print_background=True, margin=dict(top="15mm", bottom="15mm", left="12mm", right="12mm"))
            writer.append(io.BytesIO(pdf))
        browser.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        writer.write(f)
    return out


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "_build" / "pdf" / "seqlab-ch01.pdf"
    render(out)
    print(f"PDF 已生成：{out}（{out.stat().st_size / 2**20:.1f} MiB）")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
