/* Python 的数字与字符串写法（repr、format 的 "g"、".1f"、","），逐字照搬：网页实时面的中文消息与说明
 * 要与 Python 面一字不差。整数用 BigInt（对应 Python 的 int），小数用 Number（对应 float）。 */

/** 把有限的 double 精确拆成 m·2^e（m、e 是 BigInt 与整数）。 */
function decompose(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const hi = view.getUint32(0);
  const exp = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  if (exp === 0) return { m, e: -1074 };
  m |= 1n << 52n;
  return { m, e: exp - 1075 };
}

/** round(|x|·10^k)，与 Python 一样按 x 的精确值、四舍六入五成双。 */
function roundScaled(x, k) {
  const { m, e } = decompose(x);
  let num = k >= 0 ? m * 10n ** BigInt(k) : m;
  let den = k >= 0 ? 1n : 10n ** BigInt(-k);
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  const q = num / den;
  const r2 = 2n * (num % den);
  return r2 > den || (r2 === den && q % 2n === 1n) ? q + 1n : q;
}

function special(x) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  return null;
}

const sign = (x) => (x < 0 || Object.is(x, -0) ? "-" : "");

/** 十进制数字串 digits（第一位的数量级是 10^e）写成定点（至少 ``minFrac`` 位小数）或科学记数法。 */
function place(digits, e, scientific, minFrac) {
  if (scientific) {
    const rest = digits.slice(1);
    return `${digits[0]}${rest ? `.${rest}` : ""}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  let whole;
  let frac;
  if (e >= 0) {
    const padded = digits.padEnd(e + 1, "0");
    [whole, frac] = [padded.slice(0, e + 1), padded.slice(e + 1)];
  } else {
    [whole, frac] = ["0", "0".repeat(-e - 1) + digits];
  }
  frac = frac.padEnd(minFrac, "0");
  return frac ? `${whole}.${frac}` : whole;
}

const exponent = (x) => Number(Math.abs(x).toExponential().split("e")[1]);

/** Python 的 ``format(x, ".{d}f")``。 */
export function fixed(x, d) {
  x = Number(x);
  const s = special(x);
  if (s) return s;
  const digits = roundScaled(x, d).toString().padStart(d + 1, "0");
  return sign(x) + (d ? `${digits.slice(0, -d)}.${digits.slice(-d)}` : digits);
}

/** Python 的 ``round(x, ndigits)``（x 是小数）：按 x 的精确值四舍六入五成双，再读回最近的 double（与 Python 相同，
 * 经过十进制的数字串；直接 Math.round(x·10^k) / 10^k 在乘法的舍入上会差一位）。 */
export function pyRound(x, ndigits) {
  if (special(x)) return x;
  const y = Number(`${roundScaled(x, ndigits)}e${-ndigits}`);
  return sign(x) ? -y : y;
}

/** Python 的 ``format(x, "g")``（6 位有效数字，去掉末尾的 0）或 ``format(x, ".{p}g")``（p 位有效数字）；
 * 整数（BigInt）先转成 float，与 Python 相同。 */
export function formatG(x, p = 6) {
  x = Number(x);
  const s = special(x);
  if (s) return s;
  if (x === 0) return `${sign(x)}0`;
  let e = exponent(x);
  let q = roundScaled(x, p - 1 - e);
  if (q >= 10n ** BigInt(p)) q = roundScaled(x, p - 1 - ++e);
  const digits = q.toString().replace(/0+$/, "") || "0";
  return sign(x) + place(digits, e, e < -4 || e >= p, 0);
}

/** Python 的 ``format(x, ".{d}e")``：d 位小数的科学记数法，指数至少两位。 */
export function exponential(x, d) {
  x = Number(x);
  const s = special(x);
  if (s) return s;
  if (x === 0) return `${sign(x)}${fixed(0, d)}e+00`;
  let e = exponent(x);
  let q = roundScaled(x, d - e);
  if (q >= 10n ** BigInt(d + 1)) q = roundScaled(x, d - ++e); // 进位进到了下一个数量级（9.96 → 1.0e+01）
  return sign(x) + place(q.toString(), e, true, 0);
}

/** Python 的 ``repr``：字符串、整数（BigInt）、小数（Number，最短的往返写法）、布尔值。 */
export function repr(value) {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const escaped = value.replace(/[\\\n\r\t]/g, (c) => ({ "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" })[c]);
    return quote + (quote === "'" ? escaped.replaceAll("'", "\\'") : escaped) + quote;
  }
  const s = special(value);
  if (s) return s;
  if (value === 0) return `${sign(value)}0.0`;
  const [mantissa, e] = Math.abs(value).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  return sign(value) + place(digits, Number(e), Number(e) < -4 || Number(e) >= 16, 1);
}

/** Python 的 ``format(value, ".40")`` 作用在 repr 上：最多 40 个字符（按码位数）。 */
export const shortRepr = (value) => Array.from(repr(value)).slice(0, 40).join("");

/** Python 的 ``format(n, ",")``（整数，千位分隔）。 */
export const thousands = (n) => BigInt(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
