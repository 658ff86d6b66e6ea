// 网页实时面与 Python 面对照（node --test）：tools/live_vectors.py 写出的每一个用例，浏览器里的计算都要给出
// 与 Python 相同的状态（states.to_json）、整张图与说明；坏输入给出一字不差的中文消息。
// 整数（token、ID、计数、字节数）必须完全相同；小数的相对误差不超过 1e-5。
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";

import { InputError } from "../../assets/live/errors.mjs";
import { checkAll } from "../../assets/live/params.mjs";

const VECTORS = new URL("../../_build/live-vectors/", import.meta.url);
const RELATIVE = 1e-5;

/** actual 与 expected 一致：结构与字符串完全相同，整数完全相同，小数在相对误差之内。返回第一处不同的说明。 */
export function difference(actual, expected, path = "") {
  if (typeof expected === "number" && typeof actual === "number") {
    if (Number.isInteger(expected)) return actual === expected ? null : `${path}：${actual} ≠ ${expected}`;
    return Math.abs(actual - expected) <= RELATIVE * Math.abs(expected) ? null : `${path}：${actual} 与 ${expected} 相差太多`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return `${path}：长度 ${actual?.length} ≠ ${expected.length}`;
    for (let i = 0; i < expected.length; i++) {
      const d = difference(actual[i], expected[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (expected && typeof expected === "object") {
    if (!actual || typeof actual !== "object") return `${path}：${JSON.stringify(actual)} 不是对象`;
    const keys = new Set([...Object.keys(actual), ...Object.keys(expected)]);
    for (const key of keys) {
      const d = difference(actual[key], expected[key], `${path}.${key}`);
      if (d) return d;
    }
    return null;
  }
  return actual === expected ? null : `${path}：${JSON.stringify(actual)} ≠ ${JSON.stringify(expected)}`;
}

const files = readdirSync(VECTORS).filter((f) => f.endsWith(".json"));

test("每个有网页实时面的探索器都有测试向量", () => {
  assert.ok(files.length > 0, "没有测试向量：先运行 python tools/live_vectors.py（make test-js 会运行它）");
});

for (const file of files) {
  const { spec, cases } = JSON.parse(readFileSync(new URL(file, VECTORS), "utf-8"));
  test(`${spec.name}：${cases.length} 个用例与 Python 一致`, async () => {
    const face = await import(`../../assets/live/${spec.name}.mjs`);
    await face.load?.(spec.data);
    assert.ok(cases.some((c) => c.message) && cases.some((c) => c.state), "用例里要既有合法输入也有坏输入");
    for (const c of cases) {
      const where = JSON.stringify(c.raw);
      let state;
      try {
        state = face.state(checkAll(spec, c.raw), spec.data);
      } catch (err) {
        if (!(err instanceof InputError)) throw err;
        assert.equal(err.message, c.message, `${where}：消息不同`);
        continue;
      }
      assert.ok(!c.message, `${where}：Python 拒绝了它（${c.message}），网页却算出了状态`);
      for (const [what, actual, expected] of [
        ["状态", state, c.state],
        ["图", face.figure(state, spec.figure), c.figure],
        ["说明", face.caption(state), c.caption],
      ]) {
        const d = difference(actual, expected);
        assert.equal(d, null, `${where} 的${what}不同：${d}`);
      }
    }
  });
}
