"""make bench：本书的速度与体积预算，在本机上实测。

1. 逐个执行 chapters/ 下的笔记本，报告墙钟时间（预算：每个 ≤ 30 s）；
2. 对注册表里的每个探索器，反复用它的 ``examples`` 驱动实时面，报告单次更新的中位数与 p95
   （预算：中位数 ≤ 50 ms）；
3. 列出已构建网站每个页面自身的 HTML 大小（预算：≤ 1.5 MB）和共享的静态资源；
4. 在无头 Chromium 里、冷缓存、模拟 4G（9 Mbit/s、40 ms）的手机上打开每个章节页面，报告首次内容绘制
   （预算 ≤ 2.5 s）和这一页连同它加载的全部文件的字节数（预算 ≤ 3 MB，不压缩），以及 390 px 与 1280 px
   宽时图中文字重叠或被裁掉的个数（应为 0）。

用法：``python tools/bench.py [--skip-notebooks] [--skip-explorers] [--rounds N] [--strict]``；
``--strict`` 时超出预算返回 1。SEQLAB_SITE 指定要测的网站（默认 ``_build/html``）。
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))

NOTEBOOK_BUDGET_S = 30.0
UPDATE_BUDGET_MS = 50.0


def _row(cells, widths):
    return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def bench_notebooks() -> list[tuple[str, float, bool]]:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    from student import notebooks

    os.environ["SEQLAB_STRICT_CHECKS"] = "1"
    rows = []
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
        start = time.perf_counter()
        try:
            client.execute()
        except CellExecutionError as err:
            print(f"{path.name} 执行出错：{str(err).splitlines()[0][:200]}", file=sys.stderr)
            rows.append((path.name, float("nan"), False))
            continue
        seconds = time.perf_counter() - start
        rows.append((path.name, seconds, seconds <= NOTEBOOK_BUDGET_S))
    return rows


def bench_explorers(rounds: int) -> list[tuple[str, float, float, float, int, bool]]:
    import seqlab
    from seqlab import explorers

    seqlab.setup()
    rows = []
    for explorer in explorers.all_explorers():
        view = explorer.live()
        cold = []
        for example in explorer.examples:  # 第一次访问每个状态：探索器自己的缓存还是空的
            start = time.perf_counter()
            view.set(**example)
            cold.append((time.perf_counter() - start) * 1000)
        times = []
        for _ in range(rounds):
            for example in explorer.examples:
                start = time.perf_counter()
                view.set(**example)
                times.append((time.perf_counter() - start) * 1000)
        times.sort()
        median = statistics.median(times)
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        rows.append((explorer.name, statistics.median(cold), median, p95, len(times), median <= UPDATE_BUDGET_MS))
    return rows


def bench_site():
    from sitecheck import HTML, PAGE_BUDGET_BYTES, pages

    if not (HTML / "index.html").exists():
        return None, None
    page_rows = [(p.relative_to(HTML).as_posix(), p.stat().st_size, p.stat().st_size <= PAGE_BUDGET_BYTES) for p in pages()]
    static = HTML / "_static"
    shared = {
        "plotly.min.js": (static / "seqlab" / "plotly.min.js").stat().st_size,
        "mathjax/（整个目录）": sum(f.stat().st_size for f in (static / "mathjax").rglob("*") if f.is_file()),
        "_static/（全部）": sum(f.stat().st_size for f in static.rglob("*") if f.is_file()),
        "searchindex.js": (HTML / "searchindex.js").stat().st_size,
    }
    return page_rows, shared


def bench_browser():
    """每个章节页面：模拟 4G 的首次内容绘制与字节数；两种宽度下图中文字的重叠与裁切。没有 Chromium 时返回 None。"""
    from browser import has_chromium, launch, serve
    from sitecheck import DESKTOP, FIGURE_TEXT_BOXES, HTML, PHONE, cold_load, content_pages, wait_for_figures

    if not has_chromium() or not (HTML / "index.html").exists():
        return None
    from playwright.sync_api import sync_playwright

    rows = []
    sections = [p for p in content_pages() if "/ch01/0" in p.as_posix()]
    with serve(HTML) as base, sync_playwright() as pw:
        browser = launch(pw)
        for path in sections:
            name = path.relative_to(HTML).as_posix()
            load = cold_load(browser, f"{base}/{name}")
            faults = []
            for device in (PHONE, DESKTOP):
                context = browser.new_context(**device)
                page = context.new_page()
                page.goto(f"{base}/{name}", wait_until="load")
                wait_for_figures(page)
                boxes = page.evaluate(FIGURE_TEXT_BOXES)
                faults.append((sum(len(b["overlaps"]) for b in boxes), sum(len(b["cut"]) for b in boxes), len(boxes)))
                context.close()
            rows.append((name, load, faults))
        browser.close()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-notebooks", action="store_true")
    parser.add_argument("--skip-explorers", action="store_true")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args(argv)
    ok = True
    print(f"机器：{os.cpu_count()} 个 CPU 核；时间为墙钟时间，机器繁忙时会偏大。\n")

    if not args.skip_notebooks:
        print("== 笔记本执行时间（预算 ≤ 30 s）==")
        w = (40, 10, 6)
        print(_row(("笔记本", "秒", "预算"), w))
        for name, seconds, good in bench_notebooks():
            ok &= good
            print(_row((name, f"{seconds:.1f}", "✓" if good else "✗"), w))
        print()

    if not args.skip_explorers:
        print(f"== 实时探索器的单次更新（预算：中位数 ≤ {UPDATE_BUDGET_MS:.0f} ms）==")
        print("（“首次”：每个示例状态第一次计算的中位数，探索器自己的缓存为空；其余列：反复切换这些状态）")
        w = (22, 10, 12, 10, 6, 6)
        print(_row(("探索器", "首次 ms", "中位数 ms", "p95 ms", "次数", "预算"), w))
        for name, cold, median, p95, n, good in bench_explorers(args.rounds):
            ok &= good
            print(_row((name, f"{cold:.1f}", f"{median:.1f}", f"{p95:.1f}", n, "✓" if good else "✗"), w))
        print()

    page_rows, shared = bench_site()
    if page_rows is None:
        print("== 网站：还没有构建（先运行 make book）==")
    else:
        print("== 网站页面自身的 HTML 大小（预算 ≤ 1.5 MB）==")
        w = (52, 10, 6)
        print(_row(("页面", "KB", "预算"), w))
        for name, size, good in page_rows:
            ok &= good
            print(_row((name, f"{size / 1024:.0f}", "✓" if good else "✗"), w))
        print("\n== 共享的静态资源（每个页面共用，只下载一次）==")
        for name, size in shared.items():
            print(_row((name, f"{size / 1024:.0f} KB"), (52, 12)))
    ok &= _print_browser(bench_browser())
    print("\n全部在预算内。" if ok else "\n有项目超出预算（标 ✗）。")
    return 0 if ok or not args.strict else 1


def _print_browser(rows) -> bool:
    from sitecheck import FCP_BUDGET_MS, PAGE_BYTES_BUDGET

    if rows is None:
        print("\n== 浏览器测量：没有 Chromium 或还没有构建网站，跳过 ==")
        return True
    print(f"\n== 章节页面，冷缓存、模拟 4G 的手机（预算：首次内容绘制 ≤ {FCP_BUDGET_MS / 1000:.1f} s，"
          f"全部字节 ≤ {PAGE_BYTES_BUDGET / 1e6:.0f} MB）==")
    print("（重叠 / 裁切：图中文字元素相互重叠、超出图或屏幕的个数，390 px 与 1280 px 宽；预算为 0）")
    w = (44, 10, 10, 6, 12, 12, 6)
    print(_row(("页面", "FCP s", "MB", "请求", "390 px", "1280 px", "预算"), w))
    ok = True
    for name, load, faults in rows:
        good = (load["fcp_ms"] or 1e9) <= FCP_BUDGET_MS and load["bytes"] <= PAGE_BYTES_BUDGET and not any(o or c for o, c, _ in faults)
        ok &= good
        cells = [f"{o}/{c}（{n} 图）" for o, c, n in faults]
        print(_row((name, f"{(load['fcp_ms'] or float('nan')) / 1000:.2f}", f"{load['bytes'] / 1e6:.2f}", load["requests"],
                    *cells, "✓" if good else "✗"), w))
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
