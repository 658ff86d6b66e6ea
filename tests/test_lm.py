"""第 1.1 节：语料、链式法则、n-gram 语言模型、困惑度、条件生成。"""

import itertools
import math

import pytest

from seqlab import corpus, lm
from seqlab.errors import InputError


def test_corpus_is_deterministic_rich_and_has_the_reading_contrast():
    a, b = corpus.book_corpus(), corpus.book_corpus.__wrapped__()
    assert a == b and len(a) >= 500 and len(set(a)) == len(a)
    text = "".join(a)
    assert text.count("读过") >= 50 and text.count("读完") >= 50
    assert "苹果公司" in text and "吃了一个苹果" in text
    train, test = corpus.train_test_split(a)
    assert not set(train) & set(test) and len(train) + len(test) == len(a)


@pytest.mark.parametrize("order", [None, [2, 1, 0], [1, 2, 0]])
def test_chain_rule_is_exact_in_any_order(order):
    joint = lm.random_joint(3, 4, seed=3)
    for x in lm.all_sequences(4, 3):
        assert math.isclose(math.prod(lm.chain_rule_factors(joint, x, order)), float(joint[x]), rel_tol=1e-12)


def test_chain_rule_factors_are_conditionals_not_the_joint():
    joint = lm.random_joint(3, 4, seed=3)
    f = lm.chain_rule_factors(joint, (0, 1, 2))
    assert math.isclose(f[0], float(joint[0].sum()))
    assert all(0 < p < 1 for p in f)
    with pytest.raises(ValueError):
        lm.chain_rule_factors(joint, (0, 1, 2), order=[0, 0, 1])


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_ngram_distributions_sum_to_one_and_log_prob_is_the_chain_rule(order):
    model = lm.book_model(order)
    for ctx in ["", "这本书我已经读", "🙂龘", "苹果"]:
        dist = model.distribution(list(ctx))
        assert math.isclose(sum(dist.values()), 1.0, rel_tol=1e-9)
        assert min(dist.values()) > 0
    text = "他一口气把那本小说读完了"
    assert math.isclose(model.log_prob(text), sum(math.log(p) for p in model.conditionals(text)))


def test_ngram_counts_match_a_hand_count():
    model = lm.NGramLM(2, k=0.5).fit(["ab", "ac", "ab"])
    # 词表：a b c </s> <unk> → |V| = 5；在 "a" 之后：b 两次、c 一次
    assert math.isclose(model.prob("b", "a"), (2 + 0.5) / (3 + 0.5 * 5))
    assert math.isclose(model.prob("z", "a"), 0.5 / (3 + 0.5 * 5))  # 没见过的字按 <unk>
    assert math.isclose(model.prob("a", ""), (3 + 0.5) / (3 + 0.5 * 5))  # 句首 <s> 之后


@pytest.mark.parametrize("order", [1, 2, 3])
def test_top_next_agrees_with_the_full_distribution(order):
    model = lm.book_model(order)
    for ctx in ["这本书我已经读", "龘", "苹果公"]:
        dist = model.distribution(list(ctx))
        top = model.top_next(ctx, 6)
        assert [round(p, 12) for _, p in top] == sorted((round(p, 12) for p in dist.values()), reverse=True)[
            :6
        ]
        assert all(math.isclose(dist[t], p) for t, p in top)


def test_reading_example_context_matters():
    uni, tri = lm.book_model(1), lm.book_model(3)
    top_tri = [c for c, _ in tri.top_next(corpus.EXAMPLE_PREFIX, 2)]
    assert set(top_tri) == {"过", "完"}
    assert "过" not in [c for c, _ in uni.top_next(corpus.EXAMPLE_PREFIX, 3)]


def test_perplexity_falls_with_context_and_uniform_model_gives_vocab_size():
    _, test = corpus.train_test_split(corpus.book_corpus())
    ppl = [lm.perplexity(lm.book_model(n), test) for n in (1, 2, 3)]
    assert ppl[0] > 5 * ppl[1] and ppl[2] < ppl[1]
    vocab_only = lm.NGramLM(1, k=1e9).fit(["ab"])  # 巨大的平滑 → 近似均匀
    assert math.isclose(lm.perplexity(vocab_only, ["ab"]), len(vocab_only.vocab), rel_tol=1e-6)
    with pytest.raises(InputError):
        lm.perplexity(lm.book_model(2), [])


def test_position_only_model_counts_positions_and_ignores_content():
    model = lm.PositionLM(k=0.5).fit(["ab", "cb", "a"])
    # 词表 a b c </s> <unk> → |V| = 5；位置 0：a 两次、c 一次；位置 1：b 两次、</s> 一次
    assert math.isclose(model.prob("a", ""), (2 + 0.5) / (3 + 0.5 * 5))
    assert math.isclose(model.prob("b", "a"), model.prob("b", "z"))  # 只看长度，不看内容
    assert math.isclose(model.prob(lm.EOS, "c"), (1 + 0.5) / (3 + 0.5 * 5))
    assert math.isclose(sum(model.distribution("龘龘龘龘").values()), 1.0)  # 没见过的位置 → 均匀
    train, test = corpus.train_test_split(corpus.book_corpus())
    position, bigram = lm.PositionLM().fit(train), lm.book_model(2)
    assert (
        lm.perplexity(bigram, test) * 5
        < lm.perplexity(position, test)
        < lm.perplexity(lm.book_model(1), test)
    )
    with pytest.raises(InputError):
        lm.PositionLM(k=0).fit(train)


def test_conditional_generation_uses_the_source_every_step():
    model = lm.DigitTranscriber(noise=0.05)
    assert model.greedy("三一四一五") == "31415"
    for t in range(4):
        dist = model.step("二七一八", "2718"[:t])
        assert math.isclose(sum(dist.values()), 1.0)
    symbols = list("2718") + [lm.EOS]
    by_steps = sum(math.log(model.step("二七一八", "2718"[:t])[s]) for t, s in enumerate(symbols))
    assert math.isclose(model.log_prob("2718", "二七一八"), by_steps)
    assert model.log_prob("2718", "二七一八") > model.log_prob("2781", "二七一八")
    with pytest.raises(InputError):
        model.greedy("二x")


def test_without_the_source_each_digit_is_a_one_in_ten_guess():
    model = lm.DigitTranscriber(noise=0.05)
    first = model.step_without_source("", 4)
    assert math.isclose(sum(first.values()), 1.0)
    assert all(math.isclose(first[d], (0.95 + 9 * 0.005) / 10) for d in "0123456789")
    assert math.isclose(model.step_without_source("2718", 4)[lm.EOS], 0.95)  # 长度已知：何时结束是确定的
    # 按定义求和消去源字：p(y_t | y_<t) = Σ_d p(x_t = d) p(y_t | y_<t, x_t = d)
    by_hand = sum(model.step("二七" + d + "八", "27")["1"] for d in lm.DIGITS) / 10
    assert math.isclose(model.step_without_source("27", 4)["1"], by_hand)
    assert model.log_prob("2718", "二七一八") > model.log_prob_without_source("2718", 4) + 8


def test_all_sequences_counts():
    assert len(list(lm.all_sequences(4, 3))) == 64
    assert list(itertools.islice(lm.all_sequences(2, 2), 2)) == [(0, 0), (0, 1)]
