"""本书自己的小型中文语料，以及后面几节的玩具任务数据。

语料由模板和词表按固定的随机种子生成：每次运行得到完全相同的句子，不依赖任何下载。
模板刻意覆盖几类对照：

* 「读过」与「读完」：区分它们的线索有时紧挨着「读」字（「就读过」「终于读完」），有时在好几个字之外
  （「问我……读过没有」对「一口气把……读完」），有时前文里根本没有（第 1.1 节数了各占多少）；
* 「苹果」既是水果也是公司（第 1.2 节的上下文表示例子）；
* 日常生活、学习、天气、出行等普通句子，让字频分布不至于太单调。
"""

from __future__ import annotations

import itertools
import random
import re
from functools import cache

PEOPLE = ["我", "你", "他", "她", "我们", "老师", "妈妈", "哥哥", "妹妹", "同学", "小王", "小李", "爷爷"]
BOOKS = ["这本书", "那本小说", "这篇文章", "那本杂志", "这本教材", "那首长诗", "这份报告", "那本童话"]
FOODS = ["苹果", "香蕉", "米饭", "面条", "饺子", "西瓜", "橘子", "包子"]
PLACES = ["北京", "上海", "杭州", "成都", "西安", "广州", "南京", "武汉"]
TIMES = ["昨天", "今天", "上周", "去年", "刚才", "早上", "晚上", "周末"]
WEATHER = ["晴", "下雨", "下雪", "多云", "刮风", "很热", "很冷", "有雾"]
SUBJECTS = ["数学", "语文", "英语", "历史", "物理", "化学", "音乐", "美术"]
PRODUCTS = ["手机", "电脑", "手表", "耳机", "平板"]

# 「读过」常和“以前、又、再、还记得”一起出现；「读完」常和“终于、最后一页、一口气”一起出现。
READ_BEFORE = [
    "{b}{p}已经读过了，不想再读一遍。",
    "{b}{p}很多年前就读过，现在又翻了一遍。",
    "{p}说{b}以前读过，还记得里面的故事。",
    "{b}{p}读过两遍，每次的感受都不一样。",
    "{p}问我{b}读过没有，我说早就读过了。",
    "{b}我已经读过了，里面的人物我都记得。",
]
READ_FINISH = [
    "{b}{p}已经读完了，正在写读后感。",
    "{p}一口气把{b}读完了，一直读到最后一页。",
    "{b}{p}终于读完了，明天可以还给图书馆。",
    "{p}熬夜读完了{b}，第二天起得很晚。",
    "{b}我已经读完了，最后一章写得最好。",
    "{p}花了三天才把{b}读完。",
]
APPLE_FRUIT = [
    "{p}{t}吃了一个苹果，又甜又脆。",
    "{p}喜欢吃苹果，每天早上吃一个。",
    "{p}在市场买了一袋苹果和{f}。",
    "这个苹果很红，{p}洗干净就吃了。",
    "{p}把苹果切成小块，分给大家吃。",
]
APPLE_COMPANY = [
    "苹果公司{t}发布了新的{d}。",
    "{p}在苹果公司工作，负责设计{d}。",
    "苹果公司的{d}卖得很好。",
    "{p}想买苹果公司的{d}，但是太贵了。",
    "苹果公司在{c}开了一家新店。",
]
DAILY = [
    "{t}{c}的天气{w}，{p}没有出门。",
    "{p}{t}去{c}出差，晚上才回来。",
    "{p}最喜欢的课是{s}，因为老师讲得很有趣。",
    "{p}{t}学了两个小时{s}，觉得有点累。",
    "{p}{t}吃了{f}，然后去公园散步。",
    "{t}{p}在家里做了{f}，味道很好。",
    "{p}打算{t}坐火车去{c}看朋友。",
    "听说{c}{t}{w}，{p}带了一把伞。",
    "{p}的{s}作业已经写完了，现在可以休息。",
    "{p}在图书馆借了{b}，准备周末读。",
]
TEMPLATE_GROUPS = {
    "读过": READ_BEFORE,
    "读完": READ_FINISH,
    "苹果（水果）": APPLE_FRUIT,
    "苹果（公司）": APPLE_COMPANY,
    "日常": DAILY,
}

# 第 1.1 节的开篇例句
EXAMPLE_SENTENCE = "这本书我已经读过了"
EXAMPLE_PREFIX = "这本书我已经读"


# 模板里每个槽位 {x} 可以填的词；按这个顺序抽词（改动顺序会改变语料）
SLOTS = {"p": PEOPLE, "b": BOOKS, "f": FOODS, "c": PLACES, "t": TIMES, "w": WEATHER, "s": SUBJECTS, "d": PRODUCTS}


def _fill(template: str, rng: random.Random) -> str:
    return template.format(**{name: rng.choice(words) for name, words in SLOTS.items()})


@cache
def book_corpus(n_sentences: int = 1200, seed: int = 2017) -> tuple[str, ...]:
    """本书的中文语料：``n_sentences`` 个互不相同的句子（元组，按生成顺序）。

    每组模板轮流抽取，保证五类句子数量接近；同一个种子永远给出同一份语料。
    """
    rng = random.Random(seed)
    groups = list(TEMPLATE_GROUPS.values())
    seen: dict[str, None] = {}
    attempts = 0
    while len(seen) < n_sentences:
        attempts += 1
        if attempts > 50 * n_sentences:
            raise ValueError(f"模板最多只能生成约 {len(seen)} 个不同的句子，少于要求的 {n_sentences} 个")
        group = groups[attempts % len(groups)]
        seen.setdefault(_fill(rng.choice(group), rng), None)
    return tuple(seen)


def train_test_split(sentences: tuple[str, ...], test_fraction: float = 0.1) -> tuple[list[str], list[str]]:
    """确定性的划分：每隔 ``1/test_fraction`` 句取一句做测试集。"""
    step = max(2, round(1 / test_fraction))
    test = [s for i, s in enumerate(sentences) if i % step == 0]
    train = [s for i, s in enumerate(sentences) if i % step != 0]
    return train, test


@cache
def _read_contexts() -> frozenset[tuple[str, str]]:
    """模板能生成的每一处「读过」「读完」：``(到「读」为止的前文, 「读」后面的字)``。

    模板和词表都是有限的，所以能把所有可能的句子全部枚举出来（几千句），不必靠抽样。
    """
    found: set[tuple[str, str]] = set()
    for template in itertools.chain.from_iterable(TEMPLATE_GROUPS.values()):
        names = list(dict.fromkeys(re.findall(r"\{(\w)\}", template)))
        for words in itertools.product(*(SLOTS[name] for name in names)):
            s = template.format(**dict(zip(names, words)))
            found.update((s[: t + 1], s[t + 1]) for t in range(len(s) - 1) if s[t] == "读" and s[t + 1] in "过完")
    return frozenset(found)


def read_cue_span(prefix: str) -> int | None:
    """到「读」为止的前文 ``prefix``，最后几个字（含「读」）就足以确定下一个字是「过」还是「完」？

    在模板能生成的全部句子里，找最短的后缀 ``prefix[-m:]``，使以它结尾的前文后面只出现过同一个字，
    返回 ``m``：``m = 2`` 表示紧挨着「读」的那个字就够了，更大的 ``m`` 表示线索在更远处。
    整段前文也不够（模板能从同样的前文生成「读过」，也能生成「读完」），或者模板根本生成不了这段前文时，返回 ``None``。
    """
    contexts = _read_contexts()
    for m in range(1, len(prefix) + 1):
        suffix = prefix[-m:]
        if m < len(prefix):
            answers = {a for p, a in contexts if p.endswith(suffix)}
        else:  # 整段前文：只和从句首开始、一字不差的前文比
            answers = {a for p, a in contexts if p == prefix}
        if len(answers) == 1:
            return m
    return None
