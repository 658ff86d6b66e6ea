"""第 1.3 节：训练一个字级循环语言模型——Elman RNN、LSTM 与 GRU。

* ``CharVocab``：字表。与第 1.1 节的 n-gram 模型用同一套记号：训练集里出现过的字、句尾 ``</s>``、
  未知字 ``<unk>``；句尾符同时充当下一句的开头，所以困惑度数的 token 与 ``seqlab.lm.perplexity`` 完全相同
  （每句的每个字，再加一个句尾）。
* ``CharLM``：Embedding → 一层循环网络（本书自己的 ``seqlab.rnn.ElmanRNN``、``nn.LSTM`` 或 ``nn.GRU``）→
  读出层 ``softmax(W_o h_t + c)``。
* ``tbptt_batches`` / ``train_tbptt``：截断的沿时间反向传播（truncated backpropagation through time）。
  训练文本首尾相接成一条长流，切成 ``B`` 条并行的子流；每次只对 ``L`` 个字反向传播，
  状态却一段接一段地传下去（``detach`` 切断的只是梯度，不是状态）；每步先做梯度范数裁剪。
* 评估：留出句的困惑度（每句从零状态开始，与 n-gram 一样只看本句），以及「远处线索」句上
  「过」与「完」二选一的准确率。

记号：``B`` 批大小（并行子流数），``L`` 截断长度，``V`` 字表大小，``d_h`` 状态维度。
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from seqlab import corpus
from seqlab.corpus import reading_cue
from seqlab.errors import InputError
from seqlab.lm import EOS, UNK
from seqlab.measure import n_parameters
from seqlab.rnn import ElmanRNN
from seqlab.runtime import single_thread
from seqlab.train import builder, recipe, save

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



# ---------------------------------------------------------------- 截断的沿时间反向传播
def token_stream(sentences: Sequence[str], vocab: CharVocab) -> torch.Tensor:
    """把句子首尾相接成一条 id 流：``</s> 句1 </s> 句2 … </s>``，形状 ``(N,)``。"""
    ids = [0]
    for s in sentences:
        ids += vocab.encode(s) + [0]
    return torch.tensor(ids)


def tbptt_batches(stream: torch.Tensor, B: int, L: int) -> Iterator[tuple[torch.Tensor, torch.Tensor, bool]]:
    """把流切成 ``B`` 条并行的子流（每行是原文的连续一段），再按 ``L`` 个字一段依次给出。

    每次产出 ``(x (B, L), y (B, L), restart)``：``y`` 是 ``x`` 右移一位（下一个字）；``restart`` 为真时
    子流刚从头开始，上一段的状态不再接得上，应当清零。读完一遍（一个 epoch）就从头再来。
    """
    n = (len(stream) - 1) // B
    if n <= L:
        raise InputError(f"训练文本太短：每条子流只有 {n} 个字，不够截断长度 L = {L}。")
    X = stream[: n * B].view(B, n)
    Y = stream[1 : n * B + 1].view(B, n)
    while True:
        for i, start in enumerate(range(0, n - L + 1, L)):
            yield X[:, start : start + L], Y[:, start : start + L], i == 0


@dataclass
class TBPTTLog:
    losses: list[float] = field(default_factory=list)  # 每步的平均交叉熵（nats / 字）
    grad_norms: list[float] = field(default_factory=list)  # 每步裁剪之前的梯度总范数
    clip: float = math.inf

    @property
    def clipped_fraction(self) -> float:
        """梯度总范数超过阈值、被裁剪的步数比例。"""
        return sum(g > self.clip for g in self.grad_norms) / len(self.grad_norms)


def train_tbptt(
    model: CharLM, batches: Iterator, *, steps: int, lr: float, clip: float, lr_end: float | None = None,
    progress: bool = True, desc: str = "训练",
) -> TBPTTLog:
    """Adam 训练 ``steps`` 步：每步对一段 ``L`` 个字求损失并反向传播，裁剪梯度总范数到 ``clip``，
    把状态（截断了梯度）传给下一段。学习率从 ``lr`` 线性降到 ``lr_end``（缺省不降）。"""
    from tqdm.auto import tqdm

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    log, state = TBPTTLog(clip=clip), None
    model.train()
    bar = tqdm(range(steps), desc=desc, disable=not progress, leave=False)
    for step in bar:
        x, y, restart = next(batches)
        if restart:
            state = None
        logits, state = model(x, state)
        state = detach_state(state)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        log.grad_norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), clip)))
        if lr_end is not None:
            for group in opt.param_groups:
                group["lr"] = lr + (lr_end - lr) * step / max(1, steps - 1)
        opt.step()
        log.losses.append(loss.item())
        if step % 20 == 0:
            bar.set_postfix(loss=f"{log.losses[-1]:.3f}")
    model.eval()
    return log


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


# ---------------------------------------------------------------- 配方
TRAIN: dict[str, Any] = {"seed": 1303, "B": 32, "L": 32, "steps": 800, "lr": 5e-3, "lr_end": 5e-4, "clip": 1.0,
         "d_emb": 32, "d_h": 128}
NAMES = {cell: f"charlm_{cell}" for cell in CELLS}


def train_model(cell: str, *, steps: int | None = None, progress: bool = True) -> tuple[CharLM, CharVocab, dict]:
    """从固定种子训练一个字级语言模型，返回 ``(模型, 字表, meta)``。不改动调用者的全局随机数。"""
    steps = TRAIN["steps"] if steps is None else steps
    sentences = training_sentences()
    vocab = CharVocab.from_sentences(sentences)
    order = list(sentences)
    random.Random(TRAIN["seed"]).shuffle(order)  # 两类线索句与本书语料交错出现
    cpu_start = time.process_time()
    with single_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(TRAIN["seed"])
        model = CharLM(len(vocab), TRAIN["d_emb"], TRAIN["d_h"], cell)
        batches = tbptt_batches(token_stream(order, vocab), TRAIN["B"], TRAIN["L"])
        log = train_tbptt(model, batches, steps=steps, lr=TRAIN["lr"], lr_end=TRAIN["lr_end"], clip=TRAIN["clip"],
                          progress=progress, desc=NAMES[cell])
        cpu_train = time.process_time() - cpu_start
        _, test_pairs = reading_cue.cue_split()
        meta = {
            **{k: TRAIN[k] for k in ("seed", "B", "L", "lr", "lr_end", "clip")},
            "steps": steps,
            "cpu_seconds": round(cpu_train, 1),  # 本进程训练占用的 CPU 时间（单线程）
            "torch_threads": 1,
            "parameters": n_parameters(model),
            "final_loss": round(sum(log.losses[-50:]) / 50, 4),
            "clipped_fraction": round(log.clipped_fraction, 4),
            "max_grad_norm": round(max(log.grad_norms), 4),
            "perplexity": round(perplexity(model, vocab, held_out_sentences()), 4),
            "cue_accuracy": round(lm_cue_accuracy(model, vocab, [s for p in test_pairs for s in p]), 4),
            "losses": [round(v, 4) for v in log.losses],
            "trained_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
    return model, vocab, meta


def build(config: dict) -> CharLM:
    cfg = {k: v for k, v in config.items() if k != "vocab"}
    return CharLM(**cfg)


def vocab_of(config: dict) -> CharVocab:
    """检查点的 config 里存着字表本身，读回来就能编码，不必重新生成语料。"""
    return CharVocab(tuple(config["vocab"]))


def _register(cell: str) -> None:
    name = NAMES[cell]
    builder(name)(build)

    @recipe(name, tolerances={"perplexity": 0.5, "cue_accuracy": 0.05, "final_loss": 0.05})
    def _make():
        model, vocab, meta = train_model(cell, progress=False)
        return save(name, model, {**model.config, "vocab": list(vocab.tokens)}, meta)


for _cell in CELLS:
    _register(_cell)
