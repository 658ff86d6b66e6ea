"""网页上的实时面（不需要内核）：写进网站的说明，以及检验浏览器计算的测试向量。

构建网站时（``tools/book_ext.py``）每个有 ``web`` 的探索器写出一份 :func:`spec`：网页控件（由 ``Param`` 生成）、
固定在默认值的其余参数、浏览器计算状态所需的常量，以及默认状态的图——网页打开“实时计算”时先画出它，
之后每次由 ``assets/live/<名字>.mjs`` 算出新状态、改出新图。

网页控件交给计算的是读者输入的原样：滑块给出数，按钮与下拉菜单给出选项的值，数字框、文本框与可以自己输入的
下拉框（combobox，网页上是带候选项的文本框）给出一段文字。
数字框里的文字按 :func:`typed_value` 的规则读成数（浏览器里的 ``readValue`` 用同一条规则），
之后的类型与范围检查与 Python 面相同（``Param.check``），所以坏输入的中文消息一字不差。

:func:`vectors` 是 node 测试的对照：随机与边界的取值、坏输入，各自附上 Python 算出的状态（``states.to_json``）、
图与说明，或者读者会看到的中文消息。
"""

from __future__ import annotations

import base64
import random
import re
from typing import Any

import numpy as np

from seqlab import corpus, states
from seqlab.errors import InputError
from seqlab.explorers.base import Explorer
from seqlab.explorers.params import Param
from seqlab.explorers.plotview import figure_json

INTEGER = re.compile(r"[+-]?\d+")
DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# 数字框里典型的坏输入：不是数、不是整数、负数、零、极大、写成指数的数
TYPED_EDGES = ("", " ", "abc", "1.5", "3.0", "-1", "0", "1e3", "1e400", "10" + "0" * 12, "9" * 50, "-" + "9" * 50)
# 文本框里典型的难输入：空的、只有空白（含 Python 与 JavaScript 对“空白”看法不同的字符）、emoji 与基本平面以外的字、
# 生僻字、语料里没有的字、一万个字
TEXT_EDGES = (
    "", " ", "\u3000\t\n", "😀🍎", "我想吃🍎😀", "𠀀𪚥龘", "Ωmega ñ café", "\x1c 今天\x85", "\ufeff今天", "  他一口气  ",
    "字" * 10_000,
)
RANDOM_TEXT_CHARS = 150  # 随机文本（语料里的一段）最长的字数


def typed_value(param: Param, raw: Any) -> Any:
    """网页控件给出的原样 ``raw`` 作为状态函数的参数值：数字框里的文字是整数就读成 ``int``，
    是小数（含指数写法）就读成 ``float``，都不是就保持文字（之后由 ``Param.check`` 用中文拒绝）。"""
    if param.widget != "number" or not isinstance(raw, str):
        return raw
    text = raw.strip()
    if INTEGER.fullmatch(text):
        return int(text)
    if DECIMAL.fullmatch(text):
        return float(text)
    return raw


def _param(p: Param) -> dict[str, Any]:
    return {
        "name": p.name,
        "label": p.label,
        "default": p.default,
        "widget": p.widget,
        "integer": isinstance(p.default, int) and not isinstance(p.default, bool),
        "options": [list(option) for option in p.options],
        "low": p.low,
        "high": p.high,
        "step": p.step,
        "width": p.width,
    }


def decode_arrays(value: Any) -> Any:
    """把图 JSON 里 plotly.js 的 base64 数组（``{"dtype", "bdata", "shape"}``）解成普通的嵌套数组。"""
    if isinstance(value, list):
        return [decode_arrays(v) for v in value]
    if isinstance(value, dict) and {"dtype", "bdata"} <= set(value):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = [int(n) for n in str(value.get("shape", len(flat))).split(",")]
        return states.to_json(flat.reshape(shape))
    if isinstance(value, dict):
        return {k: decode_arrays(v) for k, v in value.items()}
    return value


def _face(explorer: Explorer[Any], state: Any) -> dict[str, Any]:
    """一个状态在网页实时面上的样子：状态的 JSON、整张图（普通数组）与图上方的说明。"""
    return {
        "state": states.to_json(state),
        "figure": decode_arrays(figure_json(explorer.render(state))),
        "caption": explorer.caption(state),
    }


def spec(explorer: Explorer[Any]) -> dict[str, Any]:
    """写进网站的说明（``_static/seqlab/live/<名字>.json``）。"""
    if explorer.web is None:
        raise ValueError(f"探索器 {explorer.name} 没有网页实时面")
    default = _face(explorer, explorer.compute())
    offered = set(explorer.web.params)
    return {
        "name": explorer.name,
        "params": [_param(p) for p in explorer.params if p.name in offered],
        "fixed": {name: value for name, value in explorer.defaults.items() if name not in offered},
        "data": states.to_json(explorer.web.data()),
        "figure": default["figure"],
        "caption": default["caption"],
    }


def _random_raw(p: Param, rng: random.Random) -> Any:
    """网页控件在 ``p`` 的范围里随机给出的一个值（数字框在 1 到 16 之间：多数组合不超预算；
    文本框与可以自己输入的下拉框是本书语料里随机的一段，1 到 ``RANDOM_TEXT_CHARS`` 个字）。"""
    if p.widget in ("text", "combobox"):
        text = "".join(corpus.book_corpus())
        start = rng.randrange(len(text))
        return text[start : start + rng.randint(1, RANDOM_TEXT_CHARS)]
    if p.options:
        return rng.choice(p.options)[1]
    if p.widget == "number":
        return str(rng.randint(int(p.low or 1), 16)) if isinstance(p.default, int) else str(rng.uniform(p.low or 0, 16))
    if p.widget == "slider" and isinstance(p.default, int):
        return rng.randint(int(p.low or 0), int(p.high or 0))
    if p.widget == "slider":
        return rng.uniform(p.low or 0.0, p.high or 0.0)
    return p.default


def _control_raw(p: Param, value: Any) -> Any:
    """参数值 ``value`` 在网页控件里的原样：数字框里是文字，其余控件给出值本身。"""
    return str(value) if p.widget == "number" else value


def _edge_raws(p: Param) -> list[Any]:
    """``p`` 的边界值与坏输入（网页控件给得出的那些）；可以自己输入的下拉框：每个选项与文本框的难输入。"""
    if p.widget == "combobox":
        return [value for _, value in p.options] + list(TEXT_EDGES)
    if p.options:
        return [value for _, value in p.options]
    if p.widget == "number":
        return list(TYPED_EDGES)
    if p.widget == "text":
        return list(TEXT_EDGES)
    if p.widget == "slider":
        return [p.low, p.high, (p.low or 0) - 1, (p.high or 0) + 1]
    return []


def vectors(explorer: Explorer[Any], *, randoms: int = 12, seed: int = 0) -> dict[str, Any]:
    """node 测试的对照：每个用例是网页控件给出的原样 ``raw``，以及 Python 的结果——
    合法时是 :func:`_face`（状态、图、说明），不合法时是 ``message``（读者看到的中文消息）。"""
    if explorer.web is None:
        raise ValueError(f"探索器 {explorer.name} 没有网页实时面")
    rng = random.Random(seed)
    offered = [explorer.param(name) for name in explorer.web.params]
    raws = [{p.name: _random_raw(p, rng) for p in offered} for _ in range(randoms)]
    defaults = {p.name: _control_raw(p, p.default) for p in offered}
    raws += [{**defaults, p.name: raw} for p in offered for raw in _edge_raws(p)]
    # 说明里的示例：典型的合法取值（文本框只收几个字时，随机的语料片段几乎都被拒绝）
    raws += [{p.name: _control_raw(p, example.get(p.name, p.default)) for p in offered} for example in explorer.examples]
    raws += [{**defaults, **raw} for raw in explorer.web.inputs]
    cases = []
    for raw in raws:
        values = {p.name: typed_value(p, raw[p.name]) for p in offered}
        try:
            cases.append({"raw": raw, **_face(explorer, explorer.compute(**values))})
        except InputError as err:
            cases.append({"raw": raw, "message": str(err)})
    return {"spec": spec(explorer), "cases": cases}
