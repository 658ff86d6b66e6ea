"""第 1.1 节练习的自动检查。"""

from __future__ import annotations

import math

from seqlab import corpus, lm
from seqlab.exercises import call, checker, expect, expect_close, fail

_SENTENCES = [corpus.EXAMPLE_SENTENCE, "苹果公司发布了新的手机。", "他一口气把那本小说读完了"]


def _model(order: int) -> lm.NGramLM:
    return lm.book_model(order)


@checker(
    "1.1.1",
    "用链式法则算句子的概率",
    objective="把联合概率写成逐位置条件概率的乘积，并在对数空间里求和",
    difficulty=1,
    minutes=5,
)
def check_sentence_log_prob(sentence_log_prob):
    """学生函数 ``sentence_log_prob(model, text) -> float`` 应返回 ``Σ_t log p(x_t | x_{<t})``。"""
    model = _model(3)
    for text in _SENTENCES:
        got = call(sentence_log_prob, model, text)
        want = model.log_prob(text)
        if got is not None and isinstance(got, (int, float)) and math.isclose(got, math.exp(want), rel_tol=1e-6):
            fail(f"对「{text}」你返回的像是概率本身 {got:.3g}，题目要的是对数概率（请对每一项取 log 再相加）。")
        expect_close(got, want, f"「{text}」的对数概率")
    return "对数概率与模型逐项相加的结果一致。长句子的概率会小到下溢，所以实践中总在对数空间里累加。"


@checker(
    "1.1.2",
    "换一个分解顺序",
    objective="验证链式法则对任意顺序都成立：从右往左分解同样精确",
    difficulty=2,
    minutes=10,
)
def check_right_to_left(right_to_left_factors):
    """学生函数 ``right_to_left_factors(joint, x) -> list[float]``：
    ``[p(x_n), p(x_{n-1} | x_n), …, p(x_1 | x_2, …, x_n)]``。"""
    joint = lm.random_joint(n_positions=3, vocab_size=4, seed=11)
    for x in [(0, 1, 2), (3, 3, 0), (2, 0, 1)]:
        got = call(right_to_left_factors, joint, x)
        expect(got is not None and len(got) == 3, f"x = {x} 有 3 个位置，应返回 3 个条件概率，你返回了 {got!r}。")
        want = lm.chain_rule_factors(joint, x, order=[2, 1, 0])
        for k, (g, w) in enumerate(zip(got, want)):
            expect_close(g, w, f"x = {x} 的第 {k + 1} 个因子")
        expect_close(math.prod(got), float(joint[x]), f"x = {x} 的因子乘积（应等于联合概率）")
    return "从右往左的各项乘回去也等于联合概率：链式法则只是一个恒等式，不偏爱任何方向。"


@checker(
    "1.1.3",
    "困惑度",
    objective="把困惑度理解为逐 token 平均对数概率的指数",
    difficulty=1,
    minutes=5,
)
def check_perplexity(perplexity_from_probs):
    """学生函数 ``perplexity_from_probs(probs) -> float``，``probs`` 是所有位置的条件概率。"""
    cases = [[0.5, 0.5, 0.5], [0.9, 0.1], [0.25] * 8, _model(2).conditionals(corpus.EXAMPLE_SENTENCE, include_eos=True)]
    for probs in cases:
        got = call(perplexity_from_probs, list(probs))
        want = math.exp(-sum(math.log(p) for p in probs) / len(probs))
        if got is not None and isinstance(got, (int, float)) and math.isclose(got, 1 / want, rel_tol=1e-6):
            fail("你的结果是困惑度的倒数：别忘了平均对数概率前面的负号。")
        expect_close(got, want, f"probs = {[round(p, 3) for p in probs]} 的困惑度")
    return "困惑度是“平均每一步在多少个等可能的选项里犹豫”：每步概率都是 1/4 时困惑度恰好是 4。"


@checker(
    "1.1.4",
    "二元模型为什么分不清「读过」和「读完」",
    objective="说明 n-gram 的上下文窗口决定了它能利用多远的线索",
    difficulty=2,
    minutes=10,
)
def check_bigram_blind(largest_blind_order):
    """学生给出整数 ``largest_blind_order``：在两段前文下 p(过 | 前文) 完全相同的最大阶数 n。"""
    a, b = "这本书我很多年前就读", "他一口气把那本小说读"
    blind = [n for n in (1, 2, 3, 4) if math.isclose(_model(n).prob("过", a), _model(n).prob("过", b))]
    expected = max(blind)
    if largest_blind_order is None:
        fail("还没有完成：答案仍然是 None。提示：n-gram 模型只看前 n-1 个字。")
    expect(isinstance(largest_blind_order, int), f"答案应是一个整数，你给的是 {largest_blind_order!r}。")
    expect(
        largest_blind_order == expected,
        f"你的答案是 {largest_blind_order}。想一想：两段前文的最后一个字都是「读」，倒数第二个字不同；"
        "n-gram 模型看得见前 n-1 个字。",
    )
    return (
        f"对。n ≤ {expected} 时模型只看到最后 {expected - 1} 个字「读」，两段前文对它来说一模一样；"
        "真正能区分的线索（“很多年前”“一口气”）离得更远。"
    )
