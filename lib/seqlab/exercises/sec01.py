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


def _cue_accuracy(model: lm.NGramLM, sentences) -> float:
    """参考实现：「读过」「读完」里，p(过 | 前文) 与 p(完 | 前文) 严格更大的那个算作猜测（相等算猜错）。"""
    hits = total = 0
    for s in sentences:
        for t in range(len(s) - 1):
            if s[t] == "读" and s[t + 1] in "过完":
                p = {ch: model.prob(ch, s[: t + 1]) for ch in "过完"}
                other = "完" if s[t + 1] == "过" else "过"
                hits += p[s[t + 1]] > p[other]
                total += 1
    return hits / total


@checker(
    "1.1.4",
    "「读过」还是「读完」：n-gram 能猜对几成",
    objective="实测 n-gram 的上下文窗口能利用多远的线索：窗口太短看不见，太长又被稀疏拖累",
    difficulty=2,
    minutes=15,
)
def check_cue_accuracy(cue_accuracy, accuracy):
    """学生函数 ``cue_accuracy(model, sentences) -> float`` 与字典 ``accuracy = {n: 测试集上的准确率}``（n = 1…5）。"""
    _, test = corpus.train_test_split(corpus.book_corpus())
    few = [s for s in test if "读过" in s or "读完" in s][:6] + ["他读完了。", "我读过，也读完了。"]
    for order in (2, 3):
        got = call(cue_accuracy, _model(order), few)
        expect_close(got, _cue_accuracy(_model(order), few), f"{order} 元模型在 {len(few)} 个小例子上的准确率")
    expect(accuracy is not None, "还没有算 accuracy：写好函数后，把 accuracy 改成 n = 1～5 的字典。")
    expect(isinstance(accuracy, dict), f"accuracy 应是一个字典（键是阶数 n），你给的是 {type(accuracy).__name__}。")
    expect(set(accuracy) == {1, 2, 3, 4, 5}, f"accuracy 的键应是 1～5，你给的是 {sorted(accuracy)!r}。")
    want = {n: _cue_accuracy(_model(n), test) for n in range(1, 6)}
    for n in range(1, 6):
        if math.isclose(float(accuracy[n]), 1 - want[n], rel_tol=1e-9) and not math.isclose(want[n], 0.5):
            fail(f"n = {n} 时你的结果是 {accuracy[n]:.3f}，正好是 1 − 正确答案：猜测和答案的比较方向反了。")
        expect_close(accuracy[n], want[n], f"n = {n} 时测试集上的准确率")
    best = max(want, key=want.get)
    return (
        "准确率：" + "，".join(f"n = {n}：{want[n]:.0%}" for n in want) + "。"
        f"n ≤ 2 时模型在「读」之后看到的总是同样的东西，只能每次都猜同一个字；n = {best} 最好，"
        "靠的是紧挨着的那个字；窗口再长，四字、五字的上下文太稀疏，准确率反而下降。"
    )
