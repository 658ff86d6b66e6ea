"""库里每一句给读者看的中文消息都守排版规则：中文与拉丁字母或数字之间有空格，中文句子里用全角标点。

逐个检查库源码里的字符串常量与 f-string（文档字符串除外，它们不显示给读者）。f-string 的占位符挨着
汉字时，把占位符在库里可能取到的每个文字值（同名关键字参数、参数默认值、``for … in ((…, "…"), …)``
里的字面量）代进去再检查；占位符带格式（``:.2f``）或 ``!r`` 时按拉丁字符算——它前后要留空格。
例如 ``f"{what}至少是 1"`` 配上 ``what="头数 heads"`` 会被查出来。
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

LIB = Path(__file__).resolve().parent.parent / "lib" / "seqlab"
CJK = "[\u3400-\u9fff]"
LATIN = "[A-Za-z0-9]"
BAD = re.compile(rf"{CJK}{LATIN}|{LATIN}{CJK}|{CJK}[,;:?!]|[,;:?!]{CJK}|{CJK}\(|\){CJK}")
LATIN_STAND_IN = "X"  # 代表一个数字或 repr


def _docstrings(tree) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _literal(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call_values(trees) -> dict[tuple[str, str], set[str]]:
    """``(函数名, 参数名)`` → 库里调用这个函数时给这个参数的字面文字（关键字、位置、默认值）。"""
    functions = {n.name: n for t in trees for n in ast.walk(t) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    values: dict[tuple[str, str], set[str]] = defaultdict(set)
    for name, fn in functions.items():
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        for arg, default in zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults):
            if _literal(default) is not None:
                values[name, arg].add(_literal(default))
        for arg, default in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
            if default is not None and _literal(default) is not None:
                values[name, arg.arg].add(_literal(default))
    for fn in functions.values():
        loops = _loop_values(fn)
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            callee = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)
            if callee not in functions:
                continue
            params = [a.arg for a in functions[callee].args.posonlyargs + functions[callee].args.args]
            if params and params[0] in {"self", "cls"} and isinstance(call.func, ast.Attribute):
                params = params[1:]
            given = list(zip(params, call.args)) + [(kw.arg, kw.value) for kw in call.keywords if kw.arg]
            for arg, value in given:
                if _literal(value) is not None:
                    values[callee, arg].add(_literal(value))
                elif isinstance(value, ast.Name):  # 调用方循环里的字面值，例如 _check_count(value, what)
                    values[callee, arg] |= loops.get(value.id, set())
    return values


def _loop_values(fn) -> dict[str, set[str]]:
    """函数里 ``for a, b in ((…, "…"), …)`` 解包出的字面文字。"""
    values: dict[str, set[str]] = defaultdict(set)
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Tuple) and isinstance(node.iter, ast.Tuple):
            for item in node.iter.elts:
                if isinstance(item, ast.Tuple) and len(item.elts) == len(node.target.elts):
                    for target, elt in zip(node.target.elts, item.elts):
                        if isinstance(target, ast.Name) and _literal(elt) is not None:
                            values[target.id].add(_literal(elt))
    return values


def _renderings(node: ast.JoinedStr, values: dict[str, set[str]]) -> list[str]:
    """把 f-string 的每个占位符换成它可能的值（不知道的文字值用空串，数字与 repr 用拉丁字符）。"""
    texts = [""]
    for part in node.values:
        if isinstance(part, ast.Constant):
            options = [part.value]
        elif isinstance(part.value, ast.Name) and part.conversion == -1 and part.format_spec is None \
                and values.get(part.value.id):
            options = sorted(values[part.value.id])
        elif part.conversion == -1 and part.format_spec is None:
            options = [""]  # 取值未知：不猜
        else:
            options = [LATIN_STAND_IN]  # 带格式（:.2f）或 !r 的占位符：数字或表示
        texts = [t + o for t in texts for o in options]
    return texts


def _messages():
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(LIB.rglob("*.py"))}
    calls = _call_values(trees.values())
    for path, tree in trees.items():
        skip = _docstrings(tree)
        inside_fstrings = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        owner = {}
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for inner in ast.walk(fn):
                owner[id(inner)] = fn  # 最里层的函数最后写入
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip | inside_fstrings:
                yield path, node.lineno, [node.value]
            elif isinstance(node, ast.JoinedStr):
                fn = owner.get(id(node))
                values = defaultdict(set)
                if fn is not None:
                    values.update(_loop_values(fn))
                    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
                        values[arg.arg] |= calls.get((fn.name, arg.arg), set())
                yield path, node.lineno, _renderings(node, values)


def test_every_message_spaces_chinese_and_latin_and_uses_full_width_punctuation():
    bad = []
    for path, line, texts in _messages():
        for text in texts:
            if re.search(CJK, text):
                for m in BAD.finditer(text):
                    bad.append(f"{path.relative_to(LIB)}:{line}: …{text[max(0, m.start() - 10):m.end() + 10]}…")
    assert not bad, "排版不对的消息：\n" + "\n".join(sorted(set(bad)))


def test_the_check_catches_the_reported_mistake():
    tree = ast.parse('def f(what):\n    return f"{what}至少是 1"\ndef g():\n    f(what="头数 heads")\n')
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.JoinedStr))
    [text] = _renderings(node, {"what": _call_values([tree])["f", "what"]})
    assert text == "头数 heads至少是 1" and BAD.search(text)
