// 网页上的字节级 BPE（assets/live/tokenize.mjs：tokenizers.js 读本书的 tokenizer.json）与 Python 的 tokenizers
// （seqlab.tokenize.book_bpe）逐段对照：本书语料的每一句、跨句的随机片段、空白、emoji、生僻字、各种文字与一万个字，
// 在每个词表大小下 token 字符串、ID、给人看的 token（show_bytes）与是否整字（is_whole_chars）必须完全相同。
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { InputError } from "../../assets/live/errors.mjs";
import { check, checkAll } from "../../assets/live/params.mjs";
import { bpeTokenizer, isWholeChars, pieceBytes, showBytes } from "../../assets/live/tokenize.mjs";

const read = (file) => JSON.parse(readFileSync(new URL(`../../_build/live-vectors/${file}`, import.meta.url), "utf-8"));
const { cases } = read("shared/bpe.json");
const { bpe } = read("tokenizer.json").spec.data; // 写进网站的 tokenizer.json

for (const size of Object.keys(bpe)) {
  test(`BPE（${size}）：tokenizers.js 与 Python 的 tokenizers 在 ${cases.length} 段文本上切分相同`, () => {
    const tokenizer = bpeTokenizer(bpe[size]);
    const differ = [];
    for (const [text, bySize] of cases) {
      const expected = bySize[size];
      const { tokens: pieces, ids } = tokenizer.encode(text);
      const raws = pieces.map(pieceBytes);
      const actual = { pieces, ids, tokens: raws.map(showBytes), whole: raws.map(isWholeChars) };
      const what = Object.keys(expected).find((key) => JSON.stringify(actual[key]) !== JSON.stringify(expected[key]));
      if (what) differ.push(`「${text.slice(0, 30)}」的 ${what}：${JSON.stringify(actual[what]).slice(0, 200)} ≠ ${JSON.stringify(expected[what]).slice(0, 200)}`);
    }
    assert.equal(differ.length, 0, `${differ.length} 段不同，例如\n${differ.slice(0, 5).join("\n")}`);
  });
}

test("词表大小不在 BPE_SIZES 里：控件的检查与状态函数自己的检查都给出与 Python 相同的消息", async () => {
  const { spec } = read("tokenizer.json");
  const face = await import("../../assets/live/tokenizer.mjs");
  const param = spec.params.find((p) => p.name === "vocab_size");
  for (const bad of read("shared/bpe.json").bad_sizes) {
    const size = Number.isInteger(bad.vocab_size) ? BigInt(bad.vocab_size) : bad.vocab_size; // Python 的 int 在网页上是 BigInt
    const rejects = (message) => (err) => err instanceof InputError && err.message === message;
    assert.throws(() => check(param, size), rejects(bad.param));
    assert.throws(() => face.state({ text: "苹果", vocab_size: size }, spec.data), rejects(bad.state));
  }
});

test("BPE 的难输入（各种空白、emoji 序列、组合字符、各种文字）：整个实时面的状态与说明与 Python 相同", async () => {
  const { spec } = read("tokenizer.json");
  const face = await import("../../assets/live/tokenizer.mjs");
  await face.load(spec.data);
  for (const c of read("shared/bpe.json").faces) {
    const st = face.state(checkAll(spec, c.raw), spec.data);
    assert.deepStrictEqual(st, c.state, JSON.stringify(c.raw));
    assert.equal(face.caption(st), c.caption, JSON.stringify(c.raw));
  }
});
