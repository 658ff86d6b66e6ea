/* 第 1.6 节“按层、按头看注意力”的网页实时面：seqlab/states/layer_heads.py 的 layer_head_state、
 * seqlab/train/induction.py 的 repeat_twice、encode_copy 与 head_scores，以及 seqlab/figures/layer_heads.py 的
 * patch、caption 的对应。模型的权重、词表与段长的范围来自 Python 的 web_data()，前向计算在 nn.mjs 里，
 * 所以这里算出的状态与 Python 的相同（node 测试逐项对照）。 */
import { InputError } from "./errors.mjs";
import { loadModel, tinyDecoder } from "./nn.mjs";
import { fixed } from "./pyformat.mjs";
import { byCodePoint, cleanText } from "./states.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["segment", "layer", "head"];

// ---------------------------------------------------------------- 任务（train/induction.py）
/** repeat_twice：段长须在训练见过的范围里、字不能重复，再经 encode_copy 编码成 〈始〉 + 两遍的 token 编号。
 * chars 是码位数组（cleanText 的结果）。 */
function repeatTwice(data, chars) {
  const [lo, hi] = data.period_range;
  if (!(lo <= chars.length && chars.length <= hi)) {
    throw new InputError(`这段字有 ${chars.length} 个，模型训练时只见过 ${lo} 到 ${hi} 个字的段落。`);
  }
  if (new Set(chars).size < chars.length) throw new InputError("段落里的字不能重复（训练数据里每段的字互不相同）。");
  const bad = [...new Set(chars.filter((ch) => !data.tokens.includes(ch)))].sort(byCodePoint);
  if (bad.length) {
    throw new InputError(`这个模型只认识这 ${data.tokens.length} 个字：${data.tokens.join("")}；这些字不在其中：${bad.join("")}`);
  }
  return [0, ...[...chars, ...chars].map((ch) => data.vocab.indexOf(ch))]; // 0 是 〈始〉
}

/** head_scores 里一个头的两个分数：alpha 是这个头的 (S, S) 权重，段长 L。 */
function headScores(alpha, S, L) {
  const mean = (ts, col) => ts.reduce((s, t) => s + alpha[t * S + col(t)], 0) / ts.length;
  const range = (a, b) => Array.from({ length: b - a }, (_, k) => a + k);
  return { previous: mean(range(1, S), (t) => t - 1), induction: mean(range(L + 1, S), (t) => t - L + 1) };
}

// ---------------------------------------------------------------- 状态（states/layer_heads.py）
/** 与 layer_head_state 相同：模型看到 〈始〉 + 两遍这段字，取所选层、所选头的注意力权重，以及每个位置预测的字。 */
export function state(values, data) {
  const chars = cleanText(values.segment, { maxChars: data.max_chars, what: "字段" });
  const ids = repeatTwice(data, chars);
  const { logits, weights } = tinyDecoder(loadModel(data), ids);
  const S = ids.length;
  const L = chars.length;
  const V = data.vocab.length;
  const pred = ids.map((_, t) => {
    const row = logits.subarray(t * V, (t + 1) * V);
    return row.indexOf(row.reduce((m, z) => Math.max(m, z), -Infinity)); // 最大值相同时取第一个，与 argmax 相同
  });
  let correct = 0;
  for (let t = L + 1; t < 2 * L; t++) correct += pred[t] === ids[t + 1];
  const { layer, head } = values;
  const alpha = weights[layer - 1][head - 1];
  return {
    segment: chars.join(""),
    layer,
    head,
    tokens: ids.map((id) => data.vocab[id]),
    alpha: Array.from({ length: S }, (_, i) => Array.from(alpha.subarray(i * S, (i + 1) * S))),
    predicted: pred.map((id) => data.vocab[id]).join(""),
    correct,
    graded: L - 1,
    scores: headScores(alpha, S, L),
  };
}

// ---------------------------------------------------------------- 图（figures/layer_heads.py）
function title(st) {
  const s = st.scores;
  return `第 ${st.layer} 层 · 第 ${st.head} 个头：读前一个字 ${fixed(s.previous, 2)}，读上次出现的下一格 ${fixed(s.induction, 2)}`;
}

export function caption(st) {
  return `模型看到「${st.tokens.slice(1).join("")}」，每个位置预测的下一个字：「${st.predicted}」；`
    + `第二遍里能推出答案的 ${st.graded} 个位置猜对了 ${st.correct} 个。`;
}

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出变了的部分——
 * 与 patch 改的相同：热力图的数据与坐标（序号:字）、两条坐标轴的刻度与标题。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const coords = st.tokens.map((ch, i) => `${i}:${ch}`);
  Object.assign(fig.data[0], { z: st.alpha, x: coords, y: coords });
  for (const axis of [fig.layout.xaxis, fig.layout.yaxis]) Object.assign(axis, { tickvals: coords, ticktext: st.tokens });
  fig.layout.title.text = title(st);
  return fig;
}
