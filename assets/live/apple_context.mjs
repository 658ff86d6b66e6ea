/* 第 1.2 节“同一个词，两种上下文”的网页实时面：seqlab/states/apple_context.py 的 apple_state 与
 * seqlab/figures/apple_context.py 的 patch、caption 的对应。分词与模型的前向在 embedding.mjs 里，
 * 所以这里算出的状态与 Python 的相同（node 测试逐项对照）。 */
import { contextVectors, cosine, loadEmbedding, model } from "./embedding.mjs";
import { InputError } from "./errors.mjs";
import { fixed } from "./pyformat.mjs";
import { cleanText } from "./states.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["sentence_a", "sentence_b", "word"];

/** 打开“实时计算”时载入分词器（jieba-wasm）。 */
export const load = loadEmbedding;

// ---------------------------------------------------------------- 状态（states/apple_context.py）
/** _find：词在句子的分词结果里第一次出现的位置；没有就用中文说明分词结果。 */
function find(word, cv, which) {
  const t = cv.tokens.indexOf(word);
  if (t < 0) {
    const shown = cv.tokens.join(" / ");
    throw new InputError(`句子 ${which} 的分词结果是「${shown}」，里面没有「${word}」这个 token。请换一个句子或一个词。`);
  }
  return t;
}

/** 与 apple_state 相同：检查两句话与要比较的词（词必须在词表里），两句各自算出 X、H，
 * 取词在两句里的位置，比较输入向量与上下文层之后的隐藏状态。 */
export function state(values, data) {
  const a = cleanText(values.sentence_a, { maxChars: data.max_chars, what: "句子（A）" }).join("");
  const b = cleanText(values.sentence_b, { maxChars: data.max_chars, what: "句子（B）" }).join("");
  const word = cleanText(values.word, { maxChars: data.max_word_chars, what: "要比较的词" }).join("");
  if (!model(data).stoi.has(word)) {
    throw new InputError(
      `「${word}」不在模型的词表里（词表只收了语料中出现过的 ${data.itos.length} 个词），`
        + "模型没有为它学过向量，只能当作 <unk>。请换一个词，例如「苹果」「北京」「老师」。",
    );
  }
  const [cvA, cvB] = [contextVectors(data, a), contextVectors(data, b)];
  const [i, j] = [find(word, cvA, "A"), find(word, cvB, "B")];
  return { word, a: cvA, b: cvB, i, j, cos_x: cosine(cvA.X[i], cvB.X[j]), cos_h: cosine(cvA.H[i], cvB.H[j]) };
}

// ---------------------------------------------------------------- 图（figures/apple_context.py）
/** _mark：把句子的第 t 个 token 用【】框起来。 */
const mark = (cv, t) => cv.tokens.map((tok, k) => (k === t ? `【${tok}】` : tok)).join("");

export function caption(st) {
  return `A：${mark(st.a, st.i)}　B：${mark(st.b, st.j)}。`
    + `输入向量的余弦相似度 = ${fixed(st.cos_x, 3)}，上下文层之后 = ${fixed(st.cos_h, 3)}。`;
}

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出 patch 改的部分——
 * 热力图的四个向量 x_A、x_B、h_A、h_B 与通道号，两根柱的余弦与上面的数，以及两行的标题。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const z = [st.a.X[st.i], st.b.X[st.j], st.a.H[st.i], st.b.H[st.j]];
  Object.assign(fig.data[0], { z, x: Array.from({ length: z[0].length }, (_, k) => k) });
  Object.assign(fig.data[1], { y: [st.cos_x, st.cos_h], text: [fixed(st.cos_x, 3), fixed(st.cos_h, 3)] });
  fig.layout.title.text = `A：${mark(st.a, st.i)}<br>B：${mark(st.b, st.j)}`;
  return fig;
}
