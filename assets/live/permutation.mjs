/* 第 1.6 节“打乱 token”的网页实时面：seqlab/states/permutation.py 的 permutation_state 与
 * seqlab/figures/permutation.py 的 patch、caption 的对应。字向量与打乱方式取自 random.mjs（与 Python 的
 * random.Random 逐位相同），三个部件的权重来自 Python 的 web_data()，前向计算在 nn.mjs 里，
 * 所以这里算出的状态与 Python 的相同（node 测试逐项对照）。
 * 矩阵按行存在 Float64Array 里：S × d 的矩阵第 t 行是 values[t·d … t·d + d)。 */
import { InputError } from "./errors.mjs";
import { ffn, loadModel, multiHeadSelfAttention, postNormBlock, sinusoidalPositions } from "./nn.mjs";
import { exponential, formatG } from "./pyformat.mjs";
import { Random } from "./random.mjs";
import { cleanText, isSpace } from "./states.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["text", "part", "shuffle"];

/** 图与说明要用的常量（部件的中文名、记为 0 的差异的上限 ROUNDING），打开实时面时由 load 从 web_data() 取来。 */
let shown = null;

export function load(data) {
  shown = { parts: data.parts, rounding: data.rounding };
}

// ---------------------------------------------------------------- 状态（states/permutation.py）
/** token_vectors：每个字以自己的码位为种子，取 d 个标准正态数（random.Random(ord(ch)).gauss(0, 1)）→ X (S, d)。 */
function tokenVectors(tokens, d) {
  const X = new Float64Array(tokens.length * d);
  tokens.forEach((ch, t) => {
    const rng = new Random(ch.codePointAt(0));
    for (let i = 0; i < d; i++) X[t * d + i] = rng.gauss(0, 1);
  });
  return X;
}

/** permutation：random.Random(shuffle) 打乱 0 … S−1；打乱后仍是原顺序时整体左移一格。perm[i] 是新位置 i 上的旧位置。 */
function permutation(S, shuffle) {
  const perm = new Random(shuffle).shuffle(Array.from({ length: S }, (_, i) => i));
  return perm.every((j, i) => j === i) ? [...perm.slice(1), perm[0]] : perm;
}

/** P·X：X (S, d) 的第 perm[i] 行放到第 i 行。 */
function permuteRows(X, perm, d) {
  const Y = new Float64Array(X.length);
  perm.forEach((j, i) => Y.set(X.subarray(j * d, (j + 1) * d), i * d));
  return Y;
}

/** apply_part：把部件作用到 X (S, d) 上，返回 (S, d)；attn_pos 先给每一行加上它所在位置的正弦向量。 */
function applyPart(data, part, X, S) {
  const { p } = loadModel(data);
  const d = data.d_model;
  if (part === "ffn") return ffn(X, S, p, "ffn.W_1", "ffn.W_2");
  if (part === "block") return postNormBlock(X, S, p, "block", data.n_heads).X;
  const input = part === "attn_pos" ? sinusoidalPositions(S, d, { float32: false }).map((pe, i) => X[i] + pe) : X;
  return multiHeadSelfAttention(input, S, p, "attn", data.n_heads).out;
}

const rows = (M, S, d) => Array.from({ length: S }, (_, t) => Array.from(M.subarray(t * d, (t + 1) * d)));

/** 与 permutation_state 相同：检查输入，再比较“先算再打乱” P·f(X) 与“先打乱再算” f(P·X)。 */
export function state(values, data) {
  const text = cleanText(values.text, { maxChars: data.max_chars, what: "句子" });
  const tokens = text.filter((ch) => !isSpace(ch));
  if (tokens.length < 2) throw new InputError("至少需要 2 个字才谈得上打乱顺序。");
  if (tokens.length > data.max_tokens) {
    throw new InputError(`句子有 ${tokens.length} 个字，这张图最多显示 ${data.max_tokens} 个：请缩短后再试。`);
  }
  const { part, shuffle } = values;
  if (!Object.hasOwn(data.parts, part)) throw new InputError(`部件只能是：${Object.values(data.parts).join("、")}。`);
  if (!(1 <= shuffle && shuffle <= data.max_shuffle)) throw new InputError(`打乱方式的编号应在 1 到 ${data.max_shuffle} 之间。`);
  const S = tokens.length;
  const d = data.d_model;
  const X = tokenVectors(tokens, d);
  const perm = permutation(S, shuffle);
  const A = permuteRows(applyPart(data, part, X, S), perm, d); // 先算再打乱
  const B = applyPart(data, part, permuteRows(X, perm, d), S); // 先打乱再算
  const gap = Array.from({ length: S }, (_, t) => {
    let g = 0;
    for (let i = t * d; i < (t + 1) * d; i++) g = Math.max(g, Math.abs(A[i] - B[i]));
    return g < data.rounding ? 0 : g; // 舍入误差以内的差异记为 0（与 Python 相同）
  });
  const maxGap = Math.max(...gap);
  const scale = Math.max(...A.map(Math.abs), ...B.map(Math.abs));
  return {
    tokens,
    perm,
    shuffled: perm.map((j) => tokens[j]),
    part,
    then_shuffle: rows(A, S, d),
    shuffle_then: rows(B, S, d),
    scale: scale || 1,
    gap,
    max_gap: maxGap,
    equivariant: maxGap < data.equivariant_tol,
  };
}

// ---------------------------------------------------------------- 图（figures/permutation.py）
/** 图的标题（sep = "<br>" 时分两行）与说明（一行）。 */
function title(st, sep = "｜") {
  const order = `${st.tokens.join("")} → ${st.shuffled.join("")}`;
  const verdict = st.equivariant ? "两者相同：置换等变" : "两者不同：顺序信息进来了";
  const gap = st.max_gap ? `最大差异 ${exponential(st.max_gap, 1)}` : `最大差异不到 ${formatG(shown.rounding)}`;
  return `${shown.parts[st.part]}｜${order}${sep}${gap}，${verdict}`;
}

export const caption = (st) => title(st);

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出变了的部分——
 * 与 patch 改的相同：两张热力图（数据、行标签、共用的色标范围）、差异的柱子（对数坐标画不了 0：记为 0 的画在
 * FLOOR = ROUNDING 处，悬停时显示 0）、标题与高度。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const labels = st.shuffled.map((ch, i) => `${i}:${ch}`);
  const scale = { y: labels, zmin: -st.scale, zmax: st.scale };
  Object.assign(fig.data[0], { z: st.then_shuffle, ...scale });
  Object.assign(fig.data[1], { z: st.shuffle_then, ...scale });
  Object.assign(fig.data[2], { x: st.gap.map((g) => Math.max(g, shown.rounding)), y: labels, customdata: st.gap });
  fig.layout.title.text = title(st, "<br>");
  fig.layout.height = Math.max(420, 28 * st.tokens.length + 240);
  return fig;
}
