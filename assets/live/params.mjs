/* 网页控件给出的值（seqlab/explorers/params.py 的 Param.check 与 seqlab/explorers/web.py 的 typed_value 的对应）。
 * 参数的说明（名字、中文标签、默认值、控件、选项、范围）来自构建网站时 Python 写出的 JSON。
 * 整数是 BigInt（Python 的 int），小数是 Number（Python 的 float）。 */
import { InputError } from "./errors.mjs";
import { formatG, shortRepr } from "./pyformat.mjs";

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** 控件给出的原样 raw 读成参数值：数字框里的文字是整数就读成 BigInt，是小数（含指数写法）就读成 Number，
 * 都不是就保持文字；整数参数的滑块给出的整数也读成 BigInt。 */
export function readValue(param, raw) {
  if (param.widget === "number" && typeof raw === "string") {
    const text = raw.trim();
    if (INTEGER.test(text)) return BigInt(text);
    if (DECIMAL.test(text)) return Number(text);
    return raw;
  }
  if (param.widget === "slider" && param.integer && Number.isInteger(raw)) return BigInt(raw);
  return raw;
}

const sameOption = (a, b) => typeof a === typeof b && a === b;

/** 与 Param.check 相同的检查（类型、选项、范围）；不对就抛出中文的 InputError，对就返回检查后的值。 */
export function check(param, value) {
  const label = `「${param.label}」`;
  if (param.widget === "text" || param.widget === "combobox") {
    if (typeof value !== "string") throw new InputError(`${label}需要一段文字，收到的是 ${typeof value}。`);
    return value;
  }
  if (param.options.length) {
    if (!param.options.some(([, option]) => sameOption(option, value))) {
      const shown = param.options.map(([name]) => name).join("、");
      throw new InputError(`${label}只能从这些选项中选一个：${shown}；收到的是 ${shortRepr(value)}。`);
    }
    return value;
  }
  return checkNumber(param, value, label);
}

function checkNumber(param, value, label) {
  if (param.integer && typeof value !== "bigint") throw new InputError(`${label}需要一个整数，收到的是 ${shortRepr(value)}。`);
  if (!param.integer && typeof value !== "bigint" && typeof value !== "number") {
    throw new InputError(`${label}需要一个数，收到的是 ${shortRepr(value)}。`);
  }
  const number = param.integer ? value : Number(value);
  if (!Number.isFinite(Number(number))) {
    // Python 的 math.isfinite 收不下大于 float 上限的整数（OverflowError）：消息照 Param.check 的兜底
    if (param.integer) throw new InputError(`${label}收不下这个值（int）。`);
    throw new InputError(`${label}必须是有限的实数（不能是 NaN 或无穷大）。`);
  }
  const { low, high } = param;
  if (high == null && low != null && number < low) {
    throw new InputError(`${label}至少是 ${formatG(low)}，收到的是 ${formatG(number)}。`);
  }
  if (high != null && low != null && !(low <= number && number <= high)) {
    throw new InputError(`${label}应在 ${formatG(low)} 到 ${formatG(high)} 之间，收到的是 ${formatG(number)}。`);
  }
  return number;
}

/** 一组控件的原样取值读成参数值并逐个检查（顺序与说明里的参数相同）；其余参数取 spec.fixed 里的默认值。 */
export function checkAll(spec, raws) {
  const values = { ...spec.fixed };
  for (const param of spec.params) values[param.name] = check(param, readValue(param, raws[param.name]));
  return values;
}
