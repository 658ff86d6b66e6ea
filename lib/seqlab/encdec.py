"""第 1.6 节：完整的编码器—解码器 Transformer（Vaswani 等，2017）。

原始的 Transformer 是为翻译而设计的：编码器由第 1.6 节的块（``seqlab.transformer.TransformerBlock``）堆成；
解码器的块多了一个子层——**交叉注意力**：Query 来自解码器，Key 与 Value 来自编码器的输出。
这正是第 1.4 节 Bahdanau 注意力的那种读法（解码器决定读源句的哪里），只是换成了缩放点积、多个头。

* ``MultiHeadCrossAttention``：与 ``MultiHeadSelfAttention`` 同样的四个投影，只是 Q 与 K、V 来自两个序列；
* ``DecoderBlock``：带因果掩码的自注意力 → 交叉注意力 → 逐位置 FFN，每个子层外面一条残差连接和一次
  层归一化（post-norm 或 pre-norm），与 ``torch.nn.TransformerDecoderLayer`` 逐数对照；
* ``EncoderDecoderTransformer``：源/目标 Embedding × √d + 正弦位置 → N 个编码器块 → N 个解码器块 → 输出层，
  中间部分与 ``torch.nn.Transformer`` 逐数对照；
* 读训练好的模型：交叉注意力与标准对齐的一致程度（``alignment_agreement``）、各头平均（``head_mean``）。

在第 1.4 节的玩具翻译任务上训练它的配方 ``encdec_transformer`` 在 ``seqlab.train.encdec_transformer``。

记号：``B`` 批大小，``S`` 源长度，``T`` 目标长度，``h`` 头数，``d`` 即 ``d_model``。
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from seqlab.attention import causal_mask, scaled_dot_product_attention
from seqlab.corpus import translation as task
from seqlab.errors import InputError
from seqlab.runtime import single_thread
from seqlab.transformer import (
    LayerNorm,
    MultiHeadSelfAttention,
    PositionwiseFFN,
    TransformerBlock,
    block_from_torch,
    sinusoidal_positions,
)


# ---------------------------------------------------------------- 交叉注意力与解码器块
class MultiHeadCrossAttention(MultiHeadSelfAttention):
    """多头交叉注意力：``Q = Y W_Q``（解码器），``K = M W_K``、``V = M W_V``（编码器的输出 ``M``）。

    ``Y (B, T, d)``，``M (B, S, d)`` → ``(输出 (B, T, d), 权重 alpha (B, h, T, S))``：
    ``alpha[b, i, t, j]`` 是第 ``i`` 个头里目标第 ``t`` 步读源第 ``j`` 个位置的权重，每行加起来为 1。
    不需要掩码：源句在解码的每一步都完整可见。
    """

    # 交叉注意力读两个序列，参数与自注意力不同：这里有意不沿用父类 forward 的签名。
    def forward(self, Y: torch.Tensor, M: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # type: ignore[override]
        Q = self.split_heads(self.W_Q(Y))
        K = self.split_heads(self.W_K(M))
        V = self.split_heads(self.W_V(M))
        heads, alpha = scaled_dot_product_attention(Q, K, V)
        return self.W_O(self.merge_heads(heads)), alpha


class DecoderBlock(nn.Module):
    """解码器块：三个子层，各带一条残差连接。

    * ``norm_first=False``（post-norm，原论文）：
      ``Y ← LN₁(Y + SelfAttn(Y))``，``Y ← LN₂(Y + CrossAttn(Y, M))``，``Y ← LN₃(Y + FFN(Y))``；
    * ``norm_first=True``（pre-norm）：
      ``Y ← Y + SelfAttn(LN₁(Y))``，``Y ← Y + CrossAttn(LN₂(Y), M)``，``Y ← Y + FFN(LN₃(Y))``。

    ``Y (B, T, d)``，``M (B, S, d)``，``mask (T, T)``（缺省为因果掩码：第 t 步只读前 t 个目标位置）→
    ``(Y' (B, T, d), 自注意力权重 (B, h, T, T), 交叉注意力权重 (B, h, T, S))``。
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, *, norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadSelfAttention(d_model, n_heads)
        self.cross_attn = MultiHeadCrossAttention(d_model, n_heads)
        self.ffn = PositionwiseFFN(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = LayerNorm(d_model), LayerNorm(d_model), LayerNorm(d_model)

    def forward(self, Y: torch.Tensor, M: torch.Tensor, mask: torch.Tensor | None = None):
        mask = causal_mask(Y.shape[1]) if mask is None else mask
        if self.norm_first:
            A, self_alpha = self.self_attn(self.norm1(Y), mask)
            Y = Y + A
            C, cross_alpha = self.cross_attn(self.norm2(Y), M)
            Y = Y + C
            Y = Y + self.ffn(self.norm3(Y))
        else:
            A, self_alpha = self.self_attn(Y, mask)
            Y = self.norm1(Y + A)
            C, cross_alpha = self.cross_attn(Y, M)
            Y = self.norm2(Y + C)
            Y = self.norm3(Y + self.ffn(Y))
        return Y, self_alpha, cross_alpha


# ---------------------------------------------------------------- 从 PyTorch 拷贝权重
def _copy_attention(ours: MultiHeadSelfAttention, theirs: nn.MultiheadAttention) -> None:
    """PyTorch 把 ``W_Q, W_K, W_V`` 竖着拼成一个 ``in_proj_weight (3d, d)``；拆开后逐个拷贝。"""
    weights, biases = theirs.in_proj_weight.detach().chunk(3), theirs.in_proj_bias.detach().chunk(3)
    for linear, W, b in zip((ours.W_Q, ours.W_K, ours.W_V), weights, biases):
        linear.weight.copy_(W)
        linear.bias.copy_(b)
    ours.W_O.weight.copy_(theirs.out_proj.weight)
    ours.W_O.bias.copy_(theirs.out_proj.bias)


def _copy_norm(ours: LayerNorm, theirs: nn.LayerNorm) -> None:
    ours.gamma.copy_(theirs.weight)
    ours.beta.copy_(theirs.bias)
    ours.eps = theirs.eps


def decoder_block_from_torch(layer: nn.TransformerDecoderLayer) -> DecoderBlock:
    """把 ``torch.nn.TransformerDecoderLayer`` 的参数逐个拷进本书的 ``DecoderBlock``（只支持 ReLU）。

    名字的对应：``self_attn → self_attn``，``multihead_attn → cross_attn``，``linear1/linear2 → ffn.W_1/W_2``，
    ``norm1/2/3 → norm1/2/3``。
    """
    if layer.activation is not F.relu:
        raise InputError("只支持 activation='relu' 的 TransformerDecoderLayer。")
    attn = layer.self_attn
    with torch.random.fork_rng(devices=[]):  # 参数马上被覆盖：新建时的随机初始化不该动全局随机数
        block = DecoderBlock(attn.embed_dim, attn.num_heads, layer.linear1.out_features,
                             norm_first=layer.norm_first).to(attn.in_proj_weight.dtype)
    with torch.no_grad():
        _copy_attention(block.self_attn, layer.self_attn)
        _copy_attention(block.cross_attn, layer.multihead_attn)
        for linear, theirs in ((block.ffn.W_1, layer.linear1), (block.ffn.W_2, layer.linear2)):
            linear.weight.copy_(theirs.weight)
            linear.bias.copy_(theirs.bias)
        for ours, norm in ((block.norm1, layer.norm1), (block.norm2, layer.norm2), (block.norm3, layer.norm3)):
            _copy_norm(ours, norm)
    return block.eval()


# ---------------------------------------------------------------- 整个模型
class EncoderDecoderTransformer(nn.Module):
    """编码器—解码器 Transformer。

    ``src (B, S)``、``tgt (B, T)`` → ``logits (B, T, V_tgt)``（教师强制：第 t 步的输入是起始符与正确的
    ``y_1 … y_{t-1}``）。编码器和解码器的最后各有一次层归一化——``torch.nn.Transformer`` 也是这样
    （pre-norm 的残差流从不经过归一化，这一步必不可少；post-norm 时它是多余但无害的一步）。
    """

    def __init__(
        self, src_vocab: int, tgt_vocab: int, d_model: int = 64, n_heads: int = 2, d_ff: int = 128,
        n_layers: int = 2, *, norm_first: bool = True,
    ):
        super().__init__()
        self.config = {"src_vocab": src_vocab, "tgt_vocab": tgt_vocab, "d_model": d_model, "n_heads": n_heads,
                       "d_ff": d_ff, "n_layers": n_layers, "norm_first": norm_first}
        self.d_model = d_model
        self.src_embed = nn.Embedding(src_vocab, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_model)
        # 初始化为标准差 d^{-1/2}，乘上 √d 之后每一维约为 1，与正弦位置同一量级（原论文的 Embedding 与输出层共享
        # 权重，也是这个尺度）；PyTorch 默认的 N(0, 1) 乘上 √d 会把位置信号淹没。
        for table in (self.src_embed, self.tgt_embed):
            nn.init.normal_(table.weight, std=d_model**-0.5)
        self.encoder = nn.ModuleList(
            TransformerBlock(d_model, n_heads, d_ff, norm_first=norm_first) for _ in range(n_layers))
        self.decoder = nn.ModuleList(
            DecoderBlock(d_model, n_heads, d_ff, norm_first=norm_first) for _ in range(n_layers))
        self.enc_norm, self.dec_norm = LayerNorm(d_model), LayerNorm(d_model)
        self.W_out = nn.Linear(d_model, tgt_vocab)

    def embed(self, table: nn.Embedding, ids: torch.Tensor) -> torch.Tensor:
        """``ids (B, S)`` → ``(B, S, d)``：Embedding × √d 加正弦位置。"""
        return table(ids) * math.sqrt(self.d_model) + sinusoidal_positions(ids.shape[1], self.d_model)

    def encode(self, X: torch.Tensor) -> torch.Tensor:
        """编码器：``X (B, S, d)``（已加位置）→ ``M (B, S, d)``。"""
        for block in self.encoder:
            X, _ = block(X)
        return self.enc_norm(X)

    def decode(self, Y: torch.Tensor, M: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """解码器：``Y (B, T, d)``（已加位置）、``M (B, S, d)`` → ``(Z (B, T, d), 每层的交叉注意力权重)``。"""
        cross = []
        for block in self.decoder:
            Y, _, alpha = block(Y, M)
            cross.append(alpha)
        return self.dec_norm(Y), cross

    def shifted(self, tgt: torch.Tensor) -> torch.Tensor:
        """解码器的输入：起始符接上去掉最后一个词的目标，``(B, T)`` → ``(B, T)``。"""
        return torch.cat([torch.full_like(tgt[:, :1], task.BOS_ID), tgt[:, :-1]], dim=1)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor, *, return_weights: bool = False):
        M = self.encode(self.embed(self.src_embed, src))
        Z, cross = self.decode(self.embed(self.tgt_embed, self.shifted(tgt)), M)
        logits = self.W_out(Z)
        return (logits, cross) if return_weights else logits

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, T: int) -> tuple[torch.Tensor, torch.Tensor]:
        """贪心解码 ``T`` 步（编码器只算一次，解码器每步把已生成的前缀整段重算）。

        返回 ``(ids (B, T), cross (B, n_layers, h, T, S))``：``cross`` 是每层每个头的交叉注意力权重。
        因果掩码保证第 t 行只依赖前 t 个目标位置，所以最后一次前向里的第 t 行就是第 t 步当时的权重。
        """
        with single_thread():
            M = self.encode(self.embed(self.src_embed, src))
            ys = torch.full((src.shape[0], 1), task.BOS_ID, dtype=torch.long)
            for _ in range(T):
                Z, cross = self.decode(self.embed(self.tgt_embed, ys), M)
                ys = torch.cat([ys, self.W_out(Z[:, -1]).argmax(-1, keepdim=True)], dim=1)
            return ys[:, 1:], torch.stack(cross, dim=1)


def from_torch(reference: nn.Transformer, src_vocab: int, tgt_vocab: int) -> EncoderDecoderTransformer:
    """新建一个模型，把 ``torch.nn.Transformer`` 的编码器、解码器与两次最后的归一化逐个拷进来。

    ``nn.Transformer`` 不含 Embedding 与输出层，它们保持随机初始化（对照时直接比较 ``encode``/``decode``）。
    """
    enc, dec = reference.encoder, reference.decoder
    first = enc.layers[0]
    with torch.random.fork_rng(devices=[]):
        model = EncoderDecoderTransformer(
            src_vocab, tgt_vocab, first.self_attn.embed_dim, first.self_attn.num_heads, first.linear1.out_features,
            len(enc.layers), norm_first=first.norm_first).to(first.self_attn.in_proj_weight.dtype)
    if len(dec.layers) != len(enc.layers):
        raise InputError("本书的模型里编码器与解码器的层数相同。")
    model.encoder = nn.ModuleList(block_from_torch(layer) for layer in enc.layers)
    model.decoder = nn.ModuleList(decoder_block_from_torch(layer) for layer in dec.layers)
    with torch.no_grad():
        _copy_norm(model.enc_norm, enc.norm)
        _copy_norm(model.dec_norm, dec.norm)
    return model.eval()


# ---------------------------------------------------------------- 交叉注意力与标准对齐
@torch.no_grad()
def alignment_agreement(model: EncoderDecoderTransformer, data: list[task.Batch]) -> torch.Tensor:
    """交叉注意力权重最大的源位置与标准对齐相同的比例，形状 ``(n_layers, h + 1)``：
    第 ``i < h`` 列是第 ``i`` 个头，最后一列是各头平均（``head_mean``）之后的权重。

    与第 1.4 节的 ``seq2seq.alignment_agreement`` 同一个量度（argmax 对上标准对齐的目标步的比例）；
    标准对齐同样从不参与训练。
    """
    hits, total = [], 0
    for batch in data:
        _, cross = model.greedy(batch.src, batch.tgt.shape[1])  # (B, L, h, T, S)
        cross = torch.cat([cross, head_mean(cross)[:, :, None]], dim=2)  # (B, L, h + 1, T, S)
        gold = torch.tensor([task.alignment([task.SRC_TOKENS[i] for i in src]) for src in batch.src])  # (B, T)
        agree = (cross.argmax(dim=-1) == gold[:, None, None, :]).sum(dim=(0, 3))
        hits.append(agree)
        total += gold.numel()
    return torch.stack(hits).sum(dim=0) / total


def chance_agreement(data: list[task.Batch]) -> float:
    """对照：每一步随便挑一个源位置，平均能对上标准对齐的比例（每个目标步是 1/S）。"""
    return sum(b.tgt.numel() / b.src.shape[1] for b in data) / sum(b.tgt.numel() for b in data)


def head_mean(cross: torch.Tensor) -> torch.Tensor:
    """各头权重的平均（仍是每行加起来为 1 的分布）：``(…, h, T, S)`` → ``(…, T, S)``。"""
    return cross.mean(dim=-3)
