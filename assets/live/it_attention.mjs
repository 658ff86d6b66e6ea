/* 第 1.5 节“「它」指谁”的网页实时面：seqlab/states/it_attention.py 的 it_state、seqlab/corpus/winograd.py 的
 * make_example、seqlab/attention.py 的 encode_examples 与 referent_mass，以及 seqlab/figures/it_attention.py 的
 * render、caption 的对应。模型的权重、字表与句式来自 Python 的 web_data()，前向计算在 nn.mjs 里，
 * 所以这里算出的状态与 Python 的相同（node 测试逐项对照）。 */
import { InputError } from "./errors.mjs";
import { loadModel, pronounResolver } from "./nn.mjs";
import { fixed } from "./pyformat.mjs";
import { byCodePoint, cleanText } from "./states.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["template", "noun_a", "noun_b"];

const CJK = /^[\u3400-\u4dbf\u4e00-\u9fff\u{20000}-\u{3134f}]+$/u;

// ---------------------------------------------------------------- 造句（corpus/winograd.py）
/** 句式的填空：把 {A}、{B}、{w} 换成名词甲、乙与关键词（Python 的 str.format）。 */
const fill = (text, slots) => text.replace(/\{(A|B|w)\}/g, (_, key) => slots[key]);

/** make_example：按句式填空，并记下两个名词与「它」的位置（都按码位数，与 Python 的下标相同）。 */
function makeExample(data, template, nounA, nounB, word) {
  const t = data.templates[template];
  const text = fill(t.text, { A: nounA, B: nounB, w: word });
  const chars = Array.from(text);
  const a0 = Array.from(t.text.slice(0, t.text.indexOf("{A}"))).length;
  const b0 = Array.from(fill(t.text, { A: nounA, B: "\0", w: word })).indexOf("\0");
  return {
    text,
    template,
    word,
    noun_a: nounA,
    noun_b: nounB,
    span_a: [a0, a0 + Array.from(nounA).length],
    span_b: [b0, b0 + Array.from(nounB).length],
    pronoun: chars.indexOf(data.pronoun),
    answer: t.words.indexOf(word),
  };
}

// ---------------------------------------------------------------- 状态（states/it_attention.py）
/** _noun：与 Python 相同的检查与消息；返回去掉首尾空白的名词。 */
function noun(data, text, what) {
  const chars = cleanText(text, { maxChars: data.max_noun_chars, what });
  const clean = chars.join("");
  if (!CJK.test(clean)) {
    throw new InputError(`${what} 只能由汉字组成（1～${data.max_noun_chars} 个），「${clean}」里有别的字符。`);
  }
  if (chars.includes(data.pronoun)) throw new InputError(`${what} 里不能有「它」字，否则就分不清哪个是代词了。`);
  return clean;
}

/** referent_mass 的一行：row 里落在 [起, 止) 上的权重之和。 */
const mass = (row, [start, stop]) => row.reduce((sum, w, j) => sum + (start <= j && j < stop ? w : 0), 0);

/** 与 it_state 相同：关键词的两种取法各造一句，取两句里「它」在第 2 层的注意力，以及落在两个名词上的权重之和。
 * 句子按 encode_examples 编码（字表外的字是 1，短句在末尾填 0），再逐句交给模型。 */
export function state(values, data) {
  const nounA = noun(data, values.noun_a, "名词甲");
  const nounB = noun(data, values.noun_b, "名词乙");
  if (nounA === nounB) throw new InputError("两个名词相同，「它」指哪一个都一样：请换一个。");
  const { template } = values;
  const examples = data.templates[template].words.map((w) => makeExample(data, template, nounA, nounB, w));
  const vocab = data.config.vocab;
  const index = new Map(vocab.map((ch, i) => [ch, i]));
  // 名词最多 4 个字，最长的句子也只有 21 个字，不会超过模型能处理的 max_len
  const S = Math.max(...examples.map((e) => Array.from(e.text).length));
  const model = loadModel(data);
  const rows = examples.map((e) => {
    const ids = new Array(S).fill(0);
    Array.from(e.text).forEach((ch, t) => (ids[t] = index.get(ch) ?? 1));
    const { A2 } = pronounResolver(model, ids);
    return Array.from(A2.subarray(e.pronoun * S, (e.pronoun + 1) * S));
  });
  const masses = examples.map((e, b) => [mass(rows[b], e.span_a), mass(rows[b], e.span_b)]);
  return {
    template,
    examples,
    rows,
    mass: masses,
    guesses: examples.map((e, b) => (masses[b][1] > masses[b][0] ? e.noun_b : e.noun_a)),
    unknown: [...new Set(Array.from(nounA + nounB).filter((ch) => !index.has(ch)))].sort(byCodePoint),
  };
}

// ---------------------------------------------------------------- 图（figures/it_attention.py）
const referent = (e) => (e.answer ? e.noun_b : e.noun_a);

function verdicts(st) {
  return st.examples.map((e, b) => {
    const [m, guess] = [st.mass[b], st.guesses[b]];
    const mark = guess === referent(e) ? "✓" : "✗";
    return `「…太${e.word}了」：它 → ${guess} ${mark}（A ${fixed(m[0], 2)} : B ${fixed(m[1], 2)}）`;
  });
}

export function caption(st) {
  let words = verdicts(st).join("；");
  if (st.unknown.length) words += `。模型的字表里没有「${st.unknown.join("」「")}」，按“未知字”处理`;
  return words;
}

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出随状态变化的部分——
 * 热力图的数据与坐标（序号:标签，关键词那一列上下写出两种取法）、两条坐标轴的刻度与标题。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const [a, b] = st.examples.map((e) => Array.from(e.text));
  const pairs = a.map((x, j) => [x, b[j]]);
  const cols = pairs.map(([x, y]) => (x === y ? x : `${x}<br>${y}`));
  const sentence = pairs.map(([x, y]) => (x === y ? x : `${x}/${y}`)).join("");
  const rowLabels = st.examples.map((e) => `它（太${e.word}）`);
  const xs = cols.map((c, j) => `${j}:${c}`);
  const ys = rowLabels.map((r, i) => `${i}:${r}`);
  Object.assign(fig.data[0], { z: st.rows, x: xs, y: ys });
  Object.assign(fig.layout.xaxis, { tickvals: xs, ticktext: cols });
  Object.assign(fig.layout.yaxis, { tickvals: ys, ticktext: rowLabels });
  fig.layout.title.text = `「${sentence}」：第 2 层里「它」的注意力`;
  return fig;
}
