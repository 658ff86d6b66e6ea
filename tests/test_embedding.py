"""第 1.2 节：Embedding 查表的两种写法、梯度只落在用到的行、上下文层，以及训练好的检查点。"""

import pytest
import torch
from torch import nn

from seqlab import corpus, train
from seqlab.embedding import (
    Embedding,
    MaskedWordModel,
    WindowContext,
    checkpoint_vocab,
    context_vectors,
    cosine,
    lookup,
    lookup_by_matmul,
    masked_accuracy,
    nearest_words,
    one_hot,
    onehot_bytes,
    rows_with_grad,
)
from seqlab.errors import InputError, MemoryBudgetError
from seqlab.measure import measure_lookup
from seqlab.train import CHECKPOINT_DIR, RECIPES, masked_words


def test_embedding_matches_torch_nn_embedding():
    torch.manual_seed(0)
    ours = Embedding(50, 8)
    theirs = nn.Embedding(50, 8)
    theirs.weight.data.copy_(ours.E.data)
    ids = torch.randint(0, 50, (4, 7))
    assert torch.equal(ours(ids), theirs(ids))
    assert ours(ids).shape == (4, 7, 8)


def test_row_lookup_equals_one_hot_times_E():
    torch.manual_seed(1)
    E = torch.randn(30, 5)
    ids = torch.tensor([[0, 29, 3], [3, 3, 7]])
    u = one_hot(ids, 30)
    assert u.shape == (2, 3, 30) and torch.equal(u.sum(-1), torch.ones(2, 3))
    assert torch.allclose(lookup(E, ids), lookup_by_matmul(E, ids))
    assert torch.allclose(lookup(E, ids)[0, 1], u[0, 1] @ E)


def test_one_hot_rejects_out_of_range_ids():
    with pytest.raises(InputError):
        one_hot(torch.tensor([5]), 5)


def test_memory_guard_refuses_a_huge_one_hot_and_says_the_estimate():
    E = torch.zeros(1000, 4)
    ids = torch.zeros(100, dtype=torch.long)
    with pytest.raises(MemoryBudgetError) as err:
        lookup_by_matmul(E, ids, budget=1000)
    assert "390.6 KiB" in str(err.value) and onehot_bytes(100, 1000) == 400_000
    with pytest.raises(MemoryBudgetError):
        measure_lookup([10**7], n_tokens=4096, d=64)


def test_measure_lookup_reports_memory_growing_linearly_in_V():
    rows = measure_lookup([100, 200, 400], n_tokens=16, d=8, repeats=1)
    assert [r.V for r in rows] == [100, 200, 400]
    # 实测的峰值等于真实张量的大小：索引只分配输出 (n, d)；one-hot 乘法还要分配 (n, V) 的 one-hot 矩阵
    ids = torch.zeros(16, dtype=torch.long)
    out = lookup(torch.zeros(400, 8), ids)
    assert all(r.index_bytes == out.nbytes for r in rows)
    assert [r.matmul_bytes for r in rows] == [one_hot(ids, v).nbytes + out.nbytes for v in (100, 200, 400)]
    assert all(r.index_seconds >= 0 and r.matmul_seconds >= 0 for r in rows)  # 用时只显示，不断言大小


def test_only_rows_of_tokens_in_the_batch_get_gradient():
    torch.manual_seed(2)
    emb = Embedding(20, 4)
    ids = torch.tensor([[3, 5, 3], [11, 0, 5]])
    (emb(ids) ** 2).sum().backward()
    assert rows_with_grad(emb.E.grad) == [0, 3, 5, 11]


def test_window_context_is_a_conv1d():
    torch.manual_seed(3)
    d, w = 6, 2
    layer = WindowContext(d, w)
    conv = nn.Conv1d(d, d, kernel_size=2 * w + 1, padding=w)
    with torch.no_grad():
        conv.weight.copy_(layer.W.permute(1, 2, 0))  # (out, in, k)：W[k][out, in]
        conv.bias.copy_(layer.b)
    X = torch.randn(3, 9, d)
    expected = torch.tanh(conv(X.transpose(1, 2)).transpose(1, 2))
    assert torch.allclose(layer(X), expected, atol=1e-6)


def test_padding_does_not_change_the_other_positions():
    torch.manual_seed(4)
    model = MaskedWordModel(30, d=8, w=2)
    ids = torch.tensor([[5, 6, 7]])
    padded = torch.tensor([[5, 6, 7, 0, 0]])
    _, H = model.hidden(ids)
    _, Hp = model.hidden(padded)
    assert torch.allclose(H, Hp[:, :3], atol=1e-6)


def _checkpoint():
    ckpt = train.load("embedding")
    return ckpt.model, checkpoint_vocab(ckpt.config)


def test_recipe_is_registered_and_checkpoint_is_small():
    assert RECIPES["embedding"] is masked_words.embedding_recipe  # 配方登记在训练层，导入它就登记
    path = CHECKPOINT_DIR / "embedding.safetensors"
    assert path.exists() and path.stat().st_size <= 2 * 2**20


def test_checkpoint_guesses_masked_words_in_freshly_generated_sentences():
    model, vocab = _checkpoint()
    train = set(corpus.book_corpus())
    fresh = [s for s in corpus.book_corpus(400, seed=31) if s not in train][:200]
    assert len(fresh) >= 50
    acc = masked_accuracy(model, vocab, fresh)
    # 只猜最常见的词（“。”）大约对 8%；训练好的模型应当远高于此
    assert acc > 0.6, acc


def test_checkpoint_neighbours_group_words_of_the_same_kind():
    model, vocab = _checkpoint()
    E = model.embed.E.detach()
    cities = set(corpus.PLACES)
    foods = set(corpus.FOODS)
    assert {w for w, _ in nearest_words(E, vocab, "北京", 3)} <= cities
    assert {w for w, _ in nearest_words(E, vocab, "香蕉", 3)} <= foods


def test_same_word_same_input_vector_different_hidden_state():
    model, vocab = _checkpoint()
    a = context_vectors(model, vocab, "苹果公司发布了新的手机")
    b = context_vectors(model, vocab, "我今天吃了一个苹果，又甜又脆")
    i, j = a.tokens.index("苹果"), b.tokens.index("苹果")
    assert cosine(a.X[i], b.X[j]) == pytest.approx(1.0, abs=1e-6)
    assert cosine(a.H[i], b.H[j]) < 0.9


def test_permuting_ids_together_with_rows_of_E_changes_nothing():
    torch.manual_seed(5)
    model = MaskedWordModel(12, d=6, w=1)
    perm = torch.cat([torch.tensor([0]), 1 + torch.randperm(11)])  # <pad> 保持为 0
    renamed = MaskedWordModel(12, d=6, w=1)
    renamed.load_state_dict(model.state_dict())
    with torch.no_grad():
        renamed.embed.E.copy_(model.embed.E[perm.argsort()])
        renamed.c.copy_(model.c[perm.argsort()])
    ids = torch.tensor([[3, 1, 7, 11, 2]])
    out = model(ids)
    out_renamed = renamed(perm[ids])
    assert torch.allclose(out, out_renamed[..., perm], atol=1e-6)
