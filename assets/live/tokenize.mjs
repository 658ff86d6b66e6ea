/* 网页上的三种切分（seqlab/tokenize.py 的对应）：查词表的字级、词级分词器，以及字节级 BPE 的 token 字符串 ↔ 字节。
 * 切词用 segment.mjs（jieba-wasm），BPE 的合并用 tokenizers.js（Hugging Face tokenizers 的 JavaScript 版，npm 安装），
 * 读的是 Python 训练出的同一份 tokenizer.json；两边的切分与 ID 逐项一致（tests/js/tokenize.test.mjs）。 */
import { Tokenizer } from "./vendor/tokenizers.mjs";

// ---------------------------------------------------------------- 词表（Vocab）
/** 由 itos（下标就是 ID）建的词表：encode 把 token 列表变成 ID 列表，词表外的 token 变成 unk 的 ID。 */
export function vocab(itos, unk) {
  const stoi = new Map(itos.map((token, i) => [token, i]));
  const unkId = stoi.get(unk);
  return { size: itos.length, unkId, encode: (tokens) => tokens.map((t) => stoi.get(t) ?? unkId) };
}

// ---------------------------------------------------------------- 字节级 BPE
/** 字节级 BPE 的一个 token 字符串（全书的 tokenizer.json）建出的分词器。 */
export const bpeTokenizer = (json) => new Tokenizer(json, {});

/** byte_alphabet：token 字符串里“显示”字节的 256 个可见字符 → 它们代表的字节值（GPT-2 的约定）。 */
const BYTE_OF = (() => {
  const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
  const visible = [...range(0x21, 0x7e), ...range(0xa1, 0xac), ...range(0xae, 0xff)];
  const table = new Map(visible.map((b) => [String.fromCodePoint(b), b]));
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (!visible.includes(b)) table.set(String.fromCodePoint(256 + extra++), b);
  }
  return table;
})();

/** piece_bytes：一个 token 字符串 → 它代表的原始字节（Uint8Array）。 */
export const pieceBytes = (piece) => Uint8Array.from(piece, (ch) => BYTE_OF.get(ch));

// Python 的 bytes.decode("utf-8")：不合法就报错（fatal），开头的 BOM 也照样留着（ignoreBOM）
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function decode(raw) {
  try {
    return UTF8.decode(raw);
  } catch {
    return null;
  }
}

/** is_whole_chars：这段字节是不是恰好由完整的 UTF-8 字符组成。 */
export const isWholeChars = (raw) => decode(raw) !== null;

/** UTF-8 里一个字占几个字节（按码位）。 */
export const utf8Length = (ch) => {
  const c = ch.codePointAt(0);
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
};

// Python 的 str.isprintable() 为假的字符：Unicode 的“其他”（C*）与“分隔符”（Z*）两大类，普通空格除外
const UNPRINTABLE = /^[\p{C}\p{Z}]$/u;
const ESCAPES = { "\t": "\\t", "\n": "\\n", "\r": "\\r" };

/** repr(ch)[1:-1]：Python 写不可打印的字的样子（\n、\x1c、\u200b、\U000e0001）。 */
function pyEscape(ch) {
  if (ESCAPES[ch]) return ESCAPES[ch];
  const c = ch.codePointAt(0);
  const [prefix, digits] = c < 0x100 ? ["\\x", 2] : c < 0x10000 ? ["\\u", 4] : ["\\U", 8];
  return prefix + c.toString(16).padStart(digits, "0");
}

const hex = (b) => b.toString(16).padStart(2, "0");

/** show_bytes：完整的 UTF-8 字符照常显示（不可打印的写成 Python 的转义），不完整的字节用十六进制写在 ‹ › 里。 */
export function showBytes(raw) {
  const out = [];
  const hexes = [];
  const flush = () => {
    if (hexes.length) out.push(`‹${hexes.join(" ")}›`);
    hexes.length = 0;
  };
  let i = 0;
  while (i < raw.length) {
    const b = raw[i];
    const n = b < 0x80 ? 1 : b >> 5 === 0b110 ? 2 : b >> 4 === 0b1110 ? 3 : b >> 3 === 0b11110 ? 4 : 0;
    const ch = n && i + n <= raw.length ? decode(raw.subarray(i, i + n)) : null;
    if (ch === null) {
      hexes.push(hex(b));
      i += 1;
      continue;
    }
    flush();
    out.push(ch !== " " && UNPRINTABLE.test(ch) ? pyEscape(ch) : ch);
    i += n;
  }
  flush();
  return out.join("");
}
