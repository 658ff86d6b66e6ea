/* 第 1.2 节“句子矩阵”的网页实时面：seqlab/states/x_matrix.py 的 matrix_state 与 seqlab/figures/x_matrix.py 的
 * patch、caption 的对应。分词与模型的前向在 embedding.mjs 里，所以这里算出的状态与 Python 的相同（node 测试逐项对照）。 */
import { contextVectors, loadEmbedding, model } from "./embedding.mjs";
import { cleanText } from "./states.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["text", "layer"];

/** 打开“实时计算”时载入分词器（jieba-wasm）。 */
export const load = loadEmbedding;

// ---------------------------------------------------------------- 状态（states/x_matrix.py）
/** 与 matrix_state 相同：句子分词、查表得到 X，再经上下文层得到 H；数一数按 <unk> 处理的词。
 * layer 只能是 X 或 H（按钮给出的值，checkAll 已经检查过）。 */
export function state(values, data) {
  const text = cleanText(values.text, { maxChars: data.max_chars, what: "句子" }).join("");
  const cv = contextVectors(data, text);
  const { unk } = model(data);
  return { cv, layer: values.layer, unknown: cv.ids.filter((id) => id === unk).length };
}

// ---------------------------------------------------------------- 图（figures/x_matrix.py）
/** states/x_matrix.py 的 LAYERS：两种矩阵的名字（写在标题与说明里；node 测试对照两者）。 */
const LAYERS = { X: "X：输入向量（查表的结果）", H: "H：上下文层之后" };

const matrix = (st) => (st.layer === "X" ? st.cv.X : st.cv.H);

export function caption(st) {
  const [S, d] = [st.cv.tokens.length, matrix(st)[0].length];
  const note = st.unknown ? `；其中 ${st.unknown} 个词不在词表里，用 <unk> 的向量` : "";
  return `${LAYERS[st.layer]}：S = ${S} 行（token），d = ${d} 列（通道）${note}。`;
}

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出 patch 改的部分——
 * 热力图的矩阵、通道号、行名（序号·词）与悬停时的位置，图的高度（一行 26 像素）与标题。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const M = matrix(st);
  const d = M[0].length;
  const tokens = st.cv.tokens;
  Object.assign(fig.data[0], {
    z: M,
    x: Array.from({ length: d }, (_, j) => j),
    y: tokens.map((tok, t) => `${t}·${tok}`),
    customdata: tokens.map((tok, t) => new Array(d).fill(`${t}「${tok}」`)),
  });
  fig.layout.height = Math.max(300, 26 * tokens.length + 150);
  fig.layout.title.text = `${LAYERS[st.layer]}　「${st.cv.text}」`;
  return fig;
}
