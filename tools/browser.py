"""无头 Chromium 的公共部分：在 127.0.0.1 上提供网站、启动 Debian 的 Chromium（不下载任何浏览器）。

浏览器测试（tests/test_browser.py）、make bench 与 PDF 导出（tools/pdf.py）共用；``make serve`` 也用这里的服务器
（``python tools/browser.py 文件夹 端口``）。构建时每个文本文件旁边都预先压缩了一份 ``.gz``（见 tools/book_ext.py）：
浏览器接受 gzip 时发压缩的那份，与支持预压缩文件的静态网站托管一样。
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import sys
import threading
from pathlib import Path

CHROMIUM = os.environ.get("SEQLAB_CHROMIUM", "/usr/bin/chromium")
# 后四个：共享内存用 /tmp 而不是 /dev/shm（容器里的 /dev/shm 常常只有 64 MB，大页面的渲染进程会崩溃或卡住）；
# 测试同时开着几个页面时，不把暂时看不见的页面的定时器与渲染降速。
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-dev-shm-usage", "--disable-background-timer-throttling",
        "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"]


class GzipHandler(http.server.SimpleHTTPRequestHandler):
    """浏览器接受 gzip、文件旁边又有预先压缩的 ``.gz`` 时，发 ``.gz``（Content-Encoding: gzip）。"""

    def send_head(self):
        path = self.translate_path(self.path)
        gz = path + ".gz"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if os.path.isdir(path) and self.path.split("?")[0].endswith("/"):
            path = os.path.join(path, "index.html")
            gz = path + ".gz"
        if not accepts or os.path.isdir(path) or not os.path.isfile(gz):
            return super().send_head()
        try:
            f = open(gz, "rb")  # 与父类一样：do_GET 发完内容后关掉它
        except OSError:
            return super().send_head()
        stat = os.fstat(f.fileno())
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(stat.st_size))
        self.send_header("Last-Modified", self.date_time_string(int(stat.st_mtime)))
        self.end_headers()
        return f


class _QuietHandler(GzipHandler):
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


if __name__ == "__main__":  # make serve：python tools/browser.py 文件夹 [端口]
    folder, port = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8000
    handler = functools.partial(GzipHandler, directory=folder)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
