import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT / "tests", ROOT / "tools"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


@pytest.fixture(autouse=True)
def lenient_checks(monkeypatch):
    """库测试里的练习检查返回 ✅/❌ 结果而不抛异常（Makefile 为执行笔记本设置了严格模式）。

    需要严格模式的测试自己再用 monkeypatch 设为 "1"。
    """
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")


# 网站上还没修好的几处：这些浏览器测试照常运行、照常报告失败的原因，但暂时不让 make test 失败。
# 修好一项就从这里删去一项（xfail 不严格：意外通过时只提示 XPASS）。
KNOWN_SITE_FAILURES: dict[str, str] = {}


def pytest_collection_modifyitems(items):
    for item in items:
        reason = KNOWN_SITE_FAILURES.get(item.name)
        if reason:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
