/* 第 1.2 节“三种切分”的网页实时面：seqlab/states/tokenizer.py 的 tokenizer_state 与 seqlab/figures/tokenizer.py 的
 * patch、caption 的对应。字表、词表、分词器补的词、每个 BPE 的 tokenizer.json 与语料曲线来自 Python 的 web_data()；
 * 切词与 BPE 见 tokenize.mjs，所以这里算出的状态与 Python 的相同（node 测试逐项对照）。 */
import { InputError } from "./errors.mjs";
import { loadSegmenter, segment } from "./segment.mjs";
import { cleanText } from "./states.mjs";
import { bpeTokenizer, isWholeChars, pieceBytes, showBytes, utf8Length, vocab } from "./tokenize.mjs";

/** 网页上提供的参数：必须与 Python 说明里的 WebFace.params 相同（tests/test_live_web.py 检查）。 */
export const PARAMS = ["text", "vocab_size"];

/** 打开开关时准备一次：载入 jieba-wasm 并补上本书分词器的词，再建好词表与各个 BPE（几百毫秒，读者第一次改输入时就不必等）。 */
export async function load(data) {
  await loadSegmenter(data.segmenter_words);
  book(data);
}

const books = new WeakMap(); // data → 字表、词表与各个 BPE：每次输入都用同一份

/** book_char_tokenizer、book_word_tokenizer 的词表与 book_bpe（按词表大小）。 */
function book(data) {
  if (!books.has(data)) {
    books.set(data, {
      chars: vocab(data.char_itos, data.unk),
      words: vocab(data.word_itos, data.unk),
      bpe: new Map(data.bpe_sizes.map((v) => [v, bpeTokenizer(data.bpe[String(v)])])),
    });
  }
  return books.get(data);
}

// ---------------------------------------------------------------- 三行切分（states/tokenizer.py）
const alternate = (k) => (k % 2 === 0 ? "even" : "odd");

/** _vocab_kinds：交替的两种颜色，<unk> 单独一种。 */
const vocabKinds = (ids, unkId) => ids.map((id, k) => (id === unkId ? "unk" : alternate(k)));

/** _char_row：一个字（码位）一个 token，每个占 1 个字宽。 */
function charRow(chars, voc) {
  const ids = voc.encode(chars);
  const starts = chars.map((_, i) => i);
  return { label: "字", vocab_size: voc.size, tokens: chars, ids, starts, widths: chars.map(() => 1), kinds: vocabKinds(ids, voc.unkId) };
}

/** _word_row：jieba 切出的词，每个词的宽度是它的字数。 */
function wordRow(text, voc) {
  const words = segment(text);
  const ids = voc.encode(words);
  const widths = words.map((w) => Array.from(w).length);
  let pos = 0;
  const starts = widths.map((w) => (pos += w) - w);
  return { label: "词（jieba）", vocab_size: voc.size, tokens: words, ids, starts, widths, kinds: vocabKinds(ids, voc.unkId) };
}

/** _bpe_row：字节级 BPE 的一行；一个字有几个 UTF-8 字节，每个字节就占几分之一个字宽（与 Python 同样的顺序求和）。 */
function bpeRow(chars, encoding, vocabSize, size) {
  const byteWidth = chars.flatMap((ch) => new Array(utf8Length(ch)).fill(1 / utf8Length(ch)));
  const row = { label: `BPE（${size}）`, vocab_size: vocabSize, tokens: [], ids: encoding.ids, starts: [], widths: [], kinds: [] };
  let pos = 0;
  let b = 0;
  encoding.tokens.forEach((piece, k) => {
    const raw = pieceBytes(piece);
    const w = byteWidth.slice(b, b + raw.length).reduce((sum, x) => sum + x, 0);
    row.tokens.push(showBytes(raw));
    row.starts.push(pos);
    row.widths.push(w);
    row.kinds.push(isWholeChars(raw) ? alternate(k) : "partial");
    pos += w;
    b += raw.length;
  });
  return row;
}

/** 与 tokenizer_state 相同：字、词、BPE 三行，以及这段文字在各个 BPE 下的 token 数与语料曲线。 */
export function state(values, data) {
  const chars = cleanText(values.text, { maxChars: data.max_chars, what: "文本" });
  const size = values.vocab_size;
  if (!data.bpe_sizes.includes(size)) throw new InputError(`BPE 词表大小只能取 (${data.bpe_sizes.join(", ")}) 之一。`);
  const text = chars.join("");
  const { chars: charVocab, words: wordVocab, bpe } = book(data);
  const encodings = new Map(data.bpe_sizes.map((v) => [v, bpe.get(v).encode(text)]));
  const k = data.bpe_sizes.indexOf(size);
  const rows = [charRow(chars, charVocab), wordRow(text, wordVocab), bpeRow(chars, encodings.get(size), data.corpus_sizes[k], size)];
  return {
    text,
    vocab_size: size,
    rows,
    bpe_sizes: data.corpus_sizes,
    bpe_lengths: data.bpe_sizes.map((v) => encodings.get(v).ids.length),
    corpus_lengths: data.corpus_lengths,
  };
}

// ---------------------------------------------------------------- 图（figures/tokenizer.py）
const count = (list, item) => list.filter((x) => x === item).length;

export function caption(st) {
  const parts = st.rows.map((row) => {
    const extra = [];
    const unk = count(row.kinds, "unk");
    const partial = count(row.kinds, "partial");
    if (unk) extra.push(`${unk} 个 <unk>`);
    if (partial) extra.push(`${partial} 个不是整字的字节碎片`);
    const more = extra.length ? `，其中 ${extra.join("、")}` : "";
    return `${row.label}：${row.tokens.length} 个 token（词表 ${row.vocab_size}）${more}`;
  });
  return `${parts.join("；")}。`;
}

// 条块的颜色（figures/tokenizer.py 的 COLORS，取自 figures/style.py 的 PALETTE）：相邻 token 交替两种蓝绿色，
// 不是整字的字节碎片橙色，<unk> 红色
const COLORS = { even: "#3b6ea5", odd: "#2f9fb3", partial: "#e07b39", unk: "#b5485d" };

/** 状态 st 的整张图：由默认状态的图 base（Python 的 render 画出，写在网站里）改出变了的部分——与 patch 改的相同：
 * 三行条块、这段文字的 BPE 曲线、字 / 词两点、当前 BPE 的圈、两个坐标范围与标题。 */
export function figure(st, base) {
  const fig = structuredClone(base);
  st.rows.forEach((row, r) => {
    const label = `${row.label}<br>${row.tokens.length} 个 token`;
    Object.assign(fig.data[r], {
      y: row.tokens.map(() => label),
      x: row.widths,
      base: row.starts,
      text: row.tokens.map((t, i) => `${t}<br><span style='font-size:0.75em'>${row.ids[i]}</span>`),
      customdata: row.tokens.map((t, i) => [t, row.label, row.ids[i]]),
    });
    fig.data[r].marker.color = row.kinds.map((kind) => COLORS[kind]);
  });
  Object.assign(fig.data[3], { x: st.bpe_sizes, y: st.bpe_lengths });
  const [char, word] = st.rows;
  Object.assign(fig.data[5], { x: [char.vocab_size, word.vocab_size], y: [char.tokens.length, word.tokens.length], text: ["字", "词"] });
  // 当前 BPE 在 BPE_SIZES 里的位置：下图横轴的刻度就是 BPE_SIZES
  const k = base.layout.xaxis2.tickvals.indexOf(st.vocab_size);
  Object.assign(fig.data[6], { x: [st.bpe_sizes[k]], y: [st.bpe_lengths[k]] });
  fig.layout.xaxis.range = [-0.3, char.tokens.length + 0.3];
  const top = Math.max(...st.bpe_lengths, char.tokens.length, word.tokens.length, ...st.corpus_lengths);
  fig.layout.yaxis2.range = [0, 1.55 * top];
  fig.layout.title.text = `「${st.text}」的三种切分`;
  return fig;
}
