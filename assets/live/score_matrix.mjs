/* 第 1.5 节“O(S²) 的分数矩阵”的网页实时面：seqlab/states/score_matrix.py 的 score_state 与
 * seqlab/figures/score_matrix.py 的 render、caption 的对应。常量（例句、字向量、W_Q、W_K、曲线的横坐标、
 * dtype 的字节数、预算）来自 Python 的 web_data()，所以这里算出的状态与 Python 的相同（node 测试逐项对照）。 */
import { formatBytes, guardMemory } from "./errors.mjs";
import { thousands } from "./pyformat.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["S", "causal", "batch", "heads", "layers", "dtype"];

const CHAR_TICKS_UP_TO = 16; // 与 figures/score_matrix.py 相同：S 不超过它时坐标轴上写出每个字

// ---------------------------------------------------------------- 状态（attention.py 的代价函数）
/** 朴素实现里分数矩阵的字节数 batch × heads × layers × S² × 每个数的字节数（BigInt，与 Python 的 int 一样精确）。 */
function scoreBytes(data, S, { batch, heads, layers, dtype }) {
  return batch * heads * layers * BigInt(S) * BigInt(S) * BigInt(data.dtype_bytes[dtype]);
}

/** 整数平方根（BigInt）：math.isqrt。 */
function isqrt(n) {
  if (n < 2n) return n;
  let x = BigInt(Math.floor(Math.sqrt(Number(n))));
  while (x * x > n) x -= 1n;
  while ((x + 1n) * (x + 1n) <= n) x += 1n;
  return x;
}

function memoryState(data, S, config) {
  const budget = BigInt(data.budget);
  const perPair = scoreBytes(data, 1, config);
  return {
    S,
    curve: {
      batch: Number(config.batch), heads: Number(config.heads), layers: Number(config.layers), dtype: config.dtype,
      lengths: data.curve_lengths,
      bytes: data.curve_lengths.map((s) => Number(scoreBytes(data, s, config))),
    },
    bytes: Number(scoreBytes(data, S, config)),
    budget: data.budget,
    max_S: Number(isqrt(budget / perPair)),
  };
}

/** X W（X 的每一行是一个字的向量）：S × d 的 float64 矩阵，按行存在一个 Float64Array 里。 */
function project(rows, W) {
  const d = W[0].length;
  const out = new Float64Array(rows.length * d);
  rows.forEach((x, i) => {
    for (let m = 0; m < x.length; m++) for (let k = 0; k < d; k++) out[i * d + k] += x[m] * W[m][k];
  });
  return out;
}

/** 前 S 个字的分数矩阵 Q Kᵀ / √d_k（S × S）；被因果掩码挡住的格子是 null（Python 的 NaN）。
 * 与 Python 一样用 float64 计算、最后取最近的 float32（Math.fround）。 */
function sentenceScores(data, S, causal) {
  const text = Array.from(data.text).slice(0, S);
  const X = text.map((ch) => data.vectors[ch]);
  const d = data.W_Q[0].length;
  const Q = project(X, data.W_Q);
  const K = project(X, data.W_K);
  const scale = Math.sqrt(d);
  const scores = [];
  for (let i = 0; i < S; i++) {
    const row = new Array(S).fill(null);
    for (let j = 0; j < (causal ? i + 1 : S); j++) {
      let sum = 0;
      for (let k = 0; k < d; k++) sum += Q[i * d + k] * K[j * d + k];
      row[j] = Math.fround(sum / scale);
    }
    scores.push(row);
  }
  return [text.join(""), scores];
}

/** 与 score_state 相同：先估算内存（超预算抛 MemoryBudgetError），再算分数矩阵。 */
export function state(values, data) {
  const S = Number(values.S);
  const { batch, heads, layers, dtype } = values;
  const what = `S = ${S}、batch ${batch} × ${heads} 头 × ${layers} 层、${dtype} 的分数矩阵`;
  guardMemory(what, scoreBytes(data, S, values), BigInt(data.budget));
  const causal = Boolean(values.causal);
  const [text, scores] = sentenceScores(data, S, causal);
  const pairs = causal ? (S * (S + 1)) / 2 : S * S;
  return { S, causal, text, scores, pairs, memory: memoryState(data, S, { batch, heads, layers, dtype }) };
}

// ---------------------------------------------------------------- 图（figures/score_matrix.py、score_memory.py）
const configLabel = (c) => `${c.batch} × ${c.heads} 头 × ${c.layers} 层 × ${c.dtype}`;

function pairsTitle(st) {
  const mask = st.causal ? "因果掩码" : "无掩码";
  const formula = st.causal ? "S(S+1)/2" : "S²";
  return `S = ${st.S}，${mask}：${formula} = ${thousands(st.pairs)} 个 query–key 配对`;
}

export function caption(st) {
  const m = st.memory;
  return `${pairsTitle(st)}。分数矩阵（${configLabel(m.curve)}）约 ${formatBytes(m.bytes)}；`
    + `在 ${formatBytes(m.budget)} 的预算内，这组配置最长只能到 S = ${thousands(m.max_S)}。`;
}

function axisTicks(st, axis) {
  if (st.S <= CHAR_TICKS_UP_TO) {
    Object.assign(axis, { tickmode: "array", tickvals: Array.from({ length: st.S }, (_, k) => k + 1), ticktext: Array.from(st.text), tickangle: 0 });
  } else {
    Object.assign(axis, { tickmode: "auto", tickangle: 0 });
    delete axis.tickvals;
    delete axis.ticktext;
  }
}

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出变了的部分——
 * 与 patch 改的相同：热力图的 z、所选配置的曲线与当前点、标题、坐标轴的刻度。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const [heat, , , curve, point] = fig.data;
  heat.z = st.scores;
  const m = st.memory;
  const label = configLabel(m.curve);
  Object.assign(curve, { y: m.curve.bytes, name: label, hovertemplate: `S = %{x}<br>%{y:.3s}B<extra>${label}</extra>` });
  Object.assign(point, { x: [m.S], y: [m.bytes], name: `S = ${m.S}：${formatBytes(m.bytes)}` });
  fig.layout.title.text = pairsTitle(st);
  axisTicks(st, fig.layout.xaxis);
  axisTicks(st, fig.layout.yaxis);
  return fig;
}
