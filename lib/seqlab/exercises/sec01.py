"""第 1.1 节练习的自动检查。"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from functools import cache

import torch

from seqlab import corpus, lm
from seqlab.exercises import call, checker, expect, expect_close, expect_number, fail

_SENTENCES = [corpus.EXAMPLE_SENTENCE, "苹果公司发布了新的手机。", "他一口气把那本小说读完了", "完全没见过的字龘"]
# 比语料里最长的句子（23 个字）长得多：把前文写死成 11～22 个字的窗口，在语料的句子上会错，在这里也过不了
_LONG_SENTENCE = "他问我这篇文章读过没有，我说早就读过了，还说下个周末想再把那本小说读一遍。"


# 导入检查时（笔记本的第一个代码单元格，在读者的任何代码之前）记下语言模型类的样子：读者的函数拿到的是模型的
# 副本，可副本的类还是 seqlab.lm 里那一个；改了类的方法，检查自己的模型也跟着变，这里认得出来。
_CLASSES = {cls: dict(vars(cls)) for cls in (lm.ChainRuleLM, lm.NGramLM)}


def _expect_library_untouched() -> None:
    for cls, saved in _CLASSES.items():
        now = vars(cls)
        # copy.deepcopy 会给类添上 __slotnames__ 之类的缓存：新添的双下划线名字不算改动
        added = {key for key in now.keys() - saved.keys() if not (key.startswith("__") and key.endswith("__"))}
        if added or any(now.get(key) is not value for key, value in saved.items()):
            fail(f"你的代码改动了 seqlab.lm.{cls.__name__} 这个类（例如换掉了它的 prob），检查用的模型也被改了。"
                 "请重启内核，去掉那段代码再运行。")


@cache
def _model(order: int) -> lm.NGramLM:
    """检查自己拟合的 n-gram 模型（与 ``lm.book_model`` 同一份训练数据、同样的平滑）。
    不用 ``lm.book_model`` 缓存的那一份：笔记本会把它交给读者的函数，就地改动了它，参照值就跟着错了。"""
    train, _ = corpus.train_test_split(corpus.book_corpus())
    return lm.NGramLM(order, 0.1).fit(train)


_FULL = 0  # cases 里代表“用到整段前文的模型”


class _WholePrefixLM(lm.ChainRuleLM):
    """一个用到整段前文的模型：三元模型与一元模型的混合，混合比例由前文的**每一个**字决定。

    两个分布的混合仍是分布，所以它是一个正当的语言模型；只把前文截成固定的最后几个字，
    混合比例就变了，概率也跟着变。
    """

    def __init__(self) -> None:
        self.trigram, self.unigram = _model(3), _model(1)
        self.vocab = self.trigram.vocab

    def prob(self, token: str, context: Sequence[str]) -> float:
        mix = sum(map(ord, "".join(context))) % 11 / 20  # 0 ～ 0.5
        return (1 - mix) * self.trigram.prob(token, context) + mix * self.unigram.prob(token, context)


@cache
def _full_prefix_model() -> _WholePrefixLM:
    return _WholePrefixLM()


class _MemorisedPrefixLM(lm.ChainRuleLM):
    """一个只在「过」「完」之间选择、记住了几句话**整段**前文的模型：前文正是其中一句里到「读」为止的
    全部文字时，九成押在那句里跟着的字上；别的前文（包括截短了的）两者各半。"""

    vocab = ["过", "完"]

    def __init__(self, sentences) -> None:
        self.remembered = {s[: t + 1]: s[t + 1] for s in sentences for t in range(len(s) - 1)
                           if s[t] == "读" and s[t + 1] in "过完"}

    def prob(self, token: str, context: Sequence[str]) -> float:
        follows = self.remembered.get("".join(context))
        return 0.5 if follows is None else (0.9 if token == follows else 0.1)


class _ProbOnly:
    """只露出 ``prob(token, context)`` 的模型：练习 1.1.1 要读者自己逐位置累加，不能直接调用 ``log_prob``。"""

    __slots__ = ("prob",)

    def __init__(self, prob: Callable[[str, Sequence[str]], float]) -> None:
        self.prob = prob


def _prob_only(model: lm.NGramLM) -> _ProbOnly:
    return _ProbOnly(lambda token, context: model.prob(token, context))


def _close(got, want: float) -> bool:
    return isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=1e-6)


def _as_float(got):
    """能转换成数就转换（张量、numpy 数也算），否则原样交回，留给 ``expect_close`` 说明。"""
    try:
        return float(got)
    except (TypeError, ValueError):
        return got


@checker(
    "1.1.1",
    "用链式法则算句子的概率",
    objective="把联合概率写成逐位置条件概率的乘积，并在对数空间里求和",
    difficulty=1,
    minutes=5,
)
def check_sentence_log_prob(sentence_log_prob):
    """学生函数 ``sentence_log_prob(model, text) -> float`` 应返回 ``Σ_t ln p(x_t | x_{<t})``（不含句尾）。

    交给学生的 ``model`` 只有 ``prob`` 一个方法。三元模型之外，再用一个用到整段前文的模型
    （``_WholePrefixLM``），其中有一句 37 个字的长句：前文只取固定的最后几个字（少于 36 个）的答案过不了。
    """
    cases = [(3, text) for text in _SENTENCES] + [(_FULL, text) for text in [*_SENTENCES[:3], _LONG_SENTENCE]]
    _expect_library_untouched()
    for order, text in cases:
        model = _model(order) if order != _FULL else _full_prefix_model()
        # 参照值与各种常见错答的值都在调用之前算好；交给学生的是模型的副本，就地改动它影响不到这里
        want = model.log_prob(text)
        with_eos = model.log_prob(text, include_eos=True)
        overshoot = sum(math.log(model.prob(ch, text[: t + 1])) for t, ch in enumerate(text))
        windowed = {window: sum(math.log(model.prob(ch, text[max(0, t - window) : t])) for t, ch in enumerate(text))
                    for window in range(1, len(text) - 1)}
        got = _as_float(call(sentence_log_prob, _prob_only(copy.deepcopy(model)), text))
        _expect_library_untouched()
        if _close(got, math.exp(want)):
            fail(f"对「{text}」你返回的像是概率本身 {got:.3g}，题目要的是对数概率（请对每一项取 log 再相加）。")
        if _close(got, with_eos):
            fail(f"对「{text}」你把句尾 </s> 的概率也加进去了；题目要的对数概率不含句尾。")
        if _close(got, overshoot):
            fail(f"对「{text}」你的前文多算了一个字：第 t 个字的前文是 text[:t]，不包括它自己。")
        for base, how in [(2, "math.log2"), (10, "math.log10")]:
            if _close(got, want / math.log(base)) and not math.isclose(want, 0.0, abs_tol=1e-12):
                fail(f"对「{text}」你的结果是以 {base} 为底的对数（像是用了 {how}）；本书的对数概率一律用自然对数 math.log。")
        for window, value in windowed.items():
            if _close(got, value) and not _close(got, want):
                fail(f"对「{text}」你的前文只取了最后 {window} 个字；第 t 个字的前文是整段 text[:t]，"
                     "窗口多大由模型自己决定，不该由你截断。")
        name = f"{order} 元模型" if order != _FULL else "用到整段前文的模型"
        expect_close(got, want, f"{name}下「{text}」的对数概率")
    return ("对数概率与模型逐项相加的结果一致。长句子的概率会小到下溢，所以实践中总在对数空间里累加。"
            "这个和不含句尾，它是“这串字作为句子开头”的对数概率；要得到整句恰好到此结束的概率，还要加上 ln p(</s> | 整串)。")


def _conditional_tables(joint: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """从 3 个位置的联合表得到从左到右的三张条件表 ``p1[a]``、``p2[a, b]``、``p3[a, b, c]``。"""
    p12 = joint.sum(dim=2)
    p1 = p12.sum(dim=1)
    return p1, p12 / p1[:, None], joint / p12[:, :, None]


@checker(
    "1.1.2",
    "把从左到右的模型倒过来",
    objective="从一种分解推出另一种：先用链式法则拼回联合分布，再求边缘、相除",
    difficulty=2,
    minutes=15,
)
def check_right_to_left(right_to_left_factors):
    """学生函数 ``right_to_left_factors(p1, p2, p3, x) -> [p(x3), p(x2 | x3), p(x1 | x2, x3)]``：
    手里只有从左到右的三张条件表，没有联合表。两张不同大小（V = 4、V = 3）的表，各试几个序列。"""
    tables = [(lm.random_joint(n_positions=3, vocab_size=4, seed=11), [(0, 1, 2), (3, 3, 0), (2, 0, 1)]),
              (lm.random_joint(n_positions=3, vocab_size=3, seed=12), [(1, 2, 0), (2, 2, 2)])]
    for joint, xs in tables:
        V = joint.shape[0]
        p1, p2, p3 = _conditional_tables(joint)
        for x in xs:
            x1, x2, x3 = x
            args = [p1.clone(), p2.clone(), p3.clone()]
            got = call(right_to_left_factors, *args, x)
            expect(all(torch.equal(a, b) for a, b in zip(args, (p1, p2, p3))),
                   "你的函数改动了传入的条件概率表；请不要原地修改参数（先复制，或者只用不改动原张量的运算）。")
            try:
                n_got = len(got)
            except TypeError:
                n_got = None
            expect(n_got == 3, f"x = {x} 有 3 个位置，应返回 3 个条件概率，你返回了 {got!r}。")
            got = [expect_number(g, f"x = {x} 的因子") for g in got]
            left_to_right = [float(p1[x1]), float(p2[x1, x2]), float(p3[x1, x2, x3])]
            if all(math.isclose(g, w, rel_tol=1e-6) for g, w in zip(got, left_to_right)):
                fail(f"x = {x}：你返回的是从左到右的因子 [p(x1), p(x2 | x1), p(x3 | x1, x2)]，"
                     "题目要的是从右往左的 [p(x3), p(x2 | x3), p(x1 | x2, x3)]。")
            want = lm.chain_rule_factors(joint, x, order=[2, 1, 0])
            p23, p123 = float(joint[:, x2, x3].sum()), float(joint[x])
            if math.isclose(got[1], p23, rel_tol=1e-6) and not math.isclose(p23, want[1], rel_tol=1e-6):
                fail(f"x = {x} 的第 2 个因子像是联合概率 p(x2, x3) = {p23:.6g}；条件概率还要再除以 p(x3)。")
            if math.isclose(got[2], p123, rel_tol=1e-6) and not math.isclose(p123, want[2], rel_tol=1e-6):
                fail(f"x = {x} 的第 3 个因子像是联合概率 p(x1, x2, x3) = {p123:.6g}；条件概率还要再除以 p(x2, x3)。")
            unweighted = p3[:, :, x3]  # 条件概率本身，没有乘上 p(x1, x2)
            if any(math.isclose(got[0], float(u), rel_tol=1e-6) for u in (unweighted.sum(), unweighted.mean())):
                fail(f"x = {x}：求边缘概率时不能把条件概率直接加起来或平均，要先乘上作为条件的那些位置的概率"
                     "（也就是先拼回联合概率），再求和。")
            for k, (g, w) in enumerate(zip(got, want)):
                expect_close(g, w, f"x = {x}（V = {V}）的第 {k + 1} 个因子")
    return "从右往左的三个因子都对。别忘了题目最后的问题：算 p(x3) 要把多少项加起来？句子有 S 个位置时呢？"


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
        got = _as_float(call(perplexity_from_probs, list(probs)))
        total = -sum(math.log(p) for p in probs)
        want = math.exp(total / len(probs))
        if _close(got, 1 / want):
            fail("你的结果是困惑度的倒数：别忘了平均对数概率前面的负号。")
        if _close(got, math.exp(total)) and len(probs) > 1:
            fail("你对对数概率求了和却没有取平均：困惑度要先除以 token 数，再取指数。")
        expect_close(got, want, f"probs = {[round(p, 3) for p in probs]} 的困惑度")
    return "困惑度是“平均每一步在多少个等可能的选项里犹豫”：每步概率都是 1/4 时困惑度恰好是 4。"


def _cue_outcomes(model: lm.ChainRuleLM, sentences, *, tie: str = "", shift: int = 0, window: int = 0) -> list[bool]:
    """每一处「读过」「读完」猜没猜对：p(过 | 前文) 与 p(完 | 前文) 严格更大的那个算作猜测，相等算猜错。

    其余参数只用来认出常见的错答：``tie`` 是相等时（错误地）猜的字（``"过"``、``"完"``，``"对"`` 表示相等
    一律算对）；``shift`` 为 +1 把「过」「完」本身也放进前文，−1 漏掉了「读」；``window`` 是只截了
    「读」和它前面共 ``window`` 个字的前文。"""
    outcomes = []
    for s in sentences:
        for t in range(len(s) - 1):
            if s[t] == "读" and s[t + 1] in "过完":
                context = s[max(0, t + 1 - window): t + 1] if window else s[: t + 1 + shift]
                p = {ch: model.prob(ch, context) for ch in "过完"}
                truth, other = s[t + 1], "完" if s[t + 1] == "过" else "过"
                if p[truth] == p[other]:
                    outcomes.append(tie in ("对", truth))
                else:
                    outcomes.append(p[truth] > p[other])
    return outcomes


def _cue_accuracy(model: lm.ChainRuleLM, sentences, **wrong_way) -> float:
    """参考实现：猜对的比例（``wrong_way`` 见 ``_cue_outcomes``）。"""
    outcomes = _cue_outcomes(model, sentences, **wrong_way)
    return sum(outcomes) / len(outcomes)


@checker(
    "1.1.4",
    "「读过」还是「读完」：n-gram 能猜对几成",
    objective="实测 n-gram 的上下文窗口能利用多远的线索，并判断阶数之间的差别是信号还是噪声",
    difficulty=2,
    minutes=15,
)
def check_cue_accuracy(cue_accuracy, accuracy):
    """学生函数 ``cue_accuracy(model, sentences) -> float`` 与字典 ``accuracy = {n: 测试集上的准确率}``（n = 1…5）。"""
    _, test = corpus.train_test_split(corpus.book_corpus())
    # 最后两句里有训练集没见过的字：那里 n 元模型从没见过这个上下文，p(过) 与 p(完) 相等，应算猜错——
    # 一句的答案是「过」、一句是「完」，相等时固定猜哪个字都会错一句。五元模型与用到整段前文的模型
    # 认出只截了最后几个字当前文的答案。
    few = [s for s in test if "读过" in s or "读完" in s][:6] + ["他读完了。", "我读过，也读完了。", "他龘读完了。", "他龘读过了。"]
    models = [(f"{order} 元模型", _model(order)) for order in (2, 3, 5)] + [("记住了整段前文的模型", _MemorisedPrefixLM(few))]
    # 参照值与各种常见错答的值都在第一次调用学生的函数之前算好；学生拿到的是模型与句子列表的副本
    _expect_library_untouched()
    expected = [(name, model, _cue_accuracy(model, few),
                 [_cue_accuracy(model, few, tie=tie) for tie in ("对", "过", "完")],
                 [_cue_accuracy(model, few, window=w) for w in range(2, 12)],
                 [_cue_accuracy(model, few, shift=shift) for shift in (1, -1)]) for name, model in models]
    outcomes = {n: _cue_outcomes(_model(n), test) for n in range(1, 6)}
    for name, model, want, tie_values, cut_values, shift_values in expected:
        got = _as_float(call(cue_accuracy, copy.deepcopy(model), list(few)))
        _expect_library_untouched()
        if any(_close(got, v) for v in tie_values) and not _close(got, want):
            fail(f"{name}在 {len(few)} 个小例子上：p(过) 与 p(完) 相等时你算成了猜对，或者固定猜了其中一个字；"
                 "题目规定相等算猜错。")
        if any(_close(got, v) for v in cut_values) and not _close(got, want):
            fail(f"{name}在 {len(few)} 个小例子上，你的结果 {got:.3g} 像是前文只截了「读」前面的最后几个字；"
                 "前文应是「读」和它前面的全部文字 s[:t + 1]，截多长由模型自己决定。")
        if any(_close(got, v) for v in shift_values) and not _close(got, want):
            fail(f"{name}在 {len(few)} 个小例子上，你的结果 {got:.3g} 像是前文切错了一位："
                 "前文应是到「读」为止的 s[:t + 1]（s[t] 是「读」），既不能把「过」「完」本身放进去，也不能漏掉「读」。")
        expect_close(got, want, f"{name}在 {len(few)} 个小例子上的准确率（前文是「读」和它前面的全部文字）")
    expect(accuracy is not None, "还没有算 accuracy：写好函数后，把 accuracy 改成 n = 1～5 的字典。")
    expect(isinstance(accuracy, dict), f"accuracy 应是一个字典（键是阶数 n），你给的是 {type(accuracy).__name__}。")
    expect(set(accuracy) == {1, 2, 3, 4, 5}, f"accuracy 的键应是 1～5，你给的是 {sorted(accuracy)!r}。")
    total = len(outcomes[1])
    want_by_n = {n: sum(o) / total for n, o in outcomes.items()}
    for n in range(1, 6):
        got = expect_number(accuracy[n], f"accuracy[{n}]")
        if math.isclose(got, 1 - want_by_n[n], rel_tol=1e-9) and not math.isclose(want_by_n[n], 0.5):
            fail(f"n = {n} 时你的结果是 {got:.3f}，正好是 1 − 正确答案：猜测和答案的比较方向反了。")
        expect_close(got, want_by_n[n], f"n = {n} 时测试集上的准确率")
    hits = {n: sum(o) for n, o in outcomes.items()}
    return (f"五个准确率都对。测试集里一共 {total} 处「读过」「读完」，猜对的处数："
            + "，".join(f"n = {n}：{hits[n]}" for n in hits) + "。"
            "相邻阶数之间差出的那几处，是信号还是噪声？先逐处比较两个模型在哪里意见不同，自己下个判断，再打开答案对照。")
