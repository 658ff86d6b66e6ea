// assets/live/random.mjs 与 Python 的 random.Random 对照：同一个种子，同一串 random()、getrandbits、_randbelow、
// shuffle 与 gauss（tools/live_vectors.py 由 Python 写出）。整数完全相同，小数的相对误差不超过 1e-12。
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { Random } from "../../assets/live/random.mjs";

const cases = JSON.parse(readFileSync(new URL("../../_build/live-vectors/shared/random.json", import.meta.url), "utf-8"));

function close(actual, expected) {
  return actual.length === expected.length && actual.every((a, i) => Math.abs(a - expected[i]) <= 1e-12 * Math.abs(expected[i]));
}

for (const c of cases) {
  test(`种子 ${c.seed}：与 Python 的 random.Random 相同`, () => {
    const seed = BigInt(c.seed);
    let rng = new Random(seed);
    assert.deepEqual(Array.from({ length: c.random.length }, () => rng.random()), c.random, "random()");
    rng = new Random(seed);
    assert.deepEqual([1, 5, 16, 31, 32, 1, 5, 16, 31, 32, 1, 5, 16, 31, 32].map((k) => rng.getrandbits(k)), c.getrandbits);
    rng = new Random(seed);
    const below = [1, 2, 3, 7, 16, 100, 1000, 2 ** 31 + 1];
    assert.deepEqual([...below, ...below, ...below].map((n) => rng.randbelow(n)), c.randbelow);
    rng = new Random(seed);
    assert.deepEqual([2, 3, 5, 8, 16, 40].map((n) => rng.shuffle([...Array(n).keys()])), c.shuffle);
    rng = new Random(seed);
    const gauss = Array.from({ length: c.gauss.length }, () => rng.gauss(0, 1));
    assert.ok(close(gauss, c.gauss), `gauss：${gauss.slice(0, 3)} ≠ ${c.gauss.slice(0, 3)}`);
  });
}
