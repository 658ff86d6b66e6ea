/* Python 的 random.Random 在浏览器里照样算：同一个种子给出同一串随机数。
 *
 * Python 的 random 模块用梅森旋转（Matsumoto 与 Nishimura 1998 年的 MT19937）：624 个 32 位整数的状态，
 * 整数种子按 32 位一段拆开，用 init_by_array 播种。这里逐行照搬 CPython 的 _randommodule.c 与 random.py
 * 里用到的几个方法（random、getrandbits、_randbelow、shuffle、gauss），tests/js/random.test.mjs 与 Python 的输出逐个对照。 */

const N = 624;
const M = 397;

export class Random {
  /** ``seed`` 是非负整数（number 或 BigInt），与 ``random.Random(seed)`` 相同。 */
  constructor(seed) {
    this.mt = new Uint32Array(N);
    this.index = N;
    this.gaussNext = null;
    let n = BigInt(seed);
    if (n < 0n) n = -n;
    const key = [];
    do {
      key.push(Number(n & 0xffffffffn));
      n >>= 32n;
    } while (n > 0n);
    this.initByArray(key);
  }

  initGenrand(s) {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      mt[i] = Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i;
    }
    this.index = N;
  }

  initByArray(key) {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      mt[i] = (mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) + key[j] + j;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      mt[i] = (mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) - i;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** 下一个 32 位无符号整数（genrand_uint32）。 */
  next32() {
    const mt = this.mt;
    if (this.index >= N) {
      for (let k = 0; k < N; k++) {
        const y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
        mt[k] = mt[(k + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** [0, 1) 里 53 位精度的小数，与 ``random()`` 相同。 */
  random() {
    const a = this.next32() >>> 5;
    const b = this.next32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** ``getrandbits(k)``，0 < k ≤ 32。 */
  getrandbits(k) {
    return this.next32() >>> (32 - k);
  }

  /** [0, n) 里均匀的整数，与 ``_randbelow(n)`` 相同（n < 2³²）。 */
  randbelow(n) {
    const k = 32 - Math.clz32(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** 就地打乱数组，与 ``shuffle(x)`` 相同。 */
  shuffle(x) {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      [x[i], x[j]] = [x[j], x[i]];
    }
    return x;
  }

  /** 正态分布 N(mu, sigma²) 的一个样本，与 ``gauss(mu, sigma)`` 相同（Box–Muller，成对产生、留下一个）。 */
  gauss(mu = 0, sigma = 1) {
    let z = this.gaussNext;
    this.gaussNext = null;
    if (z === null) {
      const x2pi = this.random() * 2 * Math.PI;
      const g2rad = Math.sqrt(-2 * Math.log(1 - this.random()));
      z = Math.cos(x2pi) * g2rad;
      this.gaussNext = Math.sin(x2pi) * g2rad;
    }
    return mu + z * sigma;
  }
}
