"""make bench：本书的速度与体积预算，在本机上实测。

1. 逐个执行 chapters/ 下的笔记本，报告墙钟时间（预算：每个 ≤ 30 s）；
2. 对注册表里的每个探索器，反复用它的 ``examples`` 驱动实时面，报告单次更新的中位数与 p95
   （预算：中位数 ≤ 50 ms），
   并在无头 Chromium 里量 plotly.js 在这些示例状态的图之间重画一次要多久（只报告）；
   网页实时面（“实时计算”开关）在无头 Chromium 里从读入控件、算出状态到图画完的时间（预算：中位数 ≤ 50 ms），
   以及打开开关时下载的代码与数据；
3. 逐个运行 ``seqlab.train`` 登记的每个训练配方，每个在一个新的 Python 进程里（与
   ``tests/test_checkpoints.py`` 重训检查点的方式相同，检查点写进临时目录，随书附带的检查点不动），报告
   配方本身占用的进程 CPU 时间（预算：每个 ≤ 60 s）、墙钟时间、写出的检查点大小（权重 + 记录，预算 ≤ 2 MB），
   并对照随书检查点核对声明了容差的指标（``train.TOLERANCES``）；
4. 列出已构建网站每个页面自身的 HTML 大小（预算：≤ 1.5 MB）和共享的静态资源；
5. 在无头 Chromium 里、冷缓存、模拟 4G（9 Mbit/s、40 ms）与慢速 3G（400 kbit/s、2 s 往返）的手机上打开每个
   章节页面，报告首次内容绘制（预算：4G ≤ 2.5 s，慢速 3G ≤ 8 s）、实际传输的字节（服务器发 gzip 预压缩版）
   和这一页连同它加载的全部文件的字节数（预算 ≤ 3 MB，不压缩），以及 390 px 与 1280 px
   宽时图中文字重叠或被裁掉的个数（应为 0）。

用法：``python tools/bench.py [--skip-notebooks] [--skip-explorers] [--skip-recipes] [--recipes 名字 …]
[--rounds N] [--strict]``；``--recipes`` 只重训列出的配方；``--strict`` 时超出预算返回 1。
``make bench BENCH_ARGS="--skip-recipes"`` 把参数传给本脚本。SEQLAB_SITE 指定要测的网站（默认 ``_build/html``）。
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))

from lab_latency import p95  # noqa: E402 —— 与 JupyterLab 延迟表同一个 p95

NOTEBOOK_BUDGET_S = 30.0
UPDATE_BUDGET_MS = 50.0
SECTION_LIVE_BUDGET_BYTES = 5_000_000  # 一节里全部实时面的代码与数据
RECIPE_CPU_BUDGET_S = 60.0
CHECKPOINT_BUDGET_BYTES = 2 * 2**20  # 与 tests/test_checkpoints.py 的上限相同
RECIPE_TIMEOUT_S = 900


def _mark(good: bool) -> str:
    return "✓" if good else "✗"


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
        median = statistics.median(times)
        rows.append((explorer.name, statistics.median(cold), median, p95(times), len(times), median <= UPDATE_BUDGET_MS))
    return rows


# 在新进程里运行一个配方：检查点写进临时目录；计时只包住配方函数本身，不含启动 Python 和导入 torch。
# time.process_time() 是整个进程（所有线程）占用的 CPU 时间，机器繁忙时不像墙钟那样被排队时间拉长。
_RECIPE_CHILD = """\
import json, sys, time
from pathlib import Path
from seqlab import train
train.CHECKPOINT_DIR = Path(sys.argv[2])
train._load_model_modules()
startup = time.process_time()
cpu, wall = time.process_time(), time.perf_counter()
train.RECIPES[sys.argv[1]]()
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({"cpu": cpu, "wall": wall, "startup": startup}))
"""


@dataclass
class RecipeRun:
    name: str
    cpu_s: float = math.nan  # 配方本身的进程 CPU 时间
    wall_s: float = math.nan
    startup_s: float = math.nan  # 启动 Python、导入 seqlab 与 torch 的 CPU 时间（不计入预算）
    size_bytes: int = 0  # 写出的 <name>.safetensors + <name>.json
    recorded_cpu_s: float = math.nan  # 随书检查点训练时记下的 meta["cpu_seconds"]（没有就是 nan）
    drift: dict[str, float] = field(default_factory=dict)  # 指标 → |重训 − 随书| / 容差
    error: str = ""

    @property
    def cpu_ok(self) -> bool:
        return not self.error and self.cpu_s <= RECIPE_CPU_BUDGET_S

    @property
    def size_ok(self) -> bool:
        return not self.error and 0 < self.size_bytes <= CHECKPOINT_BUDGET_BYTES

    @property
    def reproduces(self) -> bool:
        return not self.error and all(d <= 1 for d in self.drift.values())


def run_recipe(name: str) -> RecipeRun:
    """在一个新的 Python 进程里运行配方 ``name``，量它的 CPU 时间、墙钟时间和检查点大小。"""
    from seqlab import train

    run = RecipeRun(name)
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as out:
        try:
            done = subprocess.run([sys.executable, "-c", _RECIPE_CHILD, name, out], capture_output=True, text=True,
                                  timeout=RECIPE_TIMEOUT_S, cwd=ROOT)
        except subprocess.TimeoutExpired:
            run.error = f"超过 {RECIPE_TIMEOUT_S} s 仍未结束"
            return run
        if done.returncode != 0:
            run.error = (done.stderr.strip().splitlines() or [f"退出码 {done.returncode}"])[-1][:200]
            return run
        times = json.loads(done.stdout.strip().splitlines()[-1])
        run.cpu_s, run.wall_s, run.startup_s = times["cpu"], times["wall"], times["startup"]
        files = [Path(out) / f"{name}.safetensors", Path(out) / f"{name}.json"]
        run.size_bytes = sum(f.stat().st_size for f in files)
        fresh = json.loads(files[1].read_text(encoding="utf-8"))["meta"]
    committed = train.load(name).meta
    run.recorded_cpu_s = float(committed.get("cpu_seconds", math.nan))
    for metric, tol in train.TOLERANCES[name].items():
        run.drift[metric] = abs(fresh[metric] - committed[metric]) / tol
    return run


def bench_recipes(names: list[str] | None = None, run=None) -> list[RecipeRun]:
    """依次运行 ``names``（默认：全部登记的配方，按名字排序）；一次只跑一个，免得互相抢 CPU。

    ``run(name) -> RecipeRun`` 默认是 :func:`run_recipe`（测试换成不训练的替身）。
    """
    from seqlab import train

    run = run or run_recipe
    train._load_model_modules()
    unknown = sorted(set(names or ()) - set(train.RECIPES))
    if unknown:
        raise SystemExit(f"未知的配方：{unknown}；可选：{sorted(train.RECIPES)}")
    rows = []
    for name in names or sorted(train.RECIPES):
        print(f"  重训 {name} ……", end="", file=sys.stderr, flush=True)
        rows.append(run(name))
        print(f" CPU {rows[-1].cpu_s:.1f} s" if not rows[-1].error else " 出错", file=sys.stderr, flush=True)
    return rows


def print_recipes(rows: list[RecipeRun]) -> bool:
    """打印配方表；返回是否全部在预算内（CPU 时间与检查点大小；指标复现另起一行说明，不算预算）。"""
    print(f"== 训练配方（预算：配方本身的 CPU 时间 ≤ {RECIPE_CPU_BUDGET_S:.0f} s，"
          f"检查点 ≤ {CHECKPOINT_BUDGET_BYTES / 2**20:.0f} MB）==")
    print("（每个配方在一个新进程里运行，与 python -m seqlab.train 相同；CPU：time.process_time，整个进程所有线程，"
          "不含启动与导入；记录 s：随书检查点训练时记下的 CPU 时间（meta.cpu_seconds，有的只算训练循环）；"
          "KB：权重 + 记录；复现：声明了容差的指标与随书检查点之差都在容差内）")
    print(f"（开始时的负载：最近 1 分钟平均 {os.getloadavg()[0]:.1f} 个可运行的进程。机器很忙时各进程争用缓存和内存带宽，"
          "同样的计算，CPU 时间也会变长）")
    w = (22, 8, 8, 8, 8, 6, 6, 6)
    print(_row(("配方", "CPU s", "墙钟 s", "记录 s", "KB", "CPU", "大小", "复现"), w))
    ok = True
    for r in rows:
        ok &= r.cpu_ok and r.size_ok
        recorded = "—" if math.isnan(r.recorded_cpu_s) else f"{r.recorded_cpu_s:.1f}"
        print(_row((r.name, f"{r.cpu_s:.1f}", f"{r.wall_s:.1f}", recorded, f"{r.size_bytes / 1024:.0f}", _mark(r.cpu_ok),
                    _mark(r.size_ok), _mark(r.reproduces)), w))
        if r.error:
            print(f"    {r.name} 运行出错：{r.error}")
        elif not r.reproduces:
            worst = ", ".join(f"{m} 差 {d:.1f} 倍容差" for m, d in r.drift.items() if d > 1)
            print(f"    {r.name} 的指标与随书检查点不符：{worst}（python -m seqlab.train {r.name} 重新生成）")
    measured = [r for r in rows if not r.error]
    if measured:
        total = sum(r.cpu_s for r in measured)
        startup = statistics.median(r.startup_s for r in measured)
        print(f"合计 CPU {total:.0f} s；每个进程启动与导入另需约 {startup:.1f} s CPU（不计入预算）。"
              f"结束时的负载：{os.getloadavg()[0]:.1f}。")
    return ok


# 与 PlotView 前端相同的画法：每张图先画一次，再在这些示例状态的图之间反复 Plotly.react，直到下一帧画完。
_REDRAW = """async ([figures, config, rounds]) => {
    const el = document.getElementById('plot'), times = [];
    await Plotly.newPlot(el, figures[0].data, figures[0].layout, config);
    for (let r = 0; r < rounds; r++) for (const f of [...figures.slice(1), figures[0]]) {
        const start = performance.now();
        await Plotly.react(el, f.data, f.layout, config);
        await new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)));
        times.push(performance.now() - start);
    }
    Plotly.purge(el);
    return times;
}"""


def bench_redraw(rounds: int):
    """每个实时探索器：plotly.js 在它的示例状态之间重画一次图要多久（无头 Chromium，1280 px，不经内核）。

    JupyterLab 里量到的“从控件到图重画完”减去这一项，就是内核往返与 JupyterLab 页面本身的开销。没有 Chromium 时返回 None。
    """
    from browser import has_chromium, launch

    if not has_chromium():
        return None
    from importlib import resources

    from playwright.sync_api import sync_playwright

    from seqlab import explorers, figures
    from seqlab.explorers.plotview import figure_json

    plotly_js = resources.files("plotly").joinpath("package_data", "plotly.min.js").read_text(encoding="utf-8")
    rows = []
    with sync_playwright() as pw:
        browser = launch(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_content('<div id="plot" style="width: 900px"></div>')
        page.add_script_tag(content=plotly_js)
        for explorer in explorers.all_explorers():
            view = explorer.live()
            shown = []
            for example in explorer.examples:
                view.set(**example)
                shown.append(figure_json(view.figure))
            times = page.evaluate(_REDRAW, [shown, figures.CONFIG, max(1, rounds // 3)])
            rows.append((explorer.name, statistics.median(times), p95(times), len(times)))
        browser.close()
    return rows


def bench_live_web(rounds: int):
    """每张有“实时计算”开关的图：在无头 Chromium（1280 px）里打开开关，把第一个滑块（没有滑块时是第一个下拉菜单或带候选项的文本框）从最小拨到最大、再拨回来（坏输入只显示消息、不计时），
    每次从读入控件到图画完的中位数与 p95、其中计算（不含 plotly.js 重画）的中位数，以及打开开关时下载的字节数；
    另给出每个页面打开全部开关一共下载的字节数。没有 Chromium 或网站时返回 None。"""
    from browser import has_chromium, launch, serve
    from sitecheck import DESKTOP, HTML, LIVE_FIGURES, LIVE_SWEEP, content_pages, wait_for_figures

    if not has_chromium() or not (HTML / "index.html").exists():
        return None
    from playwright.sync_api import sync_playwright

    rows, sections = [], {}  # sections：每个页面打开全部开关一共下载的字节数（共用的文件只下载一次）
    with serve(HTML) as base, sync_playwright() as pw:
        browser = launch(pw)
        for path in content_pages():
            name = path.relative_to(HTML).as_posix()
            if "seqlab-figure-spec" not in path.read_text(encoding="utf-8"):
                continue
            page = browser.new_page(**DESKTOP)
            page.goto(f"{base}/{name}", wait_until="load")
            wait_for_figures(page)
            for index in page.evaluate(LIVE_FIGURES):
                explorer = page.evaluate(f"window.seqlabFigures[{index}].spec.layout.meta.live")
                sweep = [k / rounds for k in range(1, rounds + 1)] + [k / rounds for k in range(rounds - 1, -1, -1)]
                control, count = 0, 1
                while control < count:  # 每个滑块与下拉菜单各拨一遍
                    result = page.evaluate(LIVE_SWEEP, [index, sweep, control])
                    count, control = result["count"], control + 1
                    times = result["timings"]
                    if not times:  # 这个控件的每个取值都是坏输入（只显示消息）
                        continue
                    median = statistics.median(times)
                    rows.append((f"{name.split('/')[-1]} · {explorer} · {result['label']}", median, p95(times),
                                 statistics.median(result["compute"]), len(times), result["loaded"],
                                 median <= UPDATE_BUDGET_MS))
                    sections[name] = sections.get(name, 0) + result["loaded"]
            page.close()
        browser.close()
    return rows, sections


def bench_site():
    from sitecheck import HTML, PAGE_BUDGET_BYTES, pages

    if not (HTML / "index.html").exists():
        return None, None
    page_rows = [(p.relative_to(HTML).as_posix(), p.stat().st_size, p.stat().st_size <= PAGE_BUDGET_BYTES) for p in pages()]
    static = HTML / "_static"
    shared = {
        "plotly-cartesian.min.js（按需加载）": (static / "seqlab" / "plotly-cartesian.min.js").stat().st_size,
        "seqlab/mathjax-fonts/（公式字体，页面只下载用到的）": sum(f.stat().st_size for f in (static / "seqlab" / "mathjax-fonts").iterdir()),
        "_static/（全部，不含预压缩的 .gz）": sum(f.stat().st_size for f in static.rglob("*") if f.is_file() and f.suffix != ".gz"),
        "_static/ 的预压缩 .gz（服务器在浏览器接受 gzip 时发这些）": sum(f.stat().st_size for f in static.rglob("*.gz")),
        "searchindex.js": (HTML / "searchindex.js").stat().st_size,
    }
    return page_rows, shared


def bench_browser():
    """每个章节页面：模拟 4G 的首次内容绘制与字节数；两种宽度下图中文字的重叠与裁切。没有 Chromium 时返回 None。"""
    from browser import has_chromium, launch, serve
    from sitecheck import (
        DESKTOP,
        FIGURE_TEXT_BOXES,
        HTML,
        NETWORK_SLOW_3G,
        PHONE,
        cold_load,
        content_pages,
        wait_for_figures,
    )

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
            load["slow3g"] = cold_load(browser, f"{base}/{name}", network=NETWORK_SLOW_3G)
            faults = []
            for device in (PHONE, DESKTOP):
                context = browser.new_context(**device)
                page = context.new_page()
                page.goto(f"{base}/{name}", wait_until="load")
                wait_for_figures(page)
                boxes = page.evaluate(FIGURE_TEXT_BOXES)
                faults.append((sum(len(b["overlaps"]) + len(b["squashed"]) for b in boxes), sum(len(b["cut"]) for b in boxes), len(boxes)))
                context.close()
            rows.append((name, load, faults))
        browser.close()
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-notebooks", action="store_true")
    parser.add_argument("--skip-explorers", action="store_true")
    parser.add_argument("--skip-recipes", action="store_true", help="不重训配方（全部重训要几分钟）")
    parser.add_argument("--recipes", nargs="+", metavar="名字", help="只重训这些配方（默认全部）")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args(argv)
    ok = True
    print(f"机器：{os.cpu_count()} 个 CPU 核；除训练配方的 CPU 时间外，时间都是墙钟时间，机器繁忙时会偏大。\n")

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
        for name, cold, median, high, n, good in bench_explorers(args.rounds):
            ok &= good
            print(_row((name, f"{cold:.1f}", f"{median:.1f}", f"{high:.1f}", n, "✓" if good else "✗"), w))
        print()

    if not args.skip_explorers:
        redraw = bench_redraw(args.rounds)
        if redraw is not None:
            print("== 实时图在 plotly.js 里重画一次（无头 Chromium，不经内核；只报告，没有预算）==")
            print("（JupyterLab 里“从控件到图重画完”减去这一项，是内核往返与 JupyterLab 页面的开销）")
            w = (26, 12, 10, 6)
            print(_row(("探索器", "中位数 ms", "p95 ms", "次数"), w))
            for name, median, high, n in redraw:
                print(_row((name, f"{median:.0f}", f"{high:.0f}", n), w))
            print()

    if not args.skip_explorers:
        live = bench_live_web(args.rounds)
        if live is not None:
            print(f"== 网页实时面：从读入控件、算出状态到图画完（无头 Chromium，1280 px；预算：中位数 ≤ {UPDATE_BUDGET_MS:.0f} ms）==")
            print("（每个滑块与下拉菜单各自从最小拨到最大再拨回来；“打开时下载”：实时面的代码与数据，只在打开“实时计算”时下载）")
            w = (64, 12, 10, 12, 6, 14, 6)
            print(_row(("页面 · 探索器 · 控件", "中位数 ms", "p95 ms", "其中计算 ms", "次数", "打开时下载", "预算"), w))
            rows, sections = live
            for name, median, high, compute, n, loaded, good in rows:
                ok &= good
                cells = (f"{median:.0f}", f"{high:.0f}", f"{compute:.1f}", n, f"{loaded / 1024:.0f} KB", "✓" if good else "✗")
                print(_row((name, *cells), w))
            print(f"\n== 每一节打开全部“实时计算”一共下载的字节数（预算 ≤ {SECTION_LIVE_BUDGET_BYTES / 1e6:.0f} MB）==")
            for name, loaded in sections.items():
                ok &= loaded <= SECTION_LIVE_BUDGET_BYTES
                print(_row((name, f"{loaded / 1024:.0f} KB", "✓" if loaded <= SECTION_LIVE_BUDGET_BYTES else "✗"), (52, 12, 6)))
            print()

    if not args.skip_recipes:
        ok &= print_recipes(bench_recipes(args.recipes))
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
    from sitecheck import FCP_BUDGET_MS, PAGE_BYTES_BUDGET, SLOW_3G_FCP_BUDGET_MS

    if rows is None:
        print("\n== 浏览器测量：没有 Chromium 或还没有构建网站，跳过 ==")
        return True
    print(f"\n== 章节页面，冷缓存的手机：模拟 4G 与慢速 3G（400 kbit/s、2 s 往返）==\n（预算：首次内容绘制 4G ≤ {FCP_BUDGET_MS / 1000:.1f} s、"
          f"慢速 3G ≤ {SLOW_3G_FCP_BUDGET_MS / 1000:.0f} s，全部字节 ≤ {PAGE_BYTES_BUDGET / 1e6:.0f} MB（解压后））")
    print("（“传输 MB”：服务器发 gzip 预压缩版时实际传输的字节；重叠 / 裁切：图中文字元素相互重叠（连同被压扁的色条）、超出图或屏幕的个数，"
          "390 px 与 1280 px 宽；预算为 0）")
    w = (44, 10, 12, 8, 10, 6, 12, 12, 6)
    print(_row(("页面", "4G FCP s", "慢3G FCP s", "MB", "传输 MB", "请求", "390 px", "1280 px", "预算"), w))
    ok = True
    for name, load, faults in rows:
        slow = load.get("slow3g", {}).get("fcp_ms")
        good = ((load["fcp_ms"] or 1e9) <= FCP_BUDGET_MS and (slow or 1e9) <= SLOW_3G_FCP_BUDGET_MS
                and load["bytes"] <= PAGE_BYTES_BUDGET and not any(o or c for o, c, _ in faults))
        ok &= good
        cells = [f"{o}/{c}（{n} 图）" for o, c, n in faults]
        print(_row((name, f"{(load['fcp_ms'] or float('nan')) / 1000:.2f}", f"{(slow or float('nan')) / 1000:.2f}",
                    f"{load['bytes'] / 1e6:.2f}", f"{load.get('transfer', 0) / 1e6:.2f}", load["requests"],
                    *cells, "✓" if good else "✗"), w))
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
