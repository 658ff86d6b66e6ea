"""第 1.6 节的编码器—解码器 Transformer：交叉注意力、解码器块与整个模型逐数对照 PyTorch，以及检查点。"""

import random

import pytest
import torch
from torch import nn

from seqlab import encdec, seq2seq, train
from seqlab.corpus import translation as task
from seqlab.train import encdec_transformer


def _causal(T: int) -> torch.Tensor:
    return nn.Transformer.generate_square_subsequent_mask(T)


def test_cross_attention_reads_keys_and_values_from_the_encoder_like_pytorch():
    torch.manual_seed(0)
    reference = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    with torch.random.fork_rng(devices=[]):
        ours = encdec.MultiHeadCrossAttention(16, 4)
    with torch.no_grad():
        encdec._copy_attention(ours, reference)
    Y, M = torch.randn(2, 5, 16), torch.randn(2, 9, 16)
    out, alpha = ours(Y, M)
    want, want_alpha = reference(Y, M, M, average_attn_weights=False)
    assert alpha.shape == (2, 4, 5, 9)
    assert torch.allclose(out, want, atol=1e-6) and torch.allclose(alpha, want_alpha, atol=1e-6)
    assert torch.allclose(alpha.sum(-1), torch.ones(2, 4, 5))
    # Query 只来自解码器：换掉编码器输出会改变结果，输出的行数永远跟着解码器
    assert ours(Y, M[:, :3])[0].shape == (2, 5, 16)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_block_matches_torch_transformer_decoder_layer(norm_first):
    torch.manual_seed(1)
    layer = nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    block = encdec.decoder_block_from_torch(layer)
    Y, M = torch.randn(3, 7, 32), torch.randn(3, 11, 32)
    want = layer(Y, M, tgt_mask=_causal(7), tgt_is_causal=True)
    got, self_alpha, cross_alpha = block(Y, M)
    assert torch.allclose(got, want, atol=1e-5)
    assert self_alpha.shape == (3, 4, 7, 7) and cross_alpha.shape == (3, 4, 7, 11)
    assert torch.all(self_alpha.triu(1) == 0)  # 因果掩码：第 t 步读不到后面的目标位置
    # 梯度也一致
    Y1, Y2 = Y.clone().requires_grad_(True), Y.clone().requires_grad_(True)
    layer(Y1, M, tgt_mask=_causal(7)).pow(2).sum().backward()
    block(Y2, M)[0].pow(2).sum().backward()
    assert torch.allclose(Y1.grad, Y2.grad, atol=1e-4)


@pytest.mark.parametrize("norm_first", [False, True])
def test_whole_model_matches_torch_transformer_on_one_batch(norm_first):
    torch.manual_seed(2)
    reference = nn.Transformer(32, 4, 2, 2, 64, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    model = encdec.from_torch(reference, 10, 12)
    X, Y = torch.randn(4, 9, 32), torch.randn(4, 6, 32)
    want = reference(X, Y, tgt_mask=_causal(6), tgt_is_causal=True)
    got, cross = model.decode(Y, model.encode(X))
    assert torch.allclose(got, want, atol=1e-5)
    assert [c.shape for c in cross] == [(4, 4, 6, 9)] * 2
    n_ours = sum(p.numel() for n, p in model.named_parameters() if not n.startswith(("src_embed", "tgt_embed", "W_out")))
    assert n_ours == sum(p.numel() for p in reference.parameters())


def test_decoder_is_causal_and_greedy_weights_are_the_weights_of_each_step():
    torch.manual_seed(3)
    model = encdec.EncoderDecoderTransformer(len(task.SRC_TOKENS), len(task.TGT_TOKENS), 16, 2, 32, 2).eval()
    src = task.make_batch(8, 3, random.Random(0)).src
    tgt = torch.randint(2, len(task.TGT_TOKENS), (3, 8))
    changed = tgt.clone()
    changed[:, 5:] = 2
    with torch.no_grad():
        a, b = model(src, tgt), model(src, changed)
    assert torch.allclose(a[:, :6], b[:, :6], atol=1e-6) and not torch.allclose(a[:, 6:], b[:, 6:])
    ids, cross = model.greedy(src, 8)
    assert cross.shape == (3, 2, 2, 8, 8)
    # 一步一步地解码、每步只记下最后一行的权重：与 greedy 最后一次前向的各行相同
    with torch.no_grad():
        M = model.encode(model.embed(model.src_embed, src))
        for t in range(8):
            prefix = torch.cat([torch.full((3, 1), task.BOS_ID), ids[:, :t]], dim=1)
            _, step_cross = model.decode(model.embed(model.tgt_embed, prefix), M)
            for layer in range(2):
                assert torch.allclose(step_cross[layer][:, :, -1], cross[:, layer, :, t], atol=1e-6)


def test_agreement_counts_argmax_hits_against_the_reference_alignment():
    """对照一个人为的模型：它的交叉注意力恰好是标准对齐的 one-hot（第 0 个头）或均匀分布（第 1 个头）。"""

    class Oracle(nn.Module):
        def greedy(self, src, T):
            gold = torch.tensor([task.alignment([task.SRC_TOKENS[i] for i in s]) for s in src])
            one_hot = nn.functional.one_hot(gold, src.shape[1]).float()
            uniform = torch.full_like(one_hot, 1 / src.shape[1])
            uniform[..., 0] += 1e-3  # argmax 总是第 0 个源位置
            cross = torch.stack([one_hot, uniform], dim=1)[:, None]  # (B, 1, 2, T, S)
            return None, cross

    data = task.eval_set(seed=5, per_length=4, lengths=(6, 9))
    agree = encdec.alignment_agreement(Oracle(), data)
    first = sum(int((torch.tensor([task.alignment([task.SRC_TOKENS[i] for i in s]) for s in b.src]) == 0).sum())
                for b in data) / sum(b.src.numel() for b in data)
    assert agree.shape == (1, 3) and agree[0, 0] == 1.0 and abs(float(agree[0, 1]) - first) < 1e-6
    assert agree[0, 2] == 1.0  # 两个头平均之后，one-hot 那一格仍是最大的
    per_step = [1 / b.src.shape[1] for b in data for _ in range(b.tgt.numel())]  # 每个目标步随便挑：对上的概率 1/S
    assert abs(encdec.chance_agreement(data) - sum(per_step) / len(per_step)) < 1e-9


def test_checkpoint_translates_fresh_data_as_well_as_the_attention_model():
    ckpt = train.load(encdec_transformer.NAME)
    fresh = task.eval_set(seed=2024, per_length=30)
    acc = seq2seq.mean_accuracy(seq2seq.accuracy_by_length(ckpt.model, fresh))
    assert abs(acc - ckpt.meta["accuracy"]) < 0.03
    fixed = seq2seq.mean_accuracy(seq2seq.accuracy_by_length(train.load("seq2seq_fixed").model, fresh))
    assert acc > fixed + 0.1
    assert ckpt.meta["torch_threads"] == 1
    assert train.weights_path(encdec_transformer.NAME).stat().st_size <= 2 * 2**20


def test_attention_explorer_switches_to_the_transformer_cross_attention():
    from seqlab import explorers
    from seqlab.errors import InputError
    from seqlab.states import attention_weights as aw

    text = task.EXAMPLES[1]
    state = aw.attention_state(text, 3, encdec_transformer.NAME)
    src = torch.tensor([task.encode_source(aw.parse_source(text))])
    ids, cross = train.load(encdec_transformer.NAME).model.greedy(src, src.shape[1])
    assert state.output == task.decode_target(ids[0]) and state.model == encdec_transformer.NAME
    want = cross[0, encdec_transformer.SHOWN_LAYER].mean(dim=0)  # 各头平均：(T, S)
    assert torch.allclose(torch.tensor(state.alpha), want, atol=1e-4)
    bahdanau = explorers.get("attention_weights")
    assert state.alpha != bahdanau.compute(text=text, step=3).alpha  # 默认仍是第 1.4 节的 Bahdanau 模型
    with pytest.raises(InputError, match="没有这个模型"):
        aw.attention_state(text, 3, "no_such_model")
    view = bahdanau.live()
    assert view.set(model=encdec_transformer.NAME) and "Transformer" in view.figure.layout.title.text
    assert view.set(model=aw.MODEL) and "注意力模型" in view.figure.layout.title.text
    # 第 1.6 节的静态面：同一份说明，模型的默认值换成 Transformer
    cross_explorer = explorers.get("cross_attention_weights")
    assert cross_explorer.defaults == {**bahdanau.defaults, "model": encdec_transformer.NAME}
    static = cross_explorer.static_figure()
    assert [list(r) for r in static.data[0].z] == aw.attention_state(task.EXAMPLES[1], 1, encdec_transformer.NAME).alpha


def test_the_recipe_leaves_the_callers_random_state_alone():
    from rngcheck import leaves_rng_alone

    trained = []
    assert leaves_rng_alone(lambda: trained.append(encdec_transformer.train_model(steps=2, progress=False)))
    _, meta = trained[0]
    assert meta["steps"] == 2
