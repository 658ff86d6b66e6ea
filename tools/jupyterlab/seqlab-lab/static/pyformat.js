// Python 的格式说明（format spec）的一个子集，与 myst-nb 的 {glue:text}`名字:格式` 显示的数字逐字相同。
//
// 支持 [,][.精度][类型]，类型为 f、e、%、g、d 或省略。舍入按 Python 的方式：对浮点数的精确十进制值
// 四舍六入、恰好一半时取偶数（JavaScript 的 toFixed 在恰好一半时总是进位，所以不直接用它）。

// 浮点数的精确十进制展开：返回 [符号, 整数部分的数字, 小数部分的数字]。
// toFixed(100) 对 |x| < 1e21 给出精确值（双精度数的小数位数有限；更小的数在 100 位之后才有非零数字，
// 不会恰好落在要舍入的那一位的一半上）；更大的双精度数都是整数，BigInt 给出它的全部数字。
function exactDigits(x) {
  const a = Math.abs(x);
  const [int, frac] = a < 1e21 ? a.toFixed(100).split(".") : [BigInt(a).toString(), "0".repeat(100)];
  return [x < 0 || Object.is(x, -0) ? "-" : "", int, frac];
}

// 把数字串 digits（小数点在 point 位之后）保留到小数点后 places 位，四舍六入、一半取偶。
function roundDigits(digits, point, places) {
  const keep = point + places;
  if (keep < 0) return { digits: "0", point: 1 };
  let head = digits.slice(0, keep).split("").map(Number);
  const rest = digits.slice(keep);
  const up = rest[0] > "5" || (rest[0] === "5" && (/[1-9]/.test(rest.slice(1)) || (head.length && head.at(-1) % 2 === 1)));
  if (up) {
    let i = head.length - 1;
    while (i >= 0 && head[i] === 9) head[i--] = 0;
    if (i >= 0) head[i] += 1;
    else { head = [1, ...head]; point += 1; }
  }
  return { digits: head.join("") || "0", point };
}

function group(int) {
  return int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

function fixed(x, places, comma) {
  const [sign, int, frac] = exactDigits(x);
  const r = roundDigits(int + frac, int.length, places);
  let i = r.digits.slice(0, r.point).replace(/^0+(?=\d)/, "") || "0";
  const f = r.digits.slice(r.point);
  if (comma) i = group(i);
  return sign + i + (places > 0 ? "." + f : "");
}

// 科学记数法：有效数字 places + 1 位；返回 [尾数串, 指数]。
function scientific(x, places) {
  if (x === 0) return ["0" + (places > 0 ? "." + "0".repeat(places) : ""), 0];
  const [, int, frac] = exactDigits(x);
  const all = int + frac;
  const first = all.search(/[1-9]/);
  let exp = int.length - 1 - first;
  const r = roundDigits(all.slice(first), 1, places);
  if (r.point === 2) exp += 1;  // 进位多出一位，例如 9.96 → 10.0
  const d = r.digits.slice(0, places + 1);
  return [d[0] + (places > 0 ? "." + d.slice(1) : ""), exp];
}

function expo(x, places) {
  const [m, exp] = scientific(x, places);
  const sign = x < 0 ? "-" : "";
  return sign + m + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
}

// Python 的 "g"：按指数决定用定点还是科学记数法，再去掉末尾的零。
function general(x, places, comma) {
  const p = places === 0 ? 1 : places;
  if (x === 0) return "0";
  const [, exp] = scientific(x, p - 1);
  const strip = s => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (exp >= -4 && exp < p) return strip(fixed(x, p - 1 - exp, comma));
  const [m, e] = scientific(x, p - 1);
  return (x < 0 ? "-" : "") + strip(m) + "e" + (e < 0 ? "-" : "+") + String(Math.abs(e)).padStart(2, "0");
}

/**
 * 按 Python 的 ``format(value, spec)`` 格式化一个数（本书用到的子集）。
 * 不支持的格式说明、或 Python 会报错的组合（浮点数配 "d"）抛出 Error。
 */
export function pyformat(value, spec) {
  const m = /^(,)?(?:\.(\d+))?([fFeE%gGd])?$/.exec(spec);
  if (!m) throw new Error("不支持的格式说明：" + spec);
  const [, comma, prec, type] = m;
  const places = prec === undefined ? 6 : Number(prec);
  if (type === "d") {
    if (!Number.isInteger(value) || prec !== undefined) throw new Error("'d' 只用于整数");
    return comma ? (value < 0 ? "-" : "") + group(String(Math.abs(value))) : String(value);
  }
  if (!Number.isFinite(value)) return Number.isNaN(value) ? "nan" : (value < 0 ? "-inf" : "inf");
  switch (type) {
    case "f": case "F": return fixed(value, places, comma);
    case "e": case "E": return expo(value, places);
    case "%": return fixed(value * 100, places, comma) + "%";
    case "g": case "G": return general(value, places, comma);
    default: throw new Error("不支持没有类型的格式说明：" + spec);
  }
}

// Python 字面量的一个子集（整数、浮点数、带引号的字符串、True/False/None），与 ast.literal_eval 一致；
// 不是这些就返回 undefined（myst-nb 此时把原文当作字符串）。
function literal(text) {
  const t = text.trim();
  if (/^[-+]?\d+$/.test(t)) return { int: BigInt(t) };
  if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return { float: Number(t) };
  if (/^(True|False|None)$/.test(t)) return { str: t };
  const q = /^(['"])(.*)\1$/s.exec(t);
  if (q && !q[2].includes(q[1])) {
    try {
      return { str: JSON.parse('"' + q[2].replace(/\\'/g, "'").replace(/"/g, '\\"') + '"') };
    } catch (e) { return undefined; }
  }
  return undefined;
}

/**
 * myst-nb 显示 {glue:text}`名字:格式` 的方式（myst_nb.core.variables.format_plain_text）：
 * 先把粘贴的 text/plain 当作 Python 字面量求值；没有格式时显示 str(值)；格式以 d 结尾时先转成 int，
 * 以 f、e、g、% 结尾时先转成 float，再 format(值, 格式)。
 */
export function glueText(plain, spec) {
  const v = literal(plain);
  const str = v === undefined ? plain : v.str !== undefined ? v.str : v.int !== undefined ? v.int.toString() : plain.trim();
  if (spec === "" || spec.endsWith("s")) {
    if (spec !== "" && spec !== "s") throw new Error("不支持的格式说明：" + spec);
    return str;
  }
  const type = spec.at(-1);
  if (type === "d") {
    let n;
    if (v && v.int !== undefined) n = v.int;
    else if (v && v.float !== undefined && Number.isFinite(v.float)) n = BigInt(Math.trunc(v.float));
    else if (/^\s*[-+]?\d+\s*$/.test(str)) n = BigInt(str.trim());
    else throw new Error("不能转换成整数：" + plain);
    const m = /^(,)?d$/.exec(spec);
    if (!m) throw new Error("不支持的格式说明：" + spec);
    const digits = (n < 0n ? -n : n).toString();
    return (n < 0n ? "-" : "") + (m[1] ? group(digits) : digits);
  }
  let x;
  if (v && v.float !== undefined) x = v.float;
  else if (v && v.int !== undefined) x = Number(v.int);
  else if (/^\s*[-+]?(inf|infinity|nan)\s*$/i.test(str)) x = Number(str.trim().replace(/inf(inity)?/i, "Infinity").replace(/nan/i, "NaN"));
  else if (!Number.isNaN(Number(str.trim())) && str.trim() !== "") x = Number(str.trim());
  else throw new Error("不能转换成浮点数：" + plain);
  return pyformat(x, spec);
}
