/* 网页上的中文分词：jieba 的 Rust 移植（jieba-wasm，npm 安装）加上本书分词器补的词（seqlab.tokenize.segmenter_words），
 * 与 Python 的 seqlab.tokenize.segment 一样用精确模式、关闭 HMM。两边在本书语料上逐句一致（tests/js/segment.test.mjs）。 */
import init, { add_word, cut } from "./vendor/jieba_rs_wasm.mjs";
import { wasmSource } from "./vendor.mjs";

let ready = null;

/** 载入 wasm（约 4 MB，内含 jieba 的默认词典）并补上 ``words``（[词, 词频] 的列表）；整页只做一次。 */
export function loadSegmenter(words) {
  ready ??= (async () => {
    await init({ module_or_path: await wasmSource("jieba_rs_wasm_bg.wasm") });
    for (const [word, freq] of words) add_word(word, freq);
  })();
  return ready;
}

/** 把文本切成词（先 await loadSegmenter）。 */
export function segment(text) {
  return cut(text, false);
}
