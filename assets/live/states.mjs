/* 各个状态共用的部分（seqlab/states/__init__.py 的对应）：文本检查的中文消息与 Python 面一字不差。 */
import { InputError } from "./errors.mjs";

const MAX_TEXT_CHARS = 2000;

// Python 的 str.strip() 去掉的空白（str.isspace() 为真的字符，都在基本平面里）；
// JavaScript 的 trim() 少了 \x1c–\x1f 与 \x85，又多了 \ufeff
const SPACE = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/** Python 的 ch.isspace()（ch 是一个字符）。 */
export const isSpace = (ch) => SPACE.test(ch);

/** Python 的 str.strip()：从两头逐个去掉空白（与 Python 一样只看一遍，不回溯）。 */
function strip(text) {
  let start = 0;
  let end = text.length;
  while (start < end && SPACE.test(text[start])) start++;
  while (end > start && SPACE.test(text[end - 1])) end--;
  return text.slice(start, end);
}

/** 按码位比较（Python 的 sorted 对字符串的顺序；JavaScript 默认按 UTF-16 单元比较，基本平面以外的字会排错）。 */
export const byCodePoint = (a, b) => a.codePointAt(0) - b.codePointAt(0);

/** 与 clean_text 相同：去掉首尾空白，拒绝空文本和过长文本。返回去掉空白后的文本的码位数组（Python 的 list(text)，
 * 长度与 Python 的 len 相同：emoji 等基本平面以外的字是一个码位，而不是 JavaScript 字符串里的两个单元）。 */
export function cleanText(text, { maxChars = MAX_TEXT_CHARS, what = "文本" } = {}) {
  if (typeof text !== "string") throw new InputError(`${what}必须是字符串。`);
  const chars = Array.from(strip(text));
  if (!chars.length) throw new InputError(`${what}是空的：请输入至少一个字符。`);
  if (chars.length > maxChars) throw new InputError(`${what}有 ${chars.length} 个字符，超过了上限 ${maxChars}：请缩短后再试。`);
  return chars;
}
