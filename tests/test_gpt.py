"""第 1.6 节的小 GPT：训练、解码、逐步记录与度量，都和独立的算法比对。"""

import math
import random

import pytest
import torch

from seqlab import corpus, gpt, lm, measure, train
from seqlab import transformer as tf
from seqlab.errors import InputError
from seqlab.train import gpt_chars


@pytest.fixture(scope="module")
def ckpt():
    return train.load(gpt_chars.NAME)


@pytest.fixture(scope="module")
def vocab(ckpt):
    return gpt.vocab_of(ckpt.config)


def test_vocabulary_covers_the_corpus_and_unknown_characters_are_refused_in_chinese(vocab):
    assert vocab.itos == gpt.book_vocab().itos
    assert set("".join(corpus.book_corpus())) <= set(vocab.itos)
    assert gpt.encode_prompt("他一口气", vocab).tolist() == [[vocab.stoi[gpt.BOS]] + [vocab.stoi[c] for c in "他一口气"]]
    for bad in ("😀", "他𠀀", gpt.EOS):
        with pytest.raises(InputError, match="模型不认识"):
            gpt.encode_prompt(bad, vocab)


def test_checkpoint_is_small_and_its_size_matches_the_architecture(ckpt):
    n = sum(p.numel() for p in ckpt.model.parameters())
    c, V = ckpt.config, ckpt.config["vocab_size"]
    d, d_ff, L = c["d_model"], c["d_ff"], c["n_layers"]
    block = 4 * (d * d + d) + 2 * d * d_ff + d_ff + d + 4 * d
    assert n == V * d + L * block + 2 * d + d * V + V == ckpt.meta["parameters"]
    assert n < 300_000
    assert train.weights_path(gpt_chars.NAME).stat().st_size <= 2 * 2**20
    assert ckpt.meta["cpu_seconds"] > 0 and set(train.TOLERANCES[gpt_chars.NAME]) <= set(ckpt.meta)


def _perplexity_one_by_one(model, vocab, sentences):
    """逐句、逐位置地把前文送进模型，用 log_softmax 取出下一个 token 的对数概率：不补齐、不批处理。"""
    total, n = 0.0, 0
    with torch.no_grad():
        for s in sentences:
            ids = [vocab.stoi[gpt.BOS]] + vocab.encode(s) + [vocab.stoi[gpt.EOS]]
            for t in range(1, len(ids)):
                logp = torch.log_softmax(model(torch.tensor([ids[:t]]))[0, -1], -1)
                total -= logp[ids[t]].item()
                n += 1
    return math.exp(total / n), n


def test_heldout_perplexity_matches_a_position_by_position_count(ckpt, vocab):
    _, test = corpus.train_test_split(corpus.book_corpus())
    few = test[:6]
    want, n = _perplexity_one_by_one(ckpt.model, vocab, few)
    assert n == sum(len(s) + 1 for s in few)  # 与 lm.perplexity 同一口径：每个字再加句尾
    assert math.isclose(gpt.heldout_perplexity(ckpt.model, few, vocab), want, rel_tol=1e-4)
    assert math.isclose(gpt.heldout_perplexity(ckpt.model, test, vocab), ckpt.meta["heldout_perplexity"], rel_tol=1e-5)


def test_the_small_gpt_beats_every_ngram_order_on_held_out_sentences(ckpt):
    _, test = corpus.train_test_split(corpus.book_corpus())
    best_ngram = min(lm.perplexity(lm.book_model(n), test) for n in (1, 2, 3, 4))
    assert ckpt.meta["heldout_perplexity"] < 0.6 * best_ngram


def _brute_force_probs(logits, temperature, k):
    values = logits.tolist()
    keep = sorted(range(len(values)), key=lambda i: -values[i])[:k]
    weights = [math.exp(values[i] / temperature) if i in keep else 0.0 for i in range(len(values))]
    return [w / sum(weights) for w in weights]


@pytest.mark.parametrize("temperature,k", [(1.0, 3), (0.5, 1), (2.0, 7), (0.7, 10)])
def test_temperature_and_top_k_match_a_brute_force_distribution(temperature, k):
    logits = torch.randn(10, generator=torch.Generator().manual_seed(k))
    got = gpt.next_token_probs(logits, temperature, k)
    assert torch.allclose(got, torch.tensor(_brute_force_probs(logits, temperature, k)), atol=1e-6)
    assert int((got > 0).sum()) == k
    assert torch.allclose(gpt.next_token_probs(logits), torch.softmax(logits, -1))


def test_top_k_keeps_every_logit_tied_with_the_kth_largest():
    # 截断按“小于第 k 大的值”去掉：与第 k 大的值并列的都留下，结果与 topk 在并列时的先后无关
    logits = torch.tensor([2.0, 1.0, 3.0, 1.0, 0.0], dtype=torch.float64)
    q = gpt.next_token_probs(logits, 1.0, 3)  # 第 3 大的值是 1，两个 1 都留下：4 个不为 0
    e = [math.exp(z) for z in (2.0, 1.0, 3.0, 1.0)]
    assert q.tolist() == pytest.approx([w / sum(e) for w in e] + [0.0], rel=1e-12)


def test_inverse_cdf_gives_each_index_its_probability_and_never_a_zero_one():
    q = gpt.next_token_probs(torch.tensor([0.3, -1.0, 2.0, 0.7, 1.1, -0.2]), 0.8, 4)
    N = 10_000
    counts = [0] * len(q)
    for i in range(N):  # 均匀地铺满 [0, 1) 的 u：每个下标分到的份数就是它占的那段长度
        counts[gpt.sample_index(q, (i + 0.5) / N)] += 1
    for count, qi in zip(counts, q.tolist()):
        assert abs(count / N - qi) <= 1 / N
    # 舍入让总和略小于 1、u 又落在它之上：取最后一个概率不为 0 的下标，而不是被 top-k 去掉的最后一个
    assert gpt.sample_index(torch.tensor([0.25, 0.5, 0.0]), 0.9) == 1


def test_sampled_first_tokens_follow_the_temperature_and_top_k_distribution(ckpt, vocab):
    decoding = gpt.Decoding(sample=True, temperature=1.5, top_k=6)
    with torch.no_grad():
        logits = ckpt.model(gpt.encode_prompt("我", vocab))[0, -1]
    want = _brute_force_probs(logits, decoding.temperature, decoding.top_k)  # 独立算出的采样分布
    N = 600
    firsts = [gpt.generate_steps(ckpt.model, vocab, "我", 1, gpt.Decoding(True, 1.5, 6, seed))[0].token
              for seed in range(N)]
    for i, qi in enumerate(want):
        freq = firsts.count(vocab.itos[i]) / N
        assert abs(freq - qi) <= 4 * math.sqrt(qi * (1 - qi) / N) + 1 / N, (vocab.itos[i], freq, qi)


@pytest.mark.parametrize("bad", [dict(temperature=0.0), dict(temperature=math.nan), dict(temperature=-1.0),
                                 dict(top_k=0), dict(top_k=11), dict(top_k=2.5)])
def test_bad_decoding_settings_are_refused_in_chinese(bad):
    with pytest.raises(InputError, match="温度|top-k"):
        gpt.next_token_probs(torch.zeros(10), bad.get("temperature", 1.0), bad.get("top_k"))


def test_greedy_decoding_equals_the_recomputing_reference_and_reads_the_cache_as_recorded(ckpt, vocab):
    prompt = "他一口气把"
    steps = gpt.generate_steps(ckpt.model, vocab, prompt, 30)
    ids = gpt.encode_prompt(prompt, vocab)
    reference, _ = tf.generate(ckpt.model, ids, len(steps), use_cache=False)
    assert [s.token for s in steps] == vocab.decode(reference[0, ids.shape[1]:].tolist())
    assert steps[-1].token == gpt.EOS  # 贪心生成写完一句就停
    P = ids.shape[1]
    assert (steps[0].cached, steps[0].computed) == (0, P)
    for k, s in enumerate(steps[1:], start=1):
        assert (s.cached, s.computed) == (P + k - 1, 1)
    # 每一步记下的注意力，等于把整段上下文从头算一遍（不用缓存）时最后一行的权重
    with torch.no_grad():
        for s in steps[::4]:
            context = torch.tensor([vocab.encode(s.context)])
            _, weights = ckpt.model(context, return_weights=True)
            for layer, alpha in enumerate(weights):
                assert torch.allclose(torch.tensor(s.attention[layer]), alpha[0, :, -1], atol=1e-5)
            p = torch.softmax(ckpt.model(context)[0, -1], -1)
            assert math.isclose(s.chosen_prob, p.max().item(), rel_tol=1e-5)


def test_sampling_uses_its_own_generator_stays_in_the_top_k_and_is_reproducible(ckpt, vocab):
    torch.manual_seed(5)
    random.seed(5)
    expected = (torch.rand(3), random.random())
    torch.manual_seed(5)
    random.seed(5)
    texts = {}
    for seed in range(12):
        decoding = gpt.Decoding(sample=True, temperature=1.5, top_k=2, seed=seed)
        steps = gpt.generate_steps(ckpt.model, vocab, "苹果", 12, decoding)
        for s in steps:
            assert s.token in [t for t, _ in s.probs[:2]], "top-k = 2 时只能选前两名"
        texts[seed] = "".join(s.token for s in steps)
        assert texts[seed] == "".join(s.token for s in gpt.generate_steps(ckpt.model, vocab, "苹果", 12, decoding))
    assert torch.equal(torch.rand(3), expected[0]) and random.random() == expected[1], "采样改动了全局随机数"
    assert len(set(texts.values())) > 3
    greedy = gpt.generate_text(ckpt.model, vocab, "苹果", 12)
    assert all(gpt.generate_text(ckpt.model, vocab, "苹果", 12, gpt.Decoding(True, 1.0, 1, s)) == greedy
               for s in range(3)), "top-k = 1 的采样就是贪心"


def test_step_costs_match_hand_counts_and_the_cache_formula_matches_real_tensors(ckpt):
    model, c = ckpt.model, ckpt.config
    d, d_ff, L, V = c["d_model"], c["d_ff"], c["n_layers"], c["vocab_size"]
    per_token = L * (8 * d * d + 4 * d * d_ff) + 2 * d * V
    P = 6
    costs = measure.step_costs(model, P, 5, repeats=1)
    assert costs[0].cache.flops == P * per_token + L * 4 * P * P * d  # Prefill：S 个位置，外加 QKᵀ 与 AV
    for k, cost in enumerate(costs[1:], start=1):
        T = P + k - 1
        assert cost.T == T
        assert cost.cache.flops == per_token + L * 4 * (T + 1) * d
        assert cost.recompute.flops == (T + 1) * per_token + L * 4 * (T + 1) ** 2 * d
        assert cost.cache.cache_bytes == (T + 1) * 2 * L * d * 4
        assert cost.seconds_cache > 0 and cost.seconds_recompute > 0  # 用时只显示，不比大小
    for T in (1, 7, 30, 64):
        assert measure.cache_tensor_bytes(model, T) == tf.kv_cache_bytes(model, T) == 2 * L * T * d * 4


def test_generation_refuses_too_long_a_context(ckpt, vocab):
    with pytest.raises(InputError, match="超过了模型能处理"):
        gpt.generate_steps(ckpt.model, vocab, "他" * 50, 30)
    with pytest.raises(InputError, match="正整数"):
        gpt.generate_steps(ckpt.model, vocab, "他", 0)


def test_recipe_is_bit_for_bit_reproducible_and_leaves_the_global_rng_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(train, "CHECKPOINT_DIR", tmp_path)  # 短训练写进临时目录，不碰随书的检查点
    random.seed(3)
    torch.manual_seed(3)
    expected = (random.random(), torch.rand(2))
    random.seed(3)
    torch.manual_seed(3)
    runs = []
    for _ in range(2):
        gpt_chars.train_gpt(steps=15)
        runs.append(train.read(gpt_chars.NAME))
    assert random.random() == expected[0] and torch.equal(torch.rand(2), expected[1]), "配方改动了全局随机数"
    assert runs[0]["state_dict"].keys() == runs[1]["state_dict"].keys()
    assert all(torch.equal(runs[0]["state_dict"][k], v) for k, v in runs[1]["state_dict"].items())
    assert runs[0]["meta"]["heldout_perplexity"] == runs[1]["meta"]["heldout_perplexity"]


def test_the_template_check_accepts_every_corpus_sentence_and_nothing_else():
    assert all(gpt.fits_a_template(s) for s in corpus.book_corpus())
    for bad in ("苹果公司在北京开了一家新店", "苹果公司在火星开了一家新店。", "我喜欢吃苹果，每天早上吃一个。我", ""):
        assert not gpt.fits_a_template(bad)
