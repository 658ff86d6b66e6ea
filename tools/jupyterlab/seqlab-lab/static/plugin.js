// 本书的 JupyterLab 插件：在 jupyterlab-myst 渲染完 Markdown 单元格之后，补上它不会的四件事。
//
// * glue：myst-nb 的 {glue:text}`名字:格式` 在 jupyterlab-myst 里是一个只含原样键名的 <span>。
//   这里按单元格源码里 {glue:text} 出现的顺序认出这些 <span>，换成代码单元格输出里粘贴的值
//   （输出的元数据 scrapbook.name 是名字），按 myst-nb 的规则套用冒号后的格式；值还没算出来时显示占位文字。
// * 参考文献：jupyterlab-myst 找不到 references.bib 里的条目，只显示键；这里换成“作者（年份）”
//   （{cite:t}）或“（作者，年份）”（{cite:p}），作者与年份由安装脚本从 references.bib 导出；
//   jupyterlab-myst 用样式表在 {cite:p} 两边加的半角括号和分隔符去掉（否则括号是双层的）。
// * 编号：jupyterlab-myst 把插图写成“Figure 1”、公式写成“(1)”，按笔记本从 1 数，不带标签的公式也编号；
//   这里按网站的编号写成“图 1.N.k”“(1.N.k)”（安装脚本按网站的规则算好，见 numbers.json），
//   不带标签的公式不显示编号，指向别的代码单元格插图或别一节公式的引用（jupyterlab-myst 找不到，显示标签名）也写成编号。
// * 练习：sphinx-exercise 的分段写法在 jupyterlab-myst 里是英文的“Start of Exercise 1”、按笔记本从 1 数；
//   这里按标签 ex-1-N-k 写成网站上的“练习 1.N.k”；结尾的 {exercise-end}/{solution-end} 在网站上什么也不显示，
//   jupyterlab-myst 却画成一个框，这里把它藏起来。
//
// 只改 jupyterlab-myst 画出的文字节点与属性，不删它的节点（它用 React 渲染，下次渲染会按自己的记录更新）。
// 笔记本面板上的 MutationObserver 发现变化（渲染、输出更新）后稍等片刻统一处理一遍；处理是幂等的。

import { glueText } from "./pyformat.js";

// 值还没算出来时的占位文字：粘贴它的代码单元格在上面还是在下面（按代码里的 glue("名字", …) 找）
const PENDING = { above: "〔运行上面的代码后显示〕", below: "〔运行下面的代码后显示〕" };
// 最后一条：拖动 ipywidgets 的滑块时，noUiSlider 在按下时把 <body> 的 cursor 设成手柄的样式，松开时再清掉。
// cursor 会被继承，而且不在浏览器“只改一个继承属性”的快速路径上：每改一次都要重算整页每个元素的样式
// （打开一节笔记本有两三万个元素，本机每次约 45 ms，一次拖动按下、松开各一次）。JupyterLab 的主界面自己写明
// cursor: auto（与 <body> 原来的值相同，看起来没有区别），重算就停在它这里。代价：拖动途中指针移出手柄时显示普通指针。
const STYLE = `
[data-seqlab-glue][data-seqlab-pending] { color: var(--jp-ui-font-color2); font-size: 0.9em; }
.cite-group[data-seqlab-cite] svg { display: none; }
.cite-group[data-seqlab-cite] .text-yellow-600 { color: inherit; }
.cite-group.cite-group[data-seqlab-cite]::before, .cite-group.cite-group[data-seqlab-cite]::after,
.cite-group.cite-group[data-seqlab-cite] > ::after { content: none; }
.myst-exercise[data-seqlab-end], [data-seqlab-unnumbered] { display: none !important; }
[data-seqlab-xref] { color: inherit; }
[data-seqlab-xref] svg { display: none; }
body > #main { cursor: auto; }
`;

export function makePlugin({ base, version }) {
  return {
    id: "seqlab-lab:plugin",
    description: "《从序列建模到 Transformer》：glue 的数值、参考文献、插图与公式编号、练习编号",
    autoStart: true,
    requires: [],
    activate(app) {
      const style = document.createElement("style");
      style.textContent = STYLE;
      document.head.appendChild(style);
      const state = { citations: null, numbers: null, panels: new Set() };
      for (const name of ["citations", "numbers"]) {
        fetch(base + (name === "citations" ? "references" : name) + ".json?v=" + version)
          .then(r => (r.ok ? r.json() : {}))
          .catch(() => ({}))
          .then(data => {
            // 标签不分大小写：jupyterlab-myst 与 Sphinx 都把它们换成小写（eq-1-2-X 的锚点是 #eq-1-2-x）
            state[name] = name === "numbers" ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k.toLowerCase(), v])) : data;
            state.panels.forEach(p => p.schedule());
          });
      }
      const seen = new WeakSet();
      const scan = () => {
        for (const widget of app.shell.widgets("main")) {
          if (!seen.has(widget) && isNotebookPanel(widget)) {
            seen.add(widget);
            watch(widget, state);
          }
        }
      };
      app.restored.then(scan);
      app.shell.layoutModified.connect(scan);
    }
  };
}

function isNotebookPanel(widget) {
  return widget && widget.content && widget.context && Array.isArray(widget.content.widgets)
    && typeof widget.content.node?.classList?.contains === "function" && widget.content.node.classList.contains("jp-Notebook");
}

function watch(panel, state) {
  let timer = 0;
  const entry = {
    schedule() {
      if (!timer) timer = setTimeout(() => { timer = 0; update(panel, state); }, 60);
    }
  };
  // 输出内部的变化（例如实时探索器拖动时 plotly 重画）与本插件无关，不必每次都处理一遍；
  // 输出的增删（粘贴了新值、清空输出）发生在 .jp-OutputArea 这一层，仍然会处理。
  const observer = new MutationObserver(records => {
    const inside = r => (r.target.nodeType === Node.ELEMENT_NODE ? r.target : r.target.parentElement)?.closest(".jp-OutputArea-output");
    if (!records.every(inside)) entry.schedule();
  });
  observer.observe(panel.content.node, { childList: true, subtree: true, characterData: true });
  state.panels.add(entry);
  panel.disposed.connect(() => { observer.disconnect(); state.panels.delete(entry); clearTimeout(timer); });
  // 输出模型的变化（运行了粘贴值的单元格）直接通知，不依赖它在页面上画出什么（只粘贴、不显示的输出什么也不画）
  const hooked = new WeakSet();
  const hook = cells => {
    for (const cell of cells) {
      if (cell.type === "code" && cell.outputs && !hooked.has(cell)) {
        hooked.add(cell);
        cell.outputs.changed.connect(entry.schedule);
      }
    }
  };
  panel.context.ready.then(() => {
    const cells = panel.content.model.cells;
    hook(cells);
    cells.changed.connect(() => { hook(cells); entry.schedule(); });
    entry.schedule();
  });
}

// 笔记本里粘贴的值：名字 → text/plain（后面的输出覆盖前面的，与重新运行一致）
function glueValues(notebook) {
  const values = new Map();
  for (const cell of notebook.widgets) {
    const outputs = cell.model.type === "code" ? cell.model.outputs : null;
    if (!outputs) continue;
    for (let i = 0; i < outputs.length; i++) {
      const out = outputs.get(i);
      const book = out.metadata && out.metadata.scrapbook;
      if (!book || !book.name) continue;
      const text = out.data[(book.mime_prefix || "") + "text/plain"];
      if (text !== undefined) values.set(book.name, Array.isArray(text) ? text.join("") : String(text));
    }
  }
  return values;
}

// “1.N”：章号取自文件夹 chNN，节号取自文件名开头的两位数字
function sectionNumber(panel) {
  const path = panel.context.path;
  const chapter = (path.match(/ch(\d+)\//) || [])[1];
  const section = (path.match(/(?:^|\/)(\d+)_[^/]*$/) || [])[1];
  return chapter && section ? `${Number(chapter)}.${Number(section)}` : null;
}

function update(panel, state) {
  const notebook = panel.content;
  if (!notebook.model) return;
  const values = glueValues(notebook);
  // 粘贴每个名字的代码单元格：glue("名字", …)，或循环里的 glue(f"前缀{…}", …)（花括号处可以是任何名字）
  const gluedAt = new Map(), patterns = [];
  notebook.widgets.forEach((cell, i) => {
    if (cell.model.type !== "code") return;
    for (const [, f, , name] of cell.model.sharedModel.getSource().matchAll(/\bglue\(\s*(f?)(["'])(.*?)\2/g)) {
      if (f) patterns.push([new RegExp("^" + name.replace(/\{[^}]*\}/g, "\\w+") + "$"), i]);
      else if (!gluedAt.has(name)) gluedAt.set(name, i);
    }
  });
  const where = name => (gluedAt.has(name) ? gluedAt.get(name) : patterns.find(([re]) => re.test(name))?.[1]);
  const ctx = { section: sectionNumber(panel), ordinal: 0, last: null, numbers: new Map() };
  for (const [index, cell] of notebook.widgets.entries()) {
    if (cell.model.type !== "markdown") continue;
    const root = cell.node.querySelector(".jp-MarkdownOutput .myst, .jp-RenderedMarkdown .myst, .myst");
    const source = cell.model.sharedModel.getSource();
    countExercises(source, ctx);
    if (!root || !cell.rendered) continue;
    fillGlue(root, source, values, name => (where(name) > index ? PENDING.below : PENDING.above));
    if (state.citations) fillCitations(root, state.citations);
    if (state.numbers) fillNumbers(root, state.numbers, source);
    fillExercises(root, ctx);
    fillExerciseRefs(root, ctx);
  }
}

// 只在值真的变了时才写：每写一次属性（哪怕写的是同一个值），浏览器都要重新计算样式；
// 拖动实时探索器的滑块时本插件也会被叫醒，什么都不该写。
function setText(node, text) {
  if (node.nodeValue !== text) node.nodeValue = text;
}

// value 为 null 时去掉这个属性
function setAttr(el, name, value) {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) {
    el.setAttribute(name, value);
  }
}

// ---------- glue ----------

function glueKeys(source) {
  return [...source.matchAll(/\{glue(?::text)?\}`([^`]+)`/g)].map(m => m[1]);
}

function fillGlue(root, source, values, pending) {
  const keys = new Set(glueKeys(source));
  if (!keys.size) return;
  for (const span of root.querySelectorAll("span:not([class])")) {
    const node = span.firstChild;
    if (span.childNodes.length !== 1 || node.nodeType !== Node.TEXT_NODE) continue;
    let key = null;
    if (keys.has(node.nodeValue)) key = node.nodeValue;  // jupyterlab-myst 刚画出的原样键名
    else if (span.dataset.seqlabGlue && node.nodeValue === span.dataset.seqlabShown) key = span.dataset.seqlabGlue;
    if (key === null) continue;
    const i = key.lastIndexOf(":");
    const [name, spec] = i < 0 ? [key, ""] : [key.slice(0, i), key.slice(i + 1)];
    let text = null;
    if (values.has(name)) {
      try { text = glueText(values.get(name), spec); } catch (e) { text = values.get(name); }
    }
    const shown = text === null ? pending(name) : text;
    setAttr(span, "data-seqlab-glue", key);
    setAttr(span, "data-seqlab-pending", text === null ? "" : null);
    setAttr(span, "title", text === null ? `运行粘贴 ${name} 的代码单元格后，这里显示它的值` : null);
    setAttr(span, "data-seqlab-shown", shown);
    setText(node, shown);
  }
}

// ---------- 参考文献 ----------

function fillCitations(root, citations) {
  for (const group of root.querySelectorAll(".cite-group")) {
    const narrative = group.classList.contains("narrative");
    const items = [...group.querySelectorAll(":scope > span")];
    items.forEach((item, i) => {
      const text = [...item.childNodes].find(n => n.nodeType === Node.TEXT_NODE);
      if (!text) return;
      const key = item.dataset.seqlabKey || text.nodeValue.trim();
      const ref = citations[key];
      if (!ref) return;
      setAttr(item, "data-seqlab-key", key);
      // 几条文献之间：括号里用分号，正文里用顿号（jupyterlab-myst 不在它们之间放任何文字）
      let shown = narrative ? `${ref.author}（${ref.year}）` : `${ref.author}，${ref.year}`;
      if (i < items.length - 1) shown += narrative ? "、" : "；";
      if (!narrative && i === 0) shown = "（" + shown;
      if (!narrative && i === items.length - 1) shown += "）";
      setText(text, shown);
      if (ref.title) setAttr(item, "title", ref.title);
    });
    setAttr(group, "data-seqlab-cite", "");
  }
}

// ---------- 插图与公式的编号 ----------

// jupyterlab-myst 画出的编号：图注前的“Figure 1:”、公式右边的“(1)”（两者的 title 是英文的“Link to this …”），
// 正文里的引用 {numref}/{eq}（class="hover-link"）；找不到目标的引用是一个显示标签名的黄色 <span>。
function fillNumbers(root, numbers, source) {
  for (const link of root.querySelectorAll("a[href^='#']")) {
    const label = link.getAttribute("href").slice(1).toLowerCase();
    const own = (link.getAttribute("title") || "").startsWith("Link to this") || link.dataset.seqlabNumber !== undefined;
    if (!own && !link.classList.contains("hover-link")) continue;
    const number = Object.hasOwn(numbers, label) ? numbers[label] : null;
    if (number === null) {
      // 网站只给带标签的公式编号；jupyterlab-myst 给不带标签的公式一个随机的锚点，源码里没有它
      const equation = /Equation/.test(link.getAttribute("title") || "") || link.dataset.seqlabUnnumbered !== undefined;
      if (equation && label && !source.toLowerCase().includes(`(${label})`)) setAttr(link, "data-seqlab-unnumbered", "");
      continue;
    }
    setAttr(link, "data-seqlab-number", "");
    replaceText(link, number);
    if (own) {
      const what = number.startsWith("图") ? number : `公式 ${number}`;
      setAttr(link, "title", `链接到${what}`);
      setAttr(link, "aria-label", `链接到${what}`);
    }
  }
  for (const span of root.querySelectorAll("span.text-yellow-600, [data-seqlab-xref]")) {
    const text = [...span.childNodes].find(n => n.nodeType === Node.TEXT_NODE);
    if (!text) continue;
    const label = span.dataset.seqlabXref || text.nodeValue.trim().toLowerCase();
    if (!Object.hasOwn(numbers, label)) continue;
    setAttr(span, "data-seqlab-xref", label);
    setAttr(span, "title", null);
    setText(text, numbers[label]);
  }
}

// ---------- 练习 ----------

// 按源码数出每道练习的序号（标签不是 ex-章-节-序号 时用它）
function countExercises(source, ctx) {
  for (const m of source.matchAll(/^`{3,}\{exercise(?:-start)?\}.*\n(?::\w+:.*\n)*?:label:\s*(\S+)/gm)) {
    ctx.ordinal += 1;
    if (!ctx.numbers.has(m[1])) ctx.numbers.set(m[1], ctx.ordinal);
  }
}

function exerciseNumber(label, ctx) {
  const m = /^ex-(\d+)-(\d+)-(\d+)$/.exec(label || "");
  if (m) return `${m[1]}.${m[2]}.${m[3]}`;
  const k = ctx.numbers.get(label);
  return ctx.section && k ? `${ctx.section}.${k}` : "";
}

function fillExercises(root, ctx) {
  for (const title of root.querySelectorAll(".myst-exercise-title")) {
    const box = title.closest(".myst-exercise");
    const link = title.querySelector("a[href^='#']");
    const label = link ? link.getAttribute("href").slice(1) : null;
    const solution = box.tagName === "DETAILS" || /Solution/.test(title.textContent);
    if (label && !solution) ctx.last = label;
    const number = exerciseNumber(label || ctx.last, ctx);
    const name = number ? `练习 ${number}` : "练习";
    if (solution && link) {
      // “Start of Solution to <a>Exercise 2</a>” → “练习 1.1.2 的参考答案”（React 把每段英文画成单独的文字节点）
      for (const n of title.childNodes) if (n.nodeType === Node.TEXT_NODE) setText(n, "");
      replaceText(link, name);
      if (!title.querySelector("[data-seqlab-suffix]")) {
        const suffix = document.createElement("span");
        suffix.dataset.seqlabSuffix = "";
        suffix.textContent = " 的参考答案";
        title.appendChild(suffix);
      }
    } else if (link) {
      // “Start of Exercise 2” / “Exercise 5” → “练习 1.1.2”，后面的“ (标题)”与网站一样保留
      replaceText(link, name);
      setAttr(link, "title", `链接到${name}`);
      setAttr(link, "aria-label", `链接到${name}`);
    } else if (/End of/.test(title.textContent) || !title.textContent.trim()) {
      // {exercise-end} 是“End of Exercise”框，{solution-end} 是标题为空的框：网站上两者都不显示任何东西
      setAttr(box, "data-seqlab-end", "");
    }
  }
}

// 正文里指向练习的 {ref}`ex-1-N-k`：jupyterlab-myst 写成“Exercise k”，这里写成“练习 1.N.k”
// （前面已经写了“练习”二字时只写编号）
function fillExerciseRefs(root, ctx) {
  for (const link of root.querySelectorAll("a[href^='#']")) {
    if (link.closest(".myst-exercise-title")) continue;
    if (link.dataset.seqlabRef === undefined && !/^\s*Exercise\s*\d+\s*$/.test(link.textContent)) continue;
    const number = exerciseNumber(link.getAttribute("href").slice(1), ctx);
    if (!number) continue;
    setAttr(link, "data-seqlab-ref", "");
    const before = textNodes(root).filter(n => n.compareDocumentPosition(link) & Node.DOCUMENT_POSITION_FOLLOWING && !link.contains(n)).at(-1);
    replaceText(link, before && /练习\s*$/.test(before.nodeValue) ? number : `练习 ${number}`);
  }
}

// 元素里第一个文字节点写成 text，其余文字节点清空
function replaceText(el, text) {
  const nodes = textNodes(el);
  if (!nodes.length) return void el.appendChild(document.createTextNode(text));
  nodes.forEach((n, i) => setText(n, i === 0 ? text : ""));
}

function textNodes(el) {
  const out = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) out.push(walker.currentNode);
  return out;
}
