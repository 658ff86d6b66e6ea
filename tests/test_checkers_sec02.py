"""第 1.2 节练习的检查：每个检查至少拒绝一个错误答案，并接受一个不寻常但正确的答案。"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checking import rejected as _rejected
from seqlab import embedding
from seqlab.exercises import recording, sec02


def _roundtrip(check, *answers):
    """评分的路径：在“沙箱”里记录学生函数的效果，再在干净的进程里用同一个检查重放判定。"""
    return recording.judge(check, json.loads(json.dumps(recording.record(check, list(answers)))))


# ---------------------------------------------------------------- 1.2.1 词表
def _build(sentences):
    return ["<pad>", "<unk>", *dict.fromkeys(ch for s in sentences for ch in s)]


def _encode(text, itos):
    stoi = {t: i for i, t in enumerate(itos)}
    return [stoi.get(ch, 1) for ch in text]


def _decode(ids, itos):
    return "".join(itos[i] for i in ids)


def test_vocab_accepts_the_reference_and_an_unusual_right_answer():
    assert sec02.check_vocab(_build, _encode, _decode).passed

    def build_by_loop(sentences):  # 逐字检查“见过没有”，不用 dict.fromkeys
        itos, seen = ["<pad>", "<unk>"], set()
        for s in sentences:
            for ch in s:
                if ch not in seen:
                    seen.add(ch)
                    itos.append(ch)
        return itos

    def encode_by_index(text, itos):  # 用 list.index 查，慢但对
        return [itos.index(ch) if ch in itos[2:] else 1 for ch in text]

    def decode_via_join_map(ids, itos):
        return "".join(map(itos.__getitem__, ids))

    assert sec02.check_vocab(build_by_loop, encode_by_index, decode_via_join_map).passed

    def encode_numpy(text, itos):  # NumPy 整数做 ID：也是正确答案
        import numpy as np

        stoi = {t: np.int64(i) for i, t in enumerate(itos)}
        return [stoi.get(ch, np.int64(1)) for ch in text]

    assert sec02.check_vocab(_build, encode_numpy, _decode).passed


def test_vocab_rejects_encode_and_decode_that_ignore_itos():
    from seqlab import corpus

    fixed = _build(corpus.book_corpus()[:100])   # 在别处建好的词表，函数不看参数 itos

    def encode_ignoring_itos(text, itos):
        return _encode(text, fixed)

    _rejected(sec02.check_vocab(_build, encode_ignoring_itos, _decode), "按参数 itos")

    def decode_ignoring_itos(ids, itos):
        return _decode(ids, fixed)

    _rejected(sec02.check_vocab(_build, _encode, decode_ignoring_itos), "按参数 itos")


def test_vocab_rejects_build_vocab_that_ignores_its_sentences():
    from seqlab import corpus

    fixed = _build(corpus.book_corpus()[:100])  # 只认得检查用的那 100 句：换一批句子就露馅

    _rejected(sec02.check_vocab(lambda sentences: list(fixed), _encode, _decode), "换一批句子")


def _truncating_build(sentences):  # 只用前 10 句建词表，再把参数改成这 10 句，让检查拿它算参考答案
    if len(sentences) > 3:
        sentences[:] = sentences[:10]
    return _build(sentences)


def _sorting_build(sentences):  # 句子多时按码位排序（错），再把参数改写成一句按码位排好的字
    if len(sentences) > 3:
        sentences[:] = ["".join(sorted({ch for s in sentences for ch in s}))]
    return _build(sentences)


def _decode_ignoring_itos_and_overwriting_it(ids, itos):  # 不看参数 itos，再把它改成自己用的那份
    from seqlab import corpus

    fixed = _build(corpus.book_corpus()[:100])
    text = _decode(ids, fixed)
    itos[:] = fixed
    return text


VOCAB_ARGUMENT_REWRITES = [
    ((_truncating_build, _encode, _decode), "词表应有"),
    ((_sorting_build, _encode, _decode), "第一次出现"),
    ((_build, _encode, _decode_ignoring_itos_and_overwriting_it), "按参数 itos"),
]


@pytest.mark.parametrize(("answers", "word"), VOCAB_ARGUMENT_REWRITES, ids=["truncate", "sort", "decode"])
def test_vocab_rejects_answers_that_rewrite_their_arguments(answers, word, monkeypatch):
    """参考答案在调用学生的函数之前算好，学生拿到的是副本：改写参数骗不过检查，直接检查与评分重放都一样。"""
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    _rejected(sec02.check_vocab(*answers), word)
    _rejected(_roundtrip(sec02.check_vocab, *answers), word)


def test_vocab_rejects_unk_at_zero_and_unordered_vocab():
    def unk_first(sentences):  # 旧的约定：<unk> 占 0 号，没有 <pad>
        return ["<unk>", *dict.fromkeys(ch for s in sentences for ch in s)]

    _rejected(sec02.check_vocab(unk_first, _encode, _decode), "<pad>")

    def sorted_vocab(sentences):
        return ["<pad>", "<unk>", *sorted({ch for s in sentences for ch in s})]

    _rejected(sec02.check_vocab(sorted_vocab, _encode, _decode), "第一次出现")

    def encode_unknown_as_zero(text, itos):
        stoi = {t: i for i, t in enumerate(itos)}
        return [stoi.get(ch, 0) for ch in text]

    _rejected(sec02.check_vocab(_build, encode_unknown_as_zero, _decode), "编码成 1")

    def encode_to_tensor(text, itos):  # 题目要的是 ID 列表
        return torch.tensor(_encode(text, itos))

    _rejected(sec02.check_vocab(_build, encode_to_tensor, _decode), "list")


# ---------------------------------------------------------------- 1.2.2 两种查表
def _rows(E, ids):
    return E[ids]


def _onehot(E, ids):
    return F.one_hot(ids, E.shape[0]).to(E.dtype) @ E


def test_lookup_accepts_unusual_right_answers():
    assert sec02.check_lookup(_rows, _onehot).passed

    def rows_by_index_select(E, ids):
        return E.index_select(0, ids.reshape(-1)).reshape(*ids.shape, E.shape[1])

    def onehot_by_eye_and_einsum(E, ids):  # 单位矩阵的行就是 one-hot；乘法用 einsum
        return torch.einsum("...v,vd->...d", torch.eye(E.shape[0], dtype=E.dtype)[ids], E)

    def onehot_by_broadcast_sum(E, ids):  # 逐元素相乘再求和，也是 u_i E
        u = torch.zeros(*ids.shape, E.shape[0], dtype=E.dtype).scatter_(-1, ids.unsqueeze(-1), 1.0)
        return (u.unsqueeze(-1) * E).sum(-2)

    def onehot_float64_by_comparison(E, ids):  # 用比较造 one-hot，在 float64 里乘
        return (ids[..., None] == torch.arange(E.shape[0])).double() @ E.double()

    def onehot_built_in_numpy(E, ids):  # one-hot 在 NumPy 里造好，再转成张量相乘
        return torch.from_numpy(np.eye(E.shape[0])[ids.numpy()]).to(E.dtype) @ E

    assert sec02.check_lookup(rows_by_index_select, onehot_by_eye_and_einsum).passed
    assert sec02.check_lookup(_rows, onehot_built_in_numpy).passed
    assert sec02.check_lookup(_rows, onehot_float64_by_comparison).passed
    assert sec02.check_lookup(lambda E, ids: F.embedding(ids, E), onehot_by_broadcast_sum).passed


def test_lookup_rejects_a_nan_pattern_laid_out_by_comparisons():
    def laid_out(E, ids):  # 先按行取，再用 r == r + 1（只在 ±inf 处成立）照着 inf 摆出 nan，乘法只是陪衬
        r = E[ids]
        return torch.where(r == r + 1, r, r + (0 * E).sum(0))

    _rejected(sec02.check_lookup(_rows, laid_out), "−inf")


@pytest.mark.parametrize(
    "onehot, word",
    [
        (lambda E, ids: F.embedding(ids, E), "embedding"),
        (lambda E, ids: E.gather(0, ids.reshape(-1, 1).expand(-1, E.shape[1])).reshape(*ids.shape, -1), "gather"),
        (lambda E, ids: E[ids] * 1.0, "没有看到乘法"),  # 直接索引，乘 1 只是装样子（只有相乘，没有求和）
        (lambda E, ids: (E[ids] * 1.0).sum(-1, keepdim=True) * 0 + E[ids], "inf"),  # 乘了、求和了，但没有碰到没查的行
        (lambda E, ids: torch.sparse.mm(F.one_hot(ids.reshape(-1), E.shape[0]).to(E.dtype).to_sparse(), E)
         .reshape(*ids.shape, -1), "稀疏"),
        # 先按行取，再加（乘）一个碰过每一行的量：没有被查到的行里的 inf 也会变成 nan，但查到的行里的 inf 露馅
        (lambda E, ids: E[ids] + 0 * E.sum(0), "先按行取出"),
        (lambda E, ids: E[ids] * (E.sum(0) * 0 + 1), "先按行取出"),
        (lambda E, ids: E.flatten()[ids[..., None] * E.shape[1] + torch.arange(E.shape[1])] + 0 * E.sum(0),
         "先按行取出"),
    ],
    ids=["F.embedding", "gather", "index-times-one", "index-mul-sum", "sparse", "index-plus-zero-sum", "index-times-one-sum",
         "flat-index-plus-zero-sum"],
)
def test_lookup_rejects_onehot_that_only_indexes(onehot, word):
    _rejected(sec02.check_lookup(_rows, onehot), word)


def _faked_nan_pattern(E, ids):  # 根本不乘：按行取，再照着 E 里非有限数的位置摆出 one-hot 乘法会有的 nan
    out = E[ids].clone()
    elsewhere = (~torch.isfinite(E)).sum(0) - (~torch.isfinite(out)).long()
    return torch.where(elsewhere > 0, torch.full_like(out, float("nan")), out)


def _faked_with_a_decoy_product(E, ids):  # 同上，外加一次结果被扔掉的 one-hot 乘法
    _onehot(E, ids)
    return _faked_nan_pattern(E, ids)


def _faked_by_comparison(E, ids):  # 不调用 isfinite：E - E 在 inf 处是 nan，nan != 0；全程没有乘法
    out = E[ids].clone()
    elsewhere = ((E - E) != 0).long().sum(0) - ((out - out) != 0).long()
    return torch.where(elsewhere > 0, torch.full_like(out, float("nan")), out)


FAKED_LOOKUPS = [(_faked_nan_pattern, "isfinite"), (_faked_with_a_decoy_product, "isfinite"),
                 (_faked_by_comparison, "没有看到乘法")]


@pytest.mark.parametrize(("onehot", "word"), FAKED_LOOKUPS, ids=["isfinite", "decoy-matmul", "comparison"])
def test_lookup_rejects_a_faked_nan_pattern(onehot, word, monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    _rejected(sec02.check_lookup(_rows, onehot), word)
    _rejected(_roundtrip(sec02.check_lookup, _rows, onehot), word)


def test_lookup_accepts_the_right_answers_through_the_grader(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")

    def onehot_by_mul_and_sum(E, ids):  # 逐元素相乘再求和：没有矩阵乘法，也是 u_i E
        return torch.mul(F.one_hot(ids, E.shape[0]).to(E.dtype).unsqueeze(-1), E).sum(dim=-2)

    def onehot_by_linear(E, ids):  # F.linear(u, Eᵀ) = u E
        return F.linear(F.one_hot(ids, E.shape[0]).to(E.dtype), E.T)

    for onehot in (_onehot, onehot_by_mul_and_sum, onehot_by_linear):
        assert sec02.check_lookup(_rows, onehot).passed, onehot.__name__
        assert _roundtrip(sec02.check_lookup, _rows, onehot).passed, onehot.__name__


def test_lookup_rejects_rows_that_read_the_whole_table():
    _rejected(sec02.check_lookup(_onehot, _onehot), "lookup_rows")


# ---------------------------------------------------------------- 1.2.3 参数占比
def _share(model):
    tables = [m for m in model.modules() if isinstance(m, (embedding.Embedding, nn.Embedding))]
    return sum(p.numel() for m in tables for p in m.parameters(recurse=False)), sum(p.numel() for p in model.parameters())


def _shares(fn):
    from seqlab import train

    models = {"本节的模型": train.load("embedding").model, "V = 50257": embedding.MaskedWordModel(50257, 32, 2)}
    return {name: (lambda n: n[0] / n[1])(fn(m)) for name, m in models.items()}


def test_share_accepts_an_unusual_right_answer():
    assert sec02.check_embedding_share(_share, _shares(_share)).passed

    def share_by_identity(model):  # 按张量的 id 去重，再看它属不属于某个 Embedding
        table_ids = {id(p) for m in model.modules() if isinstance(m, (embedding.Embedding, nn.Embedding))
                     for p in m.parameters(recurse=False)}
        unique = {id(p): p for _, p in model.named_parameters(remove_duplicate=False)}
        return (sum(p.numel() for k, p in unique.items() if k in table_ids), sum(p.numel() for p in unique.values()))

    assert sec02.check_embedding_share(share_by_identity, _shares(share_by_identity)).passed


def test_share_rejects_double_counting_tied_weights_and_missing_tables():
    def from_state_dict(model):  # state_dict 把共享的权重列两次
        n_all = sum(t.numel() for t in model.state_dict().values())
        return _share(model)[0], n_all

    _rejected(sec02.check_embedding_share(from_state_dict, None), "两次")

    def only_nn_embedding(model):
        return sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Embedding)), _share(model)[1]

    _rejected(sec02.check_embedding_share(only_nn_embedding, None), "Embedding 参数个数")
    wrong_shares = {name: share * 0.5 for name, share in _shares(_share).items()}
    _rejected(sec02.check_embedding_share(_share, wrong_shares), "比例")
    percent = {name: share * 100 for name, share in _shares(_share).items()}  # 百分数不是比例
    _rejected(sec02.check_embedding_share(_share, percent), "比例")
    rounded = {name: round(share, 3) for name, share in _shares(_share).items()}  # 四舍五入过的比例：点名
    _rejected(sec02.check_embedding_share(_share, rounded), "四舍五入")


def _untie_then_sum_per_module(model):  # 先把共享的权重拆成两份（原地改模型），再逐层相加：共享的权重数两次
    for module in model.modules():
        for name, p in list(module.named_parameters(recurse=False)):
            setattr(module, name, nn.Parameter(p.detach().clone()))
    return _share(model)[0], sum(p.numel() for m in model.modules() for p in m.parameters(recurse=False))


def test_share_rejects_double_counting_that_unties_the_model_first(monkeypatch):
    """参考答案在调用之前算好，学生拿到的是模型的深拷贝：拆开共享的权重骗不过“数了两次”的检查。"""
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    shares = _shares(_untie_then_sum_per_module)
    _rejected(sec02.check_embedding_share(_untie_then_sum_per_module, shares), "两次")
    # 评分时原地改动的模型要整个记录下来（本节的模型太大，记录作废）：同样不得分
    assert not _roundtrip(sec02.check_embedding_share, _untie_then_sum_per_module, shares).passed


def test_share_accepts_an_answer_that_changes_its_copy_of_the_model(monkeypatch):
    """检查看的只是返回值；学生改动的是检查给的拷贝，检查后面用的参考答案不受影响。"""
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")

    def count_then_zero(model):  # 数完之后把参数清零：改的是检查给的拷贝，不影响判定
        n = _share(model)
        for p in model.parameters():
            p.data.zero_()
        return n

    assert sec02.check_embedding_share(count_then_zero, _shares(_share)).passed


def test_share_accepts_a_list_and_float_counts():
    def as_list_of_floats(model):
        return [float(n) for n in _share(model)]

    assert sec02.check_embedding_share(as_list_of_floats, _shares(_share)).passed


# ---------------------------------------------------------------- 1.2.4 Embedding 表的梯度
def _grad_index_add(ids, G, V, padding_idx):
    d = G.shape[-1]
    grad = torch.zeros(V, d, dtype=G.dtype).index_add_(0, ids.reshape(-1), G.reshape(-1, d))
    if padding_idx is not None:
        grad[padding_idx] = 0
    return grad


def test_embedding_grad_accepts_unusual_right_answers():
    assert sec02.check_embedding_grad(_grad_index_add).passed

    def by_one_hot(ids, G, V, padding_idx):  # 真的造出 U，再算 UᵀG
        U = F.one_hot(ids.reshape(-1), V).to(torch.float64)
        if padding_idx is not None:
            U[:, padding_idx] = 0
        return U.T @ G.reshape(-1, G.shape[-1]).double()

    def by_python_loop(ids, G, V, padding_idx):
        grad = [[0.0] * G.shape[-1] for _ in range(V)]
        for i, g in zip(ids.reshape(-1).tolist(), G.reshape(-1, G.shape[-1]).tolist()):
            if i != padding_idx:
                grad[i] = [a + b for a, b in zip(grad[i], g)]
        return torch.tensor(grad)

    def by_index_put_accumulate(ids, G, V, padding_idx):
        keep = ids.reshape(-1) != (-1 if padding_idx is None else padding_idx)
        grad = torch.zeros(V, G.shape[-1])
        return grad.index_put_((ids.reshape(-1)[keep],), G.reshape(-1, G.shape[-1])[keep], accumulate=True)

    def by_lookup_in_identity(ids, G, V, padding_idx):  # 在单位矩阵里查表得到 U，再算 UᵀG
        U = F.embedding(ids.reshape(-1), torch.eye(V, dtype=G.dtype))
        if padding_idx is not None:
            U[:, padding_idx] = 0
        return U.T @ G.reshape(-1, G.shape[-1])

    for fn in (by_one_hot, by_python_loop, by_index_put_accumulate, by_lookup_in_identity):
        assert sec02.check_embedding_grad(fn).passed, fn.__name__


def test_embedding_grad_rejects_treating_no_padding_as_id_0():
    def pad_defaults_to_0(ids, G, V, padding_idx):  # padding_idx 为 None 时也把第 0 行清零
        grad = torch.zeros(V, G.shape[-1], dtype=G.dtype).index_add_(0, ids.reshape(-1), G.reshape(-1, G.shape[-1]))
        grad[padding_idx if padding_idx is not None else 0] = 0
        return grad

    assert not sec02.check_embedding_grad(pad_defaults_to_0).passed


def test_embedding_grad_rejects_autograd_overwriting_and_padding():
    def with_autograd(ids, G, V, padding_idx):
        emb = nn.Embedding(V, G.shape[-1], padding_idx=padding_idx)
        emb(ids).backward(G)
        return emb.weight.grad

    _rejected(sec02.check_embedding_grad(with_autograd), "inference_mode")

    def with_autograd_grad(ids, G, V, padding_idx):
        E = torch.zeros(V, G.shape[-1], requires_grad=True)
        (grad,) = torch.autograd.grad((E[ids] * G).sum(), E)
        if padding_idx is not None:
            grad[padding_idx] = 0
        return grad

    _rejected(sec02.check_embedding_grad(with_autograd_grad), "grad")

    def with_pytorch_kernel(ids, G, V, padding_idx):  # 直接调用 nn.Embedding 反传用的内核
        return torch.ops.aten.embedding_dense_backward(G, ids, V, -1 if padding_idx is None else padding_idx, False)

    _rejected(sec02.check_embedding_grad(with_pytorch_kernel), "embedding_dense_backward")

    def with_dispatcher_entry(ids, G, V, padding_idx):
        pad = -1 if padding_idx is None else padding_idx
        return torch.ops.aten.embedding_backward.default(G, ids, V, pad, False, False)

    _rejected(sec02.check_embedding_grad(with_dispatcher_entry), "embedding_backward")

    def with_grad_fn_of_embedding(ids, G, V, padding_idx):  # 借 F.embedding 的计算图节点反传
        E = torch.zeros(V, G.shape[-1], requires_grad=True)
        return F.embedding(ids, E, padding_idx=padding_idx).grad_fn(G)

    _rejected(sec02.check_embedding_grad(with_grad_fn_of_embedding), "inference_mode")

    def with_grad_fn_of_index(ids, G, V, padding_idx):  # 借 E[ids] 的计算图节点反传，不调用任何带名字的求导函数
        E = torch.zeros(V, G.shape[-1]).requires_grad_()
        out = E[ids].grad_fn(G)
        grad = (out[0] if isinstance(out, tuple) else out).clone()
        if padding_idx is not None:
            grad[padding_idx] = 0
        return grad

    _rejected(sec02.check_embedding_grad(with_grad_fn_of_index), "inference_mode")

    def overwriting(ids, G, V, padding_idx):  # 按下标赋值：重复的 ID 只留下一个位置的 G
        grad = torch.zeros(V, G.shape[-1])
        grad[ids.reshape(-1)] = G.reshape(-1, G.shape[-1])
        if padding_idx is not None:
            grad[padding_idx] = 0
        return grad

    _rejected(sec02.check_embedding_grad(overwriting), "覆盖")

    def forgets_padding(ids, G, V, padding_idx):
        return _grad_index_add(ids, G, V, None)

    _rejected(sec02.check_embedding_grad(forgets_padding), "padding")

    def rows_only(ids, G, V, padding_idx):  # 旧练习的答案：只报行号
        return sorted(set(ids.reshape(-1).tolist()) - {padding_idx})

    _rejected(sec02.check_embedding_grad(rows_only), "Tensor")

    def transposed(ids, G, V, padding_idx):
        return _grad_index_add(ids, G, V, padding_idx).T

    _rejected(sec02.check_embedding_grad(transposed), "形状")


# ---------------------------------------------------------------- 自测题里关于词表的说法
def test_quiz_claims_about_the_vocabulary_hold_for_the_checkpoint():
    """自测题 1.2 第 2 题说：「北京」「武汉」的 ID 只差 2，两者在语料里一样多，「北京」另一侧挨着的不是城市。"""
    from collections import Counter

    from seqlab import corpus, quiz, tokenize, train

    question = quiz.questions("1.2")[1]
    assert "只差 2" in question["question"] and "一样多" in question["answers"][1]["feedback"]
    vocab = embedding.checkpoint_vocab(train.load("embedding").config)
    beijing, wuhan = vocab.stoi["北京"], vocab.stoi["武汉"]
    assert wuhan - beijing == 2
    counts = Counter(t for s in corpus.book_corpus() for t in tokenize.segment(s))
    assert counts["北京"] == counts["武汉"]
    cities = {"北京", "上海", "广州", "深圳", "杭州", "南京", "武汉", "成都", "西安", "重庆", "天津"}
    assert vocab.itos[beijing - 1] not in cities



def test_lookup_traces_the_inf_probes_too():
    def branch_on_inf(E, ids):  # 正常的表上装作乘过；放了 inf 的表上照着 inf 摆出 nan
        r = E[ids]
        if all(math.isfinite(v) for v in E.flatten().tolist()):
            return (r * 1).sum(-1, keepdim=True) * 0 + r
        bad = torch.isinf(E).sum(0)
        return torch.where(bad - torch.isinf(r).long() > 0, torch.full_like(r, float("nan")), r)

    _rejected(sec02.check_lookup(_rows, branch_on_inf), "isinf")


def test_embedding_grad_rejects_other_backward_kernels_and_forward_mode_autograd():
    def via_bag_backward(ids, G, V, padding_idx):  # embedding_bag 的反传内核
        n, d = ids.numel(), G.shape[-1]
        return torch.ops.aten._embedding_bag_dense_backward(
            G.reshape(n, d), ids.reshape(-1), torch.arange(n), torch.ones(n, dtype=torch.long), torch.arange(n), V,
            False, 0, None, -1 if padding_idx is None else padding_idx)

    _rejected(sec02.check_embedding_grad(via_bag_backward), "_embedding_bag_dense_backward")

    def via_jvp(ids, G, V, padding_idx):  # 前向模式：每个基方向推一遍，再与 G 做内积
        d = G.shape[-1]
        basis = torch.eye(V * d, dtype=G.dtype).reshape(V * d, V, d)
        zeros = torch.zeros(V, d, dtype=G.dtype)
        tangents = torch.stack([torch.func.jvp(lambda E: F.embedding(ids, E), (zeros,), (t,))[1] for t in basis])
        out = (tangents * G).reshape(V * d, -1).sum(-1).reshape(V, d)
        if padding_idx is not None:
            out[padding_idx] = 0
        return out

    assert not sec02.check_embedding_grad(via_jvp).passed
