"""第 1.2 节练习的自动检查。"""

from __future__ import annotations

import torch
from torch import nn

from seqlab import corpus
from seqlab.exercises import call, checker, expect, expect_close, expect_tensor, fail

UNK = "<unk>"


@checker(
    "1.2.1",
    "建一个字级词表，编码再解码",
    objective="实现词表的 token→ID 与 ID→token 两个方向，并理解封闭词表为什么会丢字",
    difficulty=1,
    minutes=10,
)
def check_vocab(build_vocab, encode, decode):
    """``build_vocab(sentences) -> list[str]``（``itos[0] == "<unk>"``，其余每个字出现一次，
    按第一次出现的顺序）；``encode(text, itos) -> list[int]``（没见过的字编成 0）；
    ``decode(ids, itos) -> str``。"""
    sentences = list(corpus.book_corpus()[:100])
    itos = call(build_vocab, sentences)
    expect(isinstance(itos, list), f"build_vocab 应返回一个列表（下标就是 ID），你返回了 {type(itos).__name__}。")
    expect(len(itos) > 0 and itos[0] == UNK, f"ID 0 应当留给 {UNK}，你的 itos[0] 是 {itos[:1]!r}。")
    chars = list(dict.fromkeys(ch for s in sentences for ch in s))
    expect(len(set(itos)) == len(itos), "词表里有重复的 token：每个字只能占一个 ID。")
    expect(
        len(itos) == 1 + len(chars),
        f"这 100 句话里共有 {len(chars)} 个不同的字，加上 {UNK} 词表应有 {1 + len(chars)} 项，你的有 {len(itos)} 项。",
    )
    expect(itos[1:] == chars, "除 <unk> 外，请按每个字第一次出现的顺序排列（提示：dict.fromkeys 能保序去重）。")
    for s in sentences[:20]:
        ids = call(encode, s, itos)
        expect(isinstance(ids, list) and len(ids) == len(s), f"「{s}」有 {len(s)} 个字，应编码成 {len(s)} 个 ID。")
        expect(all(isinstance(i, int) and 0 <= i < len(itos) for i in ids), "每个 ID 都应是词表范围内的整数。")
        back = call(decode, ids, itos)
        expect(back == s, f"往返失败：「{s}」编码再解码得到「{back}」。")
    ids = call(encode, "鲲鹏读书", itos)
    expect(ids[:2] == [0, 0], f"「鲲」「鹏」不在词表里，应编码成 0（{UNK}），你得到 {ids[:2]}。")
    back = call(decode, ids, itos)
    expect(back == f"{UNK}{UNK}读书", f"解码 {ids} 应得到「{UNK}{UNK}读书」，你得到「{back}」。")
    return "往返成功。注意「鲲鹏」回不来了：封闭词表丢掉的信息，解码也找不回——字节级 BPE 正是为此而设计。"


@checker(
    "1.2.2",
    "两种方式查 Embedding",
    objective="用行索引和 one-hot 乘法两种写法得到同一个 e_i，并说明实现为什么选索引",
    difficulty=1,
    minutes=8,
)
def check_lookup(lookup_rows, lookup_onehot):
    """``lookup_rows(E, ids)`` 用索引，``lookup_onehot(E, ids)`` 先造 one-hot 再乘 ``E``；
    ``E (V, d)``，``ids (…)`` 整数张量 → ``(…, d)``。"""
    g = torch.Generator().manual_seed(7)
    E = torch.randn(40, 6, generator=g)
    for ids in (torch.tensor([3, 0, 39, 3]), torch.randint(0, 40, (2, 5), generator=g)):
        want = E[ids]
        for name, fn in (("lookup_rows", lookup_rows), ("lookup_onehot", lookup_onehot)):
            got = call(fn, E, ids)
            expect_tensor(got, name)
            expect(
                tuple(got.shape) == tuple(want.shape),
                f"ids 形状 {tuple(ids.shape)} 时 {name} 的结果形状应为 {tuple(want.shape)}，你的是 {tuple(got.shape)}。",
            )
            expect(torch.allclose(got.float(), want, atol=1e-5), f"{name} 的数值与 E[ids] 不一致。")
    E_grad = E.clone().requires_grad_(True)
    out = call(lookup_onehot, E_grad, torch.tensor([1, 2]))
    expect(
        out.grad_fn is not None and "Index" not in type(out.grad_fn).__name__,
        "lookup_onehot 看起来直接做了索引：请先用 one-hot 行向量 u_i（长度 V）再乘 E。",
    )
    return "两种写法给出同一个向量；但 one-hot 乘法要造 n×V 的矩阵、做 n·V·d 次乘加，索引只需拷贝 n 行。"


def _embedding_share(model: nn.Module) -> tuple[int, int]:
    """参考：Embedding 子模块自己的参数个数，与全部参数的个数（共享的张量只算一次）。"""
    from seqlab.embedding import Embedding

    tables = [m for m in model.modules() if isinstance(m, (Embedding, nn.Embedding))]
    return sum(p.numel() for m in tables for p in m.parameters(recurse=False)), sum(p.numel() for p in model.parameters())


@checker(
    "1.2.3",
    "Embedding 表占了模型的多少",
    objective="数出 Embedding 表在真实模型里占多少参数，看到词表变大时它怎样吞掉整个模型",
    difficulty=1,
    minutes=5,
)
def check_embedding_share(embedding_share, shares):
    """``embedding_share(model) -> (Embedding 参数个数, 全部参数个数)``；``shares = {"本节的模型": 比例, "V = 50257": 比例}``。"""
    from seqlab import embedding, train

    book = train.load("embedding").model
    untied = nn.Sequential(nn.Embedding(100, 8), nn.Linear(8, 100))
    tied = nn.Sequential(nn.Embedding(100, 8), nn.Linear(8, 100, bias=False))
    tied[1].weight = tied[0].weight
    cases = {"本节的模型": book, "V = 50257": embedding.MaskedWordModel(50257, 32, 2),
             "nn.Embedding + 不共享的输出层": untied, "nn.Embedding + 共享的输出层": tied}
    for name, m in cases.items():
        got = call(embedding_share, m)
        want = _embedding_share(m)
        expect(isinstance(got, tuple) and len(got) == 2, f"应返回两个数（Embedding 参数个数，全部参数个数），你返回了 {got!r}。")
        if name.endswith("共享的输出层") and got[1] == want[1] + want[0]:
            fail("共享的权重被数了两次：model.parameters() 本身就只给出一次，不要把各层的参数分别相加。")
        expect_close(got[0], want[0], f"{name} 的 Embedding 参数个数")
        expect_close(got[1], want[1], f"{name} 的全部参数个数")
    expect(isinstance(shares, dict), "还没有算 shares：写好函数后，把 shares 改成两个比例组成的字典。")
    expect(set(shares) == {"本节的模型", "V = 50257"}, f"shares 的键应是「本节的模型」和「V = 50257」，你给的是 {sorted(shares)!r}。")
    for name in shares:
        n_emb, n_all = _embedding_share(cases[name])
        expect_close(shares[name], n_emb / n_all, f"{name} 里 Embedding 所占的比例")
    return (f"本节的模型里 Embedding 占 {shares['本节的模型']:.0%}；词表放大到 50257、其余不变，它占 {shares['V = 50257']:.1%}。"
            "词表大小是参数量里最容易被忽略的一项。")


@checker(
    "1.2.4",
    "哪些行会得到梯度",
    objective="说明一次反向传播后只有本批出现过的 token 对应的行有梯度（padding 行除外）",
    difficulty=2,
    minutes=10,
)
def check_grad_rows(rows_with_gradient):
    """``rows_with_gradient(ids, padding_idx) -> list[int]``：预测 ``nn.Embedding(V, d, padding_idx=…)``
    在 ``ids`` 上做一次前向和反向之后，``weight.grad`` 里不全为零的行号（升序）。"""
    cases = [([[4, 2, 2], [7, 0, 0]], 0), ([[1, 1, 1]], 0), ([[5, 9, 3, 5]], 3), ([[0, 8], [8, 6]], 6)]
    for ids, pad in cases:
        torch.manual_seed(0)
        emb = nn.Embedding(12, 3, padding_idx=pad)
        (emb(torch.tensor(ids)) ** 2).sum().backward()
        want = torch.nonzero(emb.weight.grad.abs().sum(1)).flatten().tolist()
        got = call(rows_with_gradient, ids, pad)
        expect(isinstance(got, list), f"应返回行号的列表，你返回了 {type(got).__name__}。")
        got = [int(i) for i in got]
        if pad in got:
            fail(f"ids = {ids}、padding_idx = {pad}：padding 行不会得到梯度——nn.Embedding 特意把它的梯度置零。")
        if sorted(set(got)) == want and got != want:
            fail(f"行号集合对了，但请去重并升序排列：应为 {want}，你给的是 {got}。")
        expect(got == want, f"ids = {ids}、padding_idx = {pad} 时有梯度的行应为 {want}，你给的是 {got}。")
    return "只有本批出现过的行有梯度：一个 token 出现多次，它那一行的梯度是各次之和；没出现的行这一步梯度为零。"
