"""第 1.2 节：从 token ID 到可学习的向量。

* ``Embedding``：Embedding 表 ``E ∈ R^{V×d}``，``e_i = E[i, :]``；与 ``u_i E``（one-hot 行向量乘矩阵）
  数学上相同，但实现里只做“按行索引”；
* 两种做法随 ``V`` 增长的用时和内存由 ``seqlab.measure.measure_lookup`` 实测；
* ``WindowContext``：一个最简单的“上下文层”——每个位置的隐藏状态由它自己和左右各 ``w`` 个
  邻居的向量算出，让同一个 token 在不同句子里得到不同的隐藏状态；
* ``MaskedWordModel``：Embedding + 上下文层 + 输出层（与 ``E`` 共享权重）的小模型，
  在本书语料上做“遮住一个词、根据上下文猜回来”的训练；训练批次与损失在这里，训练配方
  （``embedding``）在 ``seqlab.train.masked_words``。

本模块只依赖 torch（和同库的 ``tokenize``、``corpus``、``errors``）。
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import nn

from seqlab.errors import DEFAULT_BUDGET_BYTES, InputError, guard_memory
from seqlab.runtime import single_thread
from seqlab.tokenize import MASK, PAD, UNK, Vocab, segment


# ---------------------------------------------------------------- Embedding 表
class Embedding(nn.Module):
    """Embedding 表：参数 ``E``，形状 ``(V, d)``。

    ``forward(ids)``：``ids`` 形状任意（整数），返回形状 ``ids.shape + (d,)`` 的 ``E[ids]``。
    与 ``torch.nn.Embedding`` 的计算完全相同（测试里逐元素比较）。
    """

    def __init__(self, V: int, d: int):
        super().__init__()
        self.E = nn.Parameter(torch.randn(V, d) / d**0.5)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.E[ids]


def one_hot(ids: torch.Tensor, V: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """one-hot 行向量 ``u_i``：形状 ``ids.shape + (V,)``，第 ``ids`` 个位置为 1，其余为 0。"""
    if ids.numel() and not (0 <= int(ids.min()) and int(ids.max()) < V):
        raise InputError(f"ID 必须在 0 到 {V - 1} 之间。")
    u = torch.zeros(*ids.shape, V, dtype=dtype)
    u.scatter_(-1, ids.unsqueeze(-1), 1.0)
    return u


def lookup(E: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """``e_i = E[i, :]``：按行索引。``E (V, d)``，``ids (…)`` → ``(…, d)``。"""
    return E[ids]


def onehot_bytes(n_tokens: int, V: int, element_size: int = 4) -> int:
    """``n_tokens`` 个 one-hot 行向量（``n_tokens × V`` 矩阵）占用的字节数。"""
    return int(n_tokens) * int(V) * int(element_size)


def lookup_by_matmul(E: torch.Tensor, ids: torch.Tensor, *, budget: float = DEFAULT_BUDGET_BYTES) -> torch.Tensor:
    """``e_i = u_i E``：先造 one-hot 矩阵再做稠密乘法。``E (V, d)``，``ids (…)`` → ``(…, d)``。

    one-hot 矩阵有 ``ids.numel() × V`` 个元素，分配之前先估算，超过 ``budget`` 就拒绝。
    """
    V = E.shape[0]
    guard_memory(f"{ids.numel()} 个 token 的 one-hot 矩阵（V = {V}）", onehot_bytes(ids.numel(), V, E.element_size()),
                 budget)
    return one_hot(ids, V, dtype=E.dtype) @ E


def rows_with_grad(grad: torch.Tensor) -> list[int]:
    """梯度矩阵 ``(V, d)`` 里不全为零的行号（升序）。"""
    return torch.nonzero(grad.abs().sum(dim=1)).flatten().tolist()


# ---------------------------------------------------------------- 上下文层
class WindowContext(nn.Module):
    """窗口上下文层（行向量写法，与第 1.2 节的式 eq-1-2-window 相同）：
    ``h_t = tanh( Σ_{k=-w}^{w} X[t+k, :] W_k + b )``，``h_t`` 是 ``H`` 的第 ``t`` 行。

    超出句子两端的 ``X[t+k, :]`` 当作零向量。形状：``X (B, S, d)`` → ``H (B, S, d)``；
    参数 ``W (2w+1, d, d)``、``b (d,)``。``W`` 按 PyTorch 线性层“输出 × 输入”的布局存放：
    ``W[k + w]`` 是 ``W_k`` 的转置，所以代码里写作 ``X @ W[k + w].T``。
    它就是一个一维卷积（测试里与 ``torch.nn.Conv1d`` 比较），位置 ``t`` 能“看到”的只有
    ``t-w … t+w``；第 1.3 节起我们会换成能看到更远处的结构。
    """

    def __init__(self, d: int, w: int = 2):
        super().__init__()
        self.w = w
        self.W = nn.Parameter(torch.randn(2 * w + 1, d, d) / (d * (2 * w + 1)) ** 0.5)
        self.b = nn.Parameter(torch.zeros(d))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        B, S, d = X.shape
        padded = F.pad(X, (0, 0, self.w, self.w))  # 在序列两端各补 w 个零向量：(B, S + 2w, d)
        pre = self.b.expand(B, S, d).clone()
        for j in range(2 * self.w + 1):  # j = k + w
            pre = pre + padded[:, j : j + S] @ self.W[j].T
        return torch.tanh(pre)


class MaskedWordModel(nn.Module):
    """``ids (B, S)`` → ``X = E[ids]`` → ``H = WindowContext(X)`` → ``logits = H Eᵀ + c``，形状 ``(B, S, V)``。

    输出层与输入的 Embedding 共享 ``E``（权重共享），所以整个模型只有 ``V·d + (2w+1)·d² + d + V``
    个参数。``<pad>``（ID 0）的输入向量强制为零，补齐不会影响句子里的其他位置。
    """

    def __init__(self, V: int, d: int = 32, w: int = 2):
        super().__init__()
        self.embed = Embedding(V, d)
        self.context = WindowContext(d, w)
        self.c = nn.Parameter(torch.zeros(V))

    def hidden(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """返回 ``(X, H)``：输入向量与上下文层的输出，形状都是 ``ids.shape + (d,)``。"""
        X = self.embed(ids) * (ids != 0).unsqueeze(-1)
        return X, self.context(X)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        _, H = self.hidden(ids)
        return H @ self.embed.E.T + self.c


# ---------------------------------------------------------------- 训练数据与损失
def encode_sentences(sentences: Sequence[str], vocab: Vocab) -> list[list[int]]:
    return [vocab.encode(segment(s)) for s in sentences]


def pad_batch(seqs: Sequence[Sequence[int]], pad_id: int = 0) -> torch.Tensor:
    S = max(len(s) for s in seqs)
    return torch.tensor([list(s) + [pad_id] * (S - len(s)) for s in seqs], dtype=torch.long)


def masked_batches(
    seqs: Sequence[Sequence[int]], V: int, *, mask_id: int, batch_size: int = 64, rate: float = 0.2, seed: int = 0
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """无穷的训练批次 ``(输入 ids (B, S), 目标 (B, S))``。

    每句随机选 ``rate`` 比例（至少 1 个）的位置作为要猜的词：其中 80% 换成 ``<mask>``，
    10% 换成随机词，10% 保持不变；目标里未被选中的位置为 -100（不计入损失）。
    """
    rng = random.Random(seed)
    n_special = 3
    while True:
        rows = [seqs[rng.randrange(len(seqs))] for _ in range(batch_size)]
        ids = pad_batch(rows)
        target = torch.full_like(ids, -100)
        for r, row in enumerate(rows):
            k = max(1, round(rate * len(row)))
            for t in rng.sample(range(len(row)), k):
                target[r, t] = row[t]
                roll = rng.random()
                if roll < 0.8:
                    ids[r, t] = mask_id
                elif roll < 0.9:
                    ids[r, t] = rng.randrange(n_special, V)
        yield ids, target


def masked_loss(model: MaskedWordModel, ids: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    logits = model(ids)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), ignore_index=-100)


@lru_cache(maxsize=1)
def book_vocab() -> Vocab:
    """本书语料的词表（jieba 分词，特殊 token 为 ``<pad>`` ``<unk>`` ``<mask>``）。"""
    from seqlab.tokenize import book_word_tokenizer

    return book_word_tokenizer().vocab


def checkpoint_vocab(config: dict) -> Vocab:
    """检查点 config 里保存的词表（``itos``：ID → 词）。"""
    return Vocab.from_itos(config["itos"])


# ---------------------------------------------------------------- 读模型
@torch.no_grad()
def masked_accuracy(model: MaskedWordModel, vocab: Vocab, sentences: Sequence[str]) -> float:
    """逐个位置把词换成 ``<mask>``，看模型能否猜回原词；返回猜对的比例。"""
    mask_id = vocab.stoi[MASK]
    with single_thread():
        return _masked_accuracy(model, encode_sentences(sentences, vocab), mask_id)


def _masked_accuracy(model: MaskedWordModel, seqs: list[list[int]], mask_id: int) -> float:
    right = total = 0
    for ids in seqs:
        S = len(ids)
        batch = torch.tensor([ids] * S)
        batch[torch.arange(S), torch.arange(S)] = mask_id
        pred = model(batch)[torch.arange(S), torch.arange(S)].argmax(-1)
        right += int((pred == torch.tensor(ids)).sum())
        total += S
    return right / total


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    """两个向量的余弦相似度。"""
    return float(F.cosine_similarity(a.flatten(), b.flatten(), dim=0))


def nearest_words(E: torch.Tensor, vocab: Vocab, word: str, k: int = 5) -> list[tuple[str, float]]:
    """按 Embedding 的余弦相似度，离 ``word`` 最近的 ``k`` 个词（不含特殊 token 和它自己）。"""
    if word not in vocab:
        raise InputError(f"「{word}」不在词表里。")
    i = vocab.stoi[word]
    sims = F.cosine_similarity(E[i].unsqueeze(0), E, dim=1)
    order = sims.argsort(descending=True).tolist()
    specials = {vocab.stoi[t] for t in (PAD, UNK, MASK) if t in vocab}
    return [(vocab.itos[j], float(sims[j])) for j in order if j != i and j not in specials][:k]


def id_neighbours(vocab: Vocab, word: str, k: int = 2) -> list[tuple[str, int]]:
    """ID 与 ``word`` 的 ID 相差不超过 ``k`` 的词：数值上“挨着”，意思上毫无关系。"""
    i = vocab.stoi[word]
    return [(vocab.itos[j], j) for j in range(max(0, i - k), min(len(vocab), i + k + 1)) if j != i]


@dataclass(frozen=True)
class ContextVectors:
    """一句话在模型里的表示：``tokens``（长度 S）、``ids``、``X (S, d)``、``H (S, d)``。"""

    text: str
    tokens: list[str]
    ids: list[int]
    X: torch.Tensor
    H: torch.Tensor


@torch.no_grad()
def context_vectors(model: MaskedWordModel, vocab: Vocab, text: str) -> ContextVectors:
    """分词 → 查 ID → ``X = E[ids]`` → ``H = 上下文层(X)``。词表外的词用 ``<unk>``。"""
    tokens = segment(text)
    ids = vocab.encode(tokens)
    with single_thread():
        X, H = model.hidden(torch.tensor([ids]))
    return ContextVectors(text, tokens, ids, X[0], H[0])


def word_states(model: MaskedWordModel, vocab: Vocab, sentences: Sequence[str], word: str) -> torch.Tensor:
    """每句里 ``word`` 第一次出现处的隐藏状态 ``h_t``，归一化成单位长度，形状 ``(句数, d)``。

    两组句子的结果相乘（``A @ B.T``）就是两两之间的余弦相似度。
    """
    rows = []
    for s in sentences:
        cv = context_vectors(model, vocab, s)
        if word not in cv.tokens:
            raise InputError(f"「{s}」的分词结果里没有「{word}」。")
        rows.append(cv.H[cv.tokens.index(word)])
    return F.normalize(torch.stack(rows), dim=1)


@torch.no_grad()
def fill_mask(model: MaskedWordModel, vocab: Vocab, tokens: Sequence[str], t: int, k: int = 5) -> list[tuple[str, float]]:
    """把第 ``t`` 个词换成 ``<mask>``，模型认为这里最可能是哪 ``k`` 个词（及其概率）。"""
    ids = vocab.encode(tokens)
    ids[t] = vocab.stoi[MASK]
    with single_thread():
        p = torch.softmax(model(torch.tensor([ids]))[0, t], dim=-1)
    top = p.topk(k)
    return [(vocab.itos[j], float(q)) for q, j in zip(top.values.tolist(), top.indices.tolist())]


__all__ = [
    "UNK",
    "Embedding",
    "MaskedWordModel",
    "WindowContext",
    "context_vectors",
    "cosine",
    "fill_mask",
    "id_neighbours",
    "checkpoint_vocab",
    "lookup",
    "lookup_by_matmul",
    "masked_accuracy",
    "nearest_words",
    "one_hot",
    "onehot_bytes",
    "rows_with_grad",
    "word_states",
]
