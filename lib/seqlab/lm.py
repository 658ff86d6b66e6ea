"""第 1.1 节：语言模型的概率目标。

* 链式法则：在一张小的随机联合概率表上分解、再乘回去；
* 字级 n-gram 语言模型（加 k 平滑），给出每个位置的条件概率 ``p(x_t | x_{<t})``；
* 一个只看位置编号、不看前文的对照模型 ``p(x_t | t)``；
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

from seqlab.errors import InputError

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


# ---------------------------------------------------------------- 链式法则
def random_joint(n_positions: int = 3, vocab_size: int = 4, seed: int = 0) -> torch.Tensor:
    """一张随机的联合分布表 ``P``，形状 ``(V,)*n``，``P[x1, …, xn] = p(x1, …, xn)``，总和为 1。"""
    g = torch.Generator().manual_seed(seed)
    table = torch.rand((vocab_size,) * n_positions, generator=g, dtype=torch.float64) + 1e-3
    return table / table.sum()


def chain_rule_factors(
    joint: torch.Tensor, x: Sequence[int], order: Sequence[int] | None = None
) -> list[float]:
    """按 ``order`` 给出的位置顺序，把 ``p(x)`` 拆成条件概率的列表。

    ``order=None`` 即从左到右 ``(0, 1, …, n-1)``：第 k 项是
    ``p(x_{order[k]} | x_{order[0]}, …, x_{order[k-1]})``，由联合表求边缘分布再相除得到。
    任何顺序的乘积都等于 ``joint[x]``——链式法则对任意联合分布、任意顺序都成立。
    """
    n = joint.dim()
    order = list(range(n)) if order is None else list(order)
    if sorted(order) != list(range(n)):
        raise InputError(f"order 必须是 0..{n - 1} 的一个排列")
    factors = []
    for k in range(n):
        seen = order[: k + 1]
        num = _marginal(joint, {i: x[i] for i in seen})
        den = _marginal(joint, {i: x[i] for i in seen[:-1]})
        factors.append(num / den)
    return factors


def sample_by_chain_rule(
    joint: torch.Tensor, n_samples: int, order: Sequence[int] | None = None, seed: int = 0
) -> torch.Tensor:
    """按 ``order`` 的顺序逐个位置抽样：先从 ``p(x_{order[0]})`` 抽，再从以已抽位置为条件的分布里抽……

    自回归模型生成文字就是这样一步一步做的。每一步的条件分布取联合表里“已抽位置固定、
    其余位置求和”的那一行，再归一化。返回形状 ``(n_samples, n)`` 的整数张量，第 ``i`` 列是
    位置 ``i`` 的取值（与抽样顺序无关）。用自己的随机数生成器，不动全局随机状态。
    """
    n = joint.dim()
    order = list(range(n)) if order is None else list(order)
    if sorted(order) != list(range(n)):
        raise InputError(f"order 必须是 0..{n - 1} 的一个排列")
    g = torch.Generator().manual_seed(seed)
    by_order = joint.permute(order)  # 第 k 维 = 第 k 个被抽的位置
    out = torch.empty(n_samples, n, dtype=torch.long)
    for k in range(n):
        marginal = by_order.sum(dim=tuple(range(k + 1, n))) if k + 1 < n else by_order
        if k == 0:  # 还没有条件：所有样本共用 p(x_{order[0]})
            rows = marginal.expand(n_samples, -1)
        else:  # (n_samples, V)：按每个样本已抽到的值取出一行
            rows = marginal[tuple(out[:, order[j]] for j in range(k))]
        conditional = rows / rows.sum(dim=-1, keepdim=True)
        out[:, order[k]] = torch.multinomial(conditional, 1, generator=g).squeeze(1)
    return out


def _marginal(joint: torch.Tensor, fixed: dict[int, int]) -> float:
    """``p(x_i = v, i ∈ fixed)``：固定部分位置、把其余位置求和。"""
    index = tuple(fixed.get(i, slice(None)) for i in range(joint.dim()))
    return float(joint[index].sum())


# ---------------------------------------------------------------- n-gram 语言模型
class ChainRuleLM:
    """逐位置给出条件概率的语言模型的共同部分。

    子类只需实现 ``prob(token, context)`` 和 ``vocab``；整句的对数概率、完整的下一字分布
    都由链式法则从它推出，所以不同的模型可以用同一个 ``perplexity`` 比较。
    """

    vocab: list[str]

    def prob(self, token: str, context: Sequence[str]) -> float:
        raise NotImplementedError

    def distribution(self, context: Sequence[str]) -> dict[str, float]:
        """下一个 token 的完整分布（所有概率加起来为 1）。"""
        return {v: self.prob(v, context) for v in self.vocab}

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


def _check_k(k: float) -> None:
    if not k > 0:
        raise InputError("平滑常数 k 必须为正")


@dataclass
class NGramLM(ChainRuleLM):
    """字级 n-gram 语言模型：``p(x_t | 前 n-1 个字)``，加 k 平滑。

    ``order=1`` 完全不看上下文（一元模型）；``order=3`` 看前两个字。句首用 ``<s>`` 补齐，
    句尾预测 ``</s>``。训练集中没出现过的字映射为 ``<unk>``，因此任何输入都有非零概率。
    """

    order: int
    k: float = 0.1

    def fit(self, sentences: Iterable[str]) -> NGramLM:
        if self.order < 1:
            raise InputError("阶数 order 至少为 1")
        _check_k(self.k)
        self.counts: dict[tuple[str, ...], Counter] = defaultdict(Counter)
        vocab = {EOS, UNK}
        for sentence in sentences:
            vocab.update(sentence)
            for context, token in self._events(list(sentence)):
                self.counts[context][token] += 1
        self.vocab = sorted(vocab)
        self._known = set(vocab)  # 查“认不认识这个字”用集合，比在有序列表里找快得多
        self._totals = {c: sum(cnt.values()) for c, cnt in self.counts.items()}
        return self

    def _events(self, chars: list[str]):
        padded = [BOS] * (self.order - 1) + chars + [EOS]
        for t in range(self.order - 1, len(padded)):
            yield tuple(padded[t - self.order + 1 : t]), padded[t]

    def _norm(self, ch: str) -> str:
        return ch if ch in self._known or ch == BOS else UNK

    def _context(self, context: Sequence[str]) -> tuple[str, ...]:
        if self.order == 1:
            return ()
        window = self.order - 1  # 只有最后 n-1 个字会被用到：先截取，再补齐、映射
        padded = [BOS] * window + [self._norm(c) for c in list(context)[-window:]]
        return tuple(padded[-window:])

    def prob(self, token: str, context: Sequence[str]) -> float:
        """``p(token | context)``；``context`` 只用最后 ``order-1`` 个字（不足时用 ``<s>`` 补齐）。"""
        ctx = self._context(context)
        count = self.counts.get(ctx, Counter())[self._norm(token)]
        total = self._totals.get(ctx, 0)
        return (count + self.k) / (total + self.k * len(self.vocab))

    def top_next(self, context: str, k: int = 5) -> list[tuple[str, float]]:
        """概率最高的 ``k`` 个候选。平滑不改变计数的大小顺序，所以直接按计数排序即可。"""
        ctx = self._context(list(context))
        counts = self.counts.get(ctx, Counter())
        denom = self._totals.get(ctx, 0) + self.k * len(self.vocab)
        best = [(tok, (c + self.k) / denom) for tok, c in counts.most_common(k)]
        unseen = (v for v in self.vocab if v not in counts)
        best += [(v, self.k / denom) for v in itertools.islice(unseen, k - len(best))]
        return best


@dataclass
class PositionLM(ChainRuleLM):
    """对照模型：只看“这是第几个位置”，完全不看前文内容，``p(x_t | t)``，同样加 k 平滑。

    它回答的问题是：如果模型手里只有位置编号，能预测到什么程度？位置 ``t`` 从 0 数起；
    句尾 ``</s>`` 也算一个位置上的事件，所以它能学到“句子通常在第几个字结束”。
    """

    k: float = 0.1

    def fit(self, sentences: Iterable[str]) -> PositionLM:
        _check_k(self.k)
        self.counts: dict[int, Counter] = defaultdict(Counter)
        vocab = {EOS, UNK}
        for sentence in sentences:
            vocab.update(sentence)
            for t, token in enumerate([*sentence, EOS]):
                self.counts[t][token] += 1
        self.vocab = sorted(vocab)
        self._known = set(vocab)
        self._totals = {t: sum(cnt.values()) for t, cnt in self.counts.items()}
        return self

    def prob(self, token: str, context: Sequence[str]) -> float:
        """``p(token | t = len(context))``：只用到 ``context`` 的长度，不看它的内容。"""
        t = len(context)
        token = token if token in self._known else UNK
        count = self.counts.get(t, Counter())[token]
        return (count + self.k) / (self._totals.get(t, 0) + self.k * len(self.vocab))


@cache
def book_model(order: int, k: float = 0.1) -> NGramLM:
    """在本书语料的训练部分上拟合的 n-gram 模型（按阶数缓存）。"""
    from seqlab import corpus

    train, _ = corpus.train_test_split(corpus.book_corpus())
    return NGramLM(order, k).fit(train)


def perplexity(model: ChainRuleLM, sentences: Iterable[str]) -> float:
    """困惑度 ``exp(-(1/N) Σ log p(x_t | x_{<t}))``，N 是所有句子的 token 数（含句尾）。"""
    total_log, n = 0.0, 0
    for s in sentences:
        probs = model.conditionals(s, include_eos=True)
        total_log += sum(math.log(p) for p in probs)
        n += len(probs)
    if n == 0:
        raise InputError("没有可以计算困惑度的 token")
    return math.exp(-total_log / n)


# ---------------------------------------------------------------- 条件生成
DIGITS = dict(zip("零一二三四五六七八九", "0123456789"))


@dataclass
class DigitTranscriber:
    """一个极小的“翻译”模型：把中文数字串 x 译成阿拉伯数字串 y。

    ``p(y_t | y_{<t}, x)`` 是写死的规则：第 t 步读源句的第 t 个字（源句在每一步都可见），
    以 ``1 - noise`` 的概率给出对应数字，其余概率均分给别的符号。``step_without_source``
    给出看不到源句时的对照：把源句那个位置上的字按均匀分布求和消去之后，只剩下 ``p(y_t | y_{<t})``。
    """

    noise: float = 0.05

    def step(self, x: str, y_prefix: str) -> dict[str, float]:
        """第 ``t = len(y_prefix)`` 步的条件分布 ``p(· | y_{<t}, x)``；数字串结束时预测 ``</s>``。"""
        symbols = list("0123456789") + [EOS]
        t = len(y_prefix)
        target = DIGITS[x[t]] if t < len(x) else EOS
        other = self.noise / (len(symbols) - 1)
        return {s: (1 - self.noise if s == target else other) for s in symbols}

    def step_without_source(self, y_prefix: str, length: int) -> dict[str, float]:
        """看不到源句（只知道它有 ``length`` 个字）时第 t 步的分布 ``p(y_t | y_{<t})``。

        设源句每个位置独立、均匀地取 10 个中文数字之一。已生成的前缀只和源句前面的字有关，
        所以 ``p(y_t | y_{<t}) = Σ_d p(x_t = d) p(y_t | y_{<t}, x_t = d)``：对第 t 个源字的 10 种
        可能取平均。
        """
        t = len(y_prefix)
        if t < length:  # 第 t 个源字有 10 种可能；其余位置不影响这一步，随便填「零」
            sources = ["零" * t + d + "零" * (length - t - 1) for d in DIGITS]
        else:  # 源句已经读完：无论源句是什么，这一步都预测句尾
            sources = ["零" * length]
        dists = [self.step(x, y_prefix) for x in sources]
        return {s: sum(dist[s] for dist in dists) / len(dists) for s in dists[0]}

    def log_prob(self, y: str, x: str) -> float:
        """``log p(y | x) = Σ_t log p(y_t | y_{<t}, x)``，包括句尾符号。"""
        steps = list(y) + [EOS]
        return sum(math.log(self.step(x, y[:t])[s]) for t, s in enumerate(steps))

    def log_prob_without_source(self, y: str, length: int) -> float:
        """``log p(y) = Σ_t log p(y_t | y_{<t})``：同一个译文，只是每一步都看不到源句。"""
        steps = list(y) + [EOS]
        return sum(math.log(self.step_without_source(y[:t], length)[s]) for t, s in enumerate(steps))

    def greedy(self, x: str) -> str:
        """每一步取概率最大的符号，直到产生 ``</s>``。"""
        if any(ch not in DIGITS for ch in x):
            raise InputError("源句只能包含中文数字 零一二三四五六七八九")
        y = ""
        for _ in range(len(x) + 1):
            dist = self.step(x, y)
            best = max(dist, key=dist.__getitem__)
            if best == EOS:
                break
            y += best
        return y


def all_sequences(vocab_size: int, n_positions: int):
    """``V^n`` 个序列的迭代器（用来验证联合表的和为 1 等）。"""
    return itertools.product(range(vocab_size), repeat=n_positions)
