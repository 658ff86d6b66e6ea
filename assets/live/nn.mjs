/* 训练好的小模型在浏览器里的前向计算（seqlab/transformer.py 与 seqlab/attention.py 的对应）：嵌入与正弦位置、
 * 层归一化、缩放点积注意力（单头的 SelfAttention、多头自注意力，可带因果掩码）、逐位置前馈网络、
 * post-norm 的 TransformerBlock，以及把它们组装起来的 TinyDecoder（可带 KV cache）与 PronounResolver。
 * 权重来自 Python 的 web_data()（seqlab.states.packed：float32 原样），这里一律用 float64 计算。
 * 矩阵按行存在 Float64Array 里：S × d 的矩阵第 t 行是 values[t·d … t·d + d)。 */

// ---------------------------------------------------------------- 权重
/** seqlab.states.packed 的逆：{dtype: "f4" 或 "f8", bdata, shape} → {shape, values}（values 是 Float64Array，
 * 每个数与 Python 的 float32 或 float64 张量完全相同）。 */
export function unpack(spec) {
  const size = { f4: 4, f8: 8 }[spec.dtype];
  if (!size) throw new Error(`只认识 float32 与 float64 的数组，收到的是 ${spec.dtype}`);
  const bytes = Uint8Array.from(atob(spec.bdata), (c) => c.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  const values = new Float64Array(bytes.length / size);
  for (let i = 0; i < values.length; i++) {
    values[i] = size === 4 ? view.getFloat32(4 * i, true) : view.getFloat64(8 * i, true); // 小端
  }
  return { shape: spec.shape.split(",").map(Number), values };
}

const models = new WeakMap(); // data → 解开的模型：每次输入都用同一份，不必重新解码

/** web_data() 里的 config 与权重（state_dict 的名字 → packed）解成模型：{config, p: 名字 → {shape, values}}。 */
export function loadModel(data) {
  if (!models.has(data)) {
    const p = Object.fromEntries(Object.entries(data.weights).map(([name, spec]) => [name, unpack(spec)]));
    models.set(data, { config: data.config, p });
  }
  return models.get(data);
}

// ---------------------------------------------------------------- 部件
/** nn.Linear：X (rows, in) → X Wᵀ + b (rows, out)；W 的形状是 (out, in)，与 PyTorch 相同。 */
export function linear(X, rows, W, b) {
  const [out, inn] = W.shape;
  const w = W.values;
  const Y = new Float64Array(rows * out);
  for (let t = 0; t < rows; t++) {
    for (let o = 0; o < out; o++) {
      let sum = b.values[o];
      for (let i = 0; i < inn; i++) sum += X[t * inn + i] * w[o * inn + i];
      Y[t * out + o] = sum;
    }
  }
  return Y;
}

/** LayerNorm：每一行减去自己的均值、除以自己的标准差（有偏方差 + eps 再开方），再乘 gamma 加 beta。 */
export function layerNorm(X, rows, gamma, beta, eps = 1e-5) {
  const d = gamma.values.length;
  const Y = new Float64Array(rows * d);
  for (let t = 0; t < rows; t++) {
    const row = X.subarray(t * d, (t + 1) * d);
    const mu = row.reduce((s, x) => s + x, 0) / d;
    const sd = Math.sqrt(row.reduce((s, x) => s + (x - mu) ** 2, 0) / d + eps);
    for (let i = 0; i < d; i++) Y[t * d + i] = (gamma.values[i] * (row[i] - mu)) / sd + beta.values[i];
  }
  return Y;
}

/** X (rows, in) 乘以 W (in, out)：行向量记号的 X W（SelfAttention 的 W_Q、W_K、W_V，没有偏置）。 */
export function matmul(X, rows, W) {
  const [inn, out] = W.shape;
  const w = W.values;
  const Y = new Float64Array(rows * out);
  for (let t = 0; t < rows; t++) {
    for (let o = 0; o < out; o++) {
      let sum = 0;
      for (let i = 0; i < inn; i++) sum += X[t * inn + i] * w[i * out + o];
      Y[t * out + o] = sum;
    }
  }
  return Y;
}

/** 每一行就地做 softmax（先减去最大值）；-Infinity 的格子（被掩码挡住）得到 0，整行都被挡住时全是 0
 * （与 scaled_dot_product_attention 的 nan_to_num 相同）。 */
export function softmaxRows(Z, rows, cols) {
  for (let t = 0; t < rows; t++) {
    const row = Z.subarray(t * cols, (t + 1) * cols);
    const max = row.reduce((m, z) => Math.max(m, z), -Infinity);
    if (max === -Infinity) {
      row.fill(0);
      continue;
    }
    let sum = 0;
    for (let j = 0; j < cols; j++) sum += row[j] = Math.exp(row[j] - max);
    for (let j = 0; j < cols; j++) row[j] /= sum;
  }
  return Z;
}

/** sinusoidal_positions：(S, d)，PE[pos, 2i] = sin(pos / 10000^(2i/d))，PE[pos, 2i+1] = cos(…)；第 t 行是绝对位置 offset + t。
 * 与 PyTorch 的默认 dtype=float32 一样每一步取 float32（Math.fround）。PyTorch 的 float32 sin、cos 不总是最近的 float32：
 * 长度 17 时约二十分之一的数与这里差一个 ulp（相对 6e-8），模型输出因此相差不到 1e-6（相对）。
 * float32 = false 对应 dtype=torch.float64：每一步都是 float64。 */
export function sinusoidalPositions(S, d, { float32 = true, offset = 0 } = {}) {
  const round = float32 ? Math.fround : (x) => x;
  const PE = new Float64Array(S * d);
  for (let twoI = 0; twoI < d; twoI += 2) {
    const scale = round(10000 ** round(twoI / d));
    for (let pos = 0; pos < S; pos++) {
      const angle = round((offset + pos) / scale);
      PE[pos * d + twoI] = round(Math.sin(angle));
      PE[pos * d + twoI + 1] = round(Math.cos(angle));
    }
  }
  return PE;
}

/** scaled_dot_product_attention：Q (S, d_k)，K (Sk, d_k)，V (Sk, d_v) → {out (S, d_v), alpha (S, Sk)}，分数 Q Kᵀ / √d_k。
 * allowed(i, j) 为假时位置 i 不读 j（掩码），那一格的权重是 0。Sk 缺省为 S（自注意力）；交叉注意力里 Q 与 K 的行数不同。 */
export function scaledDotProductAttention(Q, K, V, S, dk, dv, allowed, Sk = S) {
  const alpha = new Float64Array(S * Sk).fill(-Infinity);
  for (let i = 0; i < S; i++) {
    for (let j = 0; j < Sk; j++) {
      if (!allowed(i, j)) continue;
      let dot = 0;
      for (let k = 0; k < dk; k++) dot += Q[i * dk + k] * K[j * dk + k];
      alpha[i * Sk + j] = dot / Math.sqrt(dk);
    }
  }
  softmaxRows(alpha, S, Sk);
  const out = new Float64Array(S * dv);
  for (let i = 0; i < S; i++) {
    for (let j = 0; j < Sk; j++) {
      if (!allowed(i, j)) continue;
      for (let k = 0; k < dv; k++) out[i * dv + k] += alpha[i * Sk + j] * V[j * dv + k];
    }
  }
  return { out, alpha };
}

/** SelfAttention（单头）：X (S, d_model) → {out (S, d_v), alpha (S, S)}，Q = X W_Q、K = X W_K、V = X W_V。 */
export function selfAttention(X, S, p, prefix, allowed) {
  const [WQ, WK, WV] = ["W_Q", "W_K", "W_V"].map((w) => p[`${prefix}.${w}`]);
  const [Q, K, V] = [WQ, WK, WV].map((W) => matmul(X, S, W));
  return scaledDotProductAttention(Q, K, V, S, WQ.shape[1], WV.shape[1], allowed);
}

/** 矩阵 X (rows, d) 的第 lo … hi 列，(rows, hi − lo)。 */
function columns(X, rows, d, lo, hi) {
  const Y = new Float64Array(rows * (hi - lo));
  for (let t = 0; t < rows; t++) Y.set(X.subarray(t * d + lo, t * d + hi), t * (hi - lo));
  return Y;
}

/** 多头注意力的读取部分（MultiHeadSelfAttention 的 split_heads → 缩放点积 → merge_heads）：Q (S, d) 与 K、V (Sk, d)
 * 已经投影好，第 h 个头读它们的第 h·d_k … (h+1)·d_k 列 → {heads (S, d) 各头的结果首尾拼接（还没乘 W_O），
 * alpha: 每个头一个 (S, Sk)}。allowed 与 scaledDotProductAttention 的相同。 */
export function attendHeads(Q, K, V, S, Sk, d, nHeads, allowed) {
  const dk = d / nHeads;
  const heads = new Float64Array(S * d);
  const alpha = [];
  for (let h = 0; h < nHeads; h++) {
    const q = columns(Q, S, d, h * dk, (h + 1) * dk);
    const [k, v] = [K, V].map((M) => columns(M, Sk, d, h * dk, (h + 1) * dk));
    const head = scaledDotProductAttention(q, k, v, S, dk, dk, allowed, Sk);
    for (let i = 0; i < S; i++) heads.set(head.out.subarray(i * dk, (i + 1) * dk), i * d + h * dk);
    alpha.push(head.alpha);
  }
  return { heads, alpha };
}

/** KVCache：每层存下已经算过的位置的 K、V（各是 T × d 的矩阵，各头的列并排），新位置的接在末尾，之前的不再重算。 */
export class KVCache {
  constructor() {
    this.K = [];
    this.V = [];
    this.T = []; // 每层缓存的位置数
  }

  /** 已经缓存的位置数 T：第 0 层的行数（与 Python 的 KVCache.length 相同，一次前向里第 0 层接上新位置之后就变了）。 */
  get length() {
    return this.T[0] ?? 0;
  }

  /** 把第 layer 层新算出的 S 个位置的 K、V（S × d）接到缓存末尾，返回完整的 K、V（(T + S) × d）。 */
  append(layer, K, V, S) {
    const join = (old, neu) => {
      if (!old) return neu;
      const all = new Float64Array(old.length + neu.length);
      all.set(old);
      all.set(neu, old.length);
      return all;
    };
    [this.K[layer], this.V[layer]] = [join(this.K[layer], K), join(this.V[layer], V)];
    this.T[layer] = (this.T[layer] ?? 0) + S;
    return [this.K[layer], this.V[layer]];
  }
}

/** MultiHeadSelfAttention：X (S, d) → {out (S, d), alpha: 每个头一个 (S, T)}。
 * 第 h 个头读 Q、K、V 的第 h·d_k … (h+1)·d_k 列，分数 Q Kᵀ / √d_k；allowed(i, j) 为假时位置 i 不读 j（默认不加掩码）。
 * 传入 cache 时 X 是接在缓存里的位置之后的新位置：本层的 K、V 接到缓存末尾，Query 读缓存里的全部 T 个位置；不传时 T = S。 */
export function multiHeadSelfAttention(X, S, p, prefix, nHeads, allowed = () => true, cache = null, layer = 0) {
  const [Q, Knew, Vnew] = ["W_Q", "W_K", "W_V"].map((w) => linear(X, S, p[`${prefix}.${w}.weight`], p[`${prefix}.${w}.bias`]));
  const [K, V] = cache ? cache.append(layer, Knew, Vnew, S) : [Knew, Vnew];
  const d = p[`${prefix}.W_Q.weight`].shape[0];
  const { heads, alpha } = attendHeads(Q, K, V, S, K.length / d, d, nHeads, allowed);
  return { out: linear(heads, S, p[`${prefix}.W_O.weight`], p[`${prefix}.W_O.bias`]), alpha };
}

/** MultiHeadSelfAttention 加因果掩码：位置 i 只读 j ≤ i。带 KV cache 时新位置 i 接在缓存的 offset 个位置之后，
 * 读缓存里的全部历史和自己之前的新位置（j ≤ offset + i）。 */
export function causalSelfAttention(X, S, p, prefix, nHeads, cache = null, layer = 0, offset = 0) {
  return multiHeadSelfAttention(X, S, p, prefix, nHeads, (i, j) => j <= offset + i, cache, layer);
}

/** 逐位置前馈网络 second(relu(first(x)))：first、second 是两个 nn.Linear 的名字（TinyDecoder 的 W_1、W_2，
 * PronounResolver 的 ffn.0、ffn.2）。 */
export function ffn(X, S, p, first, second) {
  const H = linear(X, S, p[`${first}.weight`], p[`${first}.bias`]).map((x) => Math.max(0, x));
  return linear(H, S, p[`${second}.weight`], p[`${second}.bias`]);
}

/** X ← X + Y（逐元素，残差连接）。 */
export const addInPlace = (X, Y) => X.forEach((x, i) => (X[i] = x + Y[i]));

/** TransformerBlock(norm_first=False) 的前向（post-norm，原论文；不加掩码）：X (S, d) → {X (S, d), alpha}，
 * X ← LN₁(X + Attn(X))，X ← LN₂(X + FFN(X))。参数名以 prefix 开头（attn.…、ffn.W_1、norm1.gamma……）。 */
export function postNormBlock(X, S, p, prefix, nHeads) {
  const norm = (n, Y) => layerNorm(Y, S, p[`${prefix}.${n}.gamma`], p[`${prefix}.${n}.beta`]);
  const { out, alpha } = multiHeadSelfAttention(X, S, p, `${prefix}.attn`, nHeads);
  addInPlace(out, X);
  const H = norm("norm1", out);
  const F = ffn(H, S, p, `${prefix}.ffn.W_1`, `${prefix}.ffn.W_2`);
  addInPlace(F, H);
  return { X: norm("norm2", F), alpha };
}

/** 最大的分数的下标（相同时取第一个，与 torch.argmax 相同）：贪心解码每一步选的词。 */
export function argmax(scores) {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i] > scores[best]) best = i;
  return best;
}

// ---------------------------------------------------------------- 模型
/** TinyDecoder 的前向：ids（长 S 的 token 编号）→ {logits (S, V), weights: 每层每个头的 alpha (S, T)}。
 * Embedding × √d + 正弦位置 → 每个 pre-norm 块 X ← X + Attn(LN₁(X))、X ← X + FFN(LN₂(X)) → LN_out → W_out。
 * 传入 cache（KVCache）时 ids 只含新 token，位置从 cache.length 接着数，T = cache.length + S；不传时 T = S。 */
export function tinyDecoder(model, ids, cache = null) {
  const { config, p } = model;
  if (!config.norm_first) throw new Error("只实现了 pre-norm（norm_first=True）的 TinyDecoder");
  const d = config.d_model;
  const S = ids.length;
  const offset = cache ? cache.length : 0;
  const E = p["embed.weight"].values;
  const X = sinusoidalPositions(S, d, { offset });
  ids.forEach((id, t) => {
    for (let i = 0; i < d; i++) X[t * d + i] += E[id * d + i] * Math.sqrt(d);
  });
  const weights = [];
  for (let l = 0; l < config.n_layers; l++) {
    const block = `blocks.${l}`;
    const norm = (n) => layerNorm(X, S, p[`${block}.${n}.gamma`], p[`${block}.${n}.beta`]);
    const { out, alpha } = causalSelfAttention(norm("norm1"), S, p, `${block}.attn`, config.n_heads, cache, l, offset);
    addInPlace(X, out);
    addInPlace(X, ffn(norm("norm2"), S, p, `${block}.ffn.W_1`, `${block}.ffn.W_2`));
    weights.push(alpha);
  }
  const logits = linear(layerNorm(X, S, p["norm_out.gamma"], p["norm_out.beta"]), S, p["W_out.weight"], p["W_out.bias"]);
  return { logits, weights };
}

/** PronounResolver 的前向：一句话的 ids（长 S，0 是填充）→ {A1, A2}：两层的注意力权重，各 (S, S)。
 * X = E(ids) + P(位置) → H = LN₁(X + Attn₁(X)) → H = LN₂(H + FFN(H)) → Attn₂(H) 只取权重；都不读填充位置。 */
export function pronounResolver(model, ids) {
  const { config, p } = model;
  const d = config.d_model;
  const S = ids.length;
  const [E, P] = [p["E.weight"].values, p["P.weight"].values];
  const X = new Float64Array(S * d);
  ids.forEach((id, t) => {
    for (let i = 0; i < d; i++) X[t * d + i] = E[id * d + i] + P[t * d + i];
  });
  const allowed = (i, j) => ids[j] !== 0;
  const first = selfAttention(X, S, p, "attn1", allowed);
  addInPlace(X, first.out);
  const H = layerNorm(X, S, p["norm1.weight"], p["norm1.bias"]);
  addInPlace(H, ffn(H, S, p, "ffn.0", "ffn.2"));
  const { alpha } = selfAttention(layerNorm(H, S, p["norm2.weight"], p["norm2.bias"]), S, p, "attn2", allowed);
  return { A1: first.alpha, A2: alpha };
}
