"""第 1.4 节：玩具翻译任务、加性注意力的公式、两个模型的检查点与练习检查。"""

import math
import random

import pytest
import torch

from seqlab import measure, seq2seq, train
from seqlab.corpus import translation as task
from seqlab.train import CHECKPOINT_DIR, RECIPES, translation


# ---------------------------------------------------------------- 任务
def test_task_is_deterministic_and_reorders():
    a = task.make_batch(12, 8, random.Random(7))
    b = task.make_batch(12, 8, random.Random(7))
    assert torch.equal(a.src, b.src) and torch.equal(a.tgt, b.tgt)
    assert task.translate(list("大猫追小黑狗")) == ["cat", "big", "dog", "small", "black", "chases"]
    assert task.alignment(list("大猫追小黑狗")) == [1, 0, 5, 3, 4, 2]
    # 对齐不是恒等映射，但总是源位置的一个排列
    rng = random.Random(0)
    for n in range(task.MIN_LEN, task.MAX_LEN + 1):
        src = task.sample_source(n, rng)
        order = task.alignment(src)
        assert len(src) == n and sorted(order) == list(range(n))
        assert order != list(range(n))


def test_every_length_from_short_to_long_can_be_generated():
    data = task.eval_set(per_length=3)
    assert [b.src.shape[1] for b in data] == list(range(task.MIN_LEN, task.MAX_LEN + 1))
    assert all(b.src.shape == b.tgt.shape for b in data)


@pytest.mark.parametrize("bad", ["猫追", "大猫追狗，", "猫狗追鱼", "大追猫狗", "猫追狗追鱼"])
def test_ungrammatical_sources_have_no_reference(bad):
    assert not task.is_grammatical(list(bad))


def test_the_adjective_limit_is_part_of_the_grammar_but_not_of_the_translation_rule():
    """源语言每个名词短语至多 MAX_ADJECTIVES 个形容词（采样器只生成这些）；翻译规则本身对更多形容词也适用（探索器用它）。"""
    over = ["大"] * (task.MAX_ADJECTIVES + 1) + list("猫追狗")
    assert task.translatable(over) and not task.is_grammatical(over)
    assert task.translate(over)[:2] == ["cat", "big"]
    at_limit = ["大"] * task.MAX_ADJECTIVES + list("猫追") + ["小"] * task.MAX_ADJECTIVES + ["狗"]
    assert task.is_grammatical(at_limit)
    assert not task.is_grammatical(list("猫追") + ["小"] * (task.MAX_ADJECTIVES + 1) + ["狗"])


def test_roles_name_subject_and_object_nouns_per_clause():
    assert task.roles(list("大猫追狗，鱼咬小牛")) == [
        "形容词", "主语名词", "动词", "宾语名词", "逗号", "主语名词", "动词", "形容词", "宾语名词"]


# ---------------------------------------------------------------- 加性注意力：逐项按公式重算
def test_additive_attention_matches_the_formula_by_hand():
    torch.manual_seed(0)
    attn = seq2seq.AdditiveAttention(d_s=5, d_hh=6, d_a=4)
    B, S = 2, 7
    s_prev, H = torch.randn(B, 5), torch.randn(B, S, 6)
    c, alpha = attn(s_prev, H)
    e = attn.scores(s_prev, H)
    assert torch.equal(attn.scores(s_prev, H, attn.keys(H)), e)  # W_h h_j 每句算一次，结果一样
    W_s, W_h, v_a = attn.W_s.detach(), attn.W_h.detach(), attn.v_a.detach()
    for b in range(B):
        e_hand = [float(v_a @ torch.tanh(W_s @ s_prev[b] + W_h @ H[b, j])) for j in range(S)]
        z = sum(math.exp(x) for x in e_hand)
        alpha_hand = [math.exp(x) / z for x in e_hand]
        c_hand = sum(alpha_hand[j] * H[b, j] for j in range(S))
        assert torch.allclose(e[b], torch.tensor(e_hand), atol=1e-5)
        assert torch.allclose(alpha[b], torch.tensor(alpha_hand), atol=1e-6)
        assert torch.allclose(c[b], c_hand, atol=1e-5)
    assert torch.allclose(alpha.sum(-1), torch.ones(B))


def test_trained_model_reads_with_the_formula_at_every_step():
    model = train.load("seq2seq_attention").model
    src = torch.tensor([task.encode_source(list(task.EXAMPLES[1]))])
    H = model.encoder(src)
    s, memory = model.start(H)  # 注意力模型的 memory 是算好的 W_h h_j
    _, alphas = model.greedy(src, src.shape[1])
    a = model.attention
    y = torch.tensor([task.BOS_ID])
    with torch.no_grad():
        for t in range(src.shape[1]):
            e = torch.stack([a.v_a @ torch.tanh(a.W_s @ s[0] + a.W_h @ H[0, j]) for j in range(src.shape[1])])
            alpha = torch.exp(e) / torch.exp(e).sum()
            assert torch.allclose(alpha, alphas[0, t], atol=1e-5)
            out, s, _ = model.step(y, s, H, memory)
            y = out.argmax(-1)


def test_the_two_models_differ_only_in_how_they_read():
    fixed = seq2seq.FixedContextSeq2Seq(20, 20)
    attn = seq2seq.AttentionSeq2Seq(20, 20)
    extra = measure.n_parameters(attn) - measure.n_parameters(fixed)
    assert extra == sum(p.numel() for p in attn.attention.parameters())
    H = torch.randn(3, 5, 128)
    s, c = fixed.start(H)
    c1, a1 = fixed.read(s, H, c)
    assert a1 is None and torch.equal(c1, c)  # 每一步都是同一个 c


def test_encoder_summary_is_the_last_states_of_both_directions():
    enc = seq2seq.Encoder(10, 8, 6)
    x = torch.randint(0, 10, (2, 5))
    _, h_n = enc.rnn(enc.embed(x))
    assert torch.allclose(enc.summary(enc(x)), torch.cat([h_n[0], h_n[1]], dim=-1), atol=1e-6)


# ---------------------------------------------------------------- 检查点
@pytest.mark.parametrize("name", sorted(translation.SPECS))
def test_checkpoint_exists_is_small_and_has_a_recipe(name):
    path = CHECKPOINT_DIR / f"{name}.safetensors"
    assert path.exists(), f"请运行 python -m seqlab.train {name}"
    assert path.stat().st_size <= 2 * 2**20
    assert name in RECIPES
    meta = train.load(name).meta
    assert meta["seed"] == translation.TRAIN["seed"] and meta["steps"] == translation.TRAIN["steps"]


@pytest.fixture(scope="module")
def fresh():
    """与训练、书中评估都不同的种子生成的新数据。"""
    return task.eval_set(seed=20260, per_length=60)


def test_attention_checkpoint_translates_fresh_sentences_of_every_length(fresh):
    model = train.load("seq2seq_attention").model
    acc = seq2seq.accuracy_by_length(model, fresh)
    assert min(acc.values()) >= 0.95, acc


def test_fixed_context_checkpoints_degrade_with_length(fresh):
    attn = seq2seq.accuracy_by_length(train.load("seq2seq_attention").model, fresh)
    for name in ("seq2seq_fixed", "seq2seq_fixed_h32", "seq2seq_fixed_h128"):
        acc = seq2seq.accuracy_by_length(train.load(name).model, fresh)
        short = sum(acc[n] for n in range(3, 7)) / 4
        long = sum(acc[n] for n in range(20, 25)) / 5
        assert short >= 0.85, (name, acc)
        assert long <= short - 0.2, (name, acc)
        assert long <= sum(attn[n] for n in range(20, 25)) / 5 - 0.2, (name, acc)


# 练习检查（答案通过、错误答案被拒、不寻常的正确答案被接受）在 tests/test_checkers_sec04.py。


# ---------------------------------------------------------------- 探索器的专门检查（通用检查在 test_explorers.py）
def test_explorer_parses_and_rejects_input_in_chinese():
    from seqlab.errors import InputError
    from seqlab.states import attention_weights as aw

    assert aw.parse_source(" 大猫 追小黑狗, 老马看白鸟 ") == list("大猫追小黑狗，老马看白鸟")
    for bad, words in [("", "空"), ("猫追狗😀", "不认识"), ("猫追狗，" * 7 + "猫追狗", "最大长度")]:
        with pytest.raises(InputError, match=words):
            aw.parse_source(bad)


def test_explorer_state_matches_the_model_and_clamps_the_step():
    from seqlab import explorers
    from seqlab.states import attention_weights as aw

    state = aw.attention_state("大猫追小黑狗", 99, aw.MODEL)
    assert state.step == 6 and state.clamped
    assert state.reference == task.translate(list("大猫追小黑狗")) and state.gold == [1, 0, 5, 3, 4, 2]
    assert all(abs(sum(row) - 1) < 1e-3 for row in state.alpha)
    assert state.right == sum(a == b for a, b in zip(state.output, state.reference))
    assert state.top == sorted(range(6), key=lambda j: -state.alpha[5][j])[:aw.TOP]  # c_t 的前几项：第 6 行
    no_reference = explorers.get("attention_weights").compute(text="猫猫猫")  # 不合语法：没有标准译文
    assert no_reference.reference is None and no_reference.right is None
    fig = explorers.get("attention_weights").static_figure()
    # 下拉菜单选例句，每个例句一个滑块，步数等于句长；同一时刻只有一个滑块可见
    assert [len(s.steps) for s in fig.layout.sliders] == [len(aw.parse_source(t)) for t in task.EXAMPLES]
    assert sum(bool(s.visible) for s in fig.layout.sliders) == 1
    assert len(fig.layout.updatemenus[0].buttons) == len(task.EXAMPLES)


def test_static_face_switches_layout_by_flat_paths():
    """回归检查：滑块若传整个 ``xaxis`` 字典，plotly.js 会把坐标轴的位置一并抹掉，两块面板叠在一起。"""
    from seqlab import explorers

    fig = explorers.get("attention_weights").static_figure()
    args = [s.args for slider in fig.layout.sliders for s in slider.steps]
    args += [b.args for b in fig.layout.updatemenus[0].buttons]
    for _restyle, relayout, traces in args:
        assert not {"xaxis", "yaxis", "xaxis2", "yaxis2", "sliders"} & set(relayout), relayout.keys()
        assert "yaxis.domain" in relayout and "height" in relayout
        assert all(i < len(fig.data) for i in traces)
    assert len({a[1]["height"] for a in args}) == 1  # 切换例句时图的高度不变（网页上的容器不会跟着变高）
