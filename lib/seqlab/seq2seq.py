"""第 1.4 节：编码器—解码器的压缩瓶颈，以及 Bahdanau 加性注意力。

两个模型只差一处——解码第 ``t`` 步时读到的上下文 ``c_t`` 从哪里来：

* ``FixedContextSeq2Seq``：``c = Encoder(x)`` 是整句压成的**一个**向量，每一步都读同一个 ``c``；
* ``AttentionSeq2Seq``：保留编码器的全部输出 ``h_1 … h_S``，由解码器状态 ``s_{t-1}`` 决定怎样读：

      e_tj = v_aᵀ tanh(W_s s_{t-1} + W_h h_j)
      α_tj = exp(e_tj) / Σ_r exp(e_tr)
      c_t  = Σ_j α_tj h_j

其余部分（词向量、双向 GRU 编码器、GRU 解码器、输出层、维度）完全相同，所以两者的差别
只能归因于“读源句的方式”。

记号：``B`` batch 大小，``S`` 源长度，``T`` 目标长度，``d_h`` 编码器每个方向的隐藏维度（``h_j`` 是
两个方向拼起来的 ``2·d_h`` 维），``d_s`` 解码器隐藏维度，``d_a`` 注意力打分空间的维度。
编码器和解码器的循环单元直接用 PyTorch 的 ``nn.GRU`` / ``nn.GRUCell``（循环网络本身是第 1.3 节的
主题）；本节新的东西——加性打分——按公式一项一项写出。

本模块只有模型和读训练好的模型用的评估（按长度的准确率、与标准对齐的一致程度）；在玩具翻译任务上
训练它们的配方（四个检查点 ``seq2seq_*``）在 ``seqlab.train.translation``。
"""

from __future__ import annotations

import collections
from typing import Any, Protocol

import torch
from torch import nn

from seqlab.corpus import translation as task
from seqlab.errors import InputError
from seqlab.runtime import single_thread


class Encoder(nn.Module):
    """词向量 + 双向 GRU：``x (B, S)`` → ``H (B, S, 2·d_h)``，第 ``j`` 行就是 ``h_j``。

    ``h_j`` 把正向读到 ``j`` 为止的状态和反向读到 ``j`` 为止的状态拼在一起，
    所以它主要描述第 ``j`` 个字，同时带着两侧的上下文。
    """

    def __init__(self, vocab_size: int, d_emb: int, d_h: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_emb)
        self.rnn = nn.GRU(d_emb, d_h, batch_first=True, bidirectional=True)
        self.d_h = d_h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        H, _ = self.rnn(self.embed(x))
        return H

    def summary(self, H: torch.Tensor) -> torch.Tensor:
        """整句的固定长度表示 ``c (B, 2·d_h)``：正向读完最后一个字的状态 + 反向读完第一个字的状态。"""
        return torch.cat([H[:, -1, : self.d_h], H[:, 0, self.d_h :]], dim=-1)


class AdditiveAttention(nn.Module):
    """Bahdanau 加性注意力。参数的名字和形状与公式一致：

    ``W_s (d_a, d_s)``，``W_h (d_a, 2·d_h)``，``v_a (d_a,)``。
    """

    def __init__(self, d_s: int, d_hh: int, d_a: int):
        super().__init__()
        self.W_s = nn.Parameter(torch.empty(d_a, d_s))
        self.W_h = nn.Parameter(torch.empty(d_a, d_hh))
        self.v_a = nn.Parameter(torch.empty(d_a))
        for W in (self.W_s, self.W_h):
            nn.init.xavier_uniform_(W)
        nn.init.uniform_(self.v_a, -d_a**-0.5, d_a**-0.5)

    def keys(self, H: torch.Tensor) -> torch.Tensor:
        """对每个 ``j`` 的 ``W_h h_j``：``H (B, S, 2·d_h)`` → ``(B, S, d_a)``。

        它与解码到第几步无关，所以一句话只算一次（Bahdanau 等人在论文附录里也这样做），
        每一步只需再算 ``W_s s_{t-1}``。（张量按行存放向量，所以 ``W x`` 写成 ``x @ W.T``。）
        """
        return H @ self.W_h.T

    def scores(self, s_prev: torch.Tensor, H: torch.Tensor, keys: torch.Tensor | None = None) -> torch.Tensor:
        """``e_tj = v_aᵀ tanh(W_s s_{t-1} + W_h h_j)``。

        ``s_prev (B, d_s)``，``H (B, S, 2·d_h)`` → ``e (B, S)``；``keys`` 是已经算好的 ``self.keys(H)``。
        """
        keys = self.keys(H) if keys is None else keys
        query = s_prev @ self.W_s.T  # W_s s_{t-1}：(B, d_a)
        return torch.tanh(query[:, None, :] + keys) @ self.v_a  # v_aᵀ tanh(…)：(B, S)

    def weights(self, e: torch.Tensor) -> torch.Tensor:
        """``α_tj = exp(e_tj) / Σ_r exp(e_tr)``：对源位置 ``j`` 做 softmax。``(B, S)`` → ``(B, S)``。"""
        return torch.softmax(e, dim=-1)

    def forward(
        self, s_prev: torch.Tensor, H: torch.Tensor, keys: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """返回 ``(c_t (B, 2·d_h), α_t (B, S))``，其中 ``c_t = Σ_j α_tj h_j``。"""
        alpha = self.weights(self.scores(s_prev, H, keys))
        c = (alpha[:, :, None] * H).sum(dim=1)
        return c, alpha


class FixedContextSeq2Seq(nn.Module):
    """固定上下文的编码器—解码器：``c = Encoder(x)``，``p(y_t | y_{<t}, x) = Decoder(y_{<t}, c)``。

    解码器一步：``s_t = GRU([y_{t-1} 的词向量; c_t], s_{t-1})``，``logits_t = W_o [s_t; c_t]``，
    这里 ``c_t`` 永远等于同一个 ``c``。初始状态 ``s_0 = tanh(W_init c)``。
    """

    kind = "fixed"

    def __init__(self, src_vocab: int, tgt_vocab: int, d_emb: int = 32, d_h: int = 64, d_a: int = 64):
        super().__init__()
        d_s = d_h
        self.encoder = Encoder(src_vocab, d_emb, d_h)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_emb)
        self.init_state = nn.Linear(2 * d_h, d_s)
        self.cell = nn.GRUCell(d_emb + 2 * d_h, d_s)
        self.out = nn.Linear(d_s + 2 * d_h, tgt_vocab)
        self.config = {"kind": self.kind, "src_vocab": src_vocab, "tgt_vocab": tgt_vocab, "d_emb": d_emb, "d_h": d_h, "d_a": d_a}

    # -- 唯一随模型而变的部分：第 t 步读到什么。``memory`` 是每句只算一次、每一步都要读的东西：
    #    这里是整句摘要 ``c``，注意力模型里是每个 ``j`` 的 ``W_h h_j``。
    def read(self, s_prev: torch.Tensor, H: torch.Tensor, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """返回 ``(c_t, α_t)``；固定上下文模型没有权重，``α_t`` 为 ``None``。"""
        return memory, None

    def start(self, H: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(s_0, memory)``：初始解码状态 ``s_0 = tanh(W_init c)``，和 ``read`` 每一步要读的 ``memory``（这里就是 ``c``）。"""
        c = self.encoder.summary(H)
        return torch.tanh(self.init_state(c)), c

    def step(self, y_prev: torch.Tensor, s_prev: torch.Tensor, H: torch.Tensor, memory: torch.Tensor):
        """解码一步：``y_prev (B,)`` → ``(logits (B, V), s_t (B, d_s), α_t (B, S) 或 None)``。"""
        c_t, alpha = self.read(s_prev, H, memory)
        s = self.cell(torch.cat([self.tgt_embed(y_prev), c_t], dim=-1), s_prev)
        return self.out(torch.cat([s, c_t], dim=-1)), s, alpha

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """教师强制（teacher forcing）：第 t 步输入正确的 ``y_{t-1}``。``(B, S), (B, T)`` → ``(B, T, V)``。"""
        H = self.encoder(src)
        s, memory = self.start(H)
        y_prev = torch.full_like(tgt[:, 0], task.BOS_ID)
        logits = []
        for t in range(tgt.shape[1]):
            out, s, _ = self.step(y_prev, s, H, memory)
            logits.append(out)
            y_prev = tgt[:, t]
        return torch.stack(logits, dim=1)

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, T: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """贪心解码 ``T`` 步，每步把自己上一步的输出喂回去。

        返回 ``(ids (B, T), alphas (B, T, S) 或 None)``。
        """
        with single_thread():
            return self._greedy(src, T)

    def _greedy(self, src: torch.Tensor, T: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        H = self.encoder(src)
        s, memory = self.start(H)
        y = torch.full((src.shape[0],), task.BOS_ID, dtype=torch.long)
        ids, alphas = [], []
        for _ in range(T):
            out, s, alpha = self.step(y, s, H, memory)
            y = out.argmax(dim=-1)
            ids.append(y)
            alphas.append(alpha)
        return torch.stack(ids, dim=1), (None if alphas[0] is None else torch.stack(alphas, dim=1))


class AttentionSeq2Seq(FixedContextSeq2Seq):
    """Bahdanau 式的编码器—解码器：每一步用 ``s_{t-1}`` 重新读一次 ``h_1 … h_S``。

    与 ``FixedContextSeq2Seq`` 的全部区别就是 ``read``（``start`` 另外为它每句先算好 ``W_h h_j``），
    外加 ``AdditiveAttention`` 的三组参数。与 Bahdanau 等人的模型相比有两处简化：初始状态同样由整句摘要给出
    （他们用的是反向编码器在第一个字处的状态）；输出层只是一层线性变换（他们的输出层还读上一个词 ``y_{t-1}``，
    并先经过一层 maxout 隐藏层）。
    """

    kind = "attention"

    def __init__(self, src_vocab: int, tgt_vocab: int, d_emb: int = 32, d_h: int = 64, d_a: int = 64):
        super().__init__(src_vocab, tgt_vocab, d_emb, d_h, d_a)
        self.attention = AdditiveAttention(d_h, 2 * d_h, d_a)

    def start(self, H):
        s_0, _ = super().start(H)
        return s_0, self.attention.keys(H)

    def read(self, s_prev, H, memory):
        return self.attention(s_prev, H, memory)


MODELS = {cls.kind: cls for cls in (FixedContextSeq2Seq, AttentionSeq2Seq)}


# ---------------------------------------------------------------- 评估
class Translator(Protocol):
    """能贪心翻译的模型：本节的两个模型，以及第 1.6 节的编码器—解码器 Transformer。"""

    def eval(self) -> Any: ...

    def greedy(self, src: torch.Tensor, T: int) -> tuple[torch.Tensor, Any]: ...


@torch.no_grad()
def accuracy_by_length(model: Translator, data: list[task.Batch]) -> dict[int, float]:
    """贪心解码后逐位置比较：``{源长度: 译对的目标词比例}``。"""
    model.eval()
    out = {}
    for batch in data:
        ids, _ = model.greedy(batch.src, batch.tgt.shape[1])
        out[batch.src.shape[1]] = (ids == batch.tgt).float().mean().item()
    return out


@torch.no_grad()
def alignment_agreement(model: AttentionSeq2Seq, data: list[task.Batch]) -> float:
    """每个目标步上 α_tj 最大的源位置 j 与任务的标准对齐相同的比例。

    标准对齐（``task.alignment``）从来不参与训练：模型只见过句对本身。
    """
    model.eval()
    hits = total = 0
    for batch in data:
        _, alphas = model.greedy(batch.src, batch.tgt.shape[1])
        if alphas is None:
            raise InputError("固定上下文模型没有注意力权重，谈不上对齐：请传入注意力模型。")
        for src, alpha in zip(batch.src, alphas):
            gold = torch.tensor(task.alignment([task.SRC_TOKENS[i] for i in src]))
            hits += int((alpha.argmax(dim=-1) == gold).sum())
            total += len(gold)
    return hits / total


@torch.no_grad()
def alignment_by_role(model: AttentionSeq2Seq, data: list[task.Batch]) -> dict[str, collections.Counter[str]]:
    """按标准对齐的那个源字的语法角色（``task.ROLES``）分组：每组里，α_tj 最大的源位置是什么角色。

    返回 ``{标准对齐的角色: Counter({"一致": 次数, 读到的角色: 次数, …})}``；“一致”表示最大权重正落在标准对齐的位置上。
    """
    model.eval()
    out: dict[str, collections.Counter[str]] = {role: collections.Counter() for role in task.ROLES}
    for batch in data:
        _, alphas = model.greedy(batch.src, batch.tgt.shape[1])
        if alphas is None:
            raise InputError("固定上下文模型没有注意力权重，谈不上对齐：请传入注意力模型。")
        for src, alpha in zip(batch.src, alphas):
            words = [task.SRC_TOKENS[i] for i in src]
            role = task.roles(words)
            for gold, read in zip(task.alignment(words), alpha.argmax(dim=-1).tolist()):
                out[role[gold]]["一致" if read == gold else role[read]] += 1
    return out


def mean_accuracy(acc: dict[int, float]) -> float:
    return sum(acc.values()) / len(acc)
