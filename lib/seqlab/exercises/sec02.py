"""第 1.2 节练习的自动检查。"""

from __future__ import annotations

import copy
import math
import numbers

import torch
from torch import nn

from seqlab import corpus
from seqlab.exercises import (
    CheckFailed,
    call,
    call_tracing_torch,
    checker,
    expect,
    expect_close,
    expect_number,
    expect_tensor,
    fail,
    op_name,
)

PAD, UNK = "<pad>", "<unk>"
ONE_HOT_BYPASS = ("embedding", "embedding_bag", "gather", "index_select", "take", "take_along_dim")
# one-hot 与 E 相乘要用到的运算：矩阵乘法一族，或者逐元素相乘再求和
MATMUL = ("matmul", "mm", "bmm", "einsum", "tensordot", "linear", "mv", "inner", "dot", "addmm", "baddbmm",
          "__matmul__", "__rmatmul__", "chain_matmul", "multi_dot", "_sparse_mm")  # 稀疏乘法由下面的 inf 测试点名
MULTIPLY, SUM = ("mul", "__mul__", "__rmul__", "multiply"), ("sum",)
# 查看 E 里哪些元素不是有限数的运算：one-hot 乘法用不着它们，用了多半是在照着 inf 的位置摆出 nan
NON_FINITE_PROBES = ("isfinite", "isinf", "isnan", "isposinf", "isneginf", "nan_to_num", "nan_to_num_")
AUTOGRAD = ("backward", "grad", "vjp", "jvp", "jacrev", "jacfwd", "jacobian", "linearize", "hessian",
            "make_dual", "_make_dual", "unpack_dual", "_unpack_dual")  # 前向模式（对偶数）也算自动求导
# PyTorch 自己算 Embedding 梯度的内核：直接调用它们（torch.ops.aten.…）等于让框架代劳
EMBEDDING_BACKWARD = ("embedding_backward", "embedding_dense_backward", "embedding_sparse_backward")


def _is_id_list(ids: object, n: int, V: int) -> bool:
    """``ids`` 是长度为 ``n`` 的列表，每一项都是 ``0 … V-1`` 里的整数（Python 或 NumPy 的整数都行，布尔值不算）。"""
    return (isinstance(ids, list) and len(ids) == n
            and all(isinstance(i, numbers.Integral) and not isinstance(i, bool) and 0 <= int(i) < V for i in ids))


@checker(
    "1.2.1",
    "建一个字级词表，编码再解码",
    objective="实现词表的 token→ID 与 ID→token 两个方向，并理解封闭词表为什么会丢字",
    difficulty=1,
    minutes=10,
)
def check_vocab(build_vocab, encode, decode):
    """``build_vocab(sentences) -> list[str]``（``itos[0] == "<pad>"``、``itos[1] == "<unk>"``，其余每个字出现一次，
    按第一次出现的顺序）；``encode(text, itos) -> list[int]``（没见过的字编成 1）；``decode(ids, itos) -> str``。"""
    # 参考答案都在调用学生的函数之前算好，学生拿到的是副本：原地改动参数既骗不过检查，也影响不了后面的测试
    sentences = list(corpus.book_corpus()[:100])
    chars = list(dict.fromkeys(ch for s in sentences for ch in s))
    others = ["鲲鹏读书，甜苹果。", "书读完了", "苹果"]
    want_other = [PAD, UNK] + list(dict.fromkeys(ch for s in others for ch in s))
    itos = call(build_vocab, list(sentences))
    expect(isinstance(itos, list), f"build_vocab 应返回一个列表（下标就是 ID），你返回了 {type(itos).__name__}。")
    expect(
        itos[:2] == [PAD, UNK],
        f"和本书的词表一样，ID 0 留给 {PAD}、ID 1 留给 {UNK}；你的前两项是 {itos[:2]!r}。",
    )
    expect(len(set(itos)) == len(itos), "词表里有重复的 token：每个字只能占一个 ID。")
    expect(
        len(itos) == 2 + len(chars),
        f"这 100 句话里共有 {len(chars)} 个不同的字，加上两个特殊 token，词表应有 {2 + len(chars)} 项，你的有 {len(itos)} 项。",
    )
    expect(itos[2:] == chars, "特殊 token 之后，请按每个字第一次出现的顺序排列（提示：dict.fromkeys 能保序去重）。")
    # build_vocab 必须用传进来的句子：换一批句子（顺序、用字都不同），词表也要跟着变
    got_other = call(build_vocab, list(others))
    expect(
        isinstance(got_other, list) and got_other == want_other,
        f"换一批句子 {others!r} 再建词表，应得到 {want_other!r}，你得到 {got_other!r}："
        "请由参数 sentences 建词表，不要用别处的句子。",
    )
    itos = [PAD, UNK, *chars]  # 学生的词表已经核对过；往下用检查自己的这一份，每次调用都给副本
    for s in sentences[:20]:
        ids = call(encode, s, list(itos))
        expect(isinstance(ids, list), f"encode 应返回一个 ID 列表（list），你返回了 {type(ids).__name__}。")
        expect(len(ids) == len(s), f"「{s}」有 {len(s)} 个字，应编码成 {len(s)} 个 ID。")
        expect(_is_id_list(ids, len(s), len(itos)), "每个 ID 都应是词表范围内的整数。")
        expect([itos[i] for i in ids] == list(s), f"「{s}」的 ID 查回 itos 不是原来的字：第 t 个 ID 应是第 t 个字在 itos 里的下标。")
        back = call(decode, list(ids), list(itos))
        expect(back == s, f"往返失败：「{s}」编码再解码得到「{back}」。")
    ids = call(encode, "鲲鹏读书", list(itos))
    expect(isinstance(ids, list) and len(ids) == 4, f"「鲲鹏读书」有 4 个字，应编码成 4 个 ID，你得到 {ids!r}。")
    expect(list(ids[:2]) == [1, 1], f"「鲲」「鹏」不在词表里，应编码成 1（{UNK}），你得到 {list(ids[:2])}。")
    back = call(decode, list(ids), list(itos))
    expect(back == f"{UNK}{UNK}读书", f"解码 {list(ids)} 应得到「{UNK}{UNK}读书」，你得到「{back}」。")
    # encode、decode 必须照传进来的 itos 编号：换一个顺序不同、少了几个字的词表，结果也要跟着变
    other = [PAD, UNK] + chars[:0:-1]  # 倒序，并且去掉了第一个字
    for s in sentences[:5]:
        want = [other.index(ch) if ch in other else 1 for ch in s]
        want_text = "".join(other[i] for i in want)
        ids = call(encode, s, list(other))
        expect(
            _is_id_list(ids, len(s), len(other)) and list(ids) == want,
            "换一个词表（同样的字，倒过来排，并去掉了一个字）再编码，你的 encode 给出的 ID 没有跟着变："
            "请按参数 itos 查 ID，不要用别处建好的词表。",
        )
        back = call(decode, list(want), list(other))
        expect(
            back == want_text,
            "换一个词表再解码，你的 decode 没有按参数 itos 把 ID 变回字：请用传进来的 itos。",
        )
    return "往返成功。注意「鲲鹏」回不来了：封闭词表丢掉的信息，解码也找不回——字节级 BPE 正是为此而设计。"


def _expect_dense_product(trace) -> None:
    """``lookup_onehot`` 的运算记录：没有按 ID 取行的运算、没有查看 inf/nan 的运算，并且真的有乘法。"""
    bypass = trace.used(*ONE_HOT_BYPASS)
    expect(
        not bypass,
        f"lookup_onehot 调用了 {'、'.join(bypass)}：这是按 ID 直接取行，不是 one-hot 乘法。"
        "请先造出 one-hot 行向量 u_i（长度 V），再与 E 相乘。",
    )
    probes = trace.used(*NON_FINITE_PROBES)
    expect(
        not probes,
        f"lookup_onehot 调用了 {'、'.join(probes)}：one-hot 乘法用不着查看 E 里哪些元素是 inf 或 nan。"
        "请让 one-hot 矩阵与 E 相乘本身给出结果。",
    )
    expect(
        bool(trace.used(*MATMUL)) or (bool(trace.used(*MULTIPLY)) and bool(trace.used(*SUM))),
        "lookup_onehot 里没有看到乘法：既没有矩阵乘法（@、torch.matmul、einsum 之类），"
        "也没有逐元素相乘再求和。请用 PyTorch 让 one-hot 矩阵与 E 相乘。",
    )


def _onehot_traced(lookup_onehot, E: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """在放了 inf 的表上调用 ``lookup_onehot``：运算记录与正常的表上一样核对（不许照着 inf 的位置摆出 nan）。"""
    out, trace = call_tracing_torch(lookup_onehot, E, ids)
    _expect_dense_product(trace)
    return expect_tensor(out, "lookup_onehot")


@checker(
    "1.2.2",
    "两种方式查 Embedding",
    objective="用行索引和 one-hot 乘法两种写法得到同一个 e_i，并说明实现为什么选索引",
    difficulty=1,
    minutes=8,
)
def check_lookup(lookup_rows, lookup_onehot):
    """``lookup_rows(E, ids)`` 用索引，``lookup_onehot(E, ids)`` 先造稠密的 one-hot 再乘 ``E``；
    ``E (V, d)``，``ids (…)`` 整数张量 → ``(…, d)``。

    “真的乘了”怎么看出来：表里放一个 ``inf``，放在这次没有查到的那一行。按行索引根本不读那一行，结果照常；
    稠密的 one-hot 乘法把每一行都乘一遍，``0 × inf = nan`` 会出现在结果里。
    """
    g = torch.Generator().manual_seed(7)
    E = torch.randn(40, 6, generator=g)
    for ids in (torch.tensor([3, 0, 39, 3]), torch.randint(0, 40, (2, 5), generator=g)):
        want = E[ids].clone()
        for name, fn in (("lookup_rows", lookup_rows), ("lookup_onehot", lookup_onehot)):
            got, trace = call_tracing_torch(fn, E.clone(), ids.clone())
            expect_tensor(got, name)
            expect(
                tuple(got.shape) == tuple(want.shape),
                f"ids 形状 {tuple(ids.shape)} 时 {name} 的结果形状应为 {tuple(want.shape)}，你的是 {tuple(got.shape)}。",
            )
            expect(torch.allclose(got.double(), want.double(), atol=1e-5), f"{name} 的数值与 E[ids] 不一致。")
            if name == "lookup_onehot":
                _expect_dense_product(trace)
    ids = torch.tensor([[1, 2, 5], [3, 1, 0]])
    E_inf = E.clone()
    E_inf[17, 2] = float("inf")  # 第 17 行这次没有被查到
    E_used = E.clone()
    E_used[2, 4] = float("inf")  # 第 2 行这次被查到了（位置 (0, 1)）
    want_inf, want_used = E_inf[ids].double(), E_used[ids].double()
    rows = call(lookup_rows, E_inf.clone(), ids.clone())
    expect_tensor(rows, "lookup_rows")
    expect(
        tuple(rows.shape) == (2, 3, 6) and torch.equal(rows.double(), want_inf),
        "lookup_rows 的结果受到了一个没有被查到的行的影响：按行索引只应读取 ids 里的那几行。",
    )
    out = _onehot_traced(lookup_onehot, E_inf.clone(), ids.clone())
    expect(
        tuple(out.shape) == (2, 3, 6) and bool(out[..., 2].isnan().all()),
        "把 E 的第 17 行（这次没有被查到）的一个元素换成 inf 之后，lookup_onehot 的结果没有变成 nan："
        "稠密的 one-hot 乘法会把 E 的每一行都乘一遍（0 × inf = nan），你的函数看来没有这样做。"
        "请用稠密的 one-hot 矩阵（不要用稀疏矩阵）与 E 相乘。",
    )
    # 再把 inf 放进一个**查到了**的行（第 2 行，出现在位置 (0, 1)）：稠密的 one-hot 乘法在 ID 为 2 的位置上
    # 是 1 × inf + 0 × 有限数 = inf，在其余位置上是 0 × inf = nan。先按行取、再用一个碰过每一行的量
    # “污染”结果的写法（例如 E[ids] + 0 * E.sum(0)）会让所有位置都变成 nan，在这里露馅
    want_col = torch.full((2, 3), float("nan"))
    want_col[0, 1] = float("inf")
    rows = call(lookup_rows, E_used.clone(), ids.clone())
    expect_tensor(rows, "lookup_rows")
    expect(
        tuple(rows.shape) == (2, 3, 6) and torch.equal(rows.double(), want_used),
        "把 E 第 2 行的一个元素换成 inf 之后，lookup_rows 的结果应当只在查到第 2 行的那个位置出现 inf，其余位置不受影响。",
    )
    out = _onehot_traced(lookup_onehot, E_used.clone(), ids.clone())
    col = out[..., 4].double() if tuple(out.shape) == (2, 3, 6) else None
    expect(
        col is not None and bool(col.isnan().eq(want_col.isnan()).all()) and float(col[0, 1]) == float("inf"),
        "把 E 第 2 行（ids 里有它）的一个元素换成 inf 之后，稠密的 one-hot 乘法应当在 ID 为 2 的位置得到 inf"
        "（1 × inf 加上一串 0 × 有限数），在其余位置得到 nan（0 × inf）。你的 lookup_onehot 不是这样："
        "看来它先按行取出了结果，再加上或乘上了别的东西。请让 one-hot 矩阵与 E 相乘本身给出结果。",
    )
    # 同一列里，查到了的第 2 行放 −inf、没查到的第 17 行放 +inf：稠密的乘法在每个位置都要加上 0 × inf = nan，
    # 这一列处处是 nan；先按行取、再照着 inf 的位置摆出 nan 的写法，在 ID 为 2 的位置上会留下 −inf
    E_mixed = E.clone()
    E_mixed[2, 3], E_mixed[17, 3] = float("-inf"), float("inf")
    out = _onehot_traced(lookup_onehot, E_mixed.clone(), ids.clone())
    expect(
        tuple(out.shape) == (2, 3, 6) and bool(out[..., 3].isnan().all()),
        "把 E 第 2 行（查到了）的一个元素换成 −inf、同一列第 17 行（没查到）换成 +inf 之后，稠密的 one-hot 乘法"
        "在这一列的每个位置都会加上 0 × inf，处处得到 nan。你的 lookup_onehot 不是这样：看来它先按行取出了结果，"
        "再照着 inf 的位置摆出了 nan。请让 one-hot 矩阵与 E 相乘本身给出结果。",
    )
    return "两种写法给出同一个向量；但查 N 个 token 时，one-hot 乘法要造 N×V 的矩阵、做 N·V·d 次乘加，索引只需拷贝 N 行。"


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
    # 参考答案在调用学生的函数之前算好；学生拿到的是模型的深拷贝（共享的权重在拷贝里照样共享），
    # 原地改动模型（例如把共享的权重拆开）既骗不过检查，也碰不到本节的模型
    wants = {name: _embedding_share(m) for name, m in cases.items()}
    for name, m in cases.items():
        got = call(embedding_share, copy.deepcopy(m))
        want = wants[name]
        expect(
            isinstance(got, (tuple, list)) and len(got) == 2,
            f"应返回一个二元组（Embedding 参数个数，全部参数个数），你返回了 {got!r}。",
        )
        if name.endswith("共享的输出层") and got[1] == want[1] + want[0]:
            fail("共享的权重被数了两次：model.parameters() 本身就只给出一次，不要把各层的参数分别相加。")
        expect_close(got[0], want[0], f"{name} 的 Embedding 参数个数")
        expect_close(got[1], want[1], f"{name} 的全部参数个数")
    expect(isinstance(shares, dict), "还没有算 shares：写好函数后，把 shares 改成两个比例组成的字典。")
    expect(set(shares) == {"本节的模型", "V = 50257"}, f"shares 的键应是「本节的模型」和「V = 50257」，你给的是 {sorted(shares)!r}。")
    for name in shares:
        n_emb, n_all = wants[name]
        value = expect_number(shares[name], f"{name} 里 Embedding 所占的比例")
        if not math.isclose(value, n_emb / n_all, rel_tol=1e-6) and abs(value - n_emb / n_all) < 5e-3:
            fail(f"{name} 里 Embedding 所占的比例是 {n_emb / n_all:.8f}…，你给的 {value:g} 像是四舍五入过的：请直接给出相除的结果，不要取舍。")
        expect_close(value, n_emb / n_all, f"{name} 里 Embedding 所占的比例")
    return (f"本节的模型里 Embedding 占 {shares['本节的模型']:.0%}；词表放大到 50257、其余不变，它占 {shares['V = 50257']:.1%}。"
            "词表大小是参数量里最容易被忽略的一项。")


def _embedding_grad(ids: torch.Tensor, G: torch.Tensor, V: int, padding_idx: int | None) -> torch.Tensor:
    """参考：``nn.Embedding(V, d, padding_idx=…)`` 在 ``ids`` 上前向、以 ``G`` 为上游梯度反传后的 ``weight.grad``。"""
    emb = nn.Embedding(V, G.shape[-1], padding_idx=padding_idx, dtype=G.dtype)
    emb(ids).backward(G)
    assert emb.weight.grad is not None
    return emb.weight.grad


@checker(
    "1.2.4",
    "推导 Embedding 表的梯度",
    objective="从 X[t,:] = E[x_t,:] 推出 ∂L/∂E",
    difficulty=2,
    minutes=15,
)
def check_embedding_grad(embedding_grad):
    """``embedding_grad(ids, G, V, padding_idx) -> (V, d)``：不用自动求导，由上游梯度 ``G = ∂L/∂X``
    （形状 ``ids.shape + (d,)``）算出 ``∂L/∂E``，与 ``nn.Embedding(V, d, padding_idx=…)`` 反传后的 ``weight.grad`` 相同。"""
    g = torch.Generator().manual_seed(24)
    cases = [([[4, 2, 2], [7, 0, 0]], 12, 3, 0), ([[1, 1, 1]], 6, 2, None), ([[5, 9, 3, 5]], 10, 4, 3),
             ([[0, 8], [8, 6]], 9, 5, 6), ([2, 2, 7, 1, 2], 8, 3, None), ([2, 0, 7, 0, 2], 8, 3, None)]
    for ids_list, V, d, pad in cases:
        ids = torch.tensor(ids_list)
        G = torch.randn(*ids.shape, d, generator=g)
        want = _embedding_grad(ids, G, V, pad)
        ids_in, G_in = ids.clone(), G.clone()
        # 在 inference_mode 里调用：这里不记录计算图，也就没有 grad_fn 可以借来反传（例如 E[ids].grad_fn(G)）
        try:
            with torch.inference_mode():
                got, trace = call_tracing_torch(embedding_grad, ids_in, G_in, V, pad)
        except (NotImplementedError, CheckFailed):
            raise
        except Exception as err:  # noqa: BLE001 —— 学生代码里的错误：只说类型，并提醒检查在 inference_mode 里运行
            fail(f"你的函数运行时出错（{type(err).__name__}）。注意：检查在 torch.inference_mode() 里调用它，"
                 "那里不记录计算图，backward、grad_fn 之类的自动求导都用不了——这道题本来也要你自己算出梯度。")
        autograd = trace.used(*AUTOGRAD)
        expect(
            not autograd,
            f"你的函数调用了 {'、'.join(autograd)}：这道题要你自己推出梯度，不要让自动求导代劳。",
        )
        # PyTorch 自己的反传内核（名字以 _backward 结尾，包括 embedding_bag 的那几个）：老老实实的答案一个也用不着
        kernels = sorted({op_name(n) for n in trace.calls if op_name(n) in EMBEDDING_BACKWARD
                          or op_name(n).endswith("_backward")})
        expect(
            not kernels,
            f"你的函数调用了 PyTorch 自己的 {'、'.join(kernels)}：那正是 nn.Embedding 反传时用的内核。"
            "这道题要你自己把 G 的各行加到对应的 ID 上。",
        )
        expect(torch.equal(ids_in, ids) and torch.equal(G_in, G), "你的函数改动了传进来的 ids 或 G：请不要原地修改它们。")
        got = expect_tensor(got, "∂L/∂E")
        where = f"ids = {ids_list}、V = {V}、padding_idx = {pad}"
        expect(tuple(got.shape) == (V, d), f"{where} 时 ∂L/∂E 的形状应是 ({V}, {d})，与 E 相同；你的是 {tuple(got.shape)}。")
        got, want = got.detach().double(), want.double()
        if torch.allclose(got, want, atol=1e-5, rtol=1e-5):
            continue
        wrong = [i for i in range(V) if not torch.allclose(got[i], want[i], atol=1e-5, rtol=1e-5)]
        if pad in wrong:
            fail(f"{where}：padding 行（第 {pad} 行）的梯度应为零——nn.Embedding 特意不让补齐的位置更新那一行。")
        flat_ids, flat_G = ids.reshape(-1), G.reshape(-1, d).double()
        repeated = [i for i in wrong if int((flat_ids == i).sum()) > 1]
        if repeated and any(torch.allclose(got[i], flat_G[t], atol=1e-5) for i in repeated
                            for t in torch.nonzero(flat_ids == i).flatten().tolist()):
            fail(f"{where}：第 {repeated[0]} 行的 ID 出现了不止一次，它的梯度应是这几个位置上 G 的和；"
                 "你的结果只留下了其中一个位置的 G（按下标赋值会覆盖，不会累加）。")
        fail(f"{where} 时 ∂L/∂E 有 {len(wrong)} 行不对（第 {wrong[:6]} 行）。第 i 行应是所有 ID 为 i 的位置上 G 的和。")
    return ("∂L/∂E = UᵀG：第 i 行是所有 ID 为 i 的位置上 G 的和。没出现的行为零，出现几次就加几次，"
            "padding 行被 PyTorch 特意置零——index_add_ 就是不造 U 的 UᵀG。")
