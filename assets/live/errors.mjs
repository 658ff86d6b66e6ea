/* 面向读者的错误（seqlab/errors.py 的对应）：消息与 Python 面一字不差。 */
import { fixed } from "./pyformat.mjs";

/** 读者的输入不合法；``message`` 是给读者看的中文句子。 */
export class InputError extends Error {}

/** 请求的计算估计会用掉太多内存，在真正分配之前就被拒绝。 */
export class MemoryBudgetError extends InputError {
  constructor(what, estimateBytes, budgetBytes) {
    super(`${what}估计需要 ${formatBytes(estimateBytes)} 内存，超过了预算 ${formatBytes(budgetBytes)}，因此没有执行。请减小规模再试。`);
  }
}

/** 估算值超过预算就抛出 MemoryBudgetError；否则原样返回估算值（BigInt 或 Number 都可以）。 */
export function guardMemory(what, estimateBytes, budgetBytes) {
  if (!(estimateBytes <= budgetBytes)) throw new MemoryBudgetError(what, estimateBytes, budgetBytes);
  return estimateBytes;
}

/** 字节数的人读写法：与 Python 的 format_bytes 相同（先转成 float，再逐级除以 1024）。 */
export function formatBytes(n) {
  n = Number(n);
  for (const unit of ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]) {
    if (Math.abs(n) < 1024 || unit === "PiB") return unit === "B" ? `${fixed(n, 0)} ${unit}` : `${fixed(n, 1)} ${unit}`;
    n /= 1024;
  }
  throw new Error("unreachable");
}
