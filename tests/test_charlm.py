"""第 1.3 节的字级循环语言模型：远处线索句、截断的沿时间反向传播、困惑度的单位、三个检查点。"""

import hashlib
import math

import pytest
import torch
import torch.nn.functional as F

from seqlab import charlm, corpus, lm, train
from seqlab.corpus import reading_cue
from seqlab.train import char_rnn


# ---------------------------------------------------------------- 语料
def test_the_book_corpus_itself_is_unchanged():
    """第 1.1 节的数字与 Embedding 的检查点都依赖这份语料：新增的句子不能改变它。"""
    text = "\n".join(corpus.book_corpus())
    assert hashlib.sha256(text.encode()).hexdigest() == "ac26e705d28475b7a247ab8c41c9862819841fd93496d48ae9229c0dd37c0f29"


def test_cue_pairs_differ_only_in_the_distant_cue():
    train_sents, pairs = reading_cue.cue_split()
    assert len(pairs) == reading_cue.N_TEST_PAIRS and len(train_sents) == reading_cue.N_TRAIN
    for past, finished in pairs:
        assert (past.answer, finished.answer) == ("过", "完")
        assert past.text[len(past.prefix)] == "过" and finished.text[len(finished.prefix)] == "完"
        assert past.cue in reading_cue.CUES["过"] and finished.cue in reading_cue.CUES["完"]
        # 线索离「读」至少 MIN_GAP 个字，这段距离内两句一字不差
        k = reading_cue.MIN_GAP + 1
        assert past.prefix[-k:] == finished.prefix[-k:] and past.prefix.endswith("读")
        assert min(past.gap, finished.gap) >= reading_cue.MIN_GAP
    held_out = {s.text for p in pairs for s in p}
    assert not held_out & {s.text for s in train_sents}
    assert not held_out & set(corpus.book_corpus())
    answers = [s.answer for s in train_sents]
    assert answers.count("过") == answers.count("完")


def test_any_short_ngram_cannot_beat_a_coin_on_the_pairs():
    """两句在「读」之前的最后 MIN_GAP 个字相同：n ≤ MIN_GAP + 2 的 n-gram 对两句给出同一个预测，每对至多对一句。"""
    _, pairs = reading_cue.cue_split()
    sentences = [s for p in pairs for s in p]
    for order in (2, 3, 4):
        model = lm.NGramLM(order).fit(charlm.training_sentences())
        for past, finished in pairs:
            for ch in "过完":
                assert model.prob(ch, list(past.prefix)) == model.prob(ch, list(finished.prefix))
        assert charlm.ngram_cue_accuracy(model, sentences) <= 0.5


# ---------------------------------------------------------------- 截断的沿时间反向传播
def test_tbptt_batches_are_consecutive_slices_of_one_stream():
    stream = torch.arange(1000)
    batches = char_rnn.tbptt_batches(stream, B=4, L=10)
    x0, y0, r0 = next(batches)
    x1, y1, r1 = next(batches)
    n = 999 // 4
    assert r0 and not r1
    assert torch.equal(y0, x0 + 1) and torch.equal(x1, x0 + 10)  # 下一段接着上一段
    assert torch.equal(x0[:, 0], torch.arange(4) * n)  # 每行是流的一段连续区间
    for _ in range(n // 10 - 2):
        next(batches)
    assert next(batches)[2]  # 读完一遍，从头再来


@pytest.mark.parametrize("cell", charlm.CELLS)
def test_carrying_the_state_gives_the_untruncated_forward_but_cuts_the_gradient(cell):
    torch.manual_seed(0)
    model = charlm.CharLM(20, d_emb=8, d_h=16, cell=cell)
    ids = torch.randint(20, (3, 24))
    whole, _ = model(ids)
    first, state = model(ids[:, :12])
    second, _ = model(ids[:, 12:], charlm.detach_state(state))
    assert torch.allclose(torch.cat([first, second], dim=1), whole, atol=1e-6)
    # 截断之后，第二段的损失对第一段的输入没有梯度；不截断时有
    E = model.embed(ids).detach().requires_grad_(True)
    head = E[:, :12]
    tail_logits = _run_embedded(model, E[:, 12:], charlm.detach_state(_run_embedded(model, head, None)[1]))[0]
    tail_logits.sum().backward()
    assert E.grad[:, :12].abs().max() == 0 and E.grad[:, 12:].abs().max() > 0
    E.grad = None
    _run_embedded(model, E[:, 12:], _run_embedded(model, head, None)[1])[0].sum().backward()
    assert E.grad[:, :12].abs().max() > 0


def _run_embedded(model, E, state):
    if model.cell == "elman":
        H = model.rnn(E, state)
        return model.W_o(H), H[:, -1]
    H, state = model.rnn(E, state)
    return model.W_o(H), state


def test_training_clips_the_gradient_norm_of_every_step():
    torch.manual_seed(0)
    model = charlm.CharLM(30, d_emb=8, d_h=16, cell="gru")
    batches = char_rnn.tbptt_batches(torch.randint(30, (4000,)), B=4, L=16)
    log = char_rnn.train_tbptt(model, batches, steps=5, lr=1e-3, clip=1e-3, progress=False)
    assert len(log.losses) == len(log.grad_norms) == 5 and log.clipped_fraction == 1.0
    assert not model.training


# ---------------------------------------------------------------- 困惑度：与 n-gram 同一个单位
def test_perplexity_counts_the_same_tokens_as_the_ngram_and_matches_cross_entropy():
    sentences = charlm.held_out_sentences()[:10]
    vocab = charlm.CharVocab.from_sentences(charlm.training_sentences())
    torch.manual_seed(0)
    model = charlm.CharLM(len(vocab), d_emb=8, d_h=16, cell="lstm").eval()
    terms = [charlm.sentence_log_probs(model, vocab, s) for s in sentences]
    ngram = lm.NGramLM(2).fit(charlm.training_sentences())
    assert [len(t) for t in terms] == [len(ngram.conditionals(s, include_eos=True)) for s in sentences]
    # 独立的算法：整句一次送进 F.cross_entropy
    nll = []
    for s in sentences:
        ids = torch.tensor([0, *vocab.encode(s), 0])
        with torch.no_grad():
            logits, _ = model(ids[None, :-1])
        nll.append(F.cross_entropy(logits[0].double(), ids[1:], reduction="sum").item())
    n = sum(len(s) + 1 for s in sentences)
    assert math.isclose(charlm.perplexity(model, vocab, sentences), math.exp(sum(nll) / n), rel_tol=1e-9)


def test_unknown_characters_are_encoded_as_unk_like_the_ngram():
    vocab = charlm.CharVocab(("</s>", "<unk>", "书", "读"))
    assert vocab.encode("读书吧") == [3, 2, 1]


# ---------------------------------------------------------------- 检查点
@pytest.mark.parametrize("cell", charlm.CELLS)
def test_checkpoints_beat_every_ngram_order_on_held_out_perplexity(cell):
    ckpt = train.load(char_rnn.NAMES[cell])
    vocab = charlm.vocab_of(ckpt.config)
    assert vocab == charlm.CharVocab.from_sentences(charlm.training_sentences())
    ppl = charlm.perplexity(ckpt.model, vocab, charlm.held_out_sentences())
    assert math.isclose(ppl, ckpt.meta["perplexity"], abs_tol=1e-3)
    best_ngram = min(lm.perplexity(lm.NGramLM(n, k).fit(charlm.training_sentences()), charlm.held_out_sentences())
                     for n in (1, 2, 3, 4) for k in (0.1, 0.01, 0.001))
    assert ppl < best_ngram
    assert ckpt.meta["torch_threads"] == 1


def test_the_gru_picks_the_distant_cue_where_the_4gram_cannot():
    ckpt = train.load(char_rnn.NAMES["gru"])
    _, pairs = reading_cue.cue_split()
    sentences = [s for p in pairs for s in p]
    gru = charlm.lm_cue_accuracy(ckpt.model, charlm.vocab_of(ckpt.config), sentences)
    four = charlm.ngram_cue_accuracy(lm.NGramLM(4).fit(charlm.training_sentences()), sentences)
    assert gru >= 0.9 and four <= 0.5


def test_the_recipe_leaves_the_callers_random_state_alone():
    from rngcheck import leaves_rng_alone

    trained = []
    assert leaves_rng_alone(lambda: trained.append(char_rnn.train_model("elman", steps=2, progress=False)))
    _, _, meta = trained[0]
    assert meta["steps"] == 2 and len(meta["losses"]) == 2
