/* 第 1.3 节“雅可比矩阵连乘”的网页实时面：seqlab/states/jacobian.py 的 jacobian_state、seqlab/rnn.py 的
 * recurrent_matrix 与 scaled_products，以及 seqlab/figures/jacobian.py、jacobian_traces.py 的 render、caption 的对应。
 * 三类循环矩阵的固定部分（Q、G、N）与随机输入 E 来自 Python 的 web_data()（float64 原样），所以这里对任意 ρ、β
 * 逐位算出同一个 W_h；tanh RNN 的前向按 Python 的 reproducible_preactivations 的顺序逐位算出同样的 a_t
 * （tanh RNN 可能是混沌的，差一位也会在 100 步后长大）。连乘与求奇异值不必逐位相同：误差约 1e-12，远小于 1e-5。
 * 矩阵按行存在 Float64Array 里：d × d 的矩阵第 i 行是 values[i·d … i·d + d)。 */
import { unpack } from "./nn.mjs";
import { fixed, formatG, pyRound } from "./pyformat.mjs";
import { largestSquaredSingularValue } from "./symmetric.mjs";
import { mlMatrix } from "./vendor.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["matrix", "rho", "beta", "phi", "input_scale", "r"];

const TOL = 1e-9; // states/jacobian.py 的 _TOL
const LOG10_CLIP = 300; // figures/jacobian_traces.py
const CACHE_SIZE = 96; // 与 family_products 的 lru_cache 相同

let ml; // ml-matrix（奇异值分解），load() 载入
let K; // web_data() 的常量：类型的名字、奇异值的下限（说明与图里要用）

export async function load(data) {
  ml = await mlMatrix();
  K = data;
}

// ---------------------------------------------------------------- 常量
const constants = new WeakMap(); // data → 解开的矩阵与缓存

function prepare(data) {
  if (!constants.has(data)) {
    const [Q, G, N, E] = ["Q", "G", "N", "E"].map((name) => unpack(data[name]));
    constants.set(data, {
      d: Q.shape[0], Q: Q.values, G: G.values, N: N.values, E: E.values, cache: new Map(), unit: new Map(),
    });
  }
  return constants.get(data);
}

/** torch.round(x · 10^k) / 10^k（k = LOG10_DECIMALS）：对数值只留 k 位小数（见 states/jacobian.py）。 */
function roundLog10(x, data) {
  const scale = 10 ** data.LOG10_DECIMALS;
  const y = x * scale;
  let n = Math.round(y); // 向上取半；torch.round 是五成双
  if (n - y === 0.5 && n % 2 !== 0) n -= 1;
  return n / scale;
}

// ---------------------------------------------------------------- 循环矩阵（rnn.recurrent_matrix）
/** 谱半径为 ρ 的 W_h（d × d），与 Python 逐位相同：ρQ、(ρG)/ρ(G)、ρI + βN。 */
function recurrentMatrix(kind, rho, beta, c, data) {
  const { d } = c;
  const W = new Float64Array(d * d);
  for (let i = 0; i < d * d; i++) {
    if (kind === "orthogonal") W[i] = rho * c.Q[i];
    else if (kind === "gaussian") W[i] = (rho * c.G[i]) / data.G_radius;
    else W[i] = (i % (d + 1) === 0 ? rho : 0) + beta * c.N[i];
  }
  return W;
}

// ---------------------------------------------------------------- 可复现的前向（states/jacobian.py 的同名部分）
const LN2_HI = 6.93147180369123816490e-1;
const LN2_LO = 1.90821492927058770002e-10;
const INV_LN2 = 1.442695040888963387;
const EXP_TERMS = 14;
const FACTORIAL_INVERSES = Array.from({ length: EXP_TERMS }, (_, n) => {
  let f = 1;
  for (let k = 2; k <= n; k++) f *= k;
  return 1 / f;
});
const bits = new DataView(new ArrayBuffer(8));

/** 2^k（k 是 -1022 … 1023 之间的整数）：直接写出指数位，精确。 */
function pow2(k) {
  bits.setUint32(0, (k + 1023) << 20);
  bits.setUint32(4, 0);
  return bits.getFloat64(0);
}

/** exp(x)，-700 ≤ x ≤ 0：与 Python 的 _exp 逐步相同的运算。 */
function exp(x) {
  const k = Math.floor(x * INV_LN2 + 0.5);
  const r = (x - k * LN2_HI) - k * LN2_LO;
  let p = FACTORIAL_INVERSES[EXP_TERMS - 1];
  for (let n = EXP_TERMS - 2; n >= 0; n--) p = p * r + FACTORIAL_INVERSES[n];
  return p * pow2(k);
}

/** φ′(a_j)（j = BURN_IN … BURN_IN + R_MAX - 1）：tanh RNN a_t = s·e_t + W_h h_{t-1}、h_t = tanh(a_t) 的前向。
 * 返回 R_MAX × d 的 Float64Array。 */
function tanhSlopes(W, inputScale, c, data) {
  const { d } = c;
  const steps = data.BURN_IN + data.R_MAX;
  let h = new Float64Array(d);
  const slopes = new Float64Array(data.R_MAX * d);
  const a = new Float64Array(d);
  for (let t = 0; t < steps; t++) {
    for (let i = 0; i < d; i++) a[i] = inputScale * c.E[t * d + i];
    for (let j = 0; j < d; j++) {
      const hj = h[j];
      for (let i = 0; i < d; i++) a[i] += W[i * d + j] * hj;
    }
    const next = new Float64Array(d);
    for (let i = 0; i < d; i++) {
      const e = exp(Math.max(-2 * Math.abs(a[i]), -700));
      const magnitude = (1 - e) / (1 + e);
      next[i] = a[i] < 0 ? -magnitude : magnitude;
      if (t >= data.BURN_IN) slopes[(t - data.BURN_IN) * d + i] = (4 * e) / ((1 + e) * (1 + e));
    }
    h = next;
  }
  return slopes;
}

// ---------------------------------------------------------------- 连乘（rnn.scaled_products、log10_spectral_norms）
/** out = P J（n × n，都按行存放）。输出按 4 × 4 的小块算：16 个和留在局部变量里，P 的 4 个数与 J 的 4 个数读一次
 * 用四次（比逐个元素求点积快三四倍）；n 不是 4 的倍数时，余下的行与列逐个元素算。 */
function matmulInto(out, P, J, n) {
  const n4 = n - (n % 4);
  for (let i = 0; i < n4; i += 4) {
    const r0 = i * n;
    const r1 = r0 + n;
    const r2 = r1 + n;
    const r3 = r2 + n;
    for (let j = 0; j < n4; j += 4) {
      let c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      let c20 = 0, c21 = 0, c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0;
      for (let k = 0; k < n; k++) {
        const row = k * n + j;
        const b0 = J[row], b1 = J[row + 1], b2 = J[row + 2], b3 = J[row + 3];
        const a0 = P[r0 + k], a1 = P[r1 + k], a2 = P[r2 + k], a3 = P[r3 + k];
        c00 += a0 * b0; c01 += a0 * b1; c02 += a0 * b2; c03 += a0 * b3;
        c10 += a1 * b0; c11 += a1 * b1; c12 += a1 * b2; c13 += a1 * b3;
        c20 += a2 * b0; c21 += a2 * b1; c22 += a2 * b2; c23 += a2 * b3;
        c30 += a3 * b0; c31 += a3 * b1; c32 += a3 * b2; c33 += a3 * b3;
      }
      out[r0 + j] = c00; out[r0 + j + 1] = c01; out[r0 + j + 2] = c02; out[r0 + j + 3] = c03;
      out[r1 + j] = c10; out[r1 + j + 1] = c11; out[r1 + j + 2] = c12; out[r1 + j + 3] = c13;
      out[r2 + j] = c20; out[r2 + j + 1] = c21; out[r2 + j + 2] = c22; out[r2 + j + 3] = c23;
      out[r3 + j] = c30; out[r3 + j + 1] = c31; out[r3 + j + 2] = c32; out[r3 + j + 3] = c33;
    }
  }
  for (let i = 0; i < n; i++) {
    for (let j = i < n4 ? n4 : 0; j < n; j++) {
      let sum = 0;
      for (let k = 0; k < n; k++) sum += P[i * n + k] * J[k * n + j];
      out[i * n + j] = sum;
    }
  }
}

/** 对 r = 1 … R_MAX 给出 P_r = J_t ⋯ J_{t-r+1} = 10^{log10_c[r-1]} · M_r，‖M_r‖_F = 1。每步都缩放回单位大小，
 * 所以乘积超出浮点范围时方向与数量级仍然准确（Python 每隔几步缩放一次，结果相同，只差舍入）。
 * J_j = diag(φ′(a_j)) W_h；slopes 是 R_MAX × d 的 φ′（按时间顺序），线性时为 null（φ′ = 1）。
 * maxAbs[r-1] 是 M_r 最大元素的绝对值（判断 float32 是否装得下）。 */
function scaledProducts(W, slopes, c, data) {
  const { d } = c;
  const R = data.R_MAX;
  const M = [];
  const log10c = new Float64Array(R);
  const maxAbs = new Float64Array(R);
  const store = new Float64Array(R * d * d); // 全部乘积放在一块存储里，M[r-1] 是其中的一段
  let P = new Float64Array(d * d);
  for (let i = 0; i < d; i++) P[i * d + i] = 1;
  const J = new Float64Array(d * d);
  let total = 0;
  for (let r = 1; r <= R; r++) {
    const j = R - r; // J_{t-r+1} 在按时间顺序的第 R - r 个
    for (let i = 0; i < d; i++) {
      const s = slopes ? slopes[j * d + i] : 1;
      for (let k = 0; k < d; k++) J[i * d + k] = s * W[i * d + k];
    }
    const next = store.subarray((r - 1) * d * d, r * d * d);
    matmulInto(next, P, J, d);
    let norm2 = 0;
    for (let i = 0; i < d * d; i++) norm2 += next[i] * next[i];
    const f = Math.sqrt(norm2);
    let largest = 0;
    for (let i = 0; i < d * d; i++) {
      next[i] /= f;
      largest = Math.max(largest, Math.abs(next[i]));
    }
    total += Math.log10(f);
    M.push(next);
    log10c[r - 1] = total;
    maxAbs[r - 1] = largest;
    P = next;
  }
  return { M, log10c, maxAbs };
}

/** float32 从哪个距离起装不下这个乘积：第一次有元素超过 float32 的最大值、第一次全部元素都小于最小正规数。 */
function float32Failure({ log10c, maxAbs }, data) {
  let over = null;
  let under = null;
  log10c.forEach((scale, k) => {
    const log10Max = scale + Math.log10(maxAbs[k]);
    if (over === null && log10Max > Math.log10(data.F32_MAX)) over = k + 1;
    if (under === null && log10Max < Math.log10(data.F32_TINY)) under = k + 1;
  });
  return [over, under];
}

function regime(gammaSigma, rhoW, phi) {
  if (gammaSigma < 1 - TOL) return "decay";
  if (rhoW < 1 - TOL) return "transient";
  if (phi === "linear") return rhoW > 1 + TOL ? "growth" : "critical";
  return "uncertain";
}

/** 范数若先增长（峰值比 r = 1 处高出 log10 0.05 以上）、在 1 < r < R_MAX 处达到峰值，返回峰值的距离。 */
function transientPeak(log10Norm, R) {
  let peak = 0;
  log10Norm.forEach((v, k) => {
    if (v > log10Norm[peak]) peak = k;
  });
  peak += 1;
  return peak > 1 && peak < R && log10Norm[peak - 1] > log10Norm[0] + 0.05 ? peak : null;
}

/** scaledProducts 的乘积，再加上每个乘积的 σ_max(M_r)²（sigma2；与连乘一起是最费时的两步）。 */
function normedProducts(W, slopes, c, data) {
  const products = scaledProducts(W, slopes, c, data);
  const u = Float64Array.from({ length: c.d }, (_, i) => (i === 0 ? 1 : 0)); // 依次是每个乘积的左奇异向量（热启动）
  products.sigma2 = products.M.map((m) => largestSquaredSingularValue(m, c.d, u));
  return products;
}

/** W_h 的乘积。线性 φ 时正交与高斯两类的 W_h = ρA（A 固定），(ρA)ʳ = ρʳAʳ：单位化的乘积 M_r 与 σ_max(M_r) 都与 ρ
 * 无关，尺度只多出 r·log10 ρ。所以这两类在 ρ = 1 的乘积只算一次（缓存），拖动 ρ 时只改尺度；非正规类的
 * ρI + βN 与 tanh 的雅可比矩阵（φ′ 随 ρ 变）没有这样的性质，每次重算。 */
function products(kind, rho, W, slopes, c, data) {
  if (slopes || kind === "nonnormal") return normedProducts(W, slopes, c, data);
  if (!c.unit.has(kind)) c.unit.set(kind, normedProducts(recurrentMatrix(kind, 1, 0, c, data), null, c, data));
  const unit = c.unit.get(kind);
  return { ...unit, log10c: unit.log10c.map((v, k) => v + (k + 1) * Math.log10(rho)) };
}

/** family_products：一类矩阵在一组设置下的 FamilyCurve（状态里的样子）与乘积（不进状态）。 */
function familyProducts(kind, rho, beta, phi, inputScale, c, data) {
  const { d } = c;
  const R = data.R_MAX;
  const W = recurrentMatrix(kind, rho, beta, c, data);
  const slopes = phi === "linear" ? null : tanhSlopes(W, inputScale, c, data);
  const family = products(kind, rho, W, slopes, c, data);
  const log10Norm = Array.from(family.sigma2, (s2, k) => roundLog10(family.log10c[k] + 0.5 * Math.log10(s2), data));
  const [over, under] = float32Failure(family, data);
  // 12 位有效数字（见 Python 的说明）
  const sigmaMax = Number(formatG(Math.sqrt(largestSquaredSingularValue(W, d, new Float64Array(d).fill(1))), 12));
  const rhoW = rho; // 由构造恰好是 ρ（见 Python 的说明）
  const gammaSigma = data.gamma[phi] * sigmaMax;
  const rs = Array.from({ length: R }, (_, k) => k + 1);
  let slopeSum = 0;
  if (slopes) for (const s of slopes) slopeSum += s;
  const curve = {
    kind,
    log10_norm: log10Norm,
    sigma_max_W: sigmaMax,
    rho_W: rhoW,
    gamma_sigma_max: gammaSigma,
    log10_bound: rs.map((r) => roundLog10(r * Math.log10(gammaSigma), data)),
    log10_radius: rs.map((r) => roundLog10(r * Math.log10(rhoW), data)),
    regime: regime(gammaSigma, rhoW, phi),
    peak_r: transientPeak(log10Norm, R),
    f32_overflow_r: over,
    f32_underflow_r: under,
    mean_slope: slopes ? slopeSum / slopes.length : 1,
  };
  return { curve, products: family };
}

/** 按参数缓存（与 Python 的 lru_cache 相同）：只改 r 或所选的矩阵时不必重算。 */
function cachedFamily(kind, rho, beta, phi, inputScale, c, data) {
  const key = [kind, rho, beta, phi, inputScale].join("|");
  if (!c.cache.has(key)) {
    if (c.cache.size >= CACHE_SIZE) c.cache.delete(c.cache.keys().next().value);
    c.cache.set(key, familyProducts(kind, rho, beta, phi, inputScale, c, data));
  }
  return c.cache.get(key);
}

/** 距离 r 处乘积的全部奇异值（log10，从大到小），小于最大值的 10^-SINGULAR_DECADES 倍的画在下限上。 */
function singularValues({ M, log10c }, r, d, data) {
  const matrix = ml.Matrix.from1DArray(d, d, M[r - 1]);
  const options = { computeLeftSingularVectors: false, computeRightSingularVectors: false, autoTranspose: false };
  const sv = new ml.SingularValueDecomposition(matrix, options).diagonal.map((s) => log10c[r - 1] + Math.log10(s));
  return sv.map((v) => roundLog10(Math.max(v, sv[0] - data.SINGULAR_DECADES), data));
}

/** 与 jacobian_state 相同（参数已由 checkAll 检查过）。 */
export function state(values, data) {
  const c = prepare(data);
  const rho = pyRound(values.rho, 6);
  const beta = pyRound(values.beta, 6);
  const inputScale = pyRound(values.input_scale, 6);
  const { matrix, phi } = values;
  const r = Number(values.r);
  const curves = {};
  const singular = {};
  for (const kind of data.kinds) {
    const family = cachedFamily(
      kind, rho, kind === "nonnormal" ? beta : 0, phi, phi === "tanh" ? inputScale : 0, c, data);
    curves[kind] = family.curve;
    singular[kind] = singularValues(family.products, r, c.d, data);
  }
  return {
    matrix, phi, rho, beta, input_scale: inputScale, r, d: Number(values.d), seed: Number(values.seed), curves, singular,
  };
}

// ---------------------------------------------------------------- 说明（figures/jacobian.py）
const latin = (text) => `<span style='font-family:DejaVu Sans,Arial,Helvetica,sans-serif'>${text}</span>`;

function verdict(st) {
  const sel = st.curves[st.matrix];
  const gs = formatG(sel.gamma_sigma_max, 3);
  const head = `ρ(W_h) = ${formatG(sel.rho_W, 3)}，σₘₐₓ(W_h) = ${formatG(sel.sigma_max_W, 3)}`;
  let tail = {
    decay: `γσₘₐₓ = ${gs} < 1：梯度必然指数衰减`,
    transient: `γσₘₐₓ = ${gs} ≥ 1：上界管不住短期增长；ρ < 1 只保证线性时最终衰减`,
    growth: "ρ > 1：线性时 ‖W_hʳ‖₂ ≥ ρʳ，必然增长",
    critical: "ρ = 1：线性时 ‖W_hʳ‖₂ ≥ 1，不会衰减",
    uncertain: `γσₘₐₓ = ${gs} > 1：可能爆炸，但不必然——要看 tanh 饱和多少`,
  }[sel.regime];
  if (st.phi === "tanh") tail += `（平均 φ′ = ${fixed(sel.mean_slope, 2)}）`;
  return `${head}；${tail}`;
}

/** 把 log10 值写成人读的数：0.001 到 1000 之间直接写，否则写成 a×10^k（_fmt）。 */
function humanNumber(v) {
  if (!Number.isFinite(v)) return v < 0 ? "0" : "∞";
  if (v >= -3 && v < 3) return formatG(10 ** v, 3);
  const k = Math.floor(v);
  return `${fixed(10 ** (v - k), 2)}×10^${k}`;
}

export function caption(st) {
  const sel = st.curves[st.matrix];
  const norms = sel.log10_norm;
  const { r } = st;
  const parts = [
    `${K.kind_labels[st.matrix]}：${verdict(st)}。`,
    `r = ${r} 时 ‖∂hₜ/∂hₜ₋ᵣ‖₂ = ${humanNumber(norms[r - 1])}，`,
    `上界 (γσₘₐₓ)ʳ = ${humanNumber(sel.log10_bound[r - 1])}，ρʳ = ${humanNumber(sel.log10_radius[r - 1])}。`,
  ];
  if (sel.peak_r !== null) {
    parts.push(`范数先增长，在 r = ${sel.peak_r} 处达到峰值 ${humanNumber(norms[sel.peak_r - 1])} 后才下降。`);
  }
  if (st.phi === "linear") parts.push("线性 φ 的雅可比矩阵就是 W_h，与输入无关。");
  if (sel.f32_overflow_r !== null) {
    parts.push(
      `⚠ 溢出：从 r = ${sel.f32_overflow_r} 起这个乘积有元素超过 float32 的上限 3.4×10^38，`
      + "训练时用 float32 连乘会得到 inf，损失随之变成 NaN；图中曲线把尺度单独记在对数里、逐步缩放算出，给出的是真实数量级。");
  }
  if (sel.f32_underflow_r !== null) {
    parts.push(
      `下溢：从 r = ${sel.f32_underflow_r} 起乘积的全部元素都小于 float32 的最小正规数 1.2×10^-38，`
      + "再往下是精度逐位丧失的次正规数，小于约 1.4×10^-45 才变成 0。");
  }
  const decades = K.SINGULAR_DECADES;
  if (Object.values(st.singular).some((sv) => sv[0] - sv[sv.length - 1] > decades - 1e-6)) {
    parts.push(
      `右图每类最多画到最大奇异值以下 ${decades} 个数量级：更小的奇异值对梯度的大小没有可见的影响，`
      + "又越来越受舍入误差左右，画在这条下限上。");
  }
  if (Object.values(st.curves).some((cv) => cv.log10_norm.some((v) => !(v > -LOG10_CLIP && v < LOG10_CLIP)))) {
    parts.push(`有的值超出了 10^±${fixed(LOG10_CLIP, 0)}，画在了图的边界上。`);
  }
  return parts.join("");
}

// ---------------------------------------------------------------- 图（figures/jacobian.py 与 jacobian_traces.py）
/** log10 值 → 画在对数轴上的数（保留 4 位有效数字，与 Python 的 float(f"{10**v:.4g}") 相同）；超出 1e±300 的截到边界。 */
const toPlot = (values) => values.map((v) => {
  const clipped = v >= LOG10_CLIP || !(v > -LOG10_CLIP) ? (v >= LOG10_CLIP ? LOG10_CLIP : -LOG10_CLIP) : v;
  return Number(formatG(10 ** clipped, 4));
});

/** 左图纵轴范围（log10）：由三条曲线和 ρ^r 决定。 */
function yRange(st) {
  const sel = st.curves[st.matrix];
  const values = [...Object.values(st.curves).flatMap((cv) => cv.log10_norm), sel.log10_radius[sel.log10_radius.length - 1], 0]
    .map((v) => Math.min(Math.max(v, -LOG10_CLIP), LOG10_CLIP));
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const pad = Math.max(0.5, 0.08 * (hi - lo));
  return [lo - pad, hi + pad];
}

/** 一类矩阵的线：所选的粗实线，其余细点线。 */
const line = (color, chosen, [wide, thin]) => ({ color, width: chosen ? wide : thin, dash: chosen ? "solid" : "dot" });

/** 由 γσₘₐₓ 与 ρ 的判断、设置与距离 r 决定的版面部分：标题、两个子图的标题与 float32 失效区域（decorations）。 */
function decorate(layout, st) {
  const sel = st.curves[st.matrix];
  const setting = `${K.kind_labels[st.matrix]} · φ = ${st.phi} · ρ = ${formatG(st.rho)}`
    + (st.matrix === "nonnormal" ? ` · β = ${formatG(st.beta)}` : "")
    + (st.phi === "tanh" ? ` · 输入幅度 ${formatG(st.input_scale)}` : "")
    + ` · d = ${st.d}`;
  const verdictLine = verdict(st).replace("‖W_hʳ‖₂", latin("‖W_hʳ‖₂"));
  layout.title.text = `<b>${setting}</b><br><span style='font-size:12px'>${verdictLine}</span>`;
  const [leftTitle, rightTitle] = layout.annotations;
  const [lineY, lineY2] = layout.shapes;
  layout.annotations = [leftTitle, { ...rightTitle, text: `r = ${st.r} 时乘积的全部奇异值` }];
  layout.shapes = [lineY, lineY2];
  const R = K.R_MAX;
  for (const [r0, color, text, y, anchor] of [
    [sel.f32_overflow_r, "rgba(181,72,93,0.20)", `从 r = ${sel.f32_overflow_r} 起 float32 上溢为 inf →`, 0.12, "bottom"],
    [sel.f32_underflow_r, "rgba(59,110,165,0.18)", `从 r = ${sel.f32_underflow_r} 起 float32 下溢（次正规数）→`, 0.88, "top"],
  ]) {
    if (r0 === null) continue;
    layout.shapes.push({
      type: "rect", xref: "x", yref: "y domain", x0: r0 - 0.5, x1: R + 0.5, y0: 0, y1: 1,
      fillcolor: color, line: { width: 0 }, layer: "below",
    });
    const inside = r0 <= Math.floor(R / 2); // 色块够宽就把说明写在色块里，否则写在它左边
    layout.annotations.push({
      xref: "x", yref: "y domain", x: inside ? r0 + 1 : r0 - 1, y,
      xanchor: inside ? "left" : "right", yanchor: anchor,
      text: inside ? text.replace(/[ →]+$/, "") : text,
      showarrow: false, font: { size: 12, color: "#b5485d" },
    });
  }
  layout.yaxis.range = yRange(st);
}

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出）改出 patch 改的那些属性——各条轨迹的数据、
 * 所选矩阵的线型与名字、标题、子图标题、失效区域与左图的纵轴范围。轨迹的顺序见 jacobian_traces.py 的 I_*。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  const kinds = Object.keys(st.curves);
  const n = kinds.length;
  const sel = st.curves[st.matrix];
  const colors = kinds.map((_, j) => base.data[j].line.color); // 三类矩阵的颜色（与 KIND_COLORS 相同）
  kinds.forEach((kind, j) => {
    const chosen = kind === st.matrix;
    Object.assign(fig.data[j], {
      y: toPlot(st.curves[kind].log10_norm),
      name: K.kind_labels[kind] + (chosen ? "（所选）" : ""),
      line: line(colors[j], chosen, [3.5, 1.6]),
      opacity: chosen ? 1.0 : 0.6,
    });
    Object.assign(fig.data[n + 4 + j], {
      x: st.singular[kind].map((_, k) => k + 1),
      y: toPlot(st.singular[kind]),
      opacity: chosen ? 1.0 : 0.55,
      line: line(colors[j], chosen, [2.5, 1.2]),
      marker: { size: chosen ? 6 : 3, color: colors[j] },
    });
  });
  fig.data[n].y = toPlot(sel.log10_bound);
  fig.data[n + 1].y = toPlot(sel.log10_radius);
  decorate(fig.layout, st);
  Object.assign(fig.data[n + 2], { x: [st.r, st.r], y: toPlot(fig.layout.yaxis.range) }); // 竖线从纵轴的下端画到上端
  Object.assign(fig.data[n + 3], {
    x: kinds.map(() => st.r),
    y: toPlot(kinds.map((kind) => st.curves[kind].log10_norm[st.r - 1])),
    marker: { ...fig.data[n + 3].marker, size: kinds.map((kind) => (kind === st.matrix ? 13 : 8)) },
  });
  return fig;
}
