"""第 1.5 节的玩具任务：模板生成的 Winograd 式句子，问「它」指的是哪个名词。

Winograd 模式（Levesque et al., 2012）的要点是：一句话里有两个名词和一个代词，只改一个“关键词”
（大 ↔ 小），代词所指就换成另一个名词；光靠词语搭配猜不出来，要靠对情境的理解。

这里只是**模板**：五种句式，每种两个关键词，各自决定「它」指向名词甲（第一个槽位）还是名词乙（第二个槽位）。
名词按固定规则分成训练名词与留出名词（held-out），留出名词从不出现在训练句子里，
用来检验模型学到的是句式结构而不是背下某几个名词。同一个种子永远生成同样的句子。
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

PRONOUN = "它"

# 名词池。每个池里每隔 4 个取 1 个作为留出名词（见 ``noun_split``）。
# fmt: off
OBJECTS = [
    "奖杯", "书包", "西瓜", "皮球", "花瓶", "台灯", "枕头", "雨伞", "吉他", "地球仪", "玩具熊", "画框",
    "电饭锅", "足球", "蛋糕", "风筝", "闹钟", "水壶", "键盘", "砚台", "相机", "鱼缸", "棋盘", "茶壶",
]
CONTAINERS = [
    "箱子", "抽屉", "柜子", "盒子", "口袋", "背包", "篮子", "书架", "纸箱", "行李箱", "冰箱", "车厢",
    "信封", "袋子", "木桶", "鞋盒", "衣橱", "竹筐", "铁罐", "饭盒",
]
ANIMALS = [
    "小狗", "小猫", "兔子", "乌龟", "狐狸", "老虎", "狮子", "松鼠", "鸭子", "小马", "小鸡", "老鼠",
    "猎豹", "大象", "蜗牛", "山羊", "刺猬", "企鹅", "袋鼠", "熊猫",
]
# fmt: on
POOLS = {"物品": OBJECTS, "容器": CONTAINERS, "动物": ANIMALS}


@dataclass(frozen=True)
class Template:
    """一种句式。``text`` 里有 ``{A}``、``{B}``、``{w}`` 三个空；``words[0]`` 让「它」指 A，``words[1]`` 指 B。"""

    key: str
    text: str
    pool_a: str
    pool_b: str
    words: tuple[str, str]


TEMPLATES = [
    Template("放不进", "{A}放不进{B}，因为它太{w}了。", "物品", "容器", ("大", "小")),
    Template("装不下", "{A}装不下{B}，因为它太{w}了。", "容器", "物品", ("小", "大")),
    Template("追不上", "{A}追不上{B}，因为它跑得太{w}了。", "动物", "动物", ("慢", "快")),
    Template("压坏了", "{A}压坏了{B}，因为它太{w}了。", "物品", "物品", ("重", "脆")),
    Template("举不起", "{A}举不起{B}，因为它太{w}了。", "动物", "物品", ("弱", "重")),
]
TEMPLATE_BY_KEY = {t.key: t for t in TEMPLATES}

# 正文里的例子：「奖杯放不进箱子，因为它太大了」
EXAMPLE = ("放不进", "奖杯", "箱子")


@dataclass(frozen=True)
class Example:
    """一个句子及其答案。``span_a``、``span_b`` 是名词甲、乙在句中的 ``[起, 止)``；``answer`` 0 表示甲，1 表示乙。"""

    text: str
    template: str
    word: str
    noun_a: str
    noun_b: str
    span_a: tuple[int, int]
    span_b: tuple[int, int]
    pronoun: int
    answer: int

    @property
    def referent(self) -> str:
        return self.noun_b if self.answer else self.noun_a


def noun_split(pool: str, split: str) -> list[str]:
    """``split`` 为 ``"train"`` 或 ``"heldout"``：池里下标 ``i % 4 == 3`` 的名词留出，其余用于训练。"""
    nouns = POOLS[pool]
    if split == "train":
        return [n for i, n in enumerate(nouns) if i % 4 != 3]
    if split == "heldout":
        return [n for i, n in enumerate(nouns) if i % 4 == 3]
    raise ValueError("split 只能是 'train' 或 'heldout'")


def make_example(template: str, noun_a: str, noun_b: str, word: str) -> Example:
    """按句式填空，并记下两个名词与「它」的位置。``word`` 必须是该句式的两个关键词之一。"""
    t = TEMPLATE_BY_KEY[template]
    if word not in t.words:
        raise ValueError(f"句式「{template}」的关键词只能是 {t.words}")
    text = t.text.format(A=noun_a, B=noun_b, w=word)
    a0 = t.text.index("{A}")
    span_a = (a0, a0 + len(noun_a))
    b0 = t.text.format(A=noun_a, B="\0", w=word).index("\0")
    span_b = (b0, b0 + len(noun_b))
    return Example(
        text, template, word, noun_a, noun_b, span_a, span_b, text.index(PRONOUN), t.words.index(word)
    )


def sample(n: int, split: str = "train", seed: int = 0) -> list[Example]:
    """生成 ``n`` 个句子：句式、关键词轮流取，名词从 ``split`` 对应的名词里随机抽（A ≠ B）。"""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = TEMPLATES[i % len(TEMPLATES)]
        word = t.words[(i // len(TEMPLATES)) % 2]
        noun_a = rng.choice(noun_split(t.pool_a, split))
        noun_b = rng.choice([x for x in noun_split(t.pool_b, split) if x != noun_a])
        out.append(make_example(t.key, noun_a, noun_b, word))
    return out


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[str, ...]:
    chars: set[str] = set()
    for t in TEMPLATES:
        chars.update(t.text.format(A="", B="", w=""))
        chars.update("".join(t.words))
        chars.update("".join(noun_split(t.pool_a, "train") + noun_split(t.pool_b, "train")))
    return ("<pad>", "<unk>", *sorted(chars))


def vocabulary() -> list[str]:
    """模型的词表：0 是填充，1 是“未知”，其余是模板与**训练名词**里出现过的字（按码位排序）。"""
    return list(_vocabulary())
