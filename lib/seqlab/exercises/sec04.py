"""第 1.4 节练习的自动检查：加性打分、归一化与上下文、均匀权重、双线性打分与参数量。"""

from __future__ import annotations

import copy
import random

import torch
from torch import nn

from seqlab.corpus import translation as task
from seqlab.exercises import (
    Unfinished,
    call,
    call_tracing_torch,
    checker,
    entry_points_watched,
    expect,
    expect_number,
    expect_tensor,
    fail,
    op_name,
)

# 练习 1.4.2 要求自己写 softmax：名字里带这些字样的运算都算“调用了现成的 softmax”（torch.softmax、F.softmax、
# 张量的 .softmax、log_softmax、special_softmax、softmin、torch.ops.aten.softmax.int、aten._softmax……）。
# 内含 softmax 的注意力函数（F.scaled_dot_product_attention、F.multi_head_attention_forward 及其 aten 版本）也算。
# F.cross_entropy 在一次调用里先做 log_softmax，exp(-交叉熵) 就是现成的 softmax 权重，也算。
SOFTMAX_WORDS = ("softmax", "softmin", "scaled_dot_product", "multi_head_attention", "cross_entropy")
# 练习 1.4.2 的 softmax 总得算指数：一次也没有调用下面这些运算，说明运算是在记录之外算的（例如关掉了 PyTorch 的分派模式）。
# 这只是一道粗防线：进程内的记录防不住有意关掉分派模式的写法。
EXP_WORDS = ("exp", "exp_", "exp2", "exp2_", "expm1", "pow", "pow_", "__pow__", "__rpow__", "float_power", "sigmoid",
             "special_exp2", "special_expm1", "special_expit", "expit")
# 练习 1.4.1 的公式里有 tanh：同理，一次也没有调用 tanh（或能写出它的 sigmoid、exp），就是在记录之外算的。
TANH_WORDS = ("tanh", "tanh_", "sigmoid", "exp", "expm1", "special_expm1", "special_expit", "expit")
# 练习 1.4.4 要求推导参数个数：建出模块或张量再数元素，就不是推导了。
PARAM_BUILDING = ("empty", "zeros", "ones", "full", "rand", "randn", "uniform_", "normal_", "numel", "nelement")
LOOP_S = 48  # 练习 1.4.1 检查“没有关于 j 的循环”时用的源句长度
# 练习 1.4.1：把张量变成 NumPy 数组或 Python 数字的运算。离开 PyTorch 以后的循环，运算计数看不见。
LEAVING_TORCH = ("numpy", "tolist", "item", "__float__", "__int__", "__index__", "__array__")


def _shape(x: torch.Tensor, shape: tuple[int, ...], what: str) -> None:
    expect(tuple(x.shape) == shape, f"{what} 的形状应为 {shape}，你的是 {tuple(x.shape)}。")


def _close(got: torch.Tensor, want: torch.Tensor, what: str, hint: str, tol: float = 1e-5) -> None:
    if not torch.isfinite(got).all():
        fail(f"「{what}」里出现了 NaN 或无穷大。{hint}")
    err = (got.double() - want.double()).abs().max().item()
    expect(err <= tol, f"「{what}」与参考值最多差 {err:.3g}（允许 {tol:g}）。{hint}")


def _random_attention(seed: int, d_s: int = 5, d_hh: int = 6, d_a: int = 4, S: int = 7):
    from seqlab.seq2seq import AdditiveAttention

    torch.manual_seed(seed)
    attn = AdditiveAttention(d_s, d_hh, d_a)
    return attn, torch.randn(d_s), torch.randn(S, d_hh)


def _own_scores(additive_scores, s_prev, H, W_s, W_h, v_a):
    """调用学生的 ``additive_scores``：不许调用库里的 AdditiveAttention，不许离开 PyTorch；返回 ``(e, trace)``。
    交给学生的都是副本：参照值由调用方另行算好，学生就地改动参数（例如把 v_a 清零）也影响不到它，更改不了训练好的模型。"""
    H = H.detach().clone().requires_grad_(True)  # 打分要能对 H 求导：训练时梯度要穿过它
    s_prev, W_s, W_h, v_a = (x.detach().clone() for x in (s_prev, W_s, W_h, v_a))
    from seqlab.seq2seq import AdditiveAttention

    library = [AdditiveAttention.__dict__[name] for name in ("forward", "keys", "scores", "weights")]
    with entry_points_watched(library):
        out, trace = call_tracing_torch(additive_scores, s_prev, H, W_s, W_h, v_a)
    if trace.used("library_entry_point"):
        fail("你的函数调用了库里的 AdditiveAttention（它的 scores、keys、forward 或 weights）。"
             "这道题要你按公式自己写：W_s @ s_prev、H @ W_h.T、tanh、再与 v_a 做内积。")
    left = sorted({op_name(n) for n in trace.used(*LEAVING_TORCH)})
    if left:
        fail(f"你的函数把张量转成了 NumPy 数组或 Python 数字（{'、'.join(left)}）。"
             "这样算出的打分不能对输入求导，运算计数也看不见那里的循环；请全程用 PyTorch 的张量运算。")
    if not trace.used(*TANH_WORDS):
        fail("检查没有看到你的函数调用 tanh：公式 v_aᵀ tanh(W_s s_prev + W_h h_j) 里的 tanh 要用 PyTorch 的张量运算来算。")
    e = expect_tensor(out, "e")
    if e.grad_fn is None:
        fail("你返回的打分和输入 H 之间没有计算图（e.grad_fn 是 None）：也许是在 torch.no_grad() 里算的，"
             "或者用 torch.tensor(...) 把数字重新装成了张量。训练时梯度要穿过打分，请直接返回张量运算的结果。")
    return e.detach(), trace


@checker(
    "1.4.1",
    "按公式写出加性打分",
    objective=r"把 $e_{tj}=v_a^\top\tanh(W_ss_{t-1}+W_hh_j)$ 逐项翻译成张量运算",
    difficulty=1,
    minutes=10,
)
def check_additive_scores(additive_scores):
    from seqlab import train

    hint = "提示：先算 W_s @ s_prev（一个向量）和 H @ W_h.T（每行是一个 W_h h_j），相加后取 tanh，再与 v_a 做内积。"
    counts = {}  # 源句长度 → 你的函数调用的张量运算次数
    for seed, S in ((0, 7), (1, LOOP_S)):
        attn, s_prev, H = _random_attention(seed, S=S)
        with torch.no_grad():  # 参照值在调用学生的函数之前算好
            want = attn.scores(s_prev[None], H[None])[0]
        e, trace = _own_scores(additive_scores, s_prev, H, attn.W_s, attn.W_h, attn.v_a)
        _shape(e, (S,), "e")
        _close(e, want, "打分 e", hint)
        counts[S] = trace.count
        if S == LOOP_S and trace.count >= S:
            fail(
                f"打分是对的，但 S = {S} 时你的函数调用了 {trace.count} 次张量运算——运算次数随 S 增长，"
                "说明还在逐个源位置循环。题目要求用矩阵运算一次算出所有位置：H @ W_h.T 一次就给出每个 W_h h_j。"
            )
    model = train.load("seq2seq_attention").model
    a = model.attention
    with torch.no_grad():
        H = model.encoder(torch.tensor([task.encode_source(list(task.EXAMPLES[0]))]))[0]
        s_prev = torch.randn(a.W_s.shape[1], generator=torch.Generator().manual_seed(2))
        want = a.scores(s_prev[None], H[None])[0]
    e, trace = _own_scores(additive_scores, s_prev, H, a.W_s, a.W_h, a.v_a)
    _shape(e, (H.shape[0],), "e")
    _close(e, want, "训练好的模型上的打分 e", hint)
    counts[H.shape[0]] = trace.count
    if len(set(counts.values())) > 1:
        report = "，".join(f"S = {S} 时 {n} 次" for S, n in sorted(counts.items()))
        fail(
            f"打分是对的，但你的函数调用的张量运算次数随源句长度变化（{report}）——也许是把源位置分成几块再循环。"
            "题目要求用矩阵运算一次算出所有位置：H @ W_h.T 一次就给出每个 W_h h_j。"
        )
    return (
        f"与库里的 AdditiveAttention.scores 一致（两组随机权重与训练好的权重都试过）；S = {'、'.join(map(str, sorted(counts)))} "
        f"时都只用了 {counts[LOOP_S]} 次张量运算，与句子长短无关；没有调用库，也没有离开 PyTorch。"
    )


@checker(
    "1.4.2",
    "权重归一化，拼出 c_t",
    objective=r"用数值稳定的 softmax 得到和为 1 的 $\alpha_{tj}$，并算出 $c_t=\sum_j\alpha_{tj}h_j$",
    difficulty=2,
    minutes=12,
)
def check_context(context):
    attn, s_prev, H = _random_attention(3)
    e = attn.scores(s_prev[None], H[None])[0].detach()
    # 最后一组打分彼此相差上千：减去最小值、平均值或中位数之后，最大的那一项仍然远超 exp 的上限（float64 也只到 e^709）；
    # 最大项领先第二名 20，所以用 logsumexp 写的正确答案在 float32 下也算得准
    spread = torch.tensor([-2000.0, -5.0, 0.0, 3.0, 1500.0, 1480.0, 1000.0])
    # 再一组：最大项领先第二名上千。减去第二大的打分，最大项仍是 exp(998)，float64 也会溢出；减去最大值则恰好是 exp(0)
    leader = torch.tensor([0.0, 1.0, 2.0, 1000.0, -3.0, 0.5, 1.5])
    cases = [  # (说明, 交给学生的打分, 参照用的打分：softmax 与整体平移无关)
        ("随机打分", e, e),
        ("很大的打分（e + 1000）", e + 1000.0, e),
        ("很小的打分（e - 1000）", e - 1000.0, e),
        ("彼此相差上千的打分", spread, spread),
        ("最大的打分遥遥领先", leader, leader),
    ]
    for what, scores, ref in cases:
        # 参照值在调用之前算好；交给学生的是副本：就地改动 e 或 H（例如把 H 清零）既影响不到参照，也不会被误判
        want_alpha = torch.softmax(ref, dim=-1)
        want_c = want_alpha @ H
        out, trace = call_tracing_torch(context, scores.clone(), H.clone())
        if not (isinstance(out, tuple) and len(out) == 2):
            fail("context 应返回一个二元组 (alpha, c)。")
        used = sorted({op_name(n) for n in trace.calls if any(w in op_name(n).lower() for w in SOFTMAX_WORDS)})
        if used:
            fail(f"你的函数调用了现成的 softmax、内含 softmax 的注意力函数或交叉熵（{'、'.join(used)}）。"
                 "这道题要你自己写：exp，再除以总和——以及怎样让它不溢出。")
        if not trace.used(*EXP_WORDS):
            fail("检查没有看到你的函数调用 exp：softmax 的分子是 exp(e_tj)，请用 PyTorch 的张量运算来算。")
        alpha, c = expect_tensor(out[0], "alpha"), expect_tensor(out[1], "c")
        _shape(alpha, (H.shape[0],), "alpha")
        _shape(c, (H.shape[1],), "c")
        hint = ("提示：exp 之前减去的常数要让最大的那一项变成 exp(0)——减去最小值、平均值或第二大的打分，最大项照样会溢出。"
                if what in ("彼此相差上千的打分", "最大的打分遥遥领先")
                else "提示：exp 之前先减去最大的打分，结果不变，却不会溢出。" if "1000" in what else "")
        if not torch.isfinite(alpha).all():
            fail(f"{what}：alpha 里出现了 NaN 或无穷大。{hint}")
        expect(bool((alpha >= 0).all()), f"{what}：权重不能是负数。")
        total = alpha.sum().item()
        expect(abs(total - 1) < 1e-5, f"{what}：权重之和应为 1，你的是 {total:.6f}。")
        _close(alpha, want_alpha, f"{what}：alpha", hint or "提示：α_tj = exp(e_tj) / Σ_r exp(e_tr)。")
        _close(c, want_c, f"{what}：c", "提示：c 是 H 各行按 alpha 加权的和。")
    return "没有调用现成的 softmax；权重非负、和为 1，打分整体加上 ±1000、彼此相差上千、最大项遥遥领先都不溢出；c_t 正确。"


# 练习 1.4.3 的说法：哪些是对的，错的又错在哪里
UNIFORM_TRUE = {"B", "D"}
UNIFORM_WHY_NOT = {
    "A": "A 不对：W_s、W_h、v_a 一个都没少，只是它们算出的打分不再起作用。",
    "C": "C 不对：c_t 是所有 h_j 的平均，仍然带着源句的信息，只是每一步都一样。",
    "E": "E 不对：softmax 权重同样让每个 h_j 都参与（权重都大于 0）；差别不在“读了几个”，而在“每一步能不能读得不一样”。",
}


WHY_SEPARATORS = " ,，、;；/.。和与及"  # why 里字母之间可以用的分隔：空格、标点，或“和”“与”“及”


def _letters(why) -> set[str] | None:
    """把 ``"BD"``、``"b, d"``、``["B", "D"]``、``{"D", "B"}`` 之类的写法都变成字母集合；看不懂时返回 ``None``。"""
    if isinstance(why, str):
        items = [ch for ch in why.upper() if ch not in WHY_SEPARATORS]
    elif isinstance(why, (list, tuple, set, frozenset)) and all(isinstance(x, str) for x in why):
        items = [x.strip().upper() for x in why]
    else:
        return None
    if not items or any(x not in "ABCDE" or len(x) != 1 for x in items):
        return None
    return set(items)


@checker(
    "1.4.3",
    "把 softmax 换成均匀权重",
    objective="用一次替换实验，判断注意力模型的收益究竟从何而来",
    difficulty=2,
    minutes=15,
)
def check_uniform(uniform_weights, why):
    from seqlab import train
    from seqlab.seq2seq import accuracy_by_length

    g = torch.Generator().manual_seed(4)
    for B, S in ((3, 5), (2, 9)):
        e = torch.randn(B, S, generator=g)
        alpha = expect_tensor(call(uniform_weights, e.clone()), "alpha")  # 副本：参照 1/S 本就与 e 无关，这里只为两次调用互不影响
        _shape(alpha, (B, S), "alpha")
        _close(alpha, torch.full((B, S), 1 / S), f"均匀权重（B = {B}，S = {S}）", "提示：S 个位置，每个位置的权重都是 1/S。")
        alpha2 = expect_tensor(call(uniform_weights, e * 10 + 3), "alpha")
        _close(alpha2, torch.full((B, S), 1 / S), "换一组打分后的权重", "均匀权重不应该依赖打分。")
    if why is None:
        raise Unfinished("均匀权重写好了；还差 why：把你认为正确的说法的字母写进去。")
    chosen = _letters(why)
    expect(
        chosen is not None,
        f"why 应该是由 A—E 组成的字符串（例如 \"AE\"，字母之间也可以用空格、逗号、顿号或“和”隔开），你给的是 {why!r}。",
    )
    model = train.load("seq2seq_attention").model
    uniform = copy.deepcopy(model)

    def checked_uniform(e):  # 装进模型的是这个：模型每一步给出的权重也都要是 1/S
        alpha = expect_tensor(call(uniform_weights, e), "alpha")
        _shape(alpha, tuple(e.shape), "模型里 alpha")
        expect(alpha.dtype == e.dtype, f"模型里的打分 e 是 {e.dtype}，你返回的权重是 {alpha.dtype}，模型接下来没法用它和 H 相乘。"
               "请返回与 e 相同的 dtype（例如用 torch.full_like）。")
        _close(alpha, torch.full(tuple(e.shape), 1 / e.shape[-1]), f"模型里的均匀权重（B = {e.shape[0]}，S = {e.shape[-1]}）",
               "提示：每一行都应该是 1/S，不论 batch 多大。")
        return alpha

    uniform.attention.weights = checked_uniform
    data = [task.make_batch(n, 40, random.Random(n)) for n in (5, 12, 24)]
    soft, flat = accuracy_by_length(model, data), accuracy_by_length(uniform, data)
    report = "；".join(f"长度 {n}：{soft[n]:.2f} → {flat[n]:.2f}" for n in soft)
    assert chosen is not None
    wrong = sorted(chosen - UNIFORM_TRUE)
    if wrong:
        fail(f"均匀权重写对了（准确率 softmax → 均匀：{report}），但 why 里有错误的说法。{UNIFORM_WHY_NOT[wrong[0]]}")
    if chosen != UNIFORM_TRUE:
        fail(
            f"均匀权重写对了（准确率 softmax → 均匀：{report}）。你选的都对，但还漏了一个正确的说法："
            "想一想均匀权重下 c_t 对每个 t 是否相同，以及重新训练能不能改变这一点。"
        )
    return f"均匀权重下 c_t = 所有 h_j 的平均，对每个 t 都相同——又变回了一个固定向量。{report}。"


def _real_counts(d_s: int, d_hh: int, d_a: int) -> tuple[int, int]:
    """参照：数真实模块里的参数——(双线性打分, 加性打分)。"""
    from seqlab.seq2seq import AdditiveAttention

    bilinear = sum(p.numel() for p in nn.Bilinear(d_s, d_hh, 1, bias=False).parameters())
    return bilinear, sum(p.numel() for p in AdditiveAttention(d_s, d_hh, d_a).parameters())


def _derived(fn, what: str, *args):
    """调用学生推导出的公式；它要是先建出模块或张量再数元素，就不算推导。"""
    out, trace = call_tracing_torch(fn, *args)
    built = sorted({op_name(n) for n in trace.calls if op_name(n) in PARAM_BUILDING or op_name(n).endswith("_like")})
    if built:
        fail(
            f"{what} 调用了 {'、'.join(built)}：看起来是建出了模块或张量再数它的元素。"
            "这一问要你从形状推导出公式，只用整数运算就能算出来。"
        )
    return out


@checker(
    "1.4.4",
    "双线性打分与参数量",
    objective=r"写出双线性打分 $e_{tj}=s_{t-1}^\top W_ah_j$，推导它与加性打分的参数个数，并求出加性打分反而更省参数的条件",
    difficulty=2,
    minutes=10,
)
def check_bilinear_scores(bilinear_scores, score_params, cheaper_d_a):
    g = torch.Generator().manual_seed(5)
    for d_s, d_hh, S in ((4, 6, 9), (7, 3, 5)):
        s_prev, H = torch.randn(d_s, generator=g), torch.randn(S, d_hh, generator=g)
        W_a = torch.randn(d_s, d_hh, generator=g)
        # 参照：PyTorch 的双线性函数 x1ᵀ A x2，与公式的写法无关；在调用之前算好，交给学生的是副本，就地改动参数也影响不到它
        want = nn.functional.bilinear(s_prev.expand(S, d_s), H, W_a[None])[:, 0]
        e = expect_tensor(call(bilinear_scores, s_prev.clone(), H.clone(), W_a.clone()), "e")
        _shape(e, (S,), f"d_s = {d_s}、2·d_h = {d_hh} 时 e")
        _close(e, want, "双线性打分 e", "提示：e_tj = s_{t-1}ᵀ W_a h_j；对所有 j 一起算，就是 H 的每一行与 s_prevᵀ W_a 做内积。")

    for d_s, d_hh, d_a in ((64, 128, 64), (5, 6, 4), (3, 10, 50), (100, 100, 5)):
        out = _derived(score_params, "score_params", d_s, d_hh, d_a)
        expect(
            isinstance(out, (tuple, list)) and len(out) == 2,
            f"score_params 应返回二元组（双线性打分的参数个数，加性打分的参数个数），你返回了 {type(out).__name__}。",
        )
        got_bi = expect_number(out[0], "双线性打分的参数个数")
        got_add = expect_number(out[1], "加性打分的参数个数")
        real_bi, real_add = _real_counts(d_s, d_hh, d_a)
        dims = f"d_s = {d_s}、2·d_h = {d_hh}、d_a = {d_a}"
        expect(got_bi == real_bi, f"{dims} 时，双线性打分的参数应有 {real_bi} 个，你算的是 {got_bi:g}。提示：只有一个矩阵 W_a，它的形状是什么？")
        expect(
            got_add == real_add,
            f"{dims} 时，加性打分的参数应有 {real_add} 个，你算的是 {got_add:g}。提示：W_s、W_h、v_a 三样都要数。",
        )

    if cheaper_d_a is None:
        raise Unfinished("打分和参数个数都对了；还差 cheaper_d_a：加性打分的参数严格少于双线性打分时，d_a 最大能取多少？")
    found = {}
    # (3, 8)：d_a = 2 时两者恰好相等，不算“更少”；(2, 3)：d_a = 1 时已经相等，没有合适的 d_a，应返回 0
    for d_s, d_hh in ((64, 128), (3, 8), (20, 20), (100, 5), (2, 3)):
        got = expect_number(_derived(cheaper_d_a, "cheaper_d_a", d_s, d_hh), "cheaper_d_a 的返回值")
        want = 0  # 参照：从 d_a = 1 起逐个建出真实模块，数到加性打分不再更少为止
        while _real_counts(d_s, d_hh, want + 1)[1] < _real_counts(d_s, d_hh, want + 1)[0]:
            want += 1
        found[(d_s, d_hh)] = want
        expect(
            got == want,
            f"d_s = {d_s}、2·d_h = {d_hh} 时，加性打分的参数严格少于双线性打分的最大 d_a 是 {want}，你给的是 {got:g}。"
            "提示：解不等式 d_a(d_s + 2d_h + 1) < d_s·2d_h；注意是严格小于，右边除得尽时要减一；没有合适的 d_a 时返回 0。",
        )
    return (
        "打分与 PyTorch 的双线性函数一致；两种打分的参数个数在四组维度下都与真实模块相符；"
        f"本节的维度下，d_a ≤ {found[(64, 128)]} 时加性打分的参数更少。"
    )
