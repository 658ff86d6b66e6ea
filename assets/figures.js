/* 网页上的交互图（静态探索器）。本脚本延迟加载：正文和公式先出现，图随后画出。
 *
 * 每张图在页面里是一个 <figure class="seqlab-figure">：简短的中文文字说明、控件的位置、空的
 * plotly-graph-div，以及图的数据（数据、版面、控件，由 seqlab.figures.figure_html 写出；构建网站时
 * 搬进 _static/seqlab/figures/ 里的小文件，页面上只留地址）。本脚本
 *   0. 在一张图快要滚进屏幕时才加载 plotly.js（全站一份）和这张图的数据；
 *   1. 画图，并把 plotly 的滑块与下拉菜单换成网页自己的 <input type="range"> 与 <select>：
 *      鼠标、手指、键盘（Tab 找到、方向键拨动）都能用，读屏软件读出中文标签与当前值；
 *      拨动时执行与 plotly 滑块完全相同的 Plotly.update / restyle / relayout 调用；
 *   2. 按图的实际宽度调整版面（打开页面时和每次改变大小时）：刻度不挤在一起；窄屏上并排的子图
 *      上下叠放、图例移到图下、标题折行、色条贴着自己的子图；
 *   3. 工具栏只留几个按钮，不在 Tab 顺序里；在触屏上默认隐藏，点“工具”按钮才出现；
 *   4. 有网页实时面的探索器（图的 layout.meta.live 是它的名字）在图上方放一个“实时计算”开关：打开时才加载
 *      live/page.mjs（ES 模块）、这个探索器的计算代码和数据，图改由浏览器从读者的输入算出；关上就回到静态面。
 */
(() => {
  "use strict";

  const NARROW_PX = 640; // 图的宽度小于它时用窄版面
  const MIN_TICK_GAP_PX = { x: 56, y: 24 }; // 相邻刻度标签至少相隔这么远
  const ROOM_L = 60; // 窄屏上绘图区左边大约留出的宽度（边距加纵轴刻度）
  // 图离屏幕还有这么远时就开始加载 plotly.js 与这张图的数据：读者滚到时它多半已经画好了
  const AHEAD = "1200px 0px";
  const here = document.currentScript ? document.currentScript.src : location.href;
  const PLOTLY_SRC = new URL("plotly-cartesian.min.js", here).href;
  const LIVE_SRC = new URL("live/page.mjs", here).href;

  /** 插入一个 <script>（从本地磁盘 file:// 打开网站时也能用）；同一个地址只加载一次。 */
  const scripts = new Map();
  function loadScript(src) {
    if (!scripts.has(src)) {
      scripts.set(src, new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = src;
        s.async = true;
        s.onload = resolve;
        s.onerror = () => reject(new Error(`加载 ${src} 失败`));
        document.head.append(s);
      }));
    }
    return scripts.get(src);
  }

  let plotlyReady = null;
  /** plotly.js（全站共用的一份）：第一张图需要它时才加载，并注册中文界面。 */
  function plotly() {
    if (!plotlyReady) plotlyReady = (window.Plotly ? Promise.resolve() : loadScript(PLOTLY_SRC)).then(registerLocale);
    return plotlyReady;
  }

  // 每张图的数据文件调用 seqlabFigureData(键, 数据)
  const figureData = new Map();
  const waiting = new Map();
  window.seqlabFigureData = (key, spec) => {
    figureData.set(key, spec);
    if (waiting.has(key)) waiting.get(key)(spec);
  };
  function loadSpec(script) {
    if (!script.dataset.src) return Promise.resolve(JSON.parse(script.textContent));
    const key = script.dataset.key;
    if (figureData.has(key)) return Promise.resolve(figureData.get(key));
    const arrived = new Promise((resolve) => waiting.set(key, resolve));
    return loadScript(new URL(script.dataset.src, location.href).href).then(() => arrived);
  }

  function registerLocale() {
  Plotly.register({
    moduleType: "locale",
    name: "zh-CN",
    dictionary: {
      "Download plot as a PNG": "下载为 PNG 图片",
      "Download plot as a png": "下载为 PNG 图片",
      "Download plot": "下载图片",
      Zoom: "框选放大",
      Pan: "平移",
      "Reset axes": "复原坐标轴",
      Autoscale: "自动缩放",
      "Double-click to zoom back out": "双击复原",
      "Taking snapshot - this may take a few seconds": "正在生成图片……",
      "Snapshot succeeded": "图片已生成",
      "Sorry, there was a problem downloading your snapshot!": "抱歉，生成图片时出了问题",
      trace: "轨迹",
    },
  });
  }

  // ---- 小工具：按 "a.b[2].c" 这样的路径读写嵌套对象 ----
  const parts = (path) => path.replace(/\[(\d+)\]/g, ".$1").split(".");
  function getPath(obj, path) {
    let cur = obj;
    for (const key of parts(path)) {
      if (cur == null) return undefined;
      cur = cur[key];
    }
    return cur;
  }
  function setPath(obj, path, value) {
    const keys = parts(path);
    let cur = obj;
    keys.slice(0, -1).forEach((key, i) => {
      if (cur[key] == null) cur[key] = /^\d+$/.test(keys[i + 1]) ? [] : {};
      cur = cur[key];
    });
    cur[keys[keys.length - 1]] = value;
  }
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const clone = (x) => (x === undefined ? undefined : JSON.parse(JSON.stringify(x)));
  const titleText = (t) => (t == null ? "" : typeof t === "string" ? t : t.text || "");

  /** 估计一行文字的像素宽度：汉字约一个字号宽，拉丁字母与数字约半个。 */
  function textWidth(text, size) {
    let w = 0;
    for (const ch of text.replace(/<[^>]+>/g, "")) w += /[\u2e80-\uffff]/.test(ch) ? size : 0.58 * size;
    return w;
  }

  /** 把标题折成每行不超过 maxPx 的几行（在空格、标点后或任意汉字之间断开；<span …> 这样的标签整个保留，不从中间断开）。 */
  function wrapTitle(text, size, maxPx) {
    const lines = [];
    for (const paragraph of text.split(/<br\s*\/?>/i)) {
      let line = "";
      const tokens = paragraph.match(/<[^>]+>|[A-Za-z0-9_.,:;=+\-−×·/()（）%]+\s*|\s+|./gu) || [];
      for (const token of tokens) {
        if (line && textWidth(line + token, size) > maxPx) {
          lines.push(line.trimEnd());
          line = token.trimStart();
        } else {
          line += token;
        }
      }
      if (line.trim()) lines.push(line.trimEnd());
    }
    return lines;
  }

  // ---- 版面随宽度调整 ----

  /** 图里的每个子图：x、y 两根轴的名字与它们的定义域。 */
  function subplots(layout, data) {
    const seen = new Map();
    for (const trace of data) {
      const x = (trace.xaxis || "x").replace("x", "xaxis");
      const y = (trace.yaxis || "y").replace("y", "yaxis");
      if (!seen.has(x + y)) seen.set(x + y, { x, y });
    }
    return [...seen.values()].map((s) => ({
      ...s,
      xd: (layout[s.x] && layout[s.x].domain) || [0, 1],
      yd: (layout[s.y] && layout[s.y].domain) || [0, 1],
    }));
  }

  /**
   * 给定“宽版面”（Python 写出的那份）和图的宽度，返回要改的属性：
   * ``{layout: {路径: 值}, traces: {轨迹序号: {路径: 值}}, height}``。纯函数：只看参数。
   */
  function adapt(layout, data, width) {
    const patch = { layout: {}, traces: {}, height: layout.height || 450 };
    const set = (path, value) => { patch.layout[path] = value; };
    const narrow = width < NARROW_PX;
    const margin = layout.margin || {};
    let height = layout.height || 450;
    const panels = subplots(layout, data);
    let grid = null; // 窄屏上叠放后的子图：每个子图新的 y 定义域

    if (narrow) {
      set("font.size", 12);
      set("margin.l", Math.min(margin.l ?? 60, 48));
      set("margin.r", Math.min(margin.r ?? 30, 16));
      const columns = [...new Set(panels.map((p) => p.xd.join()))];
      if (panels.length > 1 && columns.length > 1) {
        // 并排的子图改成上下叠放：从上到下、从左到右
        const order = [...panels].sort((a, b) => b.yd[1] - a.yd[1] || a.xd[0] - b.xd[0]);
        const n = order.length;
        const panelPx = 230;
        const gapPx = 110;
        const plotPx = n * panelPx + (n - 1) * gapPx;
        const top = margin.t ?? 60;
        const bottom = margin.b ?? 50;
        height = plotPx + top + bottom;
        grid = new Map();
        order.forEach((p, i) => {
          const y1 = 1 - (i * (panelPx + gapPx)) / plotPx;
          const y0 = y1 - panelPx / plotPx;
          grid.set(p, [Math.max(0, y0), Math.min(1, y1)]);
          set(`${p.x}.domain`, [0, 1]);
          set(`${p.y}.domain`, grid.get(p));
        });
        // 子图标题（make_subplots 写成纸面坐标的注释）跟着各自的子图走
        (layout.annotations || []).forEach((a, i) => {
          if (a.xref !== "paper" || a.yref !== "paper") return;
          const owner = panels.find((p) => Math.abs((p.xd[0] + p.xd[1]) / 2 - a.x) < 0.03 && Math.abs(p.yd[1] - a.y) < 0.05);
          if (!owner) return;
          set(`annotations[${i}].x`, 0.5);
          set(`annotations[${i}].y`, grid.get(owner)[1]);
          set(`annotations[${i}].yshift`, 10);
          // 居中在绘图区上方：绘图区左边的边距（纵轴刻度）比右边宽，所以两边各按左边距留空
          set(`annotations[${i}].text`, wrapTitle(a.text || "", 12, width - 2 * ROOM_L).join("<br>"));
          set(`annotations[${i}].font.size`, 12);
        });
      }
      // 纸面坐标的注释（子图标题、说明）太长时折行；子图标题与刻度之间留出空隙
      (layout.annotations || []).forEach((a, i) => {
        if (a.xref !== "paper" || !a.text || `annotations[${i}].text` in patch.layout) return;
        // 窄屏上说明文字不比标题大（标题是 14）
        const size = Math.min((a.font && a.font.size) || 12, 13);
        if (a.font && a.font.size > size) set(`annotations[${i}].font.size`, size);
        if (textWidth(a.text, size) > width - ROOM_L - 16) {  // 从绘图区左边起排，到图的右边为止
          set(`annotations[${i}].text`, wrapTitle(a.text, size, width - ROOM_L - 16).join("<br>"));
          set(`annotations[${i}].x`, 0);
          set(`annotations[${i}].xanchor`, "left");
          set(`annotations[${i}].align`, "left");
        }
        if (a.yref === "paper" && a.yanchor === "bottom" && panels.some((p) => Math.abs(p.yd[1] - a.y) < 0.02)) {
          set(`annotations[${i}].yshift`, 10);
        }
      });
      // 跟着数据的注释（带箭头的说明）最多占半个图宽
      (layout.annotations || []).forEach((a, i) => {
        if (a.xref === "paper" || !a.text) return;
        const size = (a.font && a.font.size) || 12;
        if (textWidth(a.text, size) > width / 2) set(`annotations[${i}].text`, wrapTitle(a.text, size, width / 2).join("<br>"));
      });
      // 轴标题太长时折行
      for (const key of Object.keys(layout)) {
        if (!/^[xy]axis\d*$/.test(key)) continue;
        const text = titleText(layout[key].title);
        const room = key.startsWith("x") ? width - 70 : 0.8 * height;
        if (text && textWidth(text, 12) > room) set(`${key}.title.text`, wrapTitle(text, 12, room).join("<br>"));
      }
      // 标题折行，放在最上面
      const title = titleText(layout.title);
      if (title) {
        const size = 14;
        const lines = wrapTitle(title, size, width - 24);
        set("title.text", lines.join("<br>"));
        set("title.font.size", size);
        set("title.x", 0.02);
        set("title.xanchor", "left");
        set("title.yref", "container");
        set("title.y", 1 - (8 + 0.9 * size) / height); // plotly 把多行标题的第一行画得偏高：留出一行的空
        set("title.yanchor", "top");
        set("title.pad.t", 8);
        // 标题下面留出它自己的几行，再加上最上面一排子图标题的位置
        // 最上面一排子图标题占的高度：行数 × 行高（按它们实际的字号）
        const topNotes = Math.max(0, ...(layout.annotations || []).map((a, i) => {
          if (!(a.yref === "paper" && a.y >= 0.98 && a.yanchor === "bottom")) return 0;
          const lines = String(patch.layout[`annotations[${i}].text`] ?? a.text ?? "").split("<br>").length;
          const size = patch.layout[`annotations[${i}].font.size`] ?? (a.font && a.font.size) ?? 12;
          return Math.ceil(lines * size * 1.4);
        }));
        const topAxis = Object.keys(layout).some((k) => /^xaxis\d*$/.test(k) && layout[k].side === "top");
        set("margin.t", 24 + Math.ceil(lines.length * size * 1.35) + (topNotes ? topNotes + 18 : 12) + (topAxis ? 56 : 0));
      }
      // 图例移到图的下方，横排
      const legendShown = layout.showlegend !== false && data.filter((t) => t.showlegend !== false && t.name).length > 1;
      if (legendShown) {
        set("legend.orientation", "h");
        set("legend.x", 0);
        set("legend.xanchor", "left");
        set("legend.yref", "container");
        set("legend.y", 0);
        set("legend.yanchor", "bottom");
        set("legend.font.size", 11);
      }
      // 色条竖着贴在自己的子图右边，细一些
      data.forEach((trace, i) => {
        if (trace.type !== "heatmap" || trace.showscale === false) return;
        const owner = panels.find((p) => p.x === (trace.xaxis || "x").replace("x", "xaxis") && p.y === (trace.yaxis || "y").replace("y", "yaxis"));
        const yd = grid && owner ? grid.get(owner) : owner ? owner.yd : [0, 1];
        patch.traces[i] = {
          "colorbar.thickness": 10,
          "colorbar.len": (yd[1] - yd[0]) * 0.95,
          "colorbar.lenmode": "fraction",
          "colorbar.y": (yd[0] + yd[1]) / 2,
          "colorbar.yanchor": "middle",
          "colorbar.x": 1.01,
          "colorbar.xanchor": "left",
          "colorbar.tickfont.size": 10,
          "colorbar.title.font.size": 11,
        };
      });
      // 标题与图例占去的高度不能把图挤没：绘图区至少留 200 像素
      const top = patch.layout["margin.t"] ?? margin.t ?? 60;
      const bottom = (margin.b ?? 50) + (legendShown ? 60 : 0);
      if (legendShown) set("margin.b", bottom);
      height = Math.max(height, top + bottom + (grid ? 0 : 200));
      if (height !== (layout.height || 450)) set("height", height);
    }

    // 宽屏上：标题与最上面一排子图标题之间多留一点空
    const topTitles = (layout.annotations || []).some((a) => a.yref === "paper" && a.y >= 0.98 && a.yanchor === "bottom");
    if (!narrow && titleText(layout.title) && topTitles) set("margin.t", (margin.t ?? 60) + 16);

    // 左下角：纵轴最下面的刻度标签有一半伸到横轴下面，横轴第一个标签（常是 0）又有一半伸到纵轴左边，
    // 两者会碰上：纵轴的标签离轴远一点（往左挪不影响图下方的轴标题与图例）
    for (const p of panels) {
      const ys = layout[p.y] || {};
      if (ys.showticklabels !== false && ys.ticklabelstandoff == null) set(`${p.y}.ticklabelstandoff`, 6);
    }

    // 刻度：每根轴按它的实际长度决定最多放几个标签；给定的标签（tickvals）按间隔抽取
    const plotWidth = width - (narrow ? 64 : (margin.l ?? 60) + (margin.r ?? 30));
    const plotHeight = height - (margin.t ?? 60) - (margin.b ?? 50);
    for (const p of panels) {
      for (const [axis, along, dom, gap] of [
        [p.x, plotWidth, p.xd, MIN_TICK_GAP_PX.x],
        [p.y, plotHeight, grid ? grid.get(p) : p.yd, MIN_TICK_GAP_PX.y],
      ]) {
        const spec = layout[axis] || {};
        if (patch.layout[`${axis}.tickvals`]) continue;
        const lengthPx = along * (narrow && axis.startsWith("x") ? 1 : dom[1] - dom[0]);
        const categories = data.categories[axis];
        const labels = spec.ticktext || spec.tickvals || categories;
        const size = narrow ? 10 : (spec.tickfont && spec.tickfont.size) || 12;
        if (narrow) {
          set(`${axis}.tickfont.size`, size);
          set(`${axis}.automargin`, true);
        }
        if (Array.isArray(labels) && labels.length > 1) {
          const widest = axis.startsWith("x") && !(spec.tickangle && Math.abs(spec.tickangle) >= 60)
            ? Math.max(...labels.map((l) => textWidth(String(l), size))) + 8 : size + 4;
          const room = Math.max(2, Math.floor(lengthPx / Math.max(widest, axis.startsWith("x") ? 0 : gap)));
          const ranged = data.ranges && data.ranges[axis];
          const numeric = Array.isArray(spec.tickvals) && spec.tickvals.every((v) => typeof v === "number");
          if (numeric && ranged && ["linear", "log"].includes(ranged.type) && ranged.range) {
            // 数值刻度（例如对数轴上的 256、300、400）：按它们在轴上的实际位置，挤在一起的留前一个
            const f = ranged.type === "log" ? (v) => Math.log10(v) : (v) => v;
            const [r0, r1] = ranged.range;
            const at = (v) => (lengthPx * (f(v) - r0)) / (r1 - r0 || 1);
            const kept = [];
            spec.tickvals.forEach((v, k) => {
              const need = axis.startsWith("x") ? (textWidth(String(labels[k]), size) + textWidth(String(labels[kept.at(-1)] ?? ""), size)) / 2 + 8 : gap;
              if (!kept.length || Math.abs(at(v) - at(spec.tickvals[kept.at(-1)])) >= need) kept.push(k);
            });
            if (kept.length < spec.tickvals.length) {
              set(`${axis}.tickvals`, kept.map((k) => spec.tickvals[k]));
              if (spec.ticktext) set(`${axis}.ticktext`, kept.map((k) => spec.ticktext[k]));
            }
          } else if (labels.length > room) {
            const every = Math.ceil(labels.length / room);
            const keep = (arr) => arr.filter((_, k) => k % every === 0);
            if (!spec.tickvals && !spec.ticktext) set(`${axis}.tickmode`, "array");
            set(`${axis}.tickvals`, keep(spec.tickvals || categories || labels.map((_, k) => k)));
            if (spec.ticktext) set(`${axis}.ticktext`, keep(spec.ticktext));
          }
        } else if (spec.type !== "category" && !(spec.tickmode === "array")) {
          const ranged = data.ranges && data.ranges[axis];
          const ticks = ranged && ranged.type === "log" && ranged.range ? logTicks(ranged.range, lengthPx, Math.max(gap, 40)) : null;
          if (ticks && ticks.every) {
            // 对数轴：范围里有两个以上整数量级时，每隔 every 个量级标一个（plotly 照常写成 10²、1M 等），短轴上也至少两个
            set(`${axis}.tickmode`, "linear");
            set(`${axis}.tick0`, 0);
            set(`${axis}.dtick`, ticks.every);
          } else if (ticks) {
            // 不到两个整数量级：标 1、2、5 倍，每个标签都是完整的数（“2M”而不是孤零零的“2”）
            set(`${axis}.tickmode`, "array");
            set(`${axis}.tickvals`, ticks.values);
          } else {
            // 对数轴上 plotly 在刻度多时会给 2、3、4…… 也标上数字：给它少一些，只标整数量级
            const spacing = spec.type === "log" ? Math.max(gap, 64) : gap;
            set(`${axis}.nticks`, Math.max(spec.type === "log" ? 2 : 3, Math.floor(lengthPx / spacing)));
          }
        }
      }
    }
    patch.height = height;
    return patch;
  }

  /**
   * 对数轴的刻度值：range 是 plotly 的范围（log10），lengthPx 是轴长，gap 是相邻标签至少相隔的像素。
   * 范围里有两个以上整数量级时返回 ``{every}``：每隔几个量级标一个，保证至少两个标签；不到两个时返回 ``{values}``：
   * 1、2、5 倍的刻度值，再不够就用 1 到 9 倍。都不行时返回 null（交给 plotly）。
   */
  function logTicks(range, lengthPx, gap) {
    const [lo, hi] = [Math.min(...range), Math.max(...range)];
    const room = Math.max(2, Math.floor(lengthPx / gap));
    const inside = (mantissas) => {
      const out = [];
      for (let e = Math.floor(lo) - 1; e <= Math.ceil(hi); e++) {
        for (const m of mantissas) {
          const v = m * 10 ** e;
          if (Math.log10(v) >= lo - 1e-9 && Math.log10(v) <= hi + 1e-9) out.push(Number(v.toPrecision(12)));
        }
      }
      return out;
    };
    const decades = inside([1]);
    if (decades.length >= 2) return { every: Math.max(1, Math.ceil((decades.length - 1) / (room - 1))) };
    for (const mantissas of [[1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
      const ticks = inside(mantissas);
      if (ticks.length >= 2) {
        // 位置按对数算：挤得太近的跳过
        const kept = [];
        for (const v of ticks) {
          if (!kept.length || (lengthPx * (Math.log10(v) - Math.log10(kept.at(-1)))) / (hi - lo || 1) >= gap) kept.push(v);
        }
        if (kept.length >= 2) return { values: kept };
      }
    }
    return null;
  }

  /** 每根类别轴上的类别（可见轨迹里作为坐标的字符串），例如 token 的列表。 */
  function categories(traces) {
    const out = {};
    for (const t of traces) {
      if (t.visible === false) continue;
      for (const [letter, values] of [["x", t.x], ["y", t.y]]) {
        if (!Array.isArray(values) || typeof values[0] !== "string") continue;
        const axis = (t[`${letter}axis`] || letter).replace(letter, `${letter}axis`);
        out[axis] = [...new Set([...(out[axis] || []), ...values])];
      }
    }
    return out;
  }

  // ---- 一张图 ----

  class BookFigure {
    constructor(script) {
      this.script = script;
      this.root = script.closest(".seqlab-figure");
      this.drawn = null;
    }

    /** 画这张图（只画一次）：先等 plotly.js 和这张图的数据。 */
    draw() {
      if (!this.drawn) this.drawn = Promise.all([plotly(), loadSpec(this.script)]).then(([, spec]) => this.plot(spec));
      return this.drawn;
    }

    async plot(spec) {
      this.spec = spec;
      this.gd = document.getElementById(this.spec.id);
      this.controls = this.spec.controls.map((c) => ({ ...c }));
      // “宽版面”：Python 写出的版面，随每一步的 relayout 一起更新。plotly 会改写 gd.layout 里的一些值
      // （例如等比例坐标轴的定义域），所以调整总是从这一份算起，而不是从 gd.layout。
      this.base = clone(this.spec.layout);
      this.traces = this.spec.data; // 正在显示的“宽版面”轨迹（实时面打开时换成它算出的图）
      this.applied = { layout: {}, traces: {} }; // 当前生效的调整：路径 → 值
      this.queue = Promise.resolve();
      this.width = 0;
      await Plotly.newPlot(this.gd, clone(this.spec.data), clone(this.spec.layout), this.spec.config);
      this.buildControls();
      this.buildToolbarToggle();
      const live = this.spec.layout.meta && this.spec.layout.meta.live;
      if (live) this.buildLiveSwitch(live);
      this.tidy();
      await this.fit();
      new ResizeObserver(() => {
        if (Math.abs(this.root.clientWidth - this.width) > 2) this.run(() => this.fit());
      }).observe(this.root);
      this.gd.addEventListener("plotly_afterplot", () => this.tidy());
    }

    run(task) {
      this.queue = this.queue.then(task).catch((err) => console.error(`图 ${this.spec.id} 的更新出错：`, err));
      return this.queue;
    }

    /** 按图现在的宽度，宽版面 this.base 与轨迹 traces 要做的调整（见 adapt）。 */
    adaptation(traces) {
      const data = traces.map((t) => ({
        type: t.type, xaxis: t.xaxis, yaxis: t.yaxis, name: t.name, showlegend: t.showlegend, showscale: t.showscale,
      }));
      data.categories = categories(traces);
      // 数值轴的实际范围（按位置抽取刻度用）：plotly 自动算出的那份
      data.ranges = {};
      for (const key of Object.keys(this.gd._fullLayout)) {
        const ax = this.gd._fullLayout[key];
        if (/^[xy]axis\d*$/.test(key) && ax && ax.range) data.ranges[key] = { type: ax.type, range: [...ax.range] };
      }
      return adapt(this.base, data, this.width);
    }

    async fit() {
      if (this.root.clientWidth < 120) return; // 图在折叠的块里，还看不见：展开时 ResizeObserver 会再调用
      this.width = this.root.clientWidth;
      const patch = this.adaptation(this.gd.data);
      const relayout = {};
      for (const path of Object.keys(this.applied.layout)) {
        if (!(path in patch.layout)) relayout[path] = getPath(this.base, path) ?? null;
      }
      Object.assign(relayout, patch.layout);
      this.applied.layout = clone(patch.layout);
      this.gd.style.height = `${patch.height}px`;
      await this.restyleTraces(patch.traces);
      await Plotly.relayout(this.gd, relayout);
    }

    async restyleTraces(traces) {
      const byPath = {};
      const indices = new Set([...Object.keys(traces), ...Object.keys(this.applied.traces)].map(Number));
      for (const i of indices) {
        const want = traces[i] || {};
        for (const path of new Set([...Object.keys(want), ...Object.keys(this.applied.traces[i] || {})])) {
          const value = path in want ? want[path] : getPath(this.traces[i], path) ?? null;
          (byPath[path] = byPath[path] || { values: [], idx: [] }).values.push(value);
          byPath[path].idx.push(i);
        }
      }
      this.applied.traces = clone(traces);
      // 同一组轨迹的属性放进同一次 restyle：分开调用时，plotly 在 colorbar.len 与 colorbar.lenmode 之间重算一次，
      // 把手机上的色条长度（图高的比例）当成了像素
      const byTraces = {};
      for (const [path, { values, idx }] of Object.entries(byPath)) {
        const group = (byTraces[idx.join(",")] = byTraces[idx.join(",")] || { update: {}, idx });
        group.update[path] = values;
      }
      for (const { update, idx } of Object.values(byTraces)) {
        await Plotly.restyle(this.gd, update, idx);
      }
    }

    /**
     * 换上一张新的宽版面的图（轨迹 traces 与版面 layout）：先按宽度调整好，再一次画出（Plotly.react），
     * 不再分几步重画。轨迹里的大数组不复制，调整要改的那几个属性才复制一份。
     */
    async show(traces, layout) {
      this.traces = traces;
      this.base = clone(layout);
      this.width = this.root.clientWidth || this.width;
      const patch = this.adaptation(traces);
      const drawn = clone(layout);
      for (const [path, value] of Object.entries(patch.layout)) setPath(drawn, path, value);
      const data = traces.map((trace, i) => {
        const paths = patch.traces[i];
        if (!paths) return trace;
        const copy = { ...trace };
        for (const [path, value] of Object.entries(paths)) {
          const top = parts(path)[0];
          if (copy[top] === trace[top]) copy[top] = clone(trace[top]);
          setPath(copy, path, value);
        }
        return copy;
      });
      this.applied = { layout: clone(patch.layout), traces: clone(patch.traces) };
      this.gd.style.height = `${patch.height}px`;
      await Plotly.react(this.gd, data, this.keptMargins(drawn), this.spec.config);
      this.marginWidth = this.width;
    }

    /**
     * 坐标轴的 automargin 让 plotly.js 先按给定边距画一遍、量出刻度标签要多宽，再按量出的边距重画一遍；每次
     * Plotly.react 都从给定边距重新开始，所以实时面的每次更新都要画两遍。同一宽度下，把上一次画好的边距作为这一次的起点
     * （与 JupyterLab 里的实时面相同，见 seqlab/explorers/plotview.py），标签放得下时就只画一遍；放不下时 automargin
     * 照样把边距撑大。宽度变了（例如手机转了方向）就从给定边距重新开始。
     */
    keptMargins(layout) {
      const size = this.gd._fullLayout && this.gd._fullLayout._size;
      if (!size || this.marginWidth !== this.width) return layout;
      const given = layout.margin || {};
      const margin = { ...given };
      for (const side of ["l", "r", "t", "b"]) margin[side] = Math.max(size[side], given[side] ?? 0);
      return { ...layout, margin };
    }

    /** 回到静态面：预先算好的图，停在各个控件当前选中的那一步。先记下每个控件选中的步：重放下拉菜单的一步
     * 可能把别的控件拨回第 1 步（例如换例句时，那一句的“解码步”滑块），重放到它时要拨回读者原来选的那一步。 */
    async showStatic() {
      await this.show(this.spec.data, this.spec.layout);
      const chosen = this.controls.map((control) => control.active);
      for (const [i, control] of this.controls.entries()) {
        control.active = chosen[i];
        if (control.visible !== false) await this.applyStep(control.steps[control.active]);
      }
      await this.fit();
    }

    /**
     * “实时计算”开关（role="switch"，默认关）。打开时才加载 live/page.mjs 与这个探索器的计算代码和数据；
     * 加载失败（从本地磁盘打开网页、文件缺失）时开关停用，并用中文说明原因，静态面照常可用。
     */
    buildLiveSwitch(name) {
      const row = document.createElement("div");
      row.className = "seqlab-live-row";
      const button = document.createElement("button");
      button.type = "button";
      button.className = "seqlab-live-switch";
      button.setAttribute("role", "switch");
      button.setAttribute("aria-checked", "false");
      button.id = `${this.spec.id}-live`;
      button.textContent = "实时计算";
      const note = document.createElement("span");
      note.className = "seqlab-live-note";
      note.id = `${this.spec.id}-live-note`;
      note.textContent = "关：在预先算好的状态之间切换";
      button.setAttribute("aria-describedby", note.id);
      button.addEventListener("click", () => this.run(async () => {
        const on = button.getAttribute("aria-checked") !== "true";
        if (on) {
          try {
            const page = await import(LIVE_SRC);
            this.live = await page.attach(this, name);
          } catch (err) {
            button.disabled = true;
            note.textContent = location.protocol === "file:"
              ? "实时计算不可用：直接从磁盘打开的网页（file://）不能加载计算代码。请通过网页服务器打开本书（例如在网站的文件夹里运行 python3 -m http.server），图仍可在预先算好的状态之间切换。"
              : `实时计算不可用：计算代码或数据没有加载成功（${err.message}）。图仍可在预先算好的状态之间切换。`;
            console.warn(`图 ${this.spec.id} 的实时计算加载失败：`, err);
            return;
          }
        } else {
          this.live.detach();
          this.live = null;
          await this.showStatic();
        }
        this.root.classList.toggle("seqlab-live-on", on);
        button.setAttribute("aria-checked", String(on));
        note.textContent = on ? "开：在浏览器里由你的输入算出" : "关：在预先算好的状态之间切换";
      }));
      row.append(button, note);
      this.root.querySelector(".seqlab-controls").before(row);
    }

    /** 执行一步的 plotly 调用；其中针对滑块、下拉菜单本身的设置改由网页控件执行。 */
    async applyStep(step) {
      const args = clone(step.args) || [];
      const layoutArg = step.method === "update" ? args[1] : step.method === "relayout" ? args[0] : null;
      if (layoutArg) {
        for (const key of Object.keys(layoutArg)) {
          const m = key.match(/^((?:sliders|updatemenus)\[\d+\])\.(visible|active)$/);
          if (!m && !/^(sliders|updatemenus)/.test(key)) continue;
          if (m) {
            const control = this.controls.find((c) => c.origin === m[1]);
            if (control && m[2] === "visible") control.visible = layoutArg[key];
            if (control && m[2] === "active") control.active = layoutArg[key];
          }
          delete layoutArg[key];
        }
        for (const [key, value] of Object.entries(layoutArg)) {
          if (/[.[]/.test(key)) setPath(this.base, key, clone(value));
          else this.base[key] = clone(value);
        }
      }
      if (["update", "restyle", "relayout"].includes(step.method)) await Plotly[step.method](this.gd, ...args);
      this.syncControls();
    }

    choose(index, k) {
      const control = this.controls[index];
      control.active = k;
      this.syncControls();
      this.run(async () => {
        if (control.active !== k) return; // 已有更新的选择排在后面
        await this.applyStep(control.steps[k]);
        await this.fit();
      });
    }

    /**
     * 网页控件。同名的几个滑块若轮流出现（例如每个例句一个“解码步”滑块，换例句时换一个），
     * 合成一个控件：它在页面上的位置不变，键盘焦点不会落到一个突然藏起来的控件上；步数随当前那个滑块而变。
     */
    buildControls() {
      const box = this.root.querySelector(".seqlab-controls");
      const shared = new Map();
      this.controls.forEach((control, index) => {
        const key = control.kind === "range" ? `range:${control.label}` : `select:${index}`;
        if (shared.has(key)) {
          const first = shared.get(key);
          Object.assign(control, { input: first.input, row: first.row, output: first.output, group: first.group });
          first.group.push(control);
          return;
        }
        control.group = [control];
        shared.set(key, control);
        const id = `${this.spec.id}-control-${index}`;
        const row = document.createElement("div");
        row.className = "seqlab-control";
        const label = document.createElement("label");
        label.htmlFor = id;
        label.textContent = control.label;
        let input;
        const current = () => control.group.find((c) => c.visible !== false) || control;
        if (control.kind === "range") {
          input = document.createElement("input");
          input.type = "range";
          input.min = 0;
          input.max = control.steps.length - 1;
          input.step = 1;
          const output = document.createElement("output");
          output.htmlFor = id;
          output.setAttribute("aria-hidden", "true");
          control.output = output;
          input.addEventListener("input", () => this.choose(this.controls.indexOf(current()), Number(input.value)));
          row.append(label, input, output);
        } else {
          input = document.createElement("select");
          control.steps.forEach((step, k) => input.add(new Option(step.label, String(k))));
          input.addEventListener("change", () => this.choose(index, Number(input.value)));
          row.append(label, input);
        }
        input.id = id;
        input.className = "seqlab-input";
        control.input = input;
        control.row = row;
        box.append(row);
      });
      this.syncControls();
    }

    syncControls() {
      for (const first of this.controls) {
        if (!first.input || first.group[0] !== first) continue;
        const control = first.group.find((c) => c.visible !== false);
        first.row.hidden = !control;
        if (!control) continue;
        if (control.kind === "range") {
          first.input.max = control.steps.length - 1;
          const text = `${control.prefix || ""}${control.steps[control.active].label}${control.suffix || ""}`.trim();
          first.input.setAttribute("aria-valuetext", text);
          first.output.textContent = text;
        }
        first.input.value = String(control.active);
      }
    }

    /** 工具栏：不进 Tab 顺序；触屏上默认隐藏，由图上方的“工具”按钮打开。 */
    buildToolbarToggle() {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "seqlab-toolbar-toggle";
      button.textContent = "工具";
      button.setAttribute("aria-expanded", "false");
      button.setAttribute("aria-label", "显示图的工具栏（存为图片、缩放、平移、复原）");
      button.addEventListener("click", () => {
        const open = this.root.classList.toggle("seqlab-toolbar-open");
        button.setAttribute("aria-expanded", String(open));
        this.tidy();
        if (open) {
          const first = this.gd.querySelector(".modebar-btn");
          if (first) first.focus();
        }
      });
      this.root.querySelector(".seqlab-controls").prepend(button);
    }

    /** 每次重画后：SVG 里的文字不给读屏软件（图的意思由文字说明给出），工具栏按钮按需进出 Tab 顺序。 */
    tidy() {
      const open = this.root.classList.contains("seqlab-toolbar-open");
      for (const svg of this.gd.querySelectorAll(".main-svg")) svg.setAttribute("aria-hidden", "true");
      for (const btn of this.gd.querySelectorAll(".modebar-btn")) {
        btn.setAttribute("tabindex", open ? "0" : "-1");
        btn.setAttribute("role", "button");
        const title = btn.getAttribute("data-title");
        if (title) btn.setAttribute("aria-label", title);
      }
    }
  }

  if (navigator.maxTouchPoints > 0 || matchMedia("(hover: none)").matches) document.documentElement.classList.add("seqlab-touch");

  const figures = [...document.querySelectorAll("script.seqlab-figure-spec")].map((s) => new BookFigure(s));
  window.seqlabFigures = figures;
  let settled = 0;
  const drawOne = (f) => f.draw().catch((err) => console.error("画图出错：", err)).finally(() => {
    settled += 1;
    if (settled === figures.length) document.documentElement.dataset.seqlabFigures = "ready";
  });
  const started = new Set();
  const start = (f) => { if (!started.has(f)) { started.add(f); drawOne(f); } };
  /** 把页面上的图全部画出来（打印或导出 PDF 之前用）；返回全部画好时兑现的 Promise。 */
  window.seqlabDrawAllFigures = () => Promise.all(figures.map((f) => { start(f); return f.draw().catch(() => {}); }));
  window.addEventListener("beforeprint", () => window.seqlabDrawAllFigures());
  if ("IntersectionObserver" in window) {
    // 图快要滚进屏幕时才加载 plotly.js 与图的数据：打开页面时只下载正文、公式和最前面的几张图
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        start(figures.find((f) => f.root === entry.target));
      }
    }, { rootMargin: AHEAD });
    figures.forEach((f) => observer.observe(f.root));
  } else {
    figures.forEach(start);
  }
})();
