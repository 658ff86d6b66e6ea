"""正文里的每个实测数字都来自执行过的代码：要么用 myst-nb 的 glue 贴进正文，要么在紧挨着的代码格里被断言。

**规则**（逐节检查，每个笔记本一个测试）。在一节的 markdown 单元格里，下面这些写法算作“看起来是测出来的数”：

1. 小数：``0.52``、``3.4``；
2. 百分数：``5%``、``93 %``；
3. 倍数：数字（阿拉伯数字或汉字数字）后面跟“倍”：``117 倍``、``七倍``；
4. 近似值：“约 / 约为 / 大约 / 接近 / ≈”后面的数，以及公式里 ``\\approx`` 后面的数（``$r\\approx82$``）；
5. 界：“不到 / 超过 / 低于 / 高于 / 只剩”后面的数，或后面跟着“以上 / 以下 / 出头 / 左右”的数。

其余的整数（句子数、维度、序列长度、年份……）是设定或计数，不在此列。不检查的地方：``$…$`` 与 ``$$…$$``
公式（规则 4 的 ``\\approx`` 除外）、标题行、小节编号（「1.1 的例子」「1.4–1.6 节」）、代码（行内代码与代码块）、MyST 角色的内容（``{cite}``、``{ref}``、``{eq}``、
``{term}``、``{glue:…}`` 等）、指令的选项行（``:width: 90%``）、练习与参考答案（``{exercise}`` 指令，从
``exercise-start`` 到 ``exercise-end``，带 ``solution`` 标签的单元格，以及“难度 … · 约 N 分钟”的元数据行）。

这样的数必须满足下面之一：

* **贴上去的**：正文写 ``{glue:text}`键``` 而不是数字本身；本测试同时检查每个键都由本节的某个代码格 ``glue`` 过
  （``glue("键", …)``，或在循环里 ``glue(f"前缀{…}", …)``，这时以该前缀开头的键都算）；
* **断言过的**：它的值（百分数另按除以 100 的值）作为数字字面量出现在紧挨着这个 markdown 单元格的代码格
  （前一个或后一个代码格）的某一行 ``assert`` 里；
* **不是测出来的常数**：列在下面短短的 ``ALLOWED`` 里，并写明理由。
"""

from __future__ import annotations

import math
import re

import nbformat
import pytest

from student import notebooks

NOTEBOOKS = notebooks()

# 不是测量结果的常数：键是笔记本文件名的前两位，值是 {正文里的写法: 理由}。保持短小。
ALLOWED: dict[str, dict[str, str]] = {
    "01": {"95%": "DigitTranscriber 的设定：noise = 0.05", "5%": "同上"},
    "03": {"0.95": "把 ρ 从 0.95 拖到 1.05：给读者的操作建议，不是结果", "1.05": "同上"},
}

CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000}
NUM = r"\d+(?:\.\d+)?"
PATTERNS = [
    re.compile(r"(?<![\d.])(?P<n>\d+\.\d+)(?![\d.])"),
    re.compile(rf"(?<![\d.])(?P<n>{NUM})\s*(?P<pct>[%％])"),
    re.compile(rf"(?<![\d.])(?P<n>{NUM})\s*倍"),
    re.compile(r"(?P<cn>[一二两三四五六七八九十百千万几]+)倍"),
    re.compile(rf"(?:约为|约|大约|接近|≈)\s*(?P<n>{NUM})(?P<pct>\s*[%％])?"),
    re.compile(rf"(?:不到|超过|低于|高于|只剩)\s*(?P<n>{NUM})(?P<pct>\s*[%％])?"),
    re.compile(rf"(?<![\d.])(?P<n>{NUM})(?P<pct>\s*[%％])?\s*(?:以上|以下|出头|左右)"),
]
APPROX_IN_MATH = re.compile(rf"\\approx\s*(?P<n>{NUM})")
ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")
SECTION_NUMBER = re.compile(r"(?<![\d.])1\.[1-6](?:\s*[–—~～-]\s*1\.[1-6])?(?=\s*(?:节|的|里|中|、|，|）))")  # 「1.4–1.6 节」「1.1 的例子」
GLUE_KEY = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)(?::[^`]*)?`")
NUMBER_LITERAL = re.compile(r"(?<![\w.])\d+(?:_\d+)*(?:\.\d*)?(?:e[-+]?\d+)?", re.I)


def _chinese_number(text: str) -> float:
    """「七」→ 7，「十几」→ 10，「两百」→ 200（“几”按 0 算：只要求断言给出的下界）。"""
    total, digit = 0, 0
    for ch in text:
        if ch in CN_DIGITS:
            digit = CN_DIGITS[ch]
        elif ch in CN_UNITS:
            total += (digit or 1) * CN_UNITS[ch]
            digit = 0
    return total + digit


def _prose(source: str) -> tuple[str, list[str]]:
    """去掉不检查的部分，返回 (余下的文字, 公式里 \\approx 后面的数)。"""
    kept, in_code = [], False
    for line in source.splitlines():
        fence = re.match(r"^\s*(`{3,}|~{3,})(.*)$", line)
        if fence:
            if in_code:
                in_code = False
            elif not fence.group(2).startswith("{"):
                in_code = True  # 代码块：整块跳过；指令（```{admonition} 等）只跳过这一行
            continue
        if in_code or re.match(r"^\s*:[\w-]+:", line) or re.match(r"^\(.*\)=\s*$|^难度 |^#+ ", line):
            continue
        kept.append(line)
    text = "\n".join(kept)
    maths = re.findall(r"\$\$.*?\$\$|\$[^$\n]+\$", text, flags=re.S)
    approx = [m.group("n") for formula in maths for m in APPROX_IN_MATH.finditer(formula)]
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " ", text, flags=re.S)
    text = ROLE.sub(" ", text)
    text = SECTION_NUMBER.sub(" ", text)
    text = re.sub(r"`[^`]*`", " ", text)
    return text, approx


def _claims(source: str) -> list[tuple[str, float, str]]:
    """(正文里的写法, 数值, 上下文) 的列表。百分数的数值按原样记录，比较时另试 ÷100。"""
    text, approx = _prose(source)
    found = []
    for pattern in PATTERNS:
        for m in pattern.finditer(text):
            if m.groupdict().get("cn"):
                word, value = m.group("cn") + "倍", _chinese_number(m.group("cn"))
            else:
                word, value = m.group("n") + (m.groupdict().get("pct") or "").strip(), float(m.group("n"))
            context = text[max(0, m.start() - 25) : m.end() + 10].replace("\n", " ")
            found.append((word, value, context))
    found += [(n, float(n), f"公式里的 ≈ {n}") for n in approx]
    return found


def _is_exercise_cell(cell, inside: bool) -> tuple[bool, bool]:
    """(这一格是否属于练习, 下一格是否仍在练习里)。"""
    src = cell.source
    if "solution" in cell.metadata.get("tags", []):
        return True, inside
    if "exercise-start" in src:
        return True, "exercise-end" not in src
    if "exercise-end" in src:
        return True, False
    if re.search(r"\{(exercise|solution)\}", src):
        return True, inside
    return inside, inside


def _asserted_values(cell) -> list[float]:
    if cell is None:
        return []
    values = []
    for line in cell.source.splitlines():
        if "assert" in line:
            values += [float(v.replace("_", "")) for v in NUMBER_LITERAL.findall(line)]
    return values


def _matches(value: float, word: str, asserted: list[float]) -> bool:
    candidates = [value, value / 100] if word.endswith(("%", "％")) else [value]
    return any(math.isclose(c, a, rel_tol=1e-9, abs_tol=1e-12) for c in candidates for a in asserted)


def unaccounted_numbers(path) -> list[str]:
    """一节正文里既没贴上、也没断言、又不在 ALLOWED 里的实测数字（给出上下文）。"""
    nb = nbformat.read(path, as_version=4)
    allowed = ALLOWED.get(path.name[:2], {})
    cells = nb.cells
    problems, inside = [], False
    for i, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        skip, inside = _is_exercise_cell(cell, inside)
        if skip:
            continue
        before = next((c for c in reversed(cells[:i]) if c.cell_type == "code"), None)
        after = next((c for c in cells[i + 1 :] if c.cell_type == "code"), None)
        asserted = _asserted_values(before) + _asserted_values(after)
        for word, value, context in _claims(cell.source):
            if word in allowed or _matches(value, word, asserted):
                continue
            problems.append(f"「{word}」：…{context}…")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_measured_number_in_the_prose_is_glued_or_asserted(path):
    problems = unaccounted_numbers(path)
    assert not problems, (
        f"{path.name} 的正文里有 {len(problems)} 个数字既没有 glue、也没有在相邻代码格里断言"
        "（规则见 tests/test_prose_numbers.py 开头）：\n" + "\n".join(problems)
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_glue_key_in_the_prose_is_glued_by_the_section(path):
    nb = nbformat.read(path, as_version=4)
    used = {k for c in nb.cells if c.cell_type == "markdown" for k in GLUE_KEY.findall(c.source)}
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    literal = set(re.findall(r"glue\(\s*[\"']([^\"'{}]+)[\"']", code))
    prefixes = re.findall(r"glue\(\s*f[\"']([^\"'{]*)\{", code)  # glue(f"前缀{…}", …)：在循环里贴一组键
    missing = sorted(k for k in used if k not in literal and not any(k.startswith(p) for p in prefixes if p))
    assert not missing, f"{path.name} 的正文引用了没有 glue 过的键：{missing}"


@pytest.mark.parametrize(
    "source, flagged",
    [
        ("困惑度约 36 对 133，降到 5 以下。", {"36", "5"}),
        ("g=0.9 时只剩约 0.5%；变成 117 倍，好七倍多。", {"0.9", "0.5", "0.5%", "117", "七倍"}),
        ("$r\\approx82$ 处溢出；$p=0.25$ 不算。", {"82"}),
        ("### 收尾 1.1 的例子\n1.4–1.6 节与练习 1.3.2 都不算，1.5 倍算。", {"1.5"}),
        ("`x = 0.3` 与 {cite:p}`bengio2003neural` 与 {glue:text}`ppl:.2f` 都不算；1200 个句子也不算。", set()),
        ("```python\nx = 0.5\n```\n```{figure} a.svg\n:width: 90%\n\n图注 3.5 倍\n```", {"3.5"}),
    ],
)
def test_the_rule_itself(source, flagged):
    assert {word for word, _, _ in _claims(source)} == flagged
