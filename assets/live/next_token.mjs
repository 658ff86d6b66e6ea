/* 第 1.1 节“下一个字”的网页实时面：seqlab/states/next_token.py 的 next_token_state、seqlab/lm.py 的
 * NGramLM（prob 与 top_next）与 seqlab/figures/next_token.py 的 patch、caption 的对应。各阶模型的计数、词表与
 * 平滑常数 k 来自 Python 的 web_data()，所以这里算出的状态与 Python 的相同（node 测试逐项对照）。 */
import { fixed } from "./pyformat.mjs";
import { cleanText } from "./states.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["text", "order"];

// ---------------------------------------------------------------- 模型（lm.py 的 NGramLM）
const models = new WeakMap(); // data → 各阶模型：每次输入都用同一份，不必重新读计数

/** data 里的计数读成各阶模型：上下文（order-1 个 token 编号，用逗号连成键）→ 下一个 token 的编号 → 次数
 * （Map 保留计数器里的顺序），以及每个上下文的总次数。 */
function bookModels(data) {
  if (!models.has(data)) {
    const index = new Map(data.vocab.map((token, i) => [token, i]));
    const byOrder = new Map();
    for (const [order, rows] of Object.entries(data.counts)) {
      const window = Number(order) - 1;
      const contexts = new Map();
      for (const row of rows) {
        const next = new Map();
        let total = 0;
        for (let i = window; i < row.length; i += 2) {
          next.set(row[i], row[i + 1]);
          total += row[i + 1];
        }
        contexts.set(row.slice(0, window).join(","), { next, total });
      }
      byOrder.set(Number(order), { window, contexts });
    }
    models.set(data, { index, unk: index.get(data.unk), bos: data.vocab.length, byOrder });
  }
  return models.get(data);
}

/** _context：只取最后 order-1 个字，认不出的字换成 <unk>，不足时在前面补 <s>；返回这个上下文的计数。 */
function contextCounts(lm, order, chars) {
  const { window, contexts } = lm.byOrder.get(order);
  const ids = chars.slice(chars.length - Math.min(window, chars.length)).map((ch) => lm.index.get(ch) ?? lm.unk);
  const key = [...new Array(window - ids.length).fill(lm.bos), ...ids].join(",");
  return contexts.get(key) ?? { next: new Map(), total: 0 };
}

/** 加 k 平滑的分母：该上下文的总次数 + k·V。 */
const denominator = (data, counts) => counts.total + data.k * data.vocab.length;

/** prob：p(token | context) = (次数 + k) / (总次数 + k·V)。 */
function prob(data, lm, order, token, context) {
  const counts = contextCounts(lm, order, context);
  const count = counts.next.get(lm.index.get(token) ?? lm.unk) ?? 0;
  return (count + data.k) / denominator(data, counts);
}

/** top_next：按次数从大到小的 k 个候选（次数相同时保持计数器里的顺序，与 Counter.most_common 相同），
 * 不够时按词表顺序补上没见过的 token。返回 [token, 概率] 的数组。 */
function topNext(data, lm, order, context, k) {
  const counts = contextCounts(lm, order, context);
  const denom = denominator(data, counts);
  const seen = [...counts.next].sort((a, b) => b[1] - a[1]).slice(0, k); // Array.prototype.sort 是稳定的
  const best = seen.map(([id, c]) => [data.vocab[id], (c + data.k) / denom]);
  for (let id = 0; id < data.vocab.length && best.length < k; id++) {
    if (!counts.next.has(id)) best.push([data.vocab[id], data.k / denom]);
  }
  return best;
}

// ---------------------------------------------------------------- 状态（states/next_token.py）
/** token 给读者看的名字：句尾与未知字写成中文。 */
const show = (data, token) => data.shown[token] ?? token;

/** 与 next_token_state 相同：逐位置的条件概率、累计对数概率、每个位置最看好的字与文本之后的候选。 */
export function state(values, data) {
  const chars = cleanText(values.text, { maxChars: data.max_chars, what: "句子" });
  const order = values.order;
  const lm = bookModels(data);
  const probs = chars.map((ch, t) => prob(data, lm, order, ch, chars.slice(0, t)));
  let running = 0;
  const cumulative = probs.map((p) => (running += Math.log(p)));
  const alternatives = chars.map((_, t) =>
    topNext(data, lm, order, chars.slice(0, t), 3).map(([c, q]) => `${show(data, c)} ${fixed(q, 2)}`).join("、"));
  const candidates = topNext(data, lm, order, chars, data.top_k).map(([c, q]) => [show(data, c), q]);
  const unknown = chars.filter((ch) => !lm.index.has(ch)).length;
  return { text: chars.join(""), order, probs, cumulative, candidates, alternatives, unknown };
}

// ---------------------------------------------------------------- 图（figures/next_token.py）
export function caption(st) {
  let words = `${st.order}-gram：log p(句子) = ${fixed(st.cumulative[st.cumulative.length - 1], 2)}`;
  if (st.unknown) words += `；有 ${st.unknown} 个字在语料里从没出现过，按〈未知〉处理`;
  return words;
}

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出变了的部分——
 * 与 patch 改的相同：三条轨迹的数据数组与标题。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const [bars, line, candidates] = fig.data;
  const labels = Array.from(st.text, (ch, t) => `${t + 1}·${ch}`);
  Object.assign(bars, { x: labels, y: st.probs, customdata: st.alternatives });
  Object.assign(line, { x: labels, y: st.cumulative });
  const cp = st.candidates.map(([, p]) => p);
  Object.assign(candidates, { x: st.candidates.map(([c]) => c), y: cp, text: cp.map((p) => fixed(p, 2)) });
  fig.layout.title.text = `「${st.text}」在 ${st.order}-gram 模型下`;
  return fig;
}
