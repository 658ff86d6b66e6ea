/* 第 1.4 节的玩具翻译任务（seqlab/corpus/translation.py）在浏览器里的对应：标准对齐与标准译文。
 * 词表（名词、形容词、动词、逗号各自的译法）来自 Python 的 web_data()；语法只有一条：
 *   句子 = 分句（，分句）*    分句 = 名词短语 动词 名词短语    名词短语 = 形容词* 名词
 * 目标语言把动词挪到分句末尾、名词放在形容词前面。 */

const has = (table, ch) => Object.hasOwn(table, ch);
const range = (a, b) => Array.from({ length: Math.max(0, b - a) }, (_, k) => a + k);

/** 整个词表：源语言的字 → 目标语言的词（LEXICON，名词、形容词、动词、逗号依次合在一起）。 */
export const lexicon = (words) => ({ ...words.nouns, ...words.adjectives, ...words.verbs, ...words.separator });

/** _clause_alignment：source 的 [start, end) 这个分句里，目标词依次来自哪些源位置；不合语法时为 null。 */
function clauseAlignment(source, start, end, words) {
  const verbs = range(start, end).filter((j) => has(words.verbs, source[j]));
  if (verbs.length !== 1) return null; // 每个分句必须恰好有一个动词
  const v = verbs[0];
  // 名词短语必须是若干形容词后面跟一个名词：名词在前，形容词按原来的次序跟在后面
  const phrase = (a, b) =>
    a === b || !has(words.nouns, source[b - 1]) || range(a, b - 1).some((j) => !has(words.adjectives, source[j]))
      ? null
      : [b - 1, ...range(a, b - 1)];
  const [left, right] = [phrase(start, v), phrase(v + 1, end)];
  return left && right ? [...left, ...right, v] : null;
}

/** alignment：目标第 t 个词来自源句的第几个位置（从 0 数）；不合语法时为 null（Python 抛 ValueError，
 * translatable 为假；形容词个数不限，与 Python 的 alignment 相同）。逗号原地不动，分句之间各占一个。 */
export function alignment(source, words) {
  const comma = Object.keys(words.separator)[0];
  const order = [];
  for (let start = 0; start <= source.length; ) {
    const found = source.indexOf(comma, start);
    const end = found < 0 ? source.length : found;
    const clause = clauseAlignment(source, start, end, words);
    if (!clause) return null;
    order.push(...clause);
    if (end < source.length) order.push(end);
    start = end + 1;
  }
  return order;
}

/** translate：按标准对齐重新排列，再逐词查表；不合语法时为 null。 */
export function translate(source, words) {
  const order = alignment(source, words);
  const table = lexicon(words);
  return order && order.map((j) => table[source[j]]);
}
