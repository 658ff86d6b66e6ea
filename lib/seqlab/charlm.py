"""第 1.3 节：字级循环语言模型——Elman RNN、LSTM 与 GRU。

* ``CharVocab``：字表。与第 1.1 节的 n-gram 模型用同一套记号：训练集里出现过的字、句尾 ``</s>``、
  未知字 ``<unk>``；句尾符同时充当下一句的开头，所以困惑度数的 token 与 ``seqlab.lm.perplexity`` 完全相同
  （每句的每个字，再加一个句尾）。
* ``CharLM``：Embedding → 一层循环网络（本书自己的 ``seqlab.rnn.ElmanRNN``、``nn.LSTM`` 或 ``nn.GRU``）→
  读出层 ``softmax(W_o h_t + c)``。
* ``detach_state``：截断状态的梯度、保留它的值（LSTM 的状态是两个张量）。
* 评估：留出句的困惑度（每句从零状态开始，与 n-gram 一样只看本句），以及「远处线索」句上
  「过」与「完」二选一的准确率。

记号：``B`` 批大小，``S`` 序列长度，``V`` 字表大小，``d_h`` 状态维度。

用截断的沿时间反向传播训练它们的配方（检查点 ``charlm_elman``、``charlm_lstm``、``charlm_gru``）在
``seqlab.train.char_rnn``。
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import nn

from seqlab import corpus
from seqlab.corpus import reading_cue
from seqlab.errors import InputError
from seqlab.lm import EOS, UNK
from seqlab.rnn import ElmanRNN

CELLS = ("elman", "lstm", "gru")


# ---------------------------------------------------------------- 字表
@dataclass(frozen=True)
class CharVocab:
    """``tokens[0]`` 是句尾 ``</s>``（也当句首用），``tokens[1]`` 是 ``<unk>``，其后是训练集里的字（排好序）。"""

    tokens: tuple[str, ...]

    @classmethod
    def from_sentences(cls, sentences: Iterable[str]) -> CharVocab:
        return cls((EOS, UNK, *sorted(set("".join(sentences)))))

    @property
    def index(self) -> dict[str, int]:
        return {tok: i for i, tok in enumerate(self.tokens)}

    def encode(self, text: str) -> list[int]:
        """字 → id；不认识的字记作 ``<unk>``（与 n-gram 模型的做法相同）。"""
        index = self.index
        return [index.get(ch, 1) for ch in text]

    def __len__(self) -> int:
        return len(self.tokens)


def training_sentences() -> list[str]:
    """循环语言模型与本节对照用的 n-gram 共用的训练句：本书语料的训练部分 + 远处线索句的训练部分。"""
    train, _ = corpus.train_test_split(corpus.book_corpus())
    cue_train, _ = reading_cue.cue_split()
    return train + [s.text for s in cue_train]


def held_out_sentences() -> list[str]:
    """困惑度用的留出句：本书语料的测试部分——正是第 1.1 节算 n-gram 困惑度的那些句子。"""
    return corpus.train_test_split(corpus.book_corpus())[1]


# ---------------------------------------------------------------- 模型
class CharLM(nn.Module):
    """字级循环语言模型。``ids (B, S)`` → ``(logits (B, S, V), 最后的状态)``。

    ``cell`` 选循环层：``"elman"`` 是第 1.3 节按公式写出的 ``ElmanRNN``（状态是 ``h``），
    ``"lstm"`` 是 ``nn.LSTM``（状态是 ``(h, c)``），``"gru"`` 是 ``nn.GRU``（状态是 ``h``）。
    ``state=None`` 表示从零状态开始。
    """

    def __init__(self, vocab_size: int, d_emb: int = 32, d_h: int = 128, cell: str = "gru"):
        super().__init__()
        if cell not in CELLS:
            raise InputError(f"循环层只能是 {CELLS} 之一，收到 {cell!r}。")
        self.cell = cell
        self.config = {"vocab_size": vocab_size, "d_emb": d_emb, "d_h": d_h, "cell": cell}
        self.embed = nn.Embedding(vocab_size, d_emb)
        if cell == "elman":
            self.rnn = ElmanRNN(d_emb, d_h)
        else:
            self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell](d_emb, d_h, batch_first=True)
        self.W_o = nn.Linear(d_h, vocab_size)

    def forward(self, ids: torch.Tensor, state=None):
        E = self.embed(ids)
        if self.cell == "elman":
            H = self.rnn(E, state)
            state = H[:, -1]
        else:
            H, state = self.rnn(E, state)
        return self.W_o(H), state


def detach_state(state):
    """截断：保留状态的值，切断它与上一段计算图的联系。"""
    if isinstance(state, tuple):
        return tuple(s.detach() for s in state)
    return state.detach()


# ---------------------------------------------------------------- 评估
@torch.no_grad()
def sentence_log_probs(model: CharLM, vocab: CharVocab, sentence: str) -> list[float]:
    """链式法则的各项 ``log p(x_t | x_{<t})``（自然对数）：每个字一项，再加句尾一项；从零状态开始。"""
    ids = torch.tensor([[0, *vocab.encode(sentence)]])
    logits, _ = model(ids)
    logp = torch.log_softmax(logits[0].double(), dim=-1)
    targets = ids[0, 1:].tolist() + [0]
    return [float(logp[t, y]) for t, y in enumerate(targets)]


def perplexity(model: CharLM, vocab: CharVocab, sentences: Iterable[str]) -> float:
    """``exp(-(1/N) Σ log p)``，N 数的是每句的字数加 1（句尾）——与 ``seqlab.lm.perplexity`` 同一个单位。"""
    terms = [lp for s in sentences for lp in sentence_log_probs(model, vocab, s)]
    return math.exp(-sum(terms) / len(terms))


@torch.no_grad()
def next_char_probs(model: CharLM, vocab: CharVocab, prefix: str) -> dict[str, float]:
    """读完 ``prefix`` 之后下一个字的分布 ``{字: 概率}``（从零状态、以句尾符开头）。"""
    logits, _ = model(torch.tensor([[0, *vocab.encode(prefix)]]))
    probs = torch.softmax(logits[0, -1].double(), dim=-1).tolist()
    return dict(zip(vocab.tokens, probs))


def cue_accuracy(prob, sentences: Iterable[reading_cue.CueSentence]) -> float:
    """「过」还是「完」：``prob(prefix, ch)`` 给出 ``p(ch | prefix)``；正确的字的概率**严格**更大才算对。"""
    sentences = list(sentences)
    right = 0
    for s in sentences:
        wrong = "完" if s.answer == "过" else "过"
        right += prob(s.prefix, s.answer) > prob(s.prefix, wrong)
    return right / len(sentences)


def lm_cue_accuracy(model: CharLM, vocab: CharVocab, sentences) -> float:
    return cue_accuracy(lambda prefix, ch: next_char_probs(model, vocab, prefix)[ch], sentences)


def ngram_cue_accuracy(ngram, sentences) -> float:
    """同样的二选一，用 ``seqlab.lm.NGramLM``。"""
    return cue_accuracy(lambda prefix, ch: ngram.prob(ch, list(prefix)), sentences)


def vocab_of(config: dict) -> CharVocab:
    """检查点的 config 里存着字表本身，读回来就能编码，不必重新生成语料。"""
    return CharVocab(tuple(config["vocab"]))
