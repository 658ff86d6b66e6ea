"""第 1.6 节：Transformer 块、KV cache 解码、训练好的检查点与各项度量。"""

import math
import random

import pytest
import torch
from torch import nn

from seqlab import measure, train
from seqlab import transformer as tf
from seqlab.attention import causal_mask
from seqlab.errors import InputError, MemoryBudgetError
from seqlab.rnn import ElmanRNN
from seqlab.train import CHECKPOINT_DIR, induction


def test_sinusoidal_positions_follow_the_formula():
    PE = tf.sinusoidal_positions(50, 16)
    assert PE.shape == (50, 16)
    pos, i = 7, 3
    assert math.isclose(PE[pos, 2 * i].item(), math.sin(pos / 10000 ** (2 * i / 16)), abs_tol=1e-6)
    assert math.isclose(PE[pos, 2 * i + 1].item(), math.cos(pos / 10000 ** (2 * i / 16)), abs_tol=1e-6)
    assert torch.allclose(tf.sinusoidal_positions(5, 16, offset=7), PE[7:12])
    with pytest.raises(InputError):
        tf.sinusoidal_positions(4, 7)


def test_layer_norm_matches_torch():
    X = torch.randn(3, 5, 12) * 4 + 2
    ours, theirs = tf.LayerNorm(12), nn.LayerNorm(12)
    with torch.no_grad():
        theirs.weight.uniform_(0.5, 1.5)
        theirs.bias.uniform_(-1, 1)
        ours.gamma.copy_(theirs.weight)
        ours.beta.copy_(theirs.bias)
    assert torch.allclose(ours(X), theirs(X), atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("causal", [False, True], ids=["no-mask", "causal"])
def test_block_matches_torch_encoder_layer(norm_first, causal):
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(
        32, 4, 64, dropout=0.0, batch_first=True, norm_first=norm_first
    ).eval()
    with torch.no_grad():  # 非平凡的归一化参数，确保 γ、β 的位置也被检查到
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    block = tf.block_from_torch(layer)
    assert block.norm_first is norm_first
    X = torch.randn(3, 9, 32)
    mask = causal_mask(9) if causal else None
    with torch.no_grad():
        want = layer(X, src_mask=None if mask is None else ~mask)  # PyTorch 的布尔掩码 True 表示“禁止”
        got, alpha = block(X, mask)
    assert torch.allclose(got, want, atol=1e-5)
    assert alpha.shape == (3, 4, 9, 9)
    assert torch.allclose(alpha.sum(-1), torch.ones(3, 4, 9))
    assert sum(p.numel() for p in block.parameters()) == sum(p.numel() for p in layer.parameters())


def test_attention_and_ffn_are_permutation_equivariant_until_positions_are_added():
    torch.manual_seed(2)
    attn, ffn = tf.MultiHeadSelfAttention(16, 4).eval(), tf.PositionwiseFFN(16, 32).eval()
    X = torch.randn(1, 10, 16)
    perm = torch.randperm(10)
    with torch.no_grad():
        assert torch.allclose(attn(X[:, perm])[0], attn(X)[0][:, perm], atol=1e-5)
        assert torch.allclose(ffn(X[:, perm]), ffn(X)[:, perm], atol=1e-6)
        PE = tf.sinusoidal_positions(10, 16)
        assert not torch.allclose(attn(X[:, perm] + PE)[0], attn(X + PE)[0][:, perm], atol=1e-3)


def test_kv_cache_decoding_equals_recomputing_from_scratch():
    torch.manual_seed(3)
    model = tf.TinyDecoder(30, 32, 4, 64, 3, norm_first=False).eval()
    prompt = torch.randint(30, (2, 6))
    ids_a, logits_a = tf.generate(model, prompt, 12, use_cache=False)
    ids_b, logits_b = tf.generate(model, prompt, 12, use_cache=True)
    assert torch.equal(ids_a, ids_b)
    for a, b in zip(logits_a, logits_b):
        assert torch.allclose(a, b, atol=1e-5)
    # 分两段 Prefill 也一样：第二段的位置从缓存的长度接着数，掩码让新位置读到全部历史
    cache = tf.KVCache()
    with torch.no_grad():
        full = model(ids_a)
        first = model(ids_a[:, :7], cache)
        second = model(ids_a[:, 7:], cache)
    assert torch.allclose(torch.cat([first, second], dim=1), full, atol=1e-5)
    assert cache.length == ids_a.shape[1]
    assert cache.nbytes() == tf.kv_cache_bytes(model, ids_a.shape[1], batch=2)


def test_decoder_refuses_requests_past_the_memory_budget():
    model = tf.TinyDecoder(10, 16, 2, 32, 1).eval()
    with pytest.raises(MemoryBudgetError):
        tf.generate(model, torch.zeros(1, 1, dtype=torch.long), 100_000)
    with pytest.raises(InputError):
        measure.measure_prefill_decode(model, 0)


def test_induction_checkpoint_is_small_and_accurate_on_fresh_data():
    path = CHECKPOINT_DIR / "transformer_induction.safetensors"
    assert path.stat().st_size <= 2 * 2**20
    ckpt = train.load("transformer_induction")
    model, meta = ckpt.model, ckpt.meta
    fresh = induction.copy_task_batch(400, random.Random(12345))
    accuracy = induction.copy_accuracy(model, *fresh)
    assert accuracy >= 0.95, accuracy
    # 第二层依赖第一层搬运过来的信息：关掉第一层的注意力，复读就做不成了
    with induction.attention_knocked_out(model, 0):
        assert induction.copy_accuracy(model, *fresh) < 0.5
    with torch.no_grad():
        _, weights = model(induction.repeat_twice("苹果天雨山"), return_weights=True)
    scores = induction.head_scores(weights, 5)
    assert max(scores[(0, h)]["previous"] for h in range(2)) > 0.4
    assert min(scores[(1, h)]["induction"] for h in range(2)) > 0.8
    assert meta["steps"] > 0


def test_knocking_out_one_head_removes_exactly_its_columns_before_W_O():
    torch.manual_seed(6)
    model = tf.TinyDecoder(12, 16, 4, 32, 2).eval()
    ids = torch.randint(12, (2, 7))
    attn = model.blocks[1].attn
    seen = {}
    handle = attn.W_O.register_forward_hook(lambda m, inputs, out: seen.update(merged=inputs[0], out=out))
    with torch.no_grad():
        model(ids)
        intact = seen["merged"].clone()
        with induction.head_knocked_out(model, 1, 2):
            model(ids)
        handle.remove()
    cols = slice(2 * attn.d_k, 3 * attn.d_k)
    # 第 1 层不受影响，所以送进第 2 层 W_O 的拼接结果只有第 3 个头的那 d_k 列变成 0
    expected = intact.clone()
    expected[..., cols] = 0
    assert torch.equal(seen["merged"], expected)
    assert torch.allclose(seen["out"], nn.functional.linear(expected, attn.W_O.weight, attn.W_O.bias))
    assert not attn.W_O._forward_pre_hooks  # 离开 with 块后钩子已经摘掉
    with pytest.raises(InputError):
        with induction.head_knocked_out(model, 0, 4):
            pass


def test_prefill_and_cached_decode_do_the_same_arithmetic_recomputing_does_more():
    torch.manual_seed(4)
    model = tf.TinyDecoder(64, 32, 2, 64, 2).eval()
    r = measure.measure_prefill_decode(model, 24, repeats=3)
    assert set(r.seconds) == set(measure.MODES)
    assert all(len(r.samples[m]) == len(r.wall[m]) == 3 for m in measure.MODES)
    # 用时只显示、不断言（随机器负载起伏）；断言的是数出来的运算量
    # 带缓存的逐个解码只算下三角的分数，所以比 Prefill 略少；每步重算多出约 S/2 倍
    assert 0.8 * r.flops["prefill"] <= r.flops["decode_cache"] <= r.flops["prefill"]
    assert r.flops["decode_recompute"] > 5 * r.flops["prefill"]


def test_decode_step_flops_with_cache_grow_linearly_in_context():
    torch.manual_seed(5)
    d, d_ff, L, V = 32, 64, 2, 40
    model = tf.TinyDecoder(V, d, 2, d_ff, L).eval()
    for T in (8, 20):
        cost = measure.decode_step_cost(model, T, repeats=1)
        want = L * (8 * d * d + 4 * (T + 1) * d + 4 * d * d_ff) + 2 * d * V
        assert cost["flops_cache"] == want
        assert cost["flops_recompute"] > (T + 1) * (want - L * 4 * (T + 1) * d) * 0.99


def test_measurement_figures_build_and_carry_no_latex():
    from seqlab.figures import complexity, decoding, kv_cache, tables

    torch.manual_seed(7)
    model = tf.TinyDecoder(32, 16, 2, 32, 2).eval()
    results = [measure.measure_prefill_decode(model, S, repeats=2) for S in (4, 8)]
    timelines = {m: measure.record_timeline(model, 4, m, runs=2) for m in measure.MODES}
    costs = [measure.decode_step_cost(model, T, repeats=1) for T in (4, 8)]
    counts = {n: measure.table1_counts(n, 8) for n in (4, 8)}
    figures = [
        decoding.prefill_decode_figure(results),
        decoding.timeline_figure(timelines, 4),
        kv_cache.decode_cost_figure([4, 8], costs, 16),
        kv_cache.step_cost_figure(measure.step_costs(model, 3, 3, repeats=1)),
        kv_cache.kv_memory_figure([1, 8], [512, 4096], [512, 4096]),
        complexity.table1_figure(counts, 8),
    ]
    for fig in figures:
        assert fig.data and "$" not in fig.to_json()
    ppl = tables.perplexity_table({1: 40.0, 2: 12.5}, 6.25, "小 GPT")
    for table in (tables.prefill_decode_table(results), tables.table1_table(counts, 8, ns=(8,)), ppl):
        assert table.startswith("<table") and "$" not in table


def test_timeline_records_every_layer_call():
    model = tf.TinyDecoder(20, 16, 2, 32, 2).eval()
    prefill = measure.record_timeline(model, 6, "prefill")
    assert [(s.layer, s.first, s.last) for s in prefill] == [(0, 0, 5), (1, 0, 5)]
    cached = measure.record_timeline(model, 6, "decode_cache")
    assert [(s.first, s.last) for s in cached[::2]] == [(t, t) for t in range(6)]
    recompute = measure.record_timeline(model, 6, "decode_recompute")
    assert [(s.first, s.last) for s in recompute[::2]] == [(0, t) for t in range(6)]
    assert all(s.end >= s.start >= 0 for s in prefill + cached + recompute)
    assert all(a.end <= b.start for a, b in zip(cached, cached[1:]))  # 一个接一个，没有重叠
    with pytest.raises(InputError):
        measure.record_timeline(model, 6, "sideways")


def test_table1_counts_scale_like_the_formulas():
    d = 16
    small, large = measure.table1_counts(8, d), measure.table1_counts(16, d)
    for n, c in ((8, small), (16, large)):
        # 只数跨位置混合：Q Kᵀ 与 α V 各 2·n·n·d；循环层每步只有 h W_h（2·d·d），x W_x 是逐位置的
        assert c["self_attention"]["flops_mixing"] == 4 * n * n * d
        assert c["recurrent"]["flops_mixing"] == 2 * n * d * d
        # 整层：自注意力再加 W_Q、W_K、W_V、W_O 四个投影（各 2·n·d·d），循环层再加 x W_x
        assert c["self_attention"]["flops_layer"] == 4 * n * n * d + 8 * n * d * d
        assert c["recurrent"]["flops_layer"] == 4 * n * d * d
    assert small["self_attention"]["sequential"] == large["self_attention"]["sequential"]
    assert small["self_attention"]["path"] == large["self_attention"]["path"]
    step = large["recurrent"]["sequential"] - small["recurrent"]["sequential"]
    assert step > 0 and step % 8 == 0  # 每多一个位置，依赖链就长出固定的几个运算
    assert large["recurrent"]["path"] - small["recurrent"]["path"] == step


def test_count_flops_agrees_with_pytorchs_flop_counter():
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(6)
    model = tf.TinyDecoder(50, 32, 4, 64, 2).eval()
    ids = torch.randint(50, (2, 9))

    def prefill_then_step():
        cache = tf.KVCache()
        model(ids[:, :8], cache)
        return lambda: model(ids[:, 8:], cache)

    rnn = ElmanRNN(16, 16)
    runs = {
        "full": lambda: model(ids),
        "rnn": lambda: rnn(torch.randn(2, 7, 16)),
    }
    for name, run in runs.items():
        with torch.no_grad(), FlopCounterMode(display=False) as theirs:
            run()
        with torch.no_grad():
            assert measure.count_flops(run) == theirs.get_total_flops(), name
    with torch.no_grad():
        step = prefill_then_step()
        with FlopCounterMode(display=False) as theirs:
            step()
        ours = measure.count_flops(prefill_then_step())
    assert ours == theirs.get_total_flops()


@pytest.mark.parametrize("S", [5, 12])
def test_arithmetic_intensity_matches_the_sizes_of_the_model(S):
    V, d, h, d_ff, L = 40, 16, 2, 48, 2
    model = tf.TinyDecoder(V, d, h, d_ff, L).eval()
    per_token = L * (8 * d * d + 4 * d * d_ff) + 2 * d * V  # 投影、FFN 与输出层：每个 token 2 × 权重数
    # 权重：每层 4 个 d×d 投影 + FFN + 两个 LayerNorm，最后的 LayerNorm 与输出层；每个 float32 4 字节
    weights = 4 * (L * (4 * (d * d + d) + 2 * d * d_ff + d_ff + d + 4 * d) + 2 * d + d * V + V)
    kv = 2 * L * d * 4  # 每个位置：K 与 V × 层数 × d × 4 字节
    prefill = measure.arithmetic_intensity(model, S, "prefill")
    assert prefill.flops == S * per_token + L * 4 * S * S * d
    assert prefill.weight_bytes == weights + S * d * 4 and prefill.cache_bytes == S * kv
    decode = measure.arithmetic_intensity(model, S, "decode")
    assert decode.flops == per_token + L * 4 * (S + 1) * d
    assert decode.weight_bytes == weights + d * 4 and decode.cache_bytes == (S + 1) * kv
    assert decode.flops_per_byte < 1 < prefill.flops_per_byte
    with pytest.raises(InputError):
        measure.arithmetic_intensity(model, S, "sideways")


@pytest.mark.parametrize("norm_first", [False, True])
def test_block_from_torch_keeps_the_layers_dtype(norm_first):
    torch.manual_seed(7)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=norm_first)
    layer = layer.double().eval()
    block = tf.block_from_torch(layer)
    X = torch.randn(2, 5, 16, dtype=torch.float64)
    with torch.no_grad():
        ours = block(X)
        ours = ours[0] if isinstance(ours, tuple) else ours
        assert ours.dtype == torch.float64
        assert torch.allclose(ours, layer(X), atol=1e-12)
