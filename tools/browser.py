"""无头 Chromium 的公共部分：在 127.0.0.1 上提供网站、启动 Debian 的 Chromium（不下载任何浏览器）。

浏览器测试（tests/test_browser.py）与 PDF 导出（tools/pdf.py）共用。
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from pathlib import Path

CHROMIUM = os.environ.get("SEQLAB_CHROMIUM", "/usr/bin/chromium")
# 后四个：共享内存用 /tmp 而不是 /dev/shm（容器里的 /dev/shm 常常只有 64 MB，大页面的渲染进程会崩溃或卡住）；
# 测试同时开着几个页面时，不把暂时看不见的页面的定时器与渲染降速。
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-dev-shm-usage", "--disable-background-timer-throttling",
        "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """在 127.0.0.1 的一个空闲端口上提供 ``directory``，产出根地址。"""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def has_chromium() -> bool:
    return Path(CHROMIUM).exists()


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
