/* 网页实时面用到的第三方代码：npm 安装（版本锁在 package-lock.json），tools/vendor.py 复制到 vendor/，
 * 构建网站时随本文件夹一起进网站——浏览器与 node 的对照测试读的是同一份文件，页面不向外部请求任何东西。 */

/** vendor/ 里一个 wasm 文件，交给 wasm-bindgen 的初始化函数：浏览器里是它的地址（由浏览器下载），
 * node 里是读出的字节（node 的 fetch 不读本地文件）。 */
export async function wasmSource(file) {
  const url = new URL(`./vendor/${file}`, import.meta.url);
  if (url.protocol !== "file:") return url;
  const { readFile } = await import("node:fs/promises");
  return readFile(url);
}

/** ml-matrix（奇异值分解、特征值）：它的 UMD 文件作为 ES 模块载入时把自己放在 globalThis.mlMatrix 上。 */
export async function mlMatrix() {
  await import("./vendor/ml-matrix.mjs");
  return globalThis.mlMatrix;
}
