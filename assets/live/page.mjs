/* 网页实时面的页面部分：读者打开“实时计算”开关时由 figures.js 加载（动态 import）。
 *
 * 读取这个探索器的说明（构建网站时 Python 写出的 <名字>.json：参数、常量、默认状态的图）和计算代码
 * （<名字>.mjs：state、figure、caption，以及可选的 load——打开时先准备一次，例如载入 wasm），由参数生成网页控件；每次输入都先检查（与 Python 面相同的中文消息），
 * 再算出状态、改出新图，交给图自己的 show() 按宽度调整后一次画出。坏输入只显示消息，图保持上一次的正常状态。 */
import { InputError } from "./errors.mjs";
import { checkAll } from "./params.mjs";

const HERE = new URL(".", import.meta.url);

async function loadJSON(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url.pathname.split("/").pop()}：HTTP ${response.status}`);
  return response.json();
}

/** 给 BookFigure 装上实时面；返回的对象有 detach()（关掉时调用）、timings（每次更新从读入控件到图画完的毫秒数）
 * 与 computeTimings（其中检查输入、算出状态与新图的毫秒数，其余是 plotly.js 重画）。 */
export async function attach(figure, name) {
  const [face, spec] = await Promise.all([import(new URL(`${name}.mjs`, HERE).href), loadJSON(new URL(`${name}.json`, HERE))]);
  await face.load?.(spec.data); // 需要先准备的（载入 wasm、建分词器）只在打开时做一次
  const live = new LiveFace(figure, face, spec);
  await live.start();
  return live;
}

class LiveFace {
  constructor(figure, face, spec) {
    this.figure = figure;
    this.face = face;
    this.spec = spec;
    this.timings = [];
    this.computeTimings = [];
    this.pending = null;
    this.box = document.createElement("div");
    this.box.className = "seqlab-live-controls";
    this.message = document.createElement("p");
    this.message.className = "seqlab-live-message";
    this.message.setAttribute("role", "status");
    this.message.id = `${figure.spec.id}-live-message`;
    this.inputs = spec.params.map((param) => this.control(param));
    figure.root.querySelector(".seqlab-controls").after(this.box, this.message);
  }

  async start() {
    await this.figure.show(this.spec.figure.data, this.spec.figure.layout);
    await this.figure.fit(); // 换了一套子图：按新图自己的坐标范围再调一次刻度
    this.say(this.spec.caption, true);
  }

  detach() {
    this.box.remove();
    this.message.remove();
  }

  /** 一个参数的网页控件：滑块、下拉菜单（按钮与下拉菜单的选项）、数字框或文本框（改完按回车或离开时更新）；
   * 可以自己输入的下拉框（combobox）是带候选项（<datalist>）的文本框：选中一个候选项立即更新，自己输入的改完才更新。 */
  control(param) {
    const id = `${this.figure.spec.id}-live-${param.name}`;
    const row = document.createElement("div");
    row.className = "seqlab-control seqlab-live-control";
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = param.label;
    let input;
    let read;
    if (param.options.length && param.widget !== "combobox") {
      input = document.createElement("select");
      param.options.forEach(([text, value], i) => {
        input.add(new Option(text, String(i), false, value === param.default));
      });
      read = () => param.options[Number(input.value)][1];
      input.addEventListener("change", () => this.update());
      row.append(label, input);
    } else if (param.widget === "slider") {
      input = document.createElement("input");
      Object.assign(input, { type: "range", min: param.low, max: param.high, step: param.step ?? 1, value: param.default });
      const output = document.createElement("output");
      output.htmlFor = id;
      output.setAttribute("aria-hidden", "true");
      output.textContent = input.value;
      read = () => Number(input.value);
      input.addEventListener("input", () => {
        output.textContent = input.value;
        input.setAttribute("aria-valuetext", `${param.label} = ${input.value}`);
        this.update();
      });
      row.append(label, input, output);
    } else {
      input = document.createElement("input");
      input.type = "text";
      if (param.widget === "number") input.inputMode = param.integer ? "numeric" : "decimal";
      input.value = String(param.default);
      if (param.width && param.widget !== "number") Object.assign(input.style, { width: param.width, maxWidth: "100%" }); // 句子要宽一些
      read = () => input.value;
      input.addEventListener("change", () => this.update());
      row.append(label, input);
      if (param.widget === "combobox") row.append(this.suggestions(input, `${id}-options`, param.options));
    }
    input.id = id;
    input.className = "seqlab-input";
    input.setAttribute("aria-describedby", this.message.id);
    this.box.append(row);
    return { param, read };
  }

  /** 文本框 input 的候选项：浏览器自己的下拉列表（键盘与读屏软件都能用）。选中一个候选项时浏览器发出的 input
   * 事件没有 inputType（或是 insertReplacementText），这时立即更新；逐字输入的等到改完（change）。 */
  suggestions(input, id, options) {
    const list = document.createElement("datalist");
    list.id = id;
    for (const [text, value] of options) list.append(new Option(text === value ? "" : text, value));
    input.setAttribute("list", id);
    input.addEventListener("input", (event) => {
      if (!event.inputType || event.inputType === "insertReplacementText") this.update();
    });
    return list;
  }

  say(text, ok) {
    this.message.textContent = text;
    this.message.classList.toggle("seqlab-live-error", !ok);
  }

  /** 读者改了一个控件：合并到下一帧里算一次（拖动滑块时不必每个像素都算）。 */
  update() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = null;
      this.figure.run(() => this.recompute());
    });
  }

  async recompute() {
    const started = performance.now();
    const raws = Object.fromEntries(this.inputs.map(({ param, read }) => [param.name, read()]));
    let fig;
    let caption;
    try {
      const state = this.face.state(checkAll(this.spec, raws), this.spec.data);
      fig = this.face.figure(state, this.spec.figure);
      caption = this.face.caption(state);
    } catch (err) {
      // 与 Python 面相同：坏输入只显示中文消息；意料之外的错误也不让图停在改到一半的样子
      this.say(err instanceof InputError ? err.message : `计算时出现意外错误（${err.name}）。请换一个输入再试。`, false);
      if (!(err instanceof InputError)) throw err;
      return;
    }
    const computed = performance.now();
    await this.figure.show(fig.data, fig.layout);
    this.say(caption, true);
    this.computeTimings.push(computed - started);
    this.timings.push(performance.now() - started);
  }
}
