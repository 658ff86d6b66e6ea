/* 第 1.6 节的编码器—解码器 Transformer（seqlab/encdec.py 的 EncoderDecoderTransformer）在浏览器里的贪心解码。
 * 部件（层归一化、多头注意力、FFN、正弦位置）在 nn.mjs 里；这里把它们组装成 pre-norm 的编码器块与带交叉注意力的
 * 解码器块。权重来自 Python 的 web_data()（float32 原样），一律用 float64 计算。
 * 记号：S 源长度，T 目标长度，d 即 d_model，h 头数。矩阵按行存放在 Float64Array 里。 */
import { addInPlace, argmax, attendHeads, ffn, layerNorm, linear, sinusoidalPositions } from "./nn.mjs";

const everywhere = () => true; // 编码器与交叉注意力不加掩码

/** 名为 name 的 nn.Linear 作用在 X (rows, in) 上。 */
const project = (X, rows, p, name) => linear(X, rows, p[`${name}.weight`], p[`${name}.bias`]);
/** 名为 name 的 LayerNorm 作用在 X (rows, d) 上。 */
const norm = (X, rows, p, name) => layerNorm(X, rows, p[`${name}.gamma`], p[`${name}.beta`]);

/** embed 的第 t 行：Embedding 表 table 的第 id 行 × √d，加上正弦位置 PE 的第 t 行 → (d)。 */
function embedAt(table, id, PE, t, d) {
  const E = table.values;
  const x = new Float64Array(d);
  for (let i = 0; i < d; i++) x[i] = E[id * d + i] * Math.sqrt(d) + PE[t * d + i];
  return x;
}

/** encode：源句 src（长 S）→ M (S, d)。每个 pre-norm 块 X ← X + Attn(LN₁(X))、X ← X + FFN(LN₂(X))（不加掩码），最后 enc_norm。 */
function encode(model, src) {
  const { config, p } = model;
  const [d, S] = [config.d_model, src.length];
  const PE = sinusoidalPositions(S, d);
  const X = new Float64Array(S * d);
  src.forEach((id, t) => X.set(embedAt(p["src_embed.weight"], id, PE, t, d), t * d));
  for (let l = 0; l < config.n_layers; l++) {
    const block = `encoder.${l}`;
    const h = norm(X, S, p, `${block}.norm1`);
    const [Q, K, V] = ["W_Q", "W_K", "W_V"].map((w) => project(h, S, p, `${block}.attn.${w}`));
    const { heads } = attendHeads(Q, K, V, S, S, d, config.n_heads, everywhere);
    addInPlace(X, project(heads, S, p, `${block}.attn.W_O`));
    addInPlace(X, ffn(norm(X, S, p, `${block}.norm2`), S, p, `${block}.ffn.W_1`, `${block}.ffn.W_2`));
  }
  return norm(X, S, p, "enc_norm");
}

/** EncoderDecoderTransformer.greedy：src（长 S）贪心解码 T 步 → {ids（长 T）, cross: 每层每个头一个 (T, S) 的交叉注意力权重}。
 * Python 每一步把已生成的前缀整段重算；因果掩码下第 t 行只依赖前 t 个位置，所以这里每一步只算新的一行，
 * 把各层自注意力的 K、V 存起来给后面的行读（结果相同，只是省去重算）。
 * 解码器的 pre-norm 块：Y ← Y + SelfAttn(LN₁(Y))，Y ← Y + CrossAttn(LN₂(Y), M)，Y ← Y + FFN(LN₃(Y))；最后 dec_norm 与 W_out。 */
export function encoderDecoderGreedy(model, src, T, bosId) {
  const { config, p } = model;
  if (!config.norm_first) throw new Error("只实现了 pre-norm（norm_first=True）的 EncoderDecoderTransformer");
  const [d, S, L, nHeads] = [config.d_model, src.length, config.n_layers, config.n_heads];
  const M = encode(model, src);
  const layers = Array.from({ length: L }, (_, l) => {
    const block = `decoder.${l}`;
    const [K, V] = ["W_K", "W_V"].map((w) => project(M, S, p, `${block}.cross_attn.${w}`)); // 交叉注意力读的 K、V：每句只算一次
    return { block, crossK: K, crossV: V, selfK: new Float64Array(T * d), selfV: new Float64Array(T * d) };
  });
  const cross = layers.map(() => Array.from({ length: nHeads }, () => new Float64Array(T * S)));
  const PE = sinusoidalPositions(T, d);
  const ids = [];
  let y = bosId;
  for (let t = 0; t < T; t++) {
    const x = embedAt(p["tgt_embed.weight"], y, PE, t, d);
    layers.forEach(({ block, crossK, crossV, selfK, selfV }, l) => {
      const h = norm(x, 1, p, `${block}.norm1`);
      const [q, k, v] = ["W_Q", "W_K", "W_V"].map((w) => project(h, 1, p, `${block}.self_attn.${w}`));
      selfK.set(k, t * d);
      selfV.set(v, t * d);
      const own = attendHeads(q, selfK, selfV, 1, t + 1, d, nHeads, everywhere); // 只读到第 t 个位置为止
      addInPlace(x, project(own.heads, 1, p, `${block}.self_attn.W_O`));
      const query = project(norm(x, 1, p, `${block}.norm2`), 1, p, `${block}.cross_attn.W_Q`);
      const read = attendHeads(query, crossK, crossV, 1, S, d, nHeads, everywhere);
      read.alpha.forEach((alpha, head) => cross[l][head].set(alpha, t * S));
      addInPlace(x, project(read.heads, 1, p, `${block}.cross_attn.W_O`));
      addInPlace(x, ffn(norm(x, 1, p, `${block}.norm3`), 1, p, `${block}.ffn.W_1`, `${block}.ffn.W_2`));
    });
    y = argmax(project(norm(x, 1, p, "dec_norm"), 1, p, "W_out"));
    ids.push(y);
  }
  return { ids, cross };
}
