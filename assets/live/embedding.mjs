/* 第 1.2 节的小模型在浏览器里（seqlab/embedding.py 的 context_vectors、MaskedWordModel.hidden、WindowContext 与
 * cosine 的对应）：分词 → 查 ID → X = E[ids] → H[t] = tanh(Σ_k X[t+k] W_k + b)（行向量；W 存的是 W_kᵀ）。
 * 权重、词表与分词器要补的词来自 Python 的 seqlab.states.x_matrix.embedding_data()（float32 原样），这里一律用 float64 算，
 * 与 Python 状态里 float64 的模型相同。两个探索器（x_matrix、apple_context）共用。 */
import { unpack } from "./nn.mjs";
import { loadSegmenter, segment } from "./segment.mjs";

const models = new WeakMap(); // data → 解开的模型：每次输入都用同一份，不必重新解码

/** 载入网页分词器（jieba-wasm 加本书补的词）；打开“实时计算”时做一次。 */
export function loadEmbedding(data) {
  return loadSegmenter(data.segmenter_words);
}

/** embedding_data() 解成模型：E (V, d)、W (2w+1, d, d)（W[k + w] 就是 W_k，形状 (out, in)）、b (d,)，
 * 以及词表的反查 stoi（词 → ID）与 <unk> 的 ID。 */
export function model(data) {
  if (!models.has(data)) {
    const E = unpack(data.weights["embed.E"]);
    const stoi = new Map(data.itos.map((token, id) => [token, id]));
    models.set(data, {
      E: E.values,
      d: E.shape[1],
      W: unpack(data.weights["context.W"]).values,
      b: unpack(data.weights["context.b"]).values,
      w: data.w,
      stoi,
      unk: stoi.get("<unk>"),
    });
  }
  return models.get(data);
}

/** MaskedWordModel.hidden：ids (S) → X (S·d)，<pad>（ID 0）的输入向量是零；WindowContext：X → H (S·d)，
 * 超出句子两端的 X[t+k] 当作零向量。 */
function hidden(m, ids) {
  const { d, w } = m;
  const S = ids.length;
  const X = new Float64Array(S * d);
  ids.forEach((id, t) => {
    if (id !== 0) X.set(m.E.subarray(id * d, (id + 1) * d), t * d);
  });
  const H = new Float64Array(S * d);
  for (let t = 0; t < S; t++) {
    for (let o = 0; o < d; o++) {
      let pre = m.b[o];
      for (let k = -w; k <= w; k++) {
        if (t + k < 0 || t + k >= S) continue;
        const Wk = (k + w) * d * d + o * d; // W[k + w]（即 W_kᵀ）的第 o 行，也就是 W_k 的第 o 列
        for (let i = 0; i < d; i++) pre += m.W[Wk + i] * X[(t + k) * d + i];
      }
      H[t * d + o] = Math.tanh(pre);
    }
  }
  return { X, H };
}

/** (S·d) 的 Float64Array 按行切成 S 个普通数组（状态的 JSON 形式：tensor.tolist()）。 */
const rows = (M, S, d) => Array.from({ length: S }, (_, t) => Array.from(M.subarray(t * d, (t + 1) * d)));

/** 与 context_vectors 相同：text（已经 clean_text）→ {text, tokens, ids, X (S, d), H (S, d)}，词表外的词用 <unk>。 */
export function contextVectors(data, text) {
  const m = model(data);
  const tokens = segment(text);
  const ids = tokens.map((token) => m.stoi.get(token) ?? m.unk);
  const { X, H } = hidden(m, ids);
  return { text, tokens, ids, X: rows(X, tokens.length, m.d), H: rows(H, tokens.length, m.d) };
}

/** 两个向量的余弦相似度 a·b / √(|a|²·|b|²)：同一个向量与自己的余弦恰好是 1（√(s²) = s），
 * 与 Python 的 cosine 相差只在最后一位。 */
export function cosine(a, b) {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / Math.sqrt(aa * bb);
}
