// 网页上的分词（assets/live/segment.mjs：jieba-wasm 加本书补的词）与 Python 的 jieba（seqlab.tokenize.segment）逐句对照：
// 本书语料的每一句、跨句的随机片段、空白、emoji、生僻字与一万个字，切分必须完全相同。
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { loadSegmenter, segment } from "../../assets/live/segment.mjs";

const { words, cases } = JSON.parse(readFileSync(new URL("../../_build/live-vectors/shared/segment.json", import.meta.url), "utf-8"));

test(`jieba-wasm 与 Python 的 jieba 在 ${cases.length} 段文本上切分相同`, async () => {
  await loadSegmenter(words);
  const differ = cases.filter(([text, expected]) => JSON.stringify(segment(text)) !== JSON.stringify(expected));
  const shown = differ.slice(0, 5).map(([text, expected]) => `「${text.slice(0, 30)}」：${segment(text).join("/")} ≠ ${expected.join("/")}`);
  assert.equal(differ.length, 0, `${differ.length} 段切分不同，例如\n${shown.join("\n")}`);
});
