/* 第 1.4 节“注意力权重 α_tj”的网页实时面（第 1.6 节的 cross_attention_weights 用同一份代码）：
 * seqlab/states/attention_weights.py 的 attention_state 与 seqlab/figures/attention_weights.py 的 patch、caption 的对应。
 * 三个模型的权重、玩具语言的词表与上限来自 Python 的 web_data()；模型的前向在 seq2seq.mjs 与 encdec.mjs，
 * 标准对齐在 translation.mjs，所以这里算出的状态与 Python 的相同（node 测试逐项对照）。 */
import { encoderDecoderGreedy } from "./encdec.mjs";
import { InputError } from "./errors.mjs";
import { loadModel } from "./nn.mjs";
import { fixed, pyRound } from "./pyformat.mjs";
import { seq2seqGreedy } from "./seq2seq.mjs";
import { cleanText, isSpace } from "./states.mjs";
import { alignment, lexicon, translate } from "./translation.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["text", "step", "model"];

/** 打开“实时计算”时先把三个模型的权重解开（之后每次输入都用同一份）。 */
export async function load(data) {
  for (const model of Object.values(data.models)) loadModel(model);
}

// ---------------------------------------------------------------- 状态（states/attention_weights.py）
/** parse_source：源句拆成字（码位）；空白忽略，别名（半角逗号等）换成全角逗号。坏输入抛出与 Python 相同的消息。 */
function parseSource(text, data) {
  const chars = cleanText(text, { maxChars: data.max_chars, what: "源句" })
    .filter((ch) => !isSpace(ch))
    .map((ch) => (Object.hasOwn(data.aliases, ch) ? data.aliases[ch] : ch));
  const known = lexicon(data);
  const unknown = [...new Set(chars.filter((ch) => !Object.hasOwn(known, ch)))]; // 按第一次出现的先后
  if (unknown.length) {
    const shown = unknown.slice(0, 8).join("") + (unknown.length > 8 ? "…" : "");
    const list = (words) => Object.keys(words).join("");
    throw new InputError(
      `源句里有玩具语言不认识的符号「${shown}」。可用的字只有：名词 ${list(data.nouns)}，`
        + `形容词 ${list(data.adjectives)}，动词 ${list(data.verbs)}，以及逗号「，」。`,
    );
  }
  if (chars.length > data.max_len) {
    throw new InputError(`源句有 ${chars.length} 个字，超过了模型训练时见过的最大长度 ${data.max_len}：请缩短后再试。`);
  }
  return chars;
}

/** _attend：所选模型贪心解码 T 步 → {ids, alpha: (T, S)}；Transformer 取 shown_layer 那一层交叉注意力的各头平均。 */
function attend(data, name, src, T) {
  const model = loadModel(data.models[name]);
  if (name !== data.transformer) return seq2seqGreedy(model, src, T, data.bos_id);
  const { ids, cross } = encoderDecoderGreedy(model, src, T, data.bos_id);
  const heads = cross[data.shown_layer];
  return { ids, alpha: heads[0].map((_, i) => heads.reduce((sum, head) => sum + head[i], 0) / heads.length) };
}

const right = (words, reference) => (reference === null ? null : words.filter((w, t) => w === reference[t]).length);

/** 第 t 行里权重最大的 top 个源位置（排序是稳定的：权重相同时按位置先后，与 Python 的 sorted 相同）。 */
const topOf = (row, top) => [...row.keys()].sort((a, b) => row[b] - row[a]).slice(0, top);

const translations = new WeakMap(); // data → Map（模型与源句 → 第 1 步的状态）：换步数时不必重算

/** _translate：所选模型与固定上下文模型各贪心解码一次，得到第 1 步的状态。α 与 Python 一样取 4 位小数。 */
function translateWith(data, source, model) {
  if (!translations.has(data)) translations.set(data, new Map());
  const cache = translations.get(data);
  const key = `${model}\n${source.join("")}`;
  if (!cache.has(key)) {
    const src = source.map((ch) => data.src_tokens.indexOf(ch));
    const T = source.length;
    const S = src.length;
    const { ids, alpha } = attend(data, model, src, T);
    const base = seq2seqGreedy(loadModel(data.models[data.baseline]), src, T, data.bos_id);
    const [output, baseline] = [ids, base.ids].map((words) => words.map((id) => data.tgt_tokens[id]));
    const reference = translate(source, data);
    const rows = Array.from({ length: T }, (_, t) => Array.from(alpha.subarray(t * S, (t + 1) * S), (a) => pyRound(a, 4)));
    if (cache.size >= 128) cache.delete(cache.keys().next().value); // 最多留 128 句（先进先出），与 Python 的缓存一样大
    cache.set(key, {
      source,
      output,
      alpha: rows,
      reference,
      gold: alignment(source, data),
      baseline,
      right: right(output, reference),
      baseline_right: right(baseline, reference),
      model,
    });
  }
  return cache.get(key);
}

/** 与 attention_state 相同：源句 → 两个模型的译文、α 矩阵与第 step 步的 c_t；step 超出句长时收回到最后一步。 */
export function state(values, data) {
  const translated = translateWith(data, parseSource(values.text, data), values.model);
  const step = Number(values.step);
  const t = Math.min(Math.max(step, 1), translated.source.length);
  return { ...translated, step: t, clamped: t !== step, top: topOf(translated.alpha[t - 1], data.top) };
}

// ---------------------------------------------------------------- 图（figures/attention_weights.py）
const SHORT = { seq2seq_attention: "注意力模型", encdec_transformer: "Transformer" }; // 标题与说明里的模型名
const [ROW_PX, BAR_PX, GAP_PX, TOP_PX, BOTTOM_PX, MIN_HEAT_PX] = [25, 130, 74, 96, 70, 190]; // 版面（像素）

/** 坐标用的类别名 序号·token（从 1 数）：重复的 token 不会被 plotly 合并成一格。 */
const categories = (labels) => labels.map((c, i) => `${i + 1}·${c}`);
const rowName = (t) => `α_${t}j`;
const title = (st) => `${SHORT[st.model]}翻译「${st.source.join("")}」`;

/** T 个目标词时各块的位置（纸面坐标，与 Python 一样取 4 位小数）。 */
function geometry(T) {
  const plot = Math.max(MIN_HEAT_PX, ROW_PX * T) + GAP_PX + BAR_PX;
  return {
    height: TOP_PX + plot + BOTTOM_PX,
    heat: [pyRound((BAR_PX + GAP_PX) / plot, 4), 1.0],
    bar: [0.0, pyRound(BAR_PX / plot, 4)],
    noteY: pyRound((BAR_PX + GAP_PX * 0.42) / plot, 4),
    legendY: pyRound(-34 / plot, 4),
  };
}

/** c_t 里权重最大的几项，例如 0.91·h_2「猫」 + 0.05·h_1「大」 + …。 */
function note(st) {
  const t = st.step;
  const row = st.alpha[t - 1];
  const terms = st.top.map((j) => `${fixed(row[j], 2)}·h_${j + 1}「${st.source[j]}」`).join(" + ");
  return `第 ${t} 步输出「${st.output[t - 1]}」，它读到的 c_${t} = ${terms}${row.length > st.top.length ? " + …" : ""}`;
}

const hoverText = (st) =>
  st.output.map((w, t) => st.source.map((c, j) => `第 ${t + 1} 步（输出 ${w}）读 h_${j + 1}「${c}」`));

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出随状态变化的部分——
 * 与 patch 改的相同：三条轨迹（热力图、标准对齐、第 t 行的条形图）的数据，以及 layout(state) 里的版面与标题。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const [heat, gold, bar] = fig.data;
  const [xs, ys] = [categories(st.source), categories(st.output)];
  const [S, T, t] = [st.source.length, st.output.length, st.step];
  const row = st.alpha[t - 1];
  Object.assign(heat, { z: st.alpha, x: xs, y: ys, text: hoverText(st) });
  Object.assign(gold, st.gold === null ? { x: [], y: [] } : { x: st.gold.map((j) => xs[j]), y: ys });
  Object.assign(bar, { x: xs, y: row, name: rowName(t), text: row.map((a) => (a >= 0.05 ? fixed(a, 2) : "")) });
  const g = geometry(T);
  const columns = { tickvals: xs, ticktext: st.source, categoryarray: xs, range: [-0.5, S - 0.5] };
  const { layout } = fig;
  layout.height = g.height;
  layout.legend.y = g.legendY;
  Object.assign(layout.xaxis, columns);
  Object.assign(layout.xaxis2, columns);
  Object.assign(layout.yaxis, { domain: g.heat, tickvals: ys, ticktext: st.output, categoryarray: ys, range: [T - 0.5, -0.5] });
  layout.yaxis2.domain = g.bar;
  layout.yaxis2.title.text = rowName(t);
  Object.assign(layout.coloraxis.colorbar, { y: g.heat[0], len: g.heat[1] - g.heat[0] });
  Object.assign(layout.shapes[0], { y0: t - 1.5, y1: t - 0.5 });
  Object.assign(layout.annotations[0], { y: g.noteY, text: note(st) });
  layout.title.text = title(st);
  return fig;
}

function score(r, reference) {
  return r === null || reference === null ? "" : `（${r}/${reference.length} 个词与标准译文一致）`;
}

export function caption(st) {
  let words = `${SHORT[st.model]}：${st.output.join(" ")}${score(st.right, st.reference)}；`;
  words += `固定上下文模型：${st.baseline.join(" ")}${score(st.baseline_right, st.reference)}。`;
  if (st.reference === null) words += "这句话不合玩具语法，没有标准译文，只能看模型怎样分配权重。";
  if (st.clamped) words += `这句只有 ${st.source.length} 个目标词，滑块停在最后一步。`;
  return words;
}
