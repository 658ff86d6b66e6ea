"""第 1.5 节：自注意力与 PyTorch 的融合实现一致；代价模型的数；「它」模型的检查点在新句子上仍然可靠。"""

import math

import pytest
import torch
import torch.nn.functional as F

from seqlab import attention, measure, train
from seqlab.corpus import winograd
from seqlab.errors import InputError, MemoryBudgetError
from seqlab.train import CHECKPOINT_DIR, pronoun


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_matches_pytorch(causal):
    g = torch.Generator().manual_seed(0)
    Q, K, V = (torch.randn(2, 3, 7, 5, generator=g, dtype=torch.float64) for _ in range(3))
    mask = attention.causal_mask(7) if causal else None
    out, weights = attention.scaled_dot_product_attention(Q, K, V, mask)
    want = F.scaled_dot_product_attention(Q, K, V, is_causal=causal)
    assert torch.allclose(out, want, atol=1e-10)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 7, dtype=torch.float64))
    if causal:
        assert torch.all(weights[..., ~mask] == 0)


def test_self_attention_module_matches_pytorch_with_boolean_mask():
    torch.manual_seed(1)
    layer = attention.SelfAttention(8, d_k=4, d_v=6)
    X = torch.randn(3, 5, 8)
    for mask in (None, attention.causal_mask(5)):
        out, weights = layer(X, mask)
        want = F.scaled_dot_product_attention(X @ layer.W_Q, X @ layer.W_K, X @ layer.W_V, attn_mask=mask)
        assert out.shape == (3, 5, 6) and weights.shape == (3, 5, 5)
        assert torch.allclose(out, want, atol=1e-6)


def test_fully_masked_rows_give_zeros_not_nan():
    g = torch.Generator().manual_seed(2)
    Q, K, V = (torch.randn(4, 3, generator=g) for _ in range(3))
    mask = attention.causal_mask(4).clone()
    mask[2] = False  # 第 3 个 Query 一个位置都不许读
    out, weights = attention.scaled_dot_product_attention(Q, K, V, mask)
    assert torch.all(torch.isfinite(out)) and torch.all(torch.isfinite(weights))
    assert torch.all(weights[2] == 0) and torch.all(out[2] == 0)
    other = [0, 1, 3]
    want = F.scaled_dot_product_attention(Q[None], K[None], V[None], attn_mask=mask)[0]
    assert torch.allclose(out[other], want[other], atol=1e-6)


def test_pair_count_and_score_memory():
    assert [attention.pair_count(S) for S in (1, 2, 4, 1000)] == [1, 4, 16, 1_000_000]
    assert [attention.pair_count(S, causal=True) for S in (1, 2, 4, 1000)] == [1, 3, 10, 500_500]
    assert attention.score_bytes(1024) == 4 * 2**20
    assert attention.score_bytes(4096, batch=2, heads=16, layers=24, dtype="bfloat16") == 24 * 2**30
    assert attention.score_bytes(8, batch=3, heads=2, layers=5, dtype="float64") == 3 * 2 * 5 * 64 * 8
    # 长度翻倍，内存变 4 倍
    assert attention.score_bytes(2048, heads=8) == 4 * attention.score_bytes(1024, heads=8)
    S = attention.max_length_within(2**29, batch=8, heads=12, layers=12, dtype="float32")
    assert (
        attention.score_bytes(S, batch=8, heads=12, layers=12)
        <= 2**29
        < attention.score_bytes(S + 1, batch=8, heads=12, layers=12)
    )


def test_memory_guard_refuses_with_the_estimate_in_chinese():
    assert attention.check_score_memory(512, heads=8) == 8 * 512 * 512 * 4
    with pytest.raises(MemoryBudgetError) as err:
        attention.check_score_memory(100_000, batch=8, heads=16, layers=24)
    assert "PiB" in str(err.value) or "TiB" in str(err.value)
    assert err.value.estimate_bytes == attention.score_bytes(100_000, batch=8, heads=16, layers=24)
    for bad in (0, -3, 2.5, "8"):
        with pytest.raises(InputError):
            attention.score_bytes(bad)
    with pytest.raises(InputError):
        attention.score_bytes(8, dtype="int3")
    with pytest.raises(MemoryBudgetError):
        measure.measure_scaling((1_000_000,))


def test_loglog_slope_recovers_powers():
    xs = [16, 32, 64, 128]
    assert math.isclose(measure.loglog_slope(xs, [3 * x**2 for x in xs]), 2.0)
    assert math.isclose(measure.loglog_slope(xs, [0.5 * x for x in xs]), 1.0)


def test_measured_scaling_attention_quadratic_rnn_linear_in_memory():
    result = measure.measure_scaling((256, 512, 1024), d_model=32, repeats=2)
    slopes = result.slopes()
    assert 1.7 < slopes["attention_memory"] < 2.1
    assert 0.9 < slopes["rnn_memory"] < 1.1
    assert all(m >= 2 * S * S * 4 for S, m in zip(result.lengths, result.attention_peak))


def test_rnn_sweeps_converge_to_nn_rnn_after_s_minus_1_rounds():
    torch.manual_seed(4)
    rnn = torch.nn.RNN(3, 5, batch_first=True)
    X = torch.randn(6, 3)
    want = rnn(X[None])[0][0]
    assert torch.allclose(attention.rnn_parallel_sweeps(rnn, X, 5), want, atol=1e-6)
    assert not torch.allclose(attention.rnn_parallel_sweeps(rnn, X, 4), want, atol=1e-6)


@pytest.mark.parametrize("S", [1, 2, 5, 9])
def test_path_length_rnn_s_minus_1_attention_1(S):
    assert attention.first_reach(attention.rnn_reach(S)) == S - 1
    assert attention.first_reach(attention.attention_reach(S)) == min(1, S - 1)
    assert attention.first_reach(attention.attention_reach(S, causal=False)) == min(1, S - 1)


def test_winograd_templates_and_splits():
    train = {n for pool in winograd.POOLS for n in winograd.noun_split(pool, "train")}
    heldout = {n for pool in winograd.POOLS for n in winograd.noun_split(pool, "heldout")}
    assert train and heldout and not train & heldout
    for e in winograd.sample(50, split="heldout", seed=3):
        assert e.noun_a in heldout and e.noun_b in heldout
        assert e.text[slice(*e.span_a)] == e.noun_a and e.text[slice(*e.span_b)] == e.noun_b
        assert e.text[e.pronoun] == "它"
    e = winograd.make_example("放不进", "奖杯", "箱子", "大")
    assert e.text == "奖杯放不进箱子，因为它太大了。" and e.referent == "奖杯"
    assert winograd.make_example("放不进", "奖杯", "箱子", "小").referent == "箱子"
    assert winograd.sample(20, seed=9) == winograd.sample(20, seed=9)


def test_checkpoint_resolves_it_on_fresh_sentences_with_heldout_nouns():
    ckpt = train.load(pronoun.WINOGRAD_CHECKPOINT)
    model, vocab, meta = ckpt.model, ckpt.config["vocab"], ckpt.meta
    assert (CHECKPOINT_DIR / "winograd_attention.safetensors").stat().st_size <= 2 * 2**20
    fresh = winograd.sample(500, split="heldout", seed=12345)
    assert pronoun.resolver_accuracy(model, fresh, vocab) >= 0.9
    assert pronoun.resolver_accuracy(model, winograd.sample(500, split="train", seed=54321), vocab) >= 0.97
    assert meta["heldout_accuracy"] >= 0.9


def test_it_row_flips_between_x_and_y():
    ckpt = train.load(pronoun.WINOGRAD_CHECKPOINT)
    model, vocab = ckpt.model, ckpt.config["vocab"]
    examples = [winograd.make_example("放不进", "奖杯", "箱子", w) for w in ("大", "小")]
    batch = attention.encode_examples(examples, vocab)
    with torch.no_grad():
        _, A2 = model(batch.ids)
    mass = attention.referent_mass(A2, batch.pronoun, batch.spans)
    assert mass[0, 0] > 0.5 > mass[0, 1]  # 太大了 → 奖杯
    assert mass[1, 1] > 0.5 > mass[1, 0]  # 太小了 → 箱子


def test_score_matrix_static_face_refuses_past_the_budget_and_stays_small():
    from seqlab import explorers
    from seqlab.errors import DEFAULT_BUDGET_BYTES, format_bytes
    from seqlab.explorers import score_matrix

    fig = explorers.get("score_matrix").static_figure()
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == [f"S = {S}" for S in score_matrix.STATIC_LENGTHS]
    S = score_matrix.STATIC_LENGTHS[-1]
    estimate = attention.score_bytes(S, **score_matrix.STATIC_CONFIG)
    assert estimate > DEFAULT_BUDGET_BYTES  # 最后一档必须超出预算
    last = steps[-1].args[1]["annotations"][0]["text"]
    assert "拒绝" in last and format_bytes(estimate) in last
    assert len(fig.to_json()) < 400_000
    assert "$" not in fig.to_json()


def test_peak_memory_counts_what_is_alive_at_the_same_time():
    """峰值内存读的是分析器公开导出的跟踪：两块 4 MB 同时活着，峰值是 8 MB；一块释放了再分配另一块，只有 4 MB。"""

    def together():
        a = torch.empty(1_000_000)
        b = torch.empty(1_000_000)
        return a, b

    def one_after_another():
        torch.empty(1_000_000)
        torch.empty(1_000_000)

    assert measure.peak_memory_bytes(together) >= 8_000_000
    assert 4_000_000 <= measure.peak_memory_bytes(one_after_another) < 8_000_000


def test_swap_test_counts_every_pair_and_agrees_with_one_sentence_at_a_time():
    torch.manual_seed(0)
    vocab = winograd.vocabulary()
    model = attention.PronounResolver(len(vocab), **pronoun.WINOGRAD_CONFIG).eval()  # 未训练的模型也行：只比较两种算法
    rows = pronoun.swap_test(model, vocab, "heldout")
    swappable = [t for t in winograd.TEMPLATES if t.pool_a != t.pool_b]
    assert [(r.template, r.word) for r in rows] == [(t.key, w) for t in swappable for w in t.words]
    for r in rows:
        t = winograd.TEMPLATE_BY_KEY[r.template]
        pairs = [(b, a) for a in winograd.noun_split(t.pool_a, "heldout") for b in winograd.noun_split(t.pool_b, "heldout")]
        assert r.n == len(pairs)
        second = 0
        for a, b in pairs:  # 一句一句地算，用切片而不是掩码求两个名词的权重之和
            e = winograd.make_example(t.key, a, b, r.word)
            with torch.no_grad():
                row = model(attention.encode_examples([e], vocab).ids)[1][0, e.pronoun]
            second += int(row[e.span_b[0] : e.span_b[1]].sum() > row[e.span_a[0] : e.span_a[1]].sum())
        assert math.isclose(r.second_slot, second / r.n, abs_tol=1e-6)
        rule_second = t.words.index(r.word) == 1
        assert math.isclose(r.follows_slot, (second if rule_second else r.n - second) / r.n, abs_tol=1e-6)
