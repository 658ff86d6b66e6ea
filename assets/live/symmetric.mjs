/* 对称矩阵的最大特征值与方阵的最大奇异值（网页实时面的谱范数：σ_max(M)² 是 MᵀM 的最大特征值，与
 * seqlab.rnn.log10_spectral_norms 用的 torch.linalg.eigvalsh 是同一个量）。
 * - largestEigenvalue：先用 Householder 变换化成三对角矩阵（特征值不变），再用 Sturm 序列对分：每一步数出有多少个
 *   特征值小于 x，一直分到相邻的两个双精度数——误差约是最大特征值的 1e-16 倍，代价约 n³ 次乘加。
 * - largestSquaredSingularValue：幂迭代，并用 Kato–Temple 不等式给出保证的误差界；界不够小时才退回上面的办法。
 * 矩阵按行存在 Float64Array 里：n × n 的矩阵第 i 行是 values[i·n … i·n + n)。 */

/** 对称矩阵 A（n × n，不修改；只读它的下三角）的三对角形式：对角线 diag（n 个）与次对角线 off（n - 1 个）。
 * 每一步用一个 Householder 反射把一列对角线以下的部分消成只剩一个数，只更新下三角（LAPACK dsytd2 的做法）。 */
export function tridiagonal(A, n) {
  const a = Float64Array.from(A);
  const diag = new Float64Array(n);
  const off = new Float64Array(Math.max(n - 1, 0));
  const v = new Float64Array(n);
  const p = new Float64Array(n);
  for (let k = 0; k < n - 2; k++) {
    // 把第 k 列对角线以下的部分 x = a[k+1…, k] 反射成 (α, 0, …, 0)，α = -sign(x₀)‖x‖
    let norm2 = 0;
    for (let i = k + 1; i < n; i++) norm2 += a[i * n + k] ** 2;
    diag[k] = a[k * n + k];
    if (norm2 === 0) continue; // 这一列已经是三对角的了
    const x0 = a[(k + 1) * n + k];
    const alpha = x0 > 0 ? -Math.sqrt(norm2) : Math.sqrt(norm2);
    off[k] = alpha;
    for (let i = k + 1; i < n; i++) v[i] = a[i * n + k];
    v[k + 1] -= alpha;
    const b = 1 / (norm2 - alpha * x0); // 2 / vᵀv，vᵀv = ‖x‖² - 2αx₀ + α² = 2(‖x‖² - αx₀)
    // 右下角 A ← H A H，H = I - b v vᵀ：p = b A v（由下三角算），q = p - (b vᵀp / 2) v，A ← A - v qᵀ - q vᵀ
    p.fill(0, k + 1);
    for (let i = k + 1; i < n; i++) {
      const row = i * n;
      let sum = 0;
      for (let j = k + 1; j < i; j++) {
        sum += a[row + j] * v[j];
        p[j] += a[row + j] * v[i];
      }
      p[i] += sum + a[row + i] * v[i];
    }
    let vp = 0;
    for (let i = k + 1; i < n; i++) {
      p[i] *= b;
      vp += v[i] * p[i];
    }
    const half = (b * vp) / 2;
    for (let i = k + 1; i < n; i++) p[i] -= half * v[i];
    for (let i = k + 1; i < n; i++) {
      const row = i * n;
      const vi = v[i];
      const pi = p[i];
      for (let j = k + 1; j <= i; j++) a[row + j] -= vi * p[j] + pi * v[j];
    }
  }
  if (n >= 2) {
    diag[n - 2] = a[(n - 2) * n + n - 2];
    off[n - 2] = a[(n - 1) * n + n - 2];
  }
  diag[n - 1] = a[(n - 1) * n + n - 1];
  return { diag, off };
}

/** 三对角矩阵 T - x I 的 LDLᵀ 分解里负的主元个数，即 T 的特征值中小于 x 的个数（Sturm 序列）。 */
function countBelow(diag, off, x) {
  let count = 0;
  let q = 1;
  for (let i = 0; i < diag.length; i++) {
    q = diag[i] - x - (i > 0 ? (off[i - 1] * off[i - 1]) / q : 0);
    if (q === 0) q = -Number.MIN_VALUE; // 恰好为零的主元换成极小的负数（标准做法）
    if (q < 0) count++;
  }
  return count;
}

/** 对称矩阵 A（n × n）的最大特征值。 */
export function largestEigenvalue(A, n) {
  const { diag, off } = tridiagonal(A, n);
  // Gershgorin 圆盘给出一个一定包含全部特征值的区间
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const radius = (i > 0 ? Math.abs(off[i - 1]) : 0) + (i < n - 1 ? Math.abs(off[i]) : 0);
    lo = Math.min(lo, diag[i] - radius);
    hi = Math.max(hi, diag[i] + radius);
  }
  for (;;) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) return mid;
    if (countBelow(diag, off, mid) < n) lo = mid; // 还有特征值不小于 mid：最大的在右半边
    else hi = mid;
  }
}

/** 两行的点积 Σ_k x[xi + k]·y[yi + k]，k = 0 … n-1：四路分开累加（更快；求和顺序不影响结果的有效数字）。 */
export function dot(x, xi, y, yi, n) {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let k = 0;
  for (; k + 3 < n; k += 4) {
    s0 += x[xi + k] * y[yi + k];
    s1 += x[xi + k + 1] * y[yi + k + 1];
    s2 += x[xi + k + 2] * y[yi + k + 2];
    s3 += x[xi + k + 3] * y[yi + k + 3];
  }
  for (; k < n; k++) s0 += x[xi + k] * y[yi + k];
  return s0 + s1 + s2 + s3;
}

/** M Mᵀ（n × n，对称）：方阵的 MMᵀ 与 MᵀM 特征值相同。 */
export function gram(M, n) {
  const G = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = a; b < n; b++) {
      const sum = dot(M, a * n, M, b * n, n);
      G[a * n + b] = sum;
      G[b * n + a] = sum;
    }
  }
  return G;
}

const RELATIVE_BOUND = 1e-15; // 幂迭代的结果被接受时，保证的相对误差上界
const MARGIN = 1e-13; // Cholesky 检验时留的相对余量（远大于分解本身约 n·ε 的舍入）
const MAX_ITERATIONS = 12;

/** c I - G（n × n，G 对称）能做 Cholesky 分解，即 c I - G 正定：G 的特征值都小于 c。 */
function allBelow(G, n, c) {
  const L = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    const pivot = c - G[j * n + j] - dot(L, j * n, L, j * n, j);
    if (!(pivot > 0)) return false;
    const ljj = Math.sqrt(pivot);
    L[j * n + j] = ljj;
    for (let i = j + 1; i < n; i++) L[i * n + j] = (-G[i * n + j] - dot(L, i * n, L, j * n, j)) / ljj;
  }
  return true;
}

/** 方阵 M（n × n）的 σ_max(M)² = λ_max(MMᵀ)。start 是一个起始向量（例如上一个乘积的左奇异向量，长度 n，会被改写成
 * 这一个的近似左奇异向量）。
 *
 * 幂迭代 x ← MMᵀx / ‖MMᵀx‖，Rayleigh 商 θ = xᵀMMᵀx ≤ λ_max 总成立；接受 θ 之前要证明 λ_max 不比它大多少：
 * - Kato–Temple 不等式：若 λ_max 以外的特征值都不超过 α < θ，则 λ_max ≤ θ + ‖MMᵀx - θx‖² / (θ - α)。MMᵀ 半正定，
 *   λ₂ ≤ tr(MMᵀ) - λ_max ≤ ‖M‖_F² - θ，取 α = ‖M‖_F² - θ；这个界不超过 θ 的 RELATIVE_BOUND 倍就接受 θ。
 * - 最大奇异值与别的挨得很近时（例如正交矩阵的幂，奇异值全都相等）上面的 α 不小于 θ；这时若 θ 已是一个收敛的特征值，
 *   就用 Cholesky 分解检验 (1 + MARGIN)θ I - MMᵀ 正定，即 λ_max < (1 + MARGIN)θ。
 * 都不成立（或残差缩小得太慢，照当前的比例在 MAX_ITERATIONS 步内到不了要求）时退回三对角化与对分。 */
export function largestSquaredSingularValue(M, n, start) {
  const frobenius2 = dot(M, 0, M, 0, n * n);
  const x = start;
  const w = new Float64Array(n);
  const y = new Float64Array(n);
  let previous = Infinity; // 上一步的残差平方
  for (let it = 0; it < MAX_ITERATIONS; it++) {
    const norm2 = dot(x, 0, x, 0, n);
    if (!(norm2 > 0)) break;
    const scale = 1 / Math.sqrt(norm2);
    for (let i = 0; i < n; i++) x[i] *= scale;
    w.fill(0); // w = Mᵀx
    for (let i = 0; i < n; i++) {
      const xi = x[i];
      for (let j = 0; j < n; j++) w[j] += M[i * n + j] * xi;
    }
    for (let i = 0; i < n; i++) y[i] = dot(M, i * n, w, 0, n); // y = M w = MMᵀx
    const theta = dot(x, 0, y, 0, n);
    let residual2 = 0;
    for (let i = 0; i < n; i++) residual2 += (y[i] - theta * x[i]) ** 2;
    const gap = 2 * theta - frobenius2;
    const target = gap > 0 ? RELATIVE_BOUND * theta * gap : (MARGIN * theta) ** 2;
    if (residual2 <= target) {
      if (gap > 0 || allBelow(gram(M, n), n, (1 + MARGIN) * theta)) return theta;
      break;
    }
    // 残差每步约按同一比例缩小：照这个比例在剩下的步数里到不了 target，就不必再迭代（直接退回）
    const rate = residual2 / previous;
    previous = residual2;
    if (it >= 2 && (rate >= 1 || residual2 * rate ** (MAX_ITERATIONS - 1 - it) > target)) break;
    x.set(y);
  }
  return largestEigenvalue(gram(M, n), n);
}
