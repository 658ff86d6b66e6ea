"""练习检查的测试共用的断言：一个答案被判错（而且说对了原因），或被判对。"""

from __future__ import annotations


def rejected(result, *phrases: str) -> None:
    """``result`` 是 ❌（答错，不是没做完），说明里含有 ``phrases`` 的每一句。"""
    assert not result.passed and not result.unfinished, result
    for phrase in phrases:
        assert phrase in result.message, result.message
