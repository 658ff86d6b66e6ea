"""把网页实时面用到的第三方 JavaScript 与 wasm 从 ``node_modules`` 复制到 ``assets/live/vendor/``。

要复制哪些文件写在 ``package.json`` 的 ``"vendor"`` 里（目标文件名 → ``node_modules`` 下的路径），版本由
``package-lock.json`` 锁定。``assets/live/vendor/`` 不进仓库：构建网站时随 ``assets/live`` 一起复制进网站，
node 的对照测试也从这里导入，所以浏览器与测试用的是同一份文件。ES 模块一律存成 ``.mjs``，node 才按 ES 模块读它。
用法：``python tools/vendor.py``（``make book`` 与 ``make test-js`` 会运行它）。
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "assets" / "live" / "vendor"


def main() -> None:
    files: dict[str, str] = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["vendor"]
    shutil.rmtree(TARGET, ignore_errors=True)
    TARGET.mkdir(parents=True)
    for name, source in files.items():
        path = ROOT / "node_modules" / source
        if not path.is_file():
            raise SystemExit(f"找不到 {path.relative_to(ROOT)}：请先运行 npm ci（make 会运行它）")
        shutil.copyfile(path, TARGET / name)


if __name__ == "__main__":
    main()
