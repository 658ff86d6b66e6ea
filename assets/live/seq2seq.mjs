/* 第 1.4 节的两个编码器—解码器（seqlab/seq2seq.py 的 FixedContextSeq2Seq 与 AttentionSeq2Seq）在浏览器里的贪心解码：
 * 词向量 + 双向 GRU 编码器、GRU 解码器，以及 Bahdanau 加性注意力。权重来自 Python 的 web_data()（float32 原样），
 * 由 nn.mjs 的 loadModel 解开，这里一律用 float64 计算（与 Python 状态里的 float64 副本相同）。
 * 记号与 Python 相同：S 源长度，T 目标长度，d_h 编码器每个方向的维度（h_j 是 2·d_h 维），d_s = d_h 解码器的维度，
 * d_a 注意力打分空间的维度。向量是 Float64Array，矩阵按行存放（S × n 的矩阵第 j 行是 values[j·n … j·n + n)）。 */
import { argmax, linear, softmaxRows } from "./nn.mjs";

const sigmoid = (x) => 1 / (1 + Math.exp(-x));

/** 首尾拼接几个向量：[a; b; …]。 */
function concat(...parts) {
  const out = new Float64Array(parts.reduce((n, v) => n + v.length, 0));
  let at = 0;
  for (const v of parts) {
    out.set(v, at);
    at += v.length;
  }
  return out;
}

/** Embedding 表 E (V, d) 的第 id 行。 */
const row = (E, id) => E.values.subarray(id * E.shape[1], (id + 1) * E.shape[1]);

// ---------------------------------------------------------------- 循环单元
/** nn.GRUCell / nn.GRU 的一步，门的次序与 PyTorch 相同（r、z、n 竖着拼在 W_ih、W_hh 里）：x (in)、h (d) → h' (d)。
 * r = σ(W_ir x + b_ir + W_hr h + b_hr)，z = σ(W_iz x + b_iz + W_hz h + b_hz)，
 * n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))，h' = (1 − z) ⊙ n + z ⊙ h（写成 PyTorch 的 (h − n) ⊙ z + n）。
 * weights 是 {ih, hh, bih, bhh}。 */
function gruCell(x, h, { ih, hh, bih, bhh }) {
  const d = h.length;
  const gi = linear(x, 1, ih, bih);
  const gh = linear(h, 1, hh, bhh);
  const out = new Float64Array(d);
  for (let i = 0; i < d; i++) {
    const r = sigmoid(gi[i] + gh[i]);
    const z = sigmoid(gi[d + i] + gh[d + i]);
    const n = Math.tanh(gi[2 * d + i] + r * gh[2 * d + i]);
    out[i] = (h[i] - n) * z + n;
  }
  return out;
}

/** nn.GRU 里一个方向的参数（suffix 为 "" 或 "_reverse"）。 */
const gruWeights = (p, name, suffix) => ({
  ih: p[`${name}.weight_ih_l0${suffix}`],
  hh: p[`${name}.weight_hh_l0${suffix}`],
  bih: p[`${name}.bias_ih_l0${suffix}`],
  bhh: p[`${name}.bias_hh_l0${suffix}`],
});

/** Encoder：src（长 S 的 token 编号）→ H (S, 2·d_h)：第 j 行是 h_j = [正向读到 j 的状态; 反向读到 j 的状态]。 */
function encode(p, src, dh) {
  const S = src.length;
  const H = new Float64Array(S * 2 * dh);
  const xs = src.map((id) => row(p["encoder.embed.weight"], id));
  for (const [suffix, order, half] of [["", [...xs.keys()], 0], ["_reverse", [...xs.keys()].reverse(), dh]]) {
    const weights = gruWeights(p, "encoder.rnn", suffix);
    let h = new Float64Array(dh);
    for (const j of order) {
      h = gruCell(xs[j], h, weights);
      H.set(h, j * 2 * dh + half);
    }
  }
  return H;
}

// ---------------------------------------------------------------- 解码
/** AdditiveAttention：e_j = v_aᵀ tanh(W_s s_{t-1} + W_h h_j)，α = softmax(e)，c_t = Σ_j α_j h_j。
 * keys (S, d_a) 是每句只算一次的 W_h h_j。返回 {c (2·d_h), alpha (S)}。 */
function additiveAttention(p, sPrev, H, keys, S) {
  const [Ws, va] = [p["attention.W_s"], p["attention.v_a"].values];
  const da = va.length;
  const query = linear(sPrev, 1, Ws, { values: new Float64Array(da) }); // W_s s_{t-1}，没有偏置
  const alpha = new Float64Array(S);
  for (let j = 0; j < S; j++) {
    let e = 0;
    for (let a = 0; a < da; a++) e += Math.tanh(query[a] + keys[j * da + a]) * va[a];
    alpha[j] = e;
  }
  softmaxRows(alpha, 1, S);
  const width = H.length / S;
  const c = new Float64Array(width);
  for (let j = 0; j < S; j++) for (let k = 0; k < width; k++) c[k] += alpha[j] * H[j * width + k];
  return { c, alpha };
}

/** FixedContextSeq2Seq / AttentionSeq2Seq 的 greedy（按 config.kind 区分）：src（长 S）贪心解码 T 步，
 * 每步把自己上一步的输出喂回去 → {ids（长 T）, alpha: (T, S) 的 Float64Array，固定上下文模型为 null}。
 * s_0 = tanh(W_init c)，c = [正向的最后一个状态; 反向的第一个状态]；每一步 c_t 是 c（固定上下文）或注意力读到的，
 * s_t = GRUCell([y_{t-1} 的词向量; c_t], s_{t-1})，logits_t = W_o [s_t; c_t]。 */
export function seq2seqGreedy(model, src, T, bosId) {
  const { config, p } = model;
  const dh = config.d_h;
  const S = src.length;
  const H = encode(p, src, dh);
  const c = concat(H.subarray((S - 1) * 2 * dh, (S - 1) * 2 * dh + dh), H.subarray(dh, 2 * dh));
  let s = linear(c, 1, p["init_state.weight"], p["init_state.bias"]).map(Math.tanh);
  const attention = config.kind === "attention";
  const keys = attention ? linear(H, S, p["attention.W_h"], { values: new Float64Array(config.d_a) }) : null;
  const cell = { ih: p["cell.weight_ih"], hh: p["cell.weight_hh"], bih: p["cell.bias_ih"], bhh: p["cell.bias_hh"] };
  const ids = [];
  const alpha = attention ? new Float64Array(T * S) : null;
  let y = bosId;
  for (let t = 0; t < T; t++) {
    let context = c;
    if (attention) {
      const read = additiveAttention(p, s, H, keys, S);
      context = read.c;
      alpha.set(read.alpha, t * S);
    }
    s = gruCell(concat(row(p["tgt_embed.weight"], y), context), s, cell);
    y = argmax(linear(concat(s, context), 1, p["out.weight"], p["out.bias"]));
    ids.push(y);
  }
  return { ids, alpha };
}
