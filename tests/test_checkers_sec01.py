"""第 1.1 节每个检查函数：错的答案被拒绝（说明点中错处），少见但正确的答案被接受。"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
import torch

from checking import rejected as _rejected
from seqlab import corpus, lm
from seqlab.exercises import sec01


@pytest.fixture(autouse=True)
def _not_strict(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")  # 答错时返回 ❌ 而不是抛出


def _accepted(result) -> None:
    assert result.passed, result


# ---------------------------------------------------------------- 1.1.1
def _log_prob_right(model, text):
    return sum(math.log(model.prob(ch, text[:t])) for t, ch in enumerate(text))


def test_1_1_1_accepts_a_product_then_log_a_tensor_and_list_contexts():
    def via_product(model, text):  # 先乘再取 log：最长的句子乘出来约 1e-43，float64 还不会下溢（float32 会）
        return torch.tensor(math.prod(model.prob(ch, list(text[:t])) for t, ch in enumerate(text)),
                            dtype=torch.float64).log()

    _accepted(sec01.check_sentence_log_prob(via_product))
    _accepted(sec01.check_sentence_log_prob(lambda model, text: np.float64(_log_prob_right(model, text))))


def test_1_1_1_accepts_a_window_longer_than_any_sentence_and_reversed_accumulation():
    def huge_window(model, text):  # 窗口写死成 100 个字：比句子长，等于整段前文
        return sum(math.log(model.prob(ch, text[max(0, t - 100) : t])) for t, ch in enumerate(text))

    def backwards(model, text):  # 从最后一个字往前累加，结果相同
        return sum(math.log(model.prob(text[t], text[:t])) for t in reversed(range(len(text))))

    _accepted(sec01.check_sentence_log_prob(huge_window))
    _accepted(sec01.check_sentence_log_prob(backwards))


def test_the_whole_prefix_model_is_a_distribution_that_uses_every_character():
    model = sec01._full_prefix_model()
    for context in ["", "这本书我已经读", list("他一口气把")]:
        assert math.isclose(sum(model.distribution(context).values()), 1.0, rel_tol=1e-12)
    # 最后两个字相同、更早的字不同：三元模型给同样的概率，这个模型不给
    assert lm.book_model(3).prob("过", "这本书我已经读") == lm.book_model(3).prob("过", "那本小说我已经读")
    assert model.prob("过", "这本书我已经读") != model.prob("过", "那本小说我已经读")


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (lambda model, text: math.exp(_log_prob_right(model, text)), "概率本身"),
        (lambda model, text: _log_prob_right(model, text) + math.log(model.prob(lm.EOS, text)), "句尾"),
        (lambda model, text: sum(math.log(model.prob(ch, text[: t + 1])) for t, ch in enumerate(text)), "text[:t]"),
        # 前文只取最后两个字：三元模型上碰巧对，用到整段前文的模型上错
        (lambda model, text: sum(math.log(model.prob(ch, text[max(0, t - 2) : t])) for t, ch in enumerate(text)),
         "最后 2 个字"),
        # 写死一个更宽的窗口（3 个、6 个字）同样不行
        (lambda model, text: sum(math.log(model.prob(ch, text[max(0, t - 3) : t])) for t, ch in enumerate(text)),
         "最后 3 个字"),
        (lambda model, text: sum(math.log(model.prob(ch, text[max(0, t - 6) : t])) for t, ch in enumerate(text)),
         "最后 6 个字"),
        # 比语料里所有句子都长的窗口（11、22 个字）在语料上照样会截断前文：长句把它们认出来
        (lambda model, text: sum(math.log(model.prob(ch, text[max(0, t - 11) : t])) for t, ch in enumerate(text)),
         "最后 11 个字"),
        (lambda model, text: sum(math.log(model.prob(ch, text[max(0, t - 22) : t])) for t, ch in enumerate(text)),
         "最后 22 个字"),
        (lambda model, text: model.log_prob(text), "AttributeError"),  # 只有 prob 可用
        (lambda model, text: sum(math.log2(model.prob(ch, text[:t])) for t, ch in enumerate(text)), "math.log2"),
        (lambda model, text: sum(math.log10(model.prob(ch, text[:t])) for t, ch in enumerate(text)), "math.log10"),
    ],
    ids=["probability", "eos", "off_by_one", "last_two_only", "window_3", "window_6", "window_11", "window_22",
         "log_prob_shortcut", "log2", "log10"],
)
def test_1_1_1_rejects(answer, phrase):
    _rejected(sec01.check_sentence_log_prob(answer), phrase)


# ---------------------------------------------------------------- 1.1.2
def _joint(p1, p2, p3):
    return p1[:, None, None] * p2[:, :, None] * p3


def _r2l(p1, p2, p3, x):
    x1, x2, x3 = x
    j = _joint(p1, p2, p3)
    return [float(j[:, :, x3].sum()), float(j[:, x2, x3].sum() / j[:, :, x3].sum()),
            float(j[x1, x2, x3] / j[:, x2, x3].sum())]


def test_1_1_2_accepts_bayes_with_einsum_a_tensor_result_and_the_library():
    def bayes(p1, p2, p3, x):  # 不拼整张联合表：p(x1 | x2, x3) 用贝叶斯公式
        x1, x2, x3 = x
        w = p1 * p2[:, x2] * p3[:, x2, x3]  # w[a] = p(x1=a, x2, x3)
        p_3 = torch.einsum("a,ab,ab->", p1, p2, p3[:, :, x3])
        return torch.stack([p_3, w.sum() / p_3, w[x1] / w.sum()])

    def library(p1, p2, p3, x):
        return tuple(lm.chain_rule_factors(_joint(p1, p2, p3), x, order=[2, 1, 0]))

    _accepted(sec01.check_right_to_left(bayes))
    _accepted(sec01.check_right_to_left(library))


def _in_place(p1, p2, p3, x):
    p3.mul_(p2[:, :, None]).mul_(p1[:, None, None])  # 把 p3 原地改成联合表
    x1, x2, x3 = x
    return [float(p3[:, :, x3].sum()), float(p3[:, x2, x3].sum() / p3[:, :, x3].sum()),
            float(p3[x1, x2, x3] / p3[:, x2, x3].sum())]


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (lambda p1, p2, p3, x: [float(p1[x[0]]), float(p2[x[0], x[1]]), float(p3[x])], "从左到右"),
        (lambda p1, p2, p3, x: [_r2l(p1, p2, p3, x)[0], float(_joint(p1, p2, p3)[:, x[1], x[2]].sum()),
                                _r2l(p1, p2, p3, x)[2]], "p(x2, x3)"),
        (lambda p1, p2, p3, x: [float(p3[:, :, x[2]].sum())] + _r2l(p1, p2, p3, x)[1:], "直接加起来"),
        (_in_place, "改动了传入"),
        (lambda p1, p2, p3, x: _r2l(p1, p2, p3, x)[:2], "3 个条件概率"),
        # 写死 V = 4：第二张 V = 3 的表上出错
        (lambda p1, p2, p3, x: _r2l(p1, p2, p3, x) if p1.shape[0] == 4 else [0.25, 0.25, 0.25], "V = 3"),
    ],
    ids=["left_to_right", "joint_not_conditional", "unweighted_sum", "in_place", "two_factors", "fixed_size"],
)
def test_1_1_2_rejects(answer, phrase):
    _rejected(sec01.check_right_to_left(answer), phrase)


# ---------------------------------------------------------------- 1.1.3
def test_1_1_3_accepts_base_two_and_a_geometric_mean():
    _accepted(sec01.check_perplexity(lambda probs: 2 ** (-statistics.fmean(math.log2(p) for p in probs))))
    _accepted(sec01.check_perplexity(lambda probs: 1 / statistics.geometric_mean(probs)))
    _accepted(sec01.check_perplexity(lambda probs: torch.tensor(probs, dtype=torch.float64).log().mean().neg().exp()))


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        (lambda probs: math.exp(sum(math.log(p) for p in probs) / len(probs)), "倒数"),
        (lambda probs: math.exp(-sum(math.log(p) for p in probs)), "取平均"),
        (lambda probs: 1 / statistics.fmean(probs), "困惑度应为"),  # 概率的算术平均不是几何平均
    ],
    ids=["reciprocal", "sum_not_mean", "arithmetic_mean"],
)
def test_1_1_3_rejects(answer, phrase):
    _rejected(sec01.check_perplexity(answer), phrase)


# ---------------------------------------------------------------- 1.1.4
def _outcomes(model, sentences, ties_count=False):
    out = []
    for s in sentences:
        for t, ch in enumerate(s[:-1]):
            if ch == "读" and s[t + 1] in "过完":
                right, wrong = model.prob(s[t + 1], s[: t + 1]), model.prob("完" if s[t + 1] == "过" else "过", s[: t + 1])
                out.append(right >= wrong if ties_count else right > wrong)
    return out


def _test_sentences():
    return corpus.train_test_split(corpus.book_corpus())[1]


def test_1_1_4_accepts_a_regex_version_and_fractions_as_numpy_numbers():
    import re

    def by_regex(model, sentences):
        found = [(s, m.start()) for s in sentences for m in re.finditer("读(?=[过完])", s)]
        hits = [model.prob(s[i + 1], s[: i + 1]) > model.prob("过完".replace(s[i + 1], ""), s[: i + 1])
                for s, i in found]
        return np.mean(hits)

    accuracy = {n: np.float32(by_regex(lm.book_model(n), _test_sentences())) for n in range(5, 0, -1)}
    result = sec01.check_cue_accuracy(by_regex, accuracy)
    _accepted(result)
    assert "信号还是噪声" in result.message and "%" not in result.message  # 判断留给读者，不替他下结论


def _shifted(model, sentences, shift):
    """前文切错一位：shift = 1 时是 s[:t + 2]（把「过」「完」也放进去），-1 时是 s[:t]。"""
    found = [(s, t) for s in sentences for t in range(len(s) - 1) if s[t] == "读" and s[t + 1] in "过完"]
    hits = [model.prob(s[t + 1], s[: t + 1 + shift]) > model.prob("过完".replace(s[t + 1], ""), s[: t + 1 + shift])
            for s, t in found]
    return sum(hits) / len(hits)


def _tie_guess_guo(model, sentences):
    found = [(s, t) for s in sentences for t in range(len(s) - 1) if s[t] == "读" and s[t + 1] in "过完"]
    guesses = ["过" if model.prob("过", s[: t + 1]) >= model.prob("完", s[: t + 1]) else "完" for s, t in found]
    return sum(g == s[t + 1] for g, (s, t) in zip(guesses, found)) / len(found)


def _window(model, sentences, width):
    """前文只取「读」和它前面的 width − 1 个字。"""
    found = [(s, t) for s in sentences for t in range(len(s) - 1) if s[t] == "读" and s[t + 1] in "过完"]
    hits = [model.prob(s[t + 1], s[max(0, t + 1 - width): t + 1]) > model.prob("过完".replace(s[t + 1], ""), s[max(0, t + 1 - width): t + 1])
            for s, t in found]
    return sum(hits) / len(hits)


def _right(model, sentences):
    o = _outcomes(model, sentences)
    return sum(o) / len(o)


@pytest.mark.parametrize(
    ("answer", "accuracy", "phrase"),
    [
        (lambda m, s: sum(_outcomes(m, s, ties_count=True)) / len(_outcomes(m, s)), None, "相等"),
        (_right, "later", "还没有算 accuracy"),
        (_right, "flipped", "比较方向反了"),
        (_right, "wrong_keys", "键应是 1～5"),
        (lambda m, s: 1.0, None, "全部文字）应为"),
        (lambda m, s: _shifted(m, s, 1), None, "切错了一位"),  # 前文里放进了「过」「完」本身
        (lambda m, s: _shifted(m, s, -1), None, "切错了一位"),
        (_tie_guess_guo, None, "相等"),  # 相等时固定猜「过」
        (lambda m, s: _window(m, s, 2), None, "只截了「读」前面的最后几个字"),  # 前文只截最后几个字
        (lambda m, s: _window(m, s, 4), None, "只截了「读」前面的最后几个字"),
    ],
    ids=["ties_as_hits", "no_dict", "flipped", "keys", "constant", "peeking", "context_without_du", "tie_guess_guo",
         "last_2_chars", "last_4_chars"],
)
def test_1_1_4_rejects(answer, accuracy, phrase):
    test = _test_sentences()
    right = {n: _right(lm.book_model(n), test) for n in range(1, 6)}
    accuracy = {
        None: right, "later": None, "flipped": {n: 1 - a for n, a in right.items()},
        "wrong_keys": {n - 1: a for n, a in right.items()},
    }[accuracy]
    _rejected(sec01.check_cue_accuracy(answer, accuracy), phrase)


# ---------------------------------------------------------------- 就地改动参数
def test_changing_the_model_or_the_sentences_in_place_does_not_help_and_harms_nothing():
    before = lm.book_model(3).prob("过", "经读")

    def flatten_model(model, sentences):  # 把模型改成处处相等，再报 0：参照值若在调用之后才算，就也成了 0
        model.prob = lambda token, context: 0.5
        return 0.0

    def drop_the_tie_sentences(model, sentences):  # 删掉检查造的相等句子，再把相等算成猜对
        del sentences[6:]
        return sum(_outcomes(model, sentences, ties_count=True)) / len(_outcomes(model, sentences))

    test = _test_sentences()
    right = {n: _right(lm.book_model(n), test) for n in range(1, 6)}
    _rejected(sec01.check_cue_accuracy(flatten_model, {**right, 2: 0.0, 3: 0.0, 5: 0.0}))
    _rejected(sec01.check_cue_accuracy(drop_the_tie_sentences, right))

    def uniform_model(model, text):  # 把藏在 prob 后面的模型改掉，再按改过的模型求和
        inner = model.prob.__closure__[0].cell_contents
        inner.prob = lambda token, context: 1 / (len(context) + 2)
        return sum(math.log(1 / (t + 2)) for t in range(len(text)))

    _rejected(sec01.check_sentence_log_prob(uniform_model))
    assert lm.book_model(3).prob("过", "经读") == before  # 缓存的书中模型没有被改动


def test_the_checks_do_not_rely_on_the_cached_book_models(monkeypatch):
    """笔记本把 ``lm.book_model(n)`` 交给读者的函数：读者就地改动了它，检查的参照值也不跟着变。"""
    monkeypatch.setattr(lm.book_model(3), "prob", lambda token, context: 0.6 if token == "过" else 0.4)
    monkeypatch.setattr(lm.book_model(1), "prob", lm.book_model(3).prob)
    test = _test_sentences()
    ties_as_hits = {n: sum(_outcomes(lm.book_model(n), test, ties_count=True)) / len(_outcomes(lm.book_model(n), test))
                    for n in range(1, 6)}
    _rejected(sec01.check_cue_accuracy(lambda m, s: sum(_outcomes(m, s, ties_count=True)) / len(_outcomes(m, s)),
                                       ties_as_hits))
    _rejected(sec01.check_sentence_log_prob(
        lambda model, text: sum(math.log(model.prob(ch, text[max(0, t - 2):t])) for t, ch in enumerate(text))))


def test_patching_the_language_model_class_is_named(monkeypatch):
    """读者的函数拿到模型的副本，却改了副本的类（seqlab.lm.NGramLM）的 prob：检查认得出，不会跟着被改。"""
    original = lm.NGramLM.prob

    def ties_to_guo(model, sentences):
        monkeypatch.setattr(type(model), "prob", lambda self, t, c: original(self, t, c) * (1 + 1e-9 * (t == "过")))
        return sum(_outcomes(model, sentences, ties_count=True)) / len(_outcomes(model, sentences))

    test = _test_sentences()
    right = {n: _right(lm.book_model(n), test) for n in range(1, 6)}
    _rejected(sec01.check_cue_accuracy(ties_to_guo, right), "seqlab.lm.NGramLM")
