// 小 GPT 的采样与 Python 对照（tools/live_vectors.py 写出的 gpt_steps/sampling.json）：温度与 top-k 的分布
// （并列的 logits 也一样截断）、逆 CDF 采样选出的下标（完全相同），以及许多组提示、温度、top-k 与种子下
// 整次采样生成的文字与步数（完全相同：每一步选出的字都一样）。
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { load, nextTokenProbs, sampleIndex, state } from "../../assets/live/gpt_steps.mjs";
import { checkAll } from "../../assets/live/params.mjs";

const read = (path) => JSON.parse(readFileSync(new URL(`../../_build/live-vectors/${path}`, import.meta.url), "utf-8"));
const { probs, picks, runs } = read("gpt_steps/sampling.json");
const { spec } = read("gpt_steps.json");

test(`next_token_probs：${probs.length} 组 logits、温度与 top-k 的分布与 Python 相同`, () => {
  for (const c of probs) {
    const q = nextTokenProbs(Float64Array.from(c.logits), c.temperature, c.top_k);
    const where = `${JSON.stringify(c.logits)}，温度 ${c.temperature}，k = ${c.top_k}`;
    assert.deepEqual(Array.from(q, (x) => x > 0), c.q.map((x) => x > 0), `${where}：留下的不同`);
    q.forEach((x, i) => assert.ok(Math.abs(x - c.q[i]) <= 1e-12 * c.q[i], `${where}：${x} ≠ ${c.q[i]}`));
  }
});

test(`sample_index：${picks.length} 个分布上逆 CDF 选出的下标与 Python 相同`, () => {
  for (const c of picks) assert.deepEqual(c.u.map((u) => sampleIndex(c.q, u)), c.index, JSON.stringify(c.q));
});

test(`整次采样生成：${runs.length} 组设置写出的文字与步数与 Python 相同`, async () => {
  await load(spec.data);
  for (const c of runs) {
    const st = state(checkAll(spec, c.raw), spec.data);
    assert.deepEqual([st.text, st.last], [c.text, c.last], JSON.stringify(c.raw));
  }
});
