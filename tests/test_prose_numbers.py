"""正文里的每个实测数字都来自执行过的代码：要么用 myst-nb 的 glue 贴进正文，要么在紧挨着的代码格里被断言。

**规则**（逐节检查，每个笔记本一个测试）。在一节的 markdown 单元格里，下面这些写法算作“看起来是测出来的数”：

1. 小数：``0.52``、``3.4``；
2. 百分数：``5%``、``93 %``；
3. 倍数：数字（阿拉伯数字或汉字数字）后面跟“倍”：``117 倍``、``七倍``；
4. 近似值：“约 / 约为 / 大约 / 接近 / ≈”后面的数，以及公式里 ``\\approx`` 后面的数（``$r\\approx82$``）；
5. 界：“不到 / 超过 / 低于 / 高于 / 只剩”后面的数，或后面跟着“以上 / 以下 / 出头 / 左右”的数。

6. 汉字写的近似量：“几十 / 数十 / 十几 / 两百多 / 一半以上 / 过半 / 大半”这类说法（例如“几十个模板”“十几倍”
   “一半以上是 PyTorch”），它们同样是对某个实测或计数的断言。

其余的整数（句子数、维度、序列长度、年份……）是设定或计数，不在此列。不检查的地方：``$…$`` 与 ``$$…$$``
公式（规则 4 的 ``\\approx`` 除外）、标题行、小节编号（「1.1 的例子」「1.4–1.6 节」）、代码（行内代码与代码块）、MyST 角色的内容（``{cite}``、``{ref}``、``{eq}``、
``{term}``、``{glue:…}`` 等）、指令的选项行（``:width: 90%``）、练习的“难度 … · 约 N 分钟”元数据行（它来自库里
登记的练习，由 tests/test_teacher.py 核对）。练习的题面（从 ``exercise-start`` 到 ``exercise-end``）
给的是任务与设定，不检查；参考答案（带 ``solution`` 标签的单元格）照常检查。

检查的范围：每一节的 markdown 单元格（逐节一个测试）、那一节的自测题（``lib/seqlab/quizzes/secNN.json``：题干、
选项与反馈），以及前言、章导读和教师指南。自测题与这三页旁边没有代码格：其中的数要么由别的测试核对
（写在 ``ALLOWED`` 的理由里，例如“tests/test_teacher.py 对照 runtime.json”），要么是设定。

这样的数必须满足下面之一：

* **贴上去的**：正文写 ``{glue:text}`键``` 而不是数字本身；本测试同时检查每个键都由本节的某个代码格 ``glue`` 过
  （``glue("键", …)``，或在循环里 ``glue(f"前缀{…}", …)``，这时以该前缀开头的键都算）；
* **断言过的**：它的值（百分数另按除以 100 的值）作为数字字面量出现在紧挨着这个 markdown 单元格的代码格
  （前一个或后一个代码格）的某一行 ``assert`` 里；汉字近似量要断言它的界（“十几”断言 10 与 20 之一，
  “几十”断言 20 与 100 之一，“两百多”断言 200 与 300 之一，“一半以上”断言 0.5）；
* **不是测出来的常数**：列在下面短短的 ``ALLOWED`` 里，并写明理由。
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import nbformat
import pytest

from student import notebooks

NOTEBOOKS = notebooks()
ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "intro.md", ROOT / "chapters" / "ch01" / "index.md", ROOT / "chapters" / "teacher" / "guide.md"]

# 不是测量结果的常数：键是笔记本文件名的前两位，值是 {正文里的写法: 理由}。保持短小。
ALLOWED: dict[str, dict[str, str]] = {
    "01": {"95%": "DigitTranscriber 的设定：noise = 0.05", "5%": "同上"},
    "03": {"0.95": "把 ρ 从 0.95 拖到 1.05：给读者的操作建议，不是结果", "1.05": "同上",
           "0.8": "自测题 1.3 第 2 题的设定 W_h = 0.8·Q，上界 0.8ʳ 由它推出"},
    # 前言、章导读与教师指南：键是文件名
    "intro.md": {"几十": "“几秒到几十秒就能训练完”：test_intro_training_times_match_the_checkpoints 对照检查点记录的训练用时"},
    "index.md": {"几十": "“线索可能在几十个 token 之前”：举例说明距离，不是实测"},
    "guide.md": {
        "一半以上": "“一半以上是 PyTorch”：tests/test_teacher.py 对照 _build/student-env.json",
        "1.3": "“装好后的环境约 1.3 GB”：tests/test_student_env.py 对照实测的安装大小",
        "3.11": "Python 的版本号",
        "几百": "“几百兆字节的输出”是 tests/test_grading.py 里刷屏提交的设定；“至少几百句”是开放题的评分要求",
        "几十": "“几十人以上的班级”：建议用 Zero to JupyterHub 的班级规模，不是实测",
        "1.25": "hub/sizing.py 的换算规则（kubernetes()）：内存保证值 = 峰值 × 1.25，上限 = 峰值 × 2；"
                "tests/test_teacher.py 用它核对 hub/sizing.md 的配置片段",
        "2": "同上（上限 = 2 倍）；评分要点里“2 倍、4 倍的步数”是给学生的实验设定",
        "4": "评分要点里“2 倍、4 倍的步数”是给学生的实验设定",
        "100%": "常见错误：把答案本身放进前文时准确率必然是 100%（推理，不是实测）",
        "25": "“每节课大约 25 分钟讲解”：课时安排，不是实测",
    },
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
# 汉字近似量 → (下界, 上界)：断言里出现其中一个界就算核对过
CN_APPROX = re.compile(
    r"(?P<cn>(?:几|数)[十百千万]|十几|[一二两三四五六七八九]?[十百千万]多|一半以上|一半多|过半|大半)"
    r"(?P<unit>[^\s，。；、）)]?)"
)
APPROX_IN_MATH = re.compile(rf"\\approx\s*(?P<n>{NUM})")
ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")
SECTION_NUMBER = re.compile(r"(?<![\d.])1\.[1-6](?:\s*[–—~～-]\s*1\.[1-6])?(?=\s*(?:节|的|里|中|、|，|）|与|和|—))")  # 「1.4–1.6 节」「1.1 的例子」
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


def _cn_bounds(word: str) -> tuple[float, float]:
    """汉字近似量的范围：「十几」→ (10, 20)，「几十」→ (20, 100)，「两百多」→ (200, 300)，「一半以上」→ (0.5, 1)。"""
    if word in ("一半以上", "一半多", "过半", "大半"):
        return 0.5, 1.0
    if word.startswith(("几", "数")):
        unit = CN_UNITS[word[1]]
        return 2 * unit, 10 * unit
    if word == "十几":
        return 10, 20
    base = _chinese_number(word[:-1])  # 「两百多」→ 200
    unit = CN_UNITS[word[-2]]
    return base, base + unit


def _prose(source: str) -> tuple[str, list[str]]:
    """去掉不检查的部分，返回 (余下的文字, 公式里 \\approx 后面的数)。"""
    kept, code_fence, directives = [], None, []
    for line in source.splitlines():
        fence = re.match(r"^\s*(`{3,}|~{3,})(.*)$", line)
        if fence:
            mark, info = fence.group(1), fence.group(2).strip()
            if code_fence:
                if mark.startswith(code_fence) and not info:
                    code_fence = None  # 代码块结束
            elif info.startswith("{"):
                directives.append(mark)  # 指令（```{admonition} 等）：只跳过这一行，里面的文字照常检查
            elif not info and directives and mark == directives[-1]:
                directives.pop()  # 指令结束
            else:
                code_fence = mark  # 代码块：整块跳过
            continue
        in_code = code_fence is not None
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


def _claims(source: str, *, quiz: bool = False) -> list[tuple[str, float, str]]:
    """(正文里的写法, 数值, 上下文) 的列表。百分数的数值按原样记录，比较时另试 ÷100；汉字近似量记下界。

    ``quiz=True``（自测题）时不看单独的小数和“N 倍”：选项本身就是“4 倍”“0.8ʳ”这样的候选答案与设定；
    近似（约、≈）、界（超过、以上）、百分数和汉字近似量照样检查。"""
    text, approx = _prose(source)
    patterns = [p for i, p in enumerate(PATTERNS) if not (quiz and i in (0, 2))]
    found = []
    for m in CN_APPROX.finditer(text):
        context = text[max(0, m.start() - 25) : m.end() + 10].replace("\n", " ")
        found.append((m["cn"], _cn_bounds(m["cn"])[0], context))
    for pattern in patterns:
        for m in pattern.finditer(text):
            if m.groupdict().get("cn"):
                word, value = m.group("cn") + "倍", _chinese_number(m.group("cn"))
                if m.group("cn") == "几" and text[m.end():m.end() + 1] in "？?":
                    continue  # “变成原来的几倍？”是提问，不是近似量
            else:
                word, value = m.group("n") + (m.groupdict().get("pct") or "").strip(), float(m.group("n"))
                if value in (0, 1) and (m.group(0).startswith("接近") or text[max(0, m.start() - 3):m.start()].strip().endswith("接近")):
                    continue  # “接近 1”“接近 0”说的是极限，不是测出来的数
            context = text[max(0, m.start() - 25) : m.end() + 10].replace("\n", " ")
            found.append((word, value, context))
    found += [(n, float(n), f"公式里的 ≈ {n}") for n in approx]
    return found


def _is_exercise_statement(cell, inside: bool) -> tuple[bool, bool]:
    """(这一格是否是练习的题面, 下一格是否仍在题面里)。参考答案（solution 标签）不是题面：照常检查。"""
    src = cell.source
    if "solution" in cell.metadata.get("tags", []):
        return False, inside
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
    if CN_APPROX.fullmatch(word):
        candidates = list(_cn_bounds(word))
    else:
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
        statement, inside = _is_exercise_statement(cell, inside)
        if statement:
            continue
        where = f"第 {i} 格（参考答案）" if "solution" in cell.metadata.get("tags", []) else f"第 {i} 格"
        before = next((c for c in reversed(cells[:i]) if c.cell_type == "code"), None)
        after = next((c for c in cells[i + 1 :] if c.cell_type == "code"), None)
        asserted = _asserted_values(before) + _asserted_values(after)
        for word, value, context in _claims(cell.source):
            if word in allowed or _matches(value, word, asserted):
                continue
            problems.append(f"{where}「{word}」：…{context}…")
    return problems


def quiz_path(path) -> Path:
    return ROOT / "lib" / "seqlab" / "quizzes" / f"sec{path.name[:2]}.json"


def quiz_texts(path) -> list[tuple[str, str]]:
    """(位置, 文字)：一节自测题的每个题干、选项与反馈。"""
    quiz = quiz_path(path)
    if not quiz.exists():
        return []
    out = []
    for q, question in enumerate(json.loads(quiz.read_text(encoding="utf-8")), 1):
        out.append((f"{quiz.name} 第 {q} 题题干", question["question"]))
        for a, answer in enumerate(question.get("answers", []), 1):
            out.append((f"{quiz.name} 第 {q} 题选项 {a}", answer.get("answer", "")))
            out.append((f"{quiz.name} 第 {q} 题选项 {a} 的反馈", answer.get("feedback", "")))
    return out


def unaccounted_in_quiz(path) -> list[str]:
    allowed = ALLOWED.get(path.name[:2], {})
    return [f"{where}「{word}」：…{context}…" for where, text in quiz_texts(path)
            for word, _, context in _claims(text, quiz=True) if word not in allowed]


# 共用页面里由别的测试逐字核对的句子：整句不再检查（值会随测量更新，不能写进 ALLOWED）
CHECKED_ELSEWHERE = {
    "guide.md": [
        (r"峰值内存，在 \d+\.\d+～\d+\.\d+ GB 之间", "tests/test_teacher.py 对照 chapters/teacher/runtime.json"),
    ],
}


def unaccounted_in_page(page: Path) -> list[str]:
    allowed = ALLOWED.get(page.name, {})
    text = page.read_text(encoding="utf-8")
    for pattern, _ in CHECKED_ELSEWHERE.get(page.name, []):
        text = re.sub(pattern, " ", text)
    return [f"{page.name}「{word}」：…{context}…" for word, _, context in _claims(text) if word not in allowed]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_measured_number_in_the_prose_is_glued_or_asserted(path):
    problems = unaccounted_numbers(path)
    assert not problems, (
        f"{path.name} 的正文里有 {len(problems)} 个数字既没有 glue、也没有在相邻代码格里断言"
        "（规则见 tests/test_prose_numbers.py 开头）：\n" + "\n".join(problems)
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_number_in_the_quiz_is_accounted_for(path):
    problems = unaccounted_in_quiz(path)
    assert not problems, (
        f"{path.name} 的自测题里有 {len(problems)} 个看起来是实测的数，既不是设定、也没有别的测试核对"
        "（自测题没法 glue：改成不依赖实测的说法，或在 ALLOWED 里写明由哪个测试核对）：\n" + "\n".join(problems)
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_number_on_the_shared_pages_is_accounted_for(page):
    problems = unaccounted_in_page(page)
    assert not problems, (
        f"{page.name} 里有 {len(problems)} 个看起来是实测的数，没有写明由哪个测试核对（ALLOWED）：\n" + "\n".join(problems)
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
        ("模板只有几十个，快了十几倍；装好后两百多个包，一半以上是 PyTorch。", {"几十", "十几", "十几倍", "两百多", "一半以上"}),
        ("十个位置、三百个样本、一半的行都不算。", set()),
    ],
)
def test_the_rule_itself(source, flagged):
    assert {word for word, _, _ in _claims(source)} == flagged


def test_chinese_approximate_quantities_are_checked_against_their_bounds():
    assert _cn_bounds("十几") == (10, 20) and _cn_bounds("几十") == (20, 100) and _cn_bounds("两百多") == (200, 300)
    assert _matches(10, "十几", [10.0]) and _matches(0.5, "一半以上", [0.5]) and not _matches(20, "几十", [30.0])


def test_intro_training_times_match_the_checkpoints():
    """前言说模型“几秒到几十秒就能训练完，或者直接载入随书附带的检查点”：每个检查点记录的训练用时都不到 100 秒。"""
    seconds = {}
    for meta_file in (ROOT / "lib" / "seqlab" / "checkpoints").glob("*.json"):
        meta = json.loads(meta_file.read_text(encoding="utf-8")).get("meta", {})
        recorded = [meta[k] for k in ("cpu_seconds", "seconds") if k in meta]
        if recorded:
            seconds[meta_file.stem] = max(recorded)
    assert seconds, "检查点里没有记录训练用时"
    assert max(seconds.values()) < 100, f"有检查点训练超过了“几十秒”：{seconds}"
    assert "几秒到几十秒就能训练完" in (ROOT / "intro.md").read_text(encoding="utf-8")
