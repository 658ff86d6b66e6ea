"""第 1.1 节：语言模型的概率目标。

* 链式法则：在一张小的随机联合概率表上分解、再乘回去；
* 字级 n-gram 语言模型（加 k 平滑），给出每个位置的条件概率 ``p(x_t | x_{<t})``；
* 困惑度：链式法则各项对数概率的平均；
* 一个极小的条件生成例子 ``p(y | x) = Π_t p(y_t | y_{<t}, x)``。
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

import torch

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


# ---------------------------------------------------------------- 链式法则
def random_joint(n_positions: int = 3, vocab_size: int = 4, seed: int = 0) -> torch.Tensor:
    """一张随机的联合分布表 ``P``，形状 ``(V,)*n``，``P[x1, …, xn] = p(x1, …, xn)``，总和为 1。"""
    g = torch.Generator().manual_seed(seed)
    table = torch.rand((vocab_size,) * n_positions, generator=g, dtype=torch.float64) + 1e-3
    return table / table.sum()


def chain_rule_factors(joint: torch.Tensor, x: Sequence[int], order: Sequence[int] | None = None) -> list[float]:
    """按 ``order`` 给出的位置顺序，把 ``p(x)`` 拆成条件概率的列表。

    ``order=None`` 即从左到右 ``(0, 1, …, n-1)``：第 k 项是
    ``p(x_{order[k]} | x_{order[0]}, …, x_{order[k-1]})``，由联合表求边缘分布再相除得到。
    任何顺序的乘积都等于 ``joint[x]``——链式法则对任意联合分布、任意顺序都成立。
    """
    n = joint.dim()
    order = list(range(n)) if order is None else list(order)
    if sorted(order) != list(range(n)):
        raise ValueError(f"order 必须是 0..{n - 1} 的一个排列")
    factors = []
    for k in range(n):
        seen = order[: k + 1]
        num = _marginal(joint, {i: x[i] for i in seen})
        den = _marginal(joint, {i: x[i] for i in seen[:-1]})
        factors.append(num / den)
    return factors


def _marginal(joint: torch.Tensor, fixed: dict[int, int]) -> float:
    """``p(x_i = v, i ∈ fixed)``：固定部分位置、把其余位置求和。"""
    index = tuple(fixed.get(i, slice(None)) for i in range(joint.dim()))
    return float(joint[index].sum())


# ---------------------------------------------------------------- n-gram 语言模型
@dataclass
class NGramLM:
    """字级 n-gram 语言模型：``p(x_t | 前 n-1 个字)``，加 k 平滑。

    ``order=1`` 完全不看上下文（一元模型）；``order=3`` 看前两个字。句首用 ``<s>`` 补齐，
    句尾预测 ``</s>``。训练集中没出现过的字映射为 ``<unk>``，因此任何输入都有非零概率。
    """

    order: int
    k: float = 0.1

    def fit(self, sentences: Iterable[str]) -> NGramLM:
        if self.order < 1:
            raise ValueError("order 至少为 1")
        if not self.k > 0:
            raise ValueError("平滑常数 k 必须为正")
        self.counts: dict[tuple[str, ...], Counter] = defaultdict(Counter)
        vocab = {EOS, UNK}
        for sentence in sentences:
            vocab.update(sentence)
            for context, token in self._events(list(sentence)):
                self.counts[context][token] += 1
        self.vocab = sorted(vocab)
        self._totals = {c: sum(cnt.values()) for c, cnt in self.counts.items()}
        return self

    def _events(self, chars: list[str]):
        padded = [BOS] * (self.order - 1) + chars + [EOS]
        for t in range(self.order - 1, len(padded)):
            yield tuple(padded[t - self.order + 1 : t]), padded[t]

    def _norm(self, ch: str) -> str:
        return ch if ch in self.vocab or ch in (BOS, EOS) else UNK

    def _context(self, context: Sequence[str]) -> tuple[str, ...]:
        if self.order == 1:
            return ()
        padded = [BOS] * (self.order - 1) + [self._norm(c) for c in context]
        return tuple(padded[-(self.order - 1) :])

    def prob(self, token: str, context: Sequence[str]) -> float:
        """``p(token | context)``；``context`` 只用最后 ``order-1`` 个字（不足时用 ``<s>`` 补齐）。"""
        ctx = self._context(context)
        count = self.counts.get(ctx, Counter())[self._norm(token)]
        total = self._totals.get(ctx, 0)
        return (count + self.k) / (total + self.k * len(self.vocab))

    def distribution(self, context: Sequence[str]) -> dict[str, float]:
        """下一个 token 的完整分布（所有概率加起来为 1）。"""
        return {v: self.prob(v, context) for v in self.vocab}

    def top_next(self, context: str, k: int = 5) -> list[tuple[str, float]]:
        """概率最高的 ``k`` 个候选。平滑不改变计数的大小顺序，所以直接按计数排序即可。"""
        ctx = self._context(list(context))
        counts = self.counts.get(ctx, Counter())
        denom = self._totals.get(ctx, 0) + self.k * len(self.vocab)
        best = [(tok, (c + self.k) / denom) for tok, c in counts.most_common(k)]
        unseen = (v for v in self.vocab if v not in counts)
        best += [(v, self.k / denom) for v in itertools.islice(unseen, k - len(best))]
        return best

    def conditionals(self, text: str, *, include_eos: bool = False) -> list[float]:
        """链式法则的各项：``[p(x_1), p(x_2 | x_1), …]``（可选再加上句尾 ``p(</s> | x)``）。"""
        chars = list(text)
        probs = [self.prob(ch, chars[:t]) for t, ch in enumerate(chars)]
        if include_eos:
            probs.append(self.prob(EOS, chars))
        return probs

    def log_prob(self, text: str, *, include_eos: bool = False) -> float:
        """``log p(x_1, …, x_n) = Σ_t log p(x_t | x_{<t})``（自然对数）。"""
        return sum(math.log(p) for p in self.conditionals(text, include_eos=include_eos))


@cache
def book_model(order: int, k: float = 0.1) -> NGramLM:
    """在本书语料的训练部分上拟合的 n-gram 模型（按阶数缓存）。"""
    from seqlab import corpus

    train, _ = corpus.train_test_split(corpus.book_corpus())
    return NGramLM(order, k).fit(train)


def perplexity(model: NGramLM, sentences: Iterable[str]) -> float:
    """困惑度 ``exp(-(1/N) Σ log p(x_t | x_{<t}))``，N 是所有句子的 token 数（含句尾）。"""
    total_log, n = 0.0, 0
    for s in sentences:
        probs = model.conditionals(s, include_eos=True)
        total_log += sum(math.log(p) for p in probs)
        n += len(probs)
    if n == 0:
        raise ValueError("没有可以计算困惑度的 token")
    return math.exp(-total_log / n)


# ---------------------------------------------------------------- 条件生成
DIGITS = dict(zip("零一二三四五六七八九", "0123456789"))


@dataclass
class DigitTranscriber:
    """一个极小的“翻译”模型：把中文数字串 x 译成阿拉伯数字串 y。

    ``p(y_t | y_{<t}, x)`` 由一张计数表给出：第 t 步读源句的第 t 个字（源句在每一步都可见），
    再以 ``1 - noise`` 的概率给出对应数字，其余概率均分给别的数字。没有 x 时，这一步只能猜：
    ``p(y_t | y_{<t})`` 是均匀的——这正是条件生成里“源信息”的价值。
    """

    noise: float = 0.05

    def step(self, x: str, y_prefix: str) -> dict[str, float]:
        """第 ``t = len(y_prefix)`` 步的条件分布 ``p(· | y_{<t}, x)``；数字串结束时预测 ``</s>``。"""
        symbols = list("0123456789") + [EOS]
        t = len(y_prefix)
        target = DIGITS[x[t]] if t < len(x) else EOS
        other = self.noise / (len(symbols) - 1)
        return {s: (1 - self.noise if s == target else other) for s in symbols}

    def log_prob(self, y: str, x: str) -> float:
        """``log p(y | x) = Σ_t log p(y_t | y_{<t}, x)``，包括句尾符号。"""
        steps = list(y) + [EOS]
        return sum(math.log(self.step(x, y[:t])[s]) for t, s in enumerate(steps))

    def greedy(self, x: str) -> str:
        """每一步取概率最大的符号，直到产生 ``</s>``。"""
        if any(ch not in DIGITS for ch in x):
            raise ValueError("源句只能包含中文数字 零一二三四五六七八九")
        y = ""
        for _ in range(len(x) + 1):
            dist = self.step(x, y)
            best = max(dist, key=dist.get)
            if best == EOS:
                break
            y += best
        return y


def all_sequences(vocab_size: int, n_positions: int):
    """``V^n`` 个序列的迭代器（用来验证联合表的和为 1 等）。"""
    return itertools.product(range(vocab_size), repeat=n_positions)
