/* 对称矩阵的最大特征值（网页实时面的谱范数：σ_max(M)² 是 MᵀM 的最大特征值，与 seqlab.rnn.log10_spectral_norms
 * 用的 torch.linalg.eigvalsh 是同一个量）。先用 Householder 变换化成三对角矩阵（特征值不变），再用 Sturm 序列对分：
 * 每一步数出有多少个特征值小于 x，一直分到相邻的两个双精度数——结果的误差约是最大特征值的 1e-16 倍。
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
