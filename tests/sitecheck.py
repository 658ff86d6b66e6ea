"""网站测试共用的小工具：找到构建好的网站、列出页面、解析外部引用。"""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("SEQLAB_SITE", ROOT / "_build" / "html"))
PAGE_BUDGET_BYTES = int(1.5 * 2**20)


def require_site() -> Path:
    if not (HTML / "index.html").exists():
        raise AssertionError(f"没有找到构建好的网站 {HTML}：请先运行 make book")
    return HTML


def pages() -> list[Path]:
    """网站上的所有 HTML 页面（不含 _static 里的第三方文件）。"""
    return sorted(p for p in HTML.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def content_pages() -> list[Path]:
    """本书自己的页面：前言、各章节、附录（不含 Sphinx 生成的索引页和搜索页）。"""
    return [
        p for p in pages()
        if p.name not in {"genindex.html", "search.html"} and "http-equiv=\"Refresh\"" not in p.read_text(encoding="utf-8")[:200]
    ]


class ResourceParser(HTMLParser):
    """收集 <script src>、<link href>、<img src>、<iframe src> 的地址。"""

    ATTRS = {"script": "src", "link": "href", "img": "src", "iframe": "src"}

    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        want = self.ATTRS.get(tag)
        for name, value in attrs:
            if name == want and value:
                self.urls.append((tag, value))


def external_resources(path: Path) -> list[tuple[str, str]]:
    parser = ResourceParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return [(tag, url) for tag, url in parser.urls if url.startswith(("http:", "https:", "//", "ftp:"))]


# ---- 在浏览器里的测量（浏览器测试与 make bench 共用；参数都是 Playwright 的 page）----

AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PAGE_BYTES_BUDGET = 3 * 10**6  # 一个章节页面连同它加载的全部文件，不压缩
FCP_BUDGET_MS = 2500
# 模拟 4G：9 Mbit/s 下行、40 ms 往返延迟（Chromium 开发者工具的网络模拟）
NETWORK_4G = {"offline": False, "latency": 40, "downloadThroughput": 9e6 / 8, "uploadThroughput": 9e6 / 8}
# 模拟慢速 3G：与 Chromium 开发者工具的“Slow 3G”相同，400 kbit/s、2 s 往返延迟
NETWORK_SLOW_3G = {"offline": False, "latency": 2000, "downloadThroughput": 400e3 / 8, "uploadThroughput": 400e3 / 8}
SLOW_3G_FCP_BUDGET_MS = 8000
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}

# 每张图里每个文字元素的外框：标题、子图标题与其他注释、图例、色条、轴标题、刻度标签、控件标签。
# 同一组里的元素（图例的各项、色条的刻度）合成一个框。返回相互重叠的元素对和超出图或屏幕的元素，以及读不清的刻度
# （squashed：长度不到子图高度一半的色条，只有一个标签或标签小于 9 px 的对数轴）。
FIGURE_TEXT_BOXES = r"""() => {
  const out = [];
  const vw = document.documentElement.clientWidth;
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0.5 && r.height > 0.5 && s.visibility !== "hidden" && s.display !== "none" && Number(s.opacity) !== 0;
  };
  const boxOf = (el) => { const r = el.getBoundingClientRect(); return {x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; };
  document.querySelectorAll(".js-plotly-plot").forEach((gd, index) => {
    const items = [];
    const add = (kind, el) => { if (el && visible(el)) items.push({kind, text: (el.textContent || "").trim().slice(0, 40), ...boxOf(el)}); };
    gd.querySelectorAll(".g-gtitle .gtitle").forEach((e) => add("标题", e));
    gd.querySelectorAll(".annotation-text-g").forEach((e) => add("注释", e));
    gd.querySelectorAll("g.legend").forEach((e) => add("图例", e.querySelector(".bg") || e));
    gd.querySelectorAll("g.colorbar").forEach((e) => add("色条", e));
    gd.querySelectorAll("[class^='g-x'][class$='title'] text, [class^='g-y'][class$='title'] text").forEach((e) => add("轴标题", e));
    gd.querySelectorAll(".xaxislayer-above text, .yaxislayer-above text").forEach((e) => add("刻度", e));
    gd.querySelectorAll(".slider-container text, .updatemenu-container text").forEach((e) => add("控件", e));
    const fig = gd.closest(".seqlab-figure") || gd;
    fig.querySelectorAll(".seqlab-control label, .seqlab-control output, .seqlab-control select, .seqlab-control input")
      .forEach((e) => add("控件", e));
    const frame = boxOf(fig);
    const overlaps = [], cut = [];
    const tol = 1.5;
    items.forEach((a, i) => {
      if (a.x0 < Math.max(0, frame.x0) - tol || a.x1 > Math.min(vw, frame.x1) + tol || a.y0 < frame.y0 - tol || a.y1 > frame.y1 + tol)
        cut.push(`${a.kind}「${a.text}」`);
      for (const b of items.slice(i + 1)) {
        const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
        if (w > tol && h > tol) overlaps.push(`${a.kind}「${a.text}」×${b.kind}「${b.text}」`);
      }
    });
    // 色条的长度：占它那个子图高度的比例（竖的色条）。被压扁的色条（长度按像素而不是比例算）只有一两个像素长，
    // 刻度标签挤成一团却未必重叠（它们被一起算成一个框）：单独查，至少要有子图高度的一半。
    const squashed = [];
    const full = gd._fullLayout;
    (gd._fullData || []).forEach((t) => {
      if (!t.colorbar || t.showscale === false || !full) return;
      const cb = gd.querySelector(`g.cb${t.uid}`);
      const fill = cb && (cb.querySelector(".cbfills") || cb.querySelector(".cbbg"));
      if (!fill || !visible(cb)) return;
      const yaxis = full[(t.yaxis || "y").replace("y", "yaxis")];
      const domain = yaxis ? yaxis.domain : [0, 1];
      const panel = (domain[1] - domain[0]) * full._size.h;
      const length = t.colorbar.orientation === "h" ? fill.getBoundingClientRect().width : fill.getBoundingClientRect().height;
      const fraction = length / (t.colorbar.orientation === "h" ? full._size.w : panel);
      if (!(fraction >= 0.5)) squashed.push(`色条「${t.name || t.type}」只有子图的 ${fraction.toFixed(3)}`);
    });
    // 对数轴：至少两个刻度标签（只有一个时读不出刻度），标签不小于 9 px（plotly 给 2、5 倍写的小号标签没有单位）
    Object.keys(full || {}).filter((k) => /^[xy]axis\d*$/.test(k) && full[k].type === "log" && full[k].visible !== false).forEach((k) => {
      const labels = [...gd.querySelectorAll(`.${k.replace("axis", "")}tick text`)].filter(visible);
      if (labels.length && labels.length < 2) squashed.push(`对数轴 ${k} 只有 1 个刻度标签「${labels[0].textContent}」`);
      const tiny = labels.filter((t) => parseFloat(getComputedStyle(t).fontSize) < 9).map((t) => t.textContent);
      if (tiny.length) squashed.push(`对数轴 ${k} 的刻度标签太小：${tiny.join("、")}`);
    });
    out.push({index, items: items.length, overlaps, cut, squashed, width: frame.x1 - frame.x0});
  });
  return out;
}"""

TAB_STOPS = """() => [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
  .filter(e => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden').length"""


# 图在快要滚进屏幕时才加载、才画：像读者一样把每张图依次滚到眼前，最后回到页首。
SCROLL_THROUGH_FIGURES = """async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  for (const f of document.querySelectorAll('.seqlab-figure')) { f.scrollIntoView({block: 'center'}); await frame(); }
  window.scrollTo(0, 0);
  await frame();
}"""


def wait_for_figures(page, timeout=60000) -> int:
    """把每张图滚到眼前，等它们都画好（并按宽度调整完）；返回图的数目。"""
    n = page.evaluate("document.querySelectorAll('.plotly-graph-div').length")
    if n:
        page.evaluate(SCROLL_THROUGH_FIGURES)
        page.wait_for_function(
            "[...document.querySelectorAll('.plotly-graph-div')].every(g => g._fullLayout && g.querySelector('.main-svg'))"
            " && (!document.querySelector('script.seqlab-figure-spec') || document.documentElement.dataset.seqlabFigures === 'ready')",
            timeout=timeout,
        )
        page.wait_for_timeout(300)
    return n


def run_axe(page) -> list[dict]:
    """注入 npm 的 axe-core，返回严重（serious）与致命（critical）的违规：规则、影响、个数、第一个元素。"""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_JS))
    result = page.evaluate("""() => axe.run(document, {resultTypes: ['violations']})""")
    return [
        {"id": v["id"], "impact": v["impact"], "count": len(v["nodes"]), "example": v["nodes"][0]["target"] if v["nodes"] else ""}
        for v in result["violations"] if v["impact"] in ("serious", "critical")
    ]


def cold_load(browser, url: str, *, network=NETWORK_4G, device=PHONE, scroll_through=False) -> dict:
    """冷缓存、模拟网络下打开一页：首次内容绘制（ms）、这一页下载的全部字节（``bytes``，解压后）与实际传输的字节
    （``transfer``，服务器发压缩版时更少）。

    ``scroll_through``：之后再把每张图滚到眼前，等它们画好，``bytes_scrolled`` 是这时的总字节数。"""
    context = browser.new_context(**device)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send("Network.emulateNetworkConditions", network)
    sizes: dict[str, int] = {}
    cdp.on("Network.dataReceived", lambda e: sizes.__setitem__(e["requestId"], sizes.get(e["requestId"], 0) + e["dataLength"]))
    sent: dict[str, float] = {}
    cdp.on("Network.loadingFinished", lambda e: sent.__setitem__(e["requestId"], e["encodedDataLength"]))
    try:
        page.goto(url, wait_until="load", timeout=180000)
        page.wait_for_load_state("networkidle", timeout=180000)
        fcp = page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null")
        load = {"fcp_ms": fcp, "bytes": sum(sizes.values()), "transfer": sum(sent.values()), "requests": len(sizes)}
        if scroll_through:
            wait_for_figures(page, timeout=180000)
            page.wait_for_load_state("networkidle", timeout=180000)
            load["bytes_scrolled"] = sum(sizes.values())
        return load
    finally:
        context.close()


# 网页实时面：打开第 index 张图的“实时计算”开关（已经打开就不再开），把它的第 k 个滑块或下拉菜单依次拨到 fractions 里的
# 每个位置（0 是最左或第一项、1 是最右或最后一项；与读者操作时一样触发 input 或 change 事件），等每次更新画完；返回这次打开开关时
# 下载的字节数（已经打开时是 0）、这个控件的名字、控件的个数、每次更新从读入控件到图画完的毫秒数，以及其中计算（检查输入、
# 算出状态与新图）的毫秒数。
LIVE_SWEEP = """async ([index, fractions, k]) => {
  const f = window.seqlabFigures[index];
  let loaded = 0;
  if (!f.live) {
    const before = performance.getEntriesByType('resource').length;
    f.root.querySelector('.seqlab-live-switch').click();
    while (!f.live) await new Promise((r) => setTimeout(r, 20));
    loaded = performance.getEntriesByType('resource').slice(before).reduce((n, e) => n + (e.decodedBodySize || 0), 0);
  }
  const controls = f.root.querySelectorAll('.seqlab-live-control input[type=range], .seqlab-live-control select, .seqlab-live-control input[list]');
  const control = controls[k];
  const first = f.live.timings.length;
  for (const fraction of fractions) {
    const n = f.live.timings.length;
    f.live.message.classList.remove('seqlab-live-error');  // 有的取值是坏输入（只显示消息、不计时）：等到消息标成错误为止
    if (control.type === 'range') {
      const [low, high, step] = [Number(control.min), Number(control.max), Number(control.step) || 1];
      control.value = String(low + Math.round((fraction * (high - low)) / step) * step);
      control.dispatchEvent(new Event('input', {bubbles: true}));
    } else if (control.list) {  // 带候选项的文本框（可以自己输入的下拉框）：换成各个候选项
      control.value = control.list.options[Math.round(fraction * (control.list.options.length - 1))].value;
      control.dispatchEvent(new Event('change', {bubbles: true}));
    } else {
      control.selectedIndex = Math.round(fraction * (control.options.length - 1));
      control.dispatchEvent(new Event('change', {bubbles: true}));
    }
    while (f.live.timings.length === n && !f.live.message.classList.contains('seqlab-live-error')) {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  return {loaded, label: control.labels[0]?.textContent ?? '', count: controls.length,
          timings: f.live.timings.slice(first), compute: f.live.computeTimings.slice(first)};
}"""
LIVE_FIGURES = "[...document.querySelectorAll('.seqlab-figure')].flatMap((f, i) => f.querySelector('.seqlab-live-switch') ? [i] : [])"
