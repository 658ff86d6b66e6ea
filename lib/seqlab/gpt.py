"""第 1.6 节：一个会写中文的小 GPT。

就是 ``seqlab.transformer.TinyDecoder``（decoder-only、因果掩码、带 KV cache），只是换成在本书语料上
逐字训练：每句话前面加 〈始〉、后面加 〈终〉，模型在每个位置预测下一个字。

* 词表：训练集里出现的每个字，再加 4 个特殊 token；
* 解码：贪心（每步取概率最高的字），或按温度 ``temperature`` 与 ``top_k`` 采样——采样用由种子新建的
  ``random.Random``（逆 CDF，每步一个随机数），不碰全局随机数；
* 逐步记录：每一步的新 token、前几名候选的概率、它的 Query 在每层每个头上对前文的注意力，以及这一步
  哪些 Key/Value 行是从缓存里读的、哪些是这一步新算的（由真实的 ``KVCache`` 的长度读出）；
* 沿一次真实的生成每一步的运算量、搬运的字节与 CPU 时间在 ``seqlab.measure``（``step_costs``）。

本模块只依赖 torch；训练它的配方（检查点 ``gpt_chars``）在 ``seqlab.train.gpt_chars``，逐步生成的状态在
``seqlab.states.gpt_steps``，画图在 ``seqlab.figures.gpt_steps`` 里。
"""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import torch
from torch import nn

from seqlab import corpus
from seqlab import transformer as tf
from seqlab.errors import InputError
from seqlab.tokenize import PAD, UNK, Vocab

BOS, EOS = "〈始〉", "〈终〉"
SPECIALS = (PAD, UNK, BOS, EOS)
SHOWN = {BOS: "〈始〉", EOS: "〈终〉", UNK: "〈未知〉", PAD: "〈空〉"}

MAX_CONTEXT = 64  # 训练时最长的句子不到 30 个 token；再长的上下文模型没见过，也不让探索器去算
TOP = 8  # 每一步记下分布的前几名


# ---------------------------------------------------------------- 词表与编码
@cache
def book_vocab() -> Vocab:
    """训练集（``corpus.train_test_split`` 的前一份）里的每个字，按出现次数排序，前面是 4 个特殊 token。"""
    train, _ = corpus.train_test_split(corpus.book_corpus())
    return Vocab((ch for s in train for ch in s), specials=SPECIALS)


def vocab_of(config: dict) -> Vocab:
    """检查点的 config 里存着词表（``itos``）：模型与它的词表总在一起。"""
    return Vocab.from_itos(config["itos"])


def encode_prompt(text: str, vocab: Vocab) -> torch.Tensor:
    """``〈始〉 + text`` 的 id，形状 ``(1, 1 + len(text))``。语料里没有的字直接拒绝（中文说明），不悄悄换成 〈未知〉。"""
    unknown = sorted({ch for ch in text if ch not in vocab or ch in SPECIALS})
    if unknown:
        raise InputError(f"这些字在本书的语料里没有出现过，模型不认识：{''.join(unknown)}。请换成语料里的字。")
    return torch.tensor([[vocab.stoi[BOS]] + vocab.encode(text)])


def sentence_ids(sentences: Sequence[str], vocab: Vocab) -> torch.Tensor:
    """每句 ``〈始〉 + 句子 + 〈终〉``，右边用 ``<pad>`` 补齐：``(B, 最长句子 + 2)``。"""
    rows = [[vocab.stoi[BOS]] + vocab.encode(s) + [vocab.stoi[EOS]] for s in sentences]
    width = max(len(r) for r in rows)
    pad = vocab.stoi[PAD]
    return torch.tensor([r + [pad] * (width - len(r)) for r in rows])


def token_nll(model: tf.TinyDecoder, ids: torch.Tensor) -> tuple[torch.Tensor, int]:
    """``ids (B, S)`` 里每个非填充位置上 ``-log p(下一个 token | 前文)`` 的总和与个数：``(总和, 个数)``。

    因果掩码保证补在右边的 ``<pad>`` 影响不到它前面的位置；``<pad>``（``SPECIALS`` 排第一，id 为 0）本身不计入。
    """
    logits = model(ids[:, :-1])  # (B, S-1, V)
    target = ids[:, 1:]
    total = nn.functional.cross_entropy(logits.transpose(1, 2), target, ignore_index=0, reduction="sum")
    return total, int((target != 0).sum())


@torch.no_grad()
def heldout_perplexity(model: tf.TinyDecoder, sentences: Sequence[str], vocab: Vocab) -> float:
    """困惑度 ``exp(-(1/N) Σ log p(x_t | x_{<t}))``：与 ``seqlab.lm.perplexity`` 同一口径——
    N 数的是每个字再加句尾，第一个字只以句首为条件。"""
    total, n = token_nll(model, sentence_ids(sentences, vocab))
    return math.exp(total.item() / n)


# ---------------------------------------------------------------- 解码：贪心与采样
def next_token_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None) -> torch.Tensor:
    """``logits (V,)`` → 采样用的分布 ``(V,)``：先除以温度 ``τ``，只留概率最高的 ``top_k`` 个，再 softmax。

    ``τ < 1`` 让分布更尖（更像贪心），``τ > 1`` 让它更平；``top_k=None`` 不截断。
    """
    V = logits.shape[-1]
    _check_decoding(temperature, top_k, V)
    scaled = logits / temperature
    if top_k is not None and top_k < V:
        kth = scaled.topk(top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)


def _check_decoding(temperature: float, top_k: int | None, V: int | None = None) -> None:
    """温度须是正的有限数；``top_k`` 须是 1 到词表大小 ``V`` 之间的整数（或 ``None``：不截断）。"""
    if isinstance(temperature, bool) or not (isinstance(temperature, (int, float)) and math.isfinite(temperature)
                                             and temperature > 0):
        raise InputError(f"温度必须是正的有限数，现在是 {temperature!r}。")
    if top_k is None:
        return
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1 or (V is not None and top_k > V):
        upper = f"到 {V} 之间" if V is not None else "以上"
        raise InputError(f"top-k 的 k 必须是 1 {upper}的整数，现在是 {top_k!r}。")


def sample_index(q: torch.Tensor, u: float) -> int:
    """逆 CDF 采样：分布 ``q (V,)`` 里第一个累积概率 ``q_0 + … + q_i`` 超过 ``u ∈ [0, 1)`` 的下标 ``i``。

    ``u`` 均匀分布时，下标 ``i`` 被选中的概率正是 ``q_i``（它占 ``[0, 1)`` 里长 ``q_i`` 的一段）。
    累积和按下标从小到大逐个相加（网页实时面 ``assets/live/gpt_steps.mjs`` 按同样的次序加）。
    舍入可能让总和略小于 1，``u`` 又落在总和之上：这时取最后一个概率不为 0 的下标，不会选到被 top-k 去掉的。
    """
    weights = q.tolist()
    for i, total in enumerate(itertools.accumulate(weights)):
        if total > u:
            return i
    return max(i for i, w in enumerate(weights) if w > 0)


@dataclass(frozen=True)
class Decoding:
    """怎样从分布里选下一个 token：``sample=False`` 贪心；否则按 ``temperature``、``top_k`` 采样，种子 ``seed``。"""

    sample: bool = False
    temperature: float = 1.0
    top_k: int | None = None
    seed: int = 0

    def __post_init__(self):
        _check_decoding(self.temperature, self.top_k)  # 不合法的设置在这里就拒绝，不等到第一步采样


@dataclass(frozen=True)
class Step:
    """生成的一步。第 0 步是 Prefill（整段提示一次送入），之后每步是一次 Decode。

    ``token``：这一步选出的 token；``probs``：按概率从高到低的前几名 ``(token, 概率)``（贪心与采样看到的是
    同一个模型分布 ``softmax(logits)``）；``chosen_prob``：选中的 token 在这个分布里的概率；
    ``attention[l][h]``：最后一个位置的 Query 在第 ``l`` 层第 ``h`` 个头上对全部 ``T`` 个位置的权重；
    ``cached``：这一步从 KV cache 里读的行数（之前各步存下的）；``computed``：这一步新算的 K、V 行数。
    """

    index: int
    context: list[str]
    token: str
    probs: list[tuple[str, float]]
    chosen_prob: float
    attention: list[list[list[float]]]
    cached: int
    computed: int


@torch.no_grad()
def generate_steps(
    model: tf.TinyDecoder, vocab: Vocab, prompt: str, max_new: int, decoding: Decoding = Decoding(),
    *, top: int = TOP,
) -> list[Step]:
    """从 ``〈始〉 + prompt`` 出发逐个生成，最多 ``max_new`` 步，写出 〈终〉 就停。

    用 ``KVCache``：第 0 步把提示整段送入（全部 K、V 都是新算的），之后每步只送入上一步选出的 token。
    采样用 ``random.Random(decoding.seed)``，每步取一个 ``random()`` 做逆 CDF 采样（:func:`sample_index`），
    不改变全局随机数。不用 ``torch.multinomial``：它的抽法浏览器无法照搬，而 Python 的 ``random.Random``
    在网页实时面里有逐位相同的实现（``assets/live/random.mjs``），同一个种子在两边写出同一句话。
    """
    ids = encode_prompt(prompt, vocab)
    if not isinstance(max_new, int) or max_new < 1:
        raise InputError(f"生成的步数必须是正整数，现在是 {max_new!r}。")
    if ids.shape[1] + max_new > MAX_CONTEXT:
        raise InputError(f"提示 {ids.shape[1] - 1} 个字、再生成 {max_new} 步，超过了模型能处理的 {MAX_CONTEXT} 个位置。")
    rng = random.Random(decoding.seed)
    cache, new, context, steps = tf.KVCache(), ids, vocab.decode(ids[0].tolist()), []
    for index in range(max_new):
        cached = cache.length
        logits, weights = model(new, cache, return_weights=True)
        p = torch.softmax(logits[0, -1], dim=-1)
        if decoding.sample:
            q = next_token_probs(logits[0, -1], decoding.temperature, decoding.top_k)
            nxt = sample_index(q, rng.random())
        else:
            nxt = int(p.argmax())
        best = p.topk(top)
        token = vocab.itos[nxt]
        steps.append(Step(
            index=index, context=list(context), token=token,
            probs=[(vocab.itos[i], v) for i, v in zip(best.indices.tolist(), best.values.tolist())],
            chosen_prob=p[nxt].item(),
            attention=[alpha[0, :, -1].tolist() for alpha in weights],
            cached=cached, computed=cache.length - cached,
        ))
        context.append(token)
        if token == EOS:
            break
        new = torch.tensor([[nxt]])
    return steps


def generate_text(model: tf.TinyDecoder, vocab: Vocab, prompt: str, max_new: int = 30,
                  decoding: Decoding = Decoding()) -> str:
    """提示加上生成的字（不含 〈始〉、〈终〉）。"""
    steps = generate_steps(model, vocab, prompt, max_new, decoding)
    return prompt + "".join(s.token for s in steps if s.token != EOS)


# 模板里的占位符 → 可以填进去的词（与 ``corpus._fill`` 的对应关系相同）
SLOTS = {"p": corpus.PEOPLE, "b": corpus.BOOKS, "f": corpus.FOODS, "c": corpus.PLACES, "t": corpus.TIMES,
         "w": corpus.WEATHER, "s": corpus.SUBJECTS, "d": corpus.PRODUCTS}


@cache
def _template_patterns() -> tuple[re.Pattern, ...]:
    def pattern(template: str) -> re.Pattern:
        parts = re.split(r"\{(\w)\}", template)  # 偶数项是原文，奇数项是占位符的名字
        return re.compile("".join(re.escape(part) if i % 2 == 0 else "(?:" + "|".join(map(re.escape, SLOTS[part])) + ")"
                                  for i, part in enumerate(parts)) + r"\Z")

    return tuple(pattern(t) for group in corpus.TEMPLATE_GROUPS.values() for t in group)


def fits_a_template(sentence: str) -> bool:
    """这句话能不能由语料的某个模板、在每个占位符里填一个词表里的词得到——即它是不是一句“合语法”的句子。"""
    return any(p.match(sentence) for p in _template_patterns())


def show(token: str) -> str:
    """特殊 token 在图里的写法。"""
    return SHOWN.get(token, token)
