"""第 1.4 节的玩具翻译任务：「中文式」词序 → 「动词在后、形容词在名词后」的词序。

源语言是一个字一个 token 的小语言，语法只有一条：

    句子 = 分句（，分句）*        分句 = 名词短语 动词 名词短语        名词短语 = 形容词{0..3} 名词

（翻译规则 ``alignment`` 对任意多个形容词都适用；``is_grammatical`` 只接受至多 3 个。）

例如 ``大 猫 追 小 黑 狗``。目标语言把每个字逐个换成一个英文小写词，但**词序不同**：

* 动词移到分句末尾（像日语那样的「主—宾—动」语序）；
* 名词短语里名词在前、形容词在后（像法语那样），形容词之间保持原来的次序。

所以 ``大 猫 追 小 黑 狗`` → ``cat big dog small black chases``。对齐不是恒等映射：第 3 个目标词
``dog`` 来自第 6 个源字，动词 ``chases`` 从第 3 个位置跑到了分句末尾。目标长度总等于源长度，
逐词翻译表是一一对应的，因此“翻对了多少”可以逐个位置数。

一切都由种子决定：同一个种子、同一个长度永远生成同样的句子。
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

NOUNS = {"猫": "cat", "狗": "dog", "鱼": "fish", "鸟": "bird", "马": "horse", "牛": "cow"}
ADJECTIVES = {"大": "big", "小": "small", "红": "red", "黑": "black", "白": "white", "老": "old"}
VERBS = {"追": "chases", "看": "sees", "咬": "bites", "找": "finds"}
SEPARATOR = {"，": ","}
LEXICON: dict[str, str] = {**NOUNS, **ADJECTIVES, **VERBS, **SEPARATOR}

MAX_ADJECTIVES = 3  # 一个名词短语最多带几个形容词
MIN_LEN = 3  # 最短的句子：名词 动词 名词
MAX_LEN = 24  # 训练与评估用到的最长源句（探索器也以此为上限）

# 词表：0 号是填充（本节的批次都等长，其实用不到），1 号是解码器的起始符。
PAD, BOS = "<pad>", "<s>"
SRC_TOKENS: list[str] = [PAD, BOS, *LEXICON]
TGT_TOKENS: list[str] = [PAD, BOS, *LEXICON.values()]
SRC_ID = {tok: i for i, tok in enumerate(SRC_TOKENS)}
TGT_ID = {tok: i for i, tok in enumerate(TGT_TOKENS)}
BOS_ID = 1


def _clause_lengths(length: int, rng: random.Random) -> list[int]:
    """把总长度拆成若干个分句的长度（分句之间各占一个逗号）。"""
    lo, hi = 3, 3 + 2 * MAX_ADJECTIVES
    options = [k for k in range(1, length + 1) if k * lo + (k - 1) <= length <= k * hi + (k - 1)]
    k = rng.choice(options)
    budget = length - (k - 1) - k * lo  # 分给各分句的形容词个数
    sizes = [lo] * k
    while budget:
        i = rng.randrange(k)
        if sizes[i] < hi:
            sizes[i] += 1
            budget -= 1
    return sizes


def _clause(size: int, rng: random.Random) -> list[str]:
    n_adj = size - 3
    left = rng.randint(max(0, n_adj - MAX_ADJECTIVES), min(n_adj, MAX_ADJECTIVES))
    nouns, adjectives = list(NOUNS), list(ADJECTIVES)

    def phrase(n: int) -> list[str]:
        return [rng.choice(adjectives) for _ in range(n)] + [rng.choice(nouns)]

    return [*phrase(left), rng.choice(list(VERBS)), *phrase(n_adj - left)]


def sample_source(length: int, rng: random.Random) -> list[str]:
    """生成一个恰好 ``length`` 个字的合乎语法的源句（字的列表）。"""
    if not MIN_LEN <= length:
        raise ValueError(f"句子至少有 {MIN_LEN} 个字")
    out: list[str] = []
    for i, size in enumerate(_clause_lengths(length, rng)):
        if i:
            out.append("，")
        out.extend(_clause(size, rng))
    return out


def alignment(source: list[str]) -> list[int]:
    """目标第 t 个词来自源句的第几个位置（从 0 数）。不合语法时抛 ``ValueError``。

    这就是本任务的“标准答案对齐”：模型训练时**从不**看到它，只在书里用来对照注意力权重。
    """
    order: list[int] = []
    start = 0
    while start <= len(source):
        end = source.index("，", start) if "，" in source[start:] else len(source)
        order.extend(_clause_alignment(source, start, end))
        if end < len(source):
            order.append(end)
        start = end + 1
    return order


def _clause_alignment(source: list[str], start: int, end: int) -> list[int]:
    verbs = [j for j in range(start, end) if source[j] in VERBS]
    if len(verbs) != 1:
        raise ValueError("每个分句必须恰好有一个动词")
    v = verbs[0]

    def phrase(a: int, b: int) -> list[int]:
        if a == b or source[b - 1] not in NOUNS or any(source[j] not in ADJECTIVES for j in range(a, b - 1)):
            raise ValueError("名词短语必须是若干形容词后面跟一个名词")
        return [b - 1, *range(a, b - 1)]

    return [*phrase(start, v), *phrase(v + 1, end), v]


def translatable(source: list[str]) -> bool:
    """``source`` 能按翻译规则得到标准译文吗？名词短语里的形容词个数不限（探索器用它评判训练分布之外的句子）。"""
    try:
        alignment(source)
    except ValueError:
        return False
    return True


def is_grammatical(source: list[str]) -> bool:
    """``source`` 是不是源语言的句子：能翻译，而且每个名词短语至多 ``MAX_ADJECTIVES`` 个形容词。

    ``sample_source`` 生成的、训练和评估用到的，正是这些句子。
    """
    if not translatable(source):
        return False
    run = 0  # 当前这一串连续形容词的长度；名词短语里的形容词总是连在一起，紧挨着名词
    for tok in source:
        run = run + 1 if tok in ADJECTIVES else 0
        if run > MAX_ADJECTIVES:
            return False
    return True


ROLES = ("主语名词", "宾语名词", "形容词", "动词", "逗号")


def roles(source: list[str]) -> list[str]:
    """源句每个位置的语法角色（``ROLES`` 之一）：名词按它在动词之前还是之后，分为主语和宾语。"""
    out, seen_verb = [], False
    for tok in source:
        if tok in SEPARATOR:
            out.append("逗号")
            seen_verb = False
        elif tok in VERBS:
            out.append("动词")
            seen_verb = True
        elif tok in ADJECTIVES:
            out.append("形容词")
        else:
            out.append("宾语名词" if seen_verb else "主语名词")
    return out


def translate(source: list[str]) -> list[str]:
    """标准译文：按 ``alignment`` 重新排列，再逐词查表。"""
    return [LEXICON[source[j]] for j in alignment(source)]


@dataclass(frozen=True)
class Batch:
    """一批等长的句对（同一批里所有源句长度相同，所以不需要填充和掩码）。

    ``src``、``tgt``：``(B, S)`` 的整数张量，目标长度 ``T`` 等于 ``S``。
    """

    src: torch.Tensor
    tgt: torch.Tensor


def encode_source(source: list[str]) -> list[int]:
    return [SRC_ID[tok] for tok in source]


def decode_target(ids) -> list[str]:
    return [TGT_TOKENS[int(i)] for i in ids]


def make_batch(length: int, size: int, rng: random.Random) -> Batch:
    sources = [sample_source(length, rng) for _ in range(size)]
    src = torch.tensor([encode_source(s) for s in sources])
    tgt = torch.tensor([[TGT_ID[w] for w in translate(s)] for s in sources])
    return Batch(src, tgt)


def batches(seed: int, size: int = 64, lengths: tuple[int, int] = (MIN_LEN, MAX_LEN)):
    """无穷的训练批次流：每批先均匀抽一个长度，再生成 ``size`` 个该长度的句子。"""
    rng = random.Random(seed)
    while True:
        yield make_batch(rng.randint(*lengths), size, rng)


def eval_set(seed: int = 14, per_length: int = 100, lengths: tuple[int, int] = (MIN_LEN, MAX_LEN)) -> list[Batch]:
    """评估用的数据：每个长度一批。默认种子与任何训练种子都不同。"""
    rng = random.Random(seed)
    return [make_batch(n, per_length, rng) for n in range(lengths[0], lengths[1] + 1)]


EXAMPLES = [
    "大猫追小黑狗",
    "老马看白鸟，红鱼咬小牛",
    "小白猫找大黑狗，老牛追红鸟，白马看黑鱼",
]
