"""第 1.6 节练习的检查：每个检查至少拒绝一个错误答案，并接受一个不寻常但正确的答案。"""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import sys
import types

import torch
from torch import nn

from checking import rejected as _rejected
from seqlab import encdec
from seqlab import transformer as tf
from seqlab.exercises import sec06


# ---------------------------------------------------------------- 1.6.1 一个块有多少参数
def _block_params(d_model, d_ff):
    return 4 * (d_model * d_model + d_model) + 2 * d_model * d_ff + d_ff + d_model + 4 * d_model


def test_block_params_accepts_the_reference_and_a_float_or_tensor_count():
    assert sec06.check_block_params(_block_params).passed
    assert sec06.check_block_params(lambda d, f: float(_block_params(d, f))).passed  # 3.0 这样的整数值也算
    assert sec06.check_block_params(lambda d, f: torch.tensor(_block_params(d, f))).passed


def test_block_params_rejects_missing_biases_norms_and_non_integers():
    _rejected(sec06.check_block_params(lambda d, f: _block_params(d, f) - 4 * d), "LayerNorm", "偏置")
    _rejected(sec06.check_block_params(lambda d, f: _block_params(d, f) - f - d), "FFN")
    _rejected(sec06.check_block_params(lambda d, f: _block_params(d, f) - (d * d + d)), "W_O")
    _rejected(sec06.check_block_params(lambda d, f: _block_params(d, f) + 0.5), "整数")


def test_block_params_rejects_a_formula_that_assumes_d_ff_is_four_d_model():
    def ffn_as_8_d_squared(d_model, d_ff):  # 原论文的 d_ff = 4d 写死进了公式：FFN 的权重记成 8d²
        return _block_params(d_model, 4 * d_model)

    _rejected(sec06.check_block_params(ffn_as_8_d_squared), "d_ff = 4·d_model")


def test_block_params_accepts_counting_a_real_torch_layer():  # 不寻常但正确：建一个 PyTorch 的层来数
    def by_torch(d_model, d_ff):
        n_h = next(h for h in range(1, d_model + 1) if d_model % h == 0)
        layer = nn.TransformerEncoderLayer(d_model, n_h, d_ff, dropout=0.0)
        return sum(p.numel() for p in layer.parameters())

    assert sec06.check_block_params(by_torch).passed


# ---------------------------------------------------------------- 1.6.2 pre-norm 与 post-norm
def _block_forward(block, X, norm_first):
    if norm_first:
        X = X + block.attn(block.norm1(X))[0]
        return X + block.ffn(block.norm2(X))
    X = block.norm1(X + block.attn(X)[0])
    return block.norm2(X + block.ffn(X))


def test_block_forward_accepts_the_reference_and_a_functional_version():
    assert sec06.check_block_forward(_block_forward).passed

    def by_sublayers(block, X, norm_first):  # 把两个子层写成一张表，再循环；不改 X
        sublayers = [(block.norm1, lambda Z: block.attn(Z)[0]), (block.norm2, block.ffn)]
        out = X.clone()
        for norm, sublayer in sublayers:
            out = out + sublayer(norm(out)) if norm_first else norm(out + sublayer(out))
        return out

    assert sec06.check_block_forward(by_sublayers).passed


def test_block_forward_rejects_swapped_orders_and_calling_the_whole_block():
    _rejected(sec06.check_block_forward(lambda b, X, nf: _block_forward(b, X, not nf)), "弄反")

    def whole_block(block, X, norm_first):  # 改掉开关再调用整个块：结果对，却没有按题目组装
        block.norm_first = norm_first
        return block(X)[0]

    _rejected(sec06.check_block_forward(whole_block), "block(X)")

    def pre_norm_normalising_the_stream(block, X, norm_first):
        if not norm_first:
            return _block_forward(block, X, False)
        X = block.norm1(X + block.attn(block.norm1(X))[0])
        return block.norm2(X + block.ffn(block.norm2(X)))

    _rejected(sec06.check_block_forward(pre_norm_normalising_the_stream))


def test_block_forward_rejects_the_library_forward_called_another_way():
    def unbound_forward(block, X, norm_first):  # 绕过 block(X)：直接调用类上的 forward
        block.norm_first = norm_first
        return tf.TransformerBlock.forward(block, X)[0]

    _rejected(sec06.check_block_forward(unbound_forward), "TransformerBlock.forward")

    def on_a_copy(block, X, norm_first):  # 在深拷贝上调用整个块
        twin = copy.deepcopy(block)
        twin.norm_first = norm_first
        return twin(X)[0]

    _rejected(sec06.check_block_forward(on_a_copy), "拷贝")

    def fresh_block_with_copied_weights(block, X, norm_first):  # 新建一个块、拷进权重再调用
        twin = tf.TransformerBlock(X.shape[-1], block.attn.n_heads, block.ffn.W_1.out_features, norm_first=norm_first)
        twin.load_state_dict(block.state_dict(), strict=False)
        return twin(X)[0]

    # 新块的 forward 就是库里的 TransformerBlock.forward：它在学生的函数运行期间拿不到结果
    _rejected(sec06.check_block_forward(fresh_block_with_copied_weights), "TransformerBlock.forward")

    def torch_layer_with_copied_weights(block, X, norm_first):  # 新建 PyTorch 的编码器层再调用
        d = X.shape[-1]
        layer = nn.TransformerEncoderLayer(d, block.attn.n_heads, block.ffn.W_1.out_features, dropout=0.0,
                                           batch_first=True, norm_first=norm_first).eval()
        return layer(X)

    _rejected(sec06.check_block_forward(torch_layer_with_copied_weights), "新建了带参数的层")


# ---------------------------------------------------------------- 1.6.3 有 KV cache 时一步解码的浮点运算数
def _decode_step_flops(T_kv, d_model, d_ff, n_layers, vocab):
    per_layer = 8 * d_model * d_model + 4 * (T_kv + 1) * d_model + 4 * d_model * d_ff
    return n_layers * per_layer + 2 * d_model * vocab


def test_decode_step_flops_accepts_the_reference_and_a_float_formula():
    assert sec06.check_decode_step_flops(_decode_step_flops).passed

    def per_weight(T_kv, d_model, d_ff, n_layers, vocab):  # 另一种数法：2 × 权重个数 + 注意力，按浮点数返回
        weights = n_layers * (4 * d_model**2 + 2 * d_model * d_ff) + d_model * vocab
        return 2.0 * weights + n_layers * 4.0 * d_model * (T_kv + 1)

    assert sec06.check_decode_step_flops(per_weight).passed


def test_decode_step_flops_rejects_forgetting_the_new_token_and_the_output_layer():
    _rejected(sec06.check_decode_step_flops(lambda T, d, f, n, V: _decode_step_flops(T - 1, d, f, n, V)), "T_kv + 1")
    _rejected(sec06.check_decode_step_flops(lambda T, d, f, n, V: _decode_step_flops(T, d, f, n, V) - 2 * d * V), "logits")


# ---------------------------------------------------------------- 1.6.5 温度与 top-k 采样
def _top_k_probs(logits, k, temperature):
    z = logits / temperature
    kth = torch.topk(z, k).values[-1]
    return torch.softmax(z.masked_fill(z < kth, float("-inf")), dim=-1)


def test_top_k_probs_accepts_the_reference_and_power_renormalisation():
    assert sec06.check_top_k_probs(_top_k_probs).passed

    def power_then_cut(logits, k, temperature):  # p^(1/τ) 再归一化等于 softmax(z/τ)；在 float64 里截断
        p = torch.softmax(logits.double(), dim=-1) ** (1 / temperature)
        keep = torch.zeros_like(p, dtype=torch.bool)
        keep[p.argsort(descending=True)[:k]] = True
        p = torch.where(keep, p, torch.zeros_like(p))
        return p / p.sum()

    assert sec06.check_top_k_probs(power_then_cut).passed


def test_top_k_probs_rejects_ignoring_temperature_and_not_renormalising():
    _rejected(sec06.check_top_k_probs(lambda z, k, t: _top_k_probs(z, k, 1.0)), "温度")

    def cut_without_renormalising(logits, k, temperature):
        p = torch.softmax(logits / temperature, dim=-1)
        kth = torch.topk(p, k).values[-1]
        return torch.where(p >= kth, p, torch.zeros_like(p))

    _rejected(sec06.check_top_k_probs(cut_without_renormalising), "归一化")


# ---------------------------------------------------------------- 1.6.6 KV cache 有多大，能放下多长的上下文
def _kv_cache_size(n_layers, d_model, T_kv, batch, bytes_per_value):
    return 2 * n_layers * batch * T_kv * d_model * bytes_per_value


def _max_context(n_layers, d_model, batch, bytes_per_value, budget):
    return budget // _kv_cache_size(n_layers, d_model, 1, batch, bytes_per_value)


def test_kv_cache_size_accepts_the_reference_and_a_search_for_the_context():
    assert sec06.check_kv_cache_size(_kv_cache_size, _max_context).passed

    def by_doubling_and_bisection(n_layers, d_model, batch, bytes_per_value, budget):  # 不除法：倍增再二分
        def fits(T):
            return _kv_cache_size(n_layers, d_model, T, batch, bytes_per_value) <= budget

        hi = 1
        while fits(hi):
            hi *= 2
        lo = 0
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return lo

    def size_as_float(n_layers, d_model, T_kv, batch, bytes_per_value):
        return float(_kv_cache_size(n_layers, d_model, T_kv, batch, bytes_per_value))

    assert sec06.check_kv_cache_size(size_as_float, by_doubling_and_bisection).passed


def test_kv_cache_size_rejects_missing_factors_rounding_up_and_forgetting_the_batch():
    _rejected(sec06.check_kv_cache_size(lambda n, d, T, B, b: n * B * T * d * b, _max_context), "K 和 V")
    _rejected(sec06.check_kv_cache_size(lambda n, d, T, B, b: 2 * n * T * d * b, _max_context), "batch")

    def rounded_up(n_layers, d_model, batch, bytes_per_value, budget):
        return math.ceil(budget / _kv_cache_size(n_layers, d_model, 1, batch, bytes_per_value))

    _rejected(sec06.check_kv_cache_size(_kv_cache_size, rounded_up), "超过了预算")

    def rounded(n_layers, d_model, batch, bytes_per_value, budget):
        return round(budget / _kv_cache_size(n_layers, d_model, 1, batch, bytes_per_value))

    _rejected(sec06.check_kv_cache_size(_kv_cache_size, rounded))

    def one_sequence_only(n_layers, d_model, batch, bytes_per_value, budget):
        return budget // _kv_cache_size(n_layers, d_model, 1, 1, bytes_per_value)

    _rejected(sec06.check_kv_cache_size(_kv_cache_size, one_sequence_only))

    def one_short(n_layers, d_model, batch, bytes_per_value, budget):
        return max(0, _max_context(n_layers, d_model, batch, bytes_per_value, budget) - 1)

    _rejected(sec06.check_kv_cache_size(_kv_cache_size, one_short), "不是最长的")
    unfinished = sec06.check_kv_cache_size(_kv_cache_size, None)
    assert unfinished.unfinished and not unfinished.passed


# ---------------------------------------------------------------- 1.6.7 交叉注意力子层
def _cross_attention(attn, Y, M):
    B, T, d = Y.shape
    h = attn.n_heads
    d_k = d // h

    def heads(X):
        return X.view(B, X.shape[1], h, d_k).transpose(1, 2)

    Q, K, V = heads(attn.W_Q(Y)), heads(attn.W_K(M)), heads(attn.W_V(M))
    alpha = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(d_k), dim=-1)
    return attn.W_O((alpha @ V).transpose(1, 2).reshape(B, T, d))


def test_cross_attention_accepts_the_reference_and_a_per_head_loop_with_einsum():
    assert sec06.check_cross_attention(_cross_attention).passed

    def per_head(attn, Y, M):  # 一个头一个头地算，用 einsum 和 PyTorch 的注意力函数
        h, d = attn.n_heads, Y.shape[-1]
        d_k = d // h
        Q, K, V = attn.W_Q(Y), attn.W_K(M), attn.W_V(M)
        outs = []
        for i in range(h):
            cols = slice(i * d_k, (i + 1) * d_k)
            scores = torch.einsum("btk,bsk->bts", Q[..., cols], K[..., cols]) / d_k**0.5
            outs.append(torch.einsum("bts,bsk->btk", scores.softmax(-1), V[..., cols]))
        return attn.W_O(torch.cat(outs, dim=-1))

    assert sec06.check_cross_attention(per_head).passed

    def with_torch_sdpa(attn, Y, M):  # 每个头的缩放点积注意力交给 PyTorch 的函数：题目没有禁止
        B, T, d = Y.shape
        n_h = attn.n_heads

        def heads(X):
            return X.view(B, X.shape[1], n_h, d // n_h).transpose(1, 2)

        out = nn.functional.scaled_dot_product_attention(heads(attn.W_Q(Y)), heads(attn.W_K(M)), heads(attn.W_V(M)))
        return attn.W_O(out.transpose(1, 2).reshape(B, T, d))

    assert sec06.check_cross_attention(with_torch_sdpa).passed


def test_cross_attention_rejects_self_attention_missing_scale_and_calling_the_module():
    _rejected(sec06.check_cross_attention(lambda attn, Y, M: _cross_attention(attn, Y, Y)), "自注意力")

    def unscaled(attn, Y, M):
        B, T, d = Y.shape
        h = attn.n_heads
        Q, K, V = (x.view(B, -1, h, d // h).transpose(1, 2) for x in (attn.W_Q(Y), attn.W_K(M), attn.W_V(M)))
        return attn.W_O((torch.softmax(Q @ K.transpose(-2, -1), dim=-1) @ V).transpose(1, 2).reshape(B, T, d))

    _rejected(sec06.check_cross_attention(unscaled), "√d_k")
    _rejected(sec06.check_cross_attention(lambda attn, Y, M: attn(Y, M)[0]), "attn(Y, M)")


def test_cross_attention_rejects_ready_made_multi_head_attention():
    _rejected(sec06.check_cross_attention(lambda attn, Y, M: encdec.MultiHeadCrossAttention.forward(attn, Y, M)[0]),
              "MultiHeadCrossAttention.forward")
    _rejected(sec06.check_cross_attention(lambda attn, Y, M: copy.deepcopy(attn)(Y, M)[0]), "拷贝")

    def torch_module(attn, Y, M):  # 把权重拷进 torch.nn.MultiheadAttention 再调用
        reference = nn.MultiheadAttention(Y.shape[-1], attn.n_heads, batch_first=True).eval()
        with torch.no_grad():
            reference.in_proj_weight.copy_(torch.cat([attn.W_Q.weight, attn.W_K.weight, attn.W_V.weight]))
            reference.in_proj_bias.copy_(torch.cat([attn.W_Q.bias, attn.W_K.bias, attn.W_V.bias]))
            reference.out_proj.weight.copy_(attn.W_O.weight)
            reference.out_proj.bias.copy_(attn.W_O.bias)
        return reference(Y, M, M, need_weights=False)[0]

    _rejected(sec06.check_cross_attention(torch_module), "MultiheadAttention")

    def functional(attn, Y, M):  # 不建模块，直接调用 PyTorch 的函数式多头注意力
        W = torch.cat([attn.W_Q.weight, attn.W_K.weight, attn.W_V.weight])
        b = torch.cat([attn.W_Q.bias, attn.W_K.bias, attn.W_V.bias])
        Yt, Mt = Y.transpose(0, 1), M.transpose(0, 1)
        out = nn.functional.multi_head_attention_forward(
            Yt, Mt, Mt, Y.shape[-1], attn.n_heads, W, b, None, None, False, 0.0, attn.W_O.weight, attn.W_O.bias,
            need_weights=False)[0]
        return out.transpose(0, 1)

    _rejected(sec06.check_cross_attention(functional), "multi_head_attention_forward")


# ---------------------------------------------------------------- 评分时（记录、再重放）同样认得出绕过的做法
def _replayed(check, *answers):
    from seqlab.exercises import recording

    data = json.loads(json.dumps(recording.record(check, list(answers))))
    return recording.judge(check, data)


def test_the_grader_replays_the_library_forward_as_a_rejection(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")

    def unbound_forward(block, X, norm_first):
        block.norm_first = norm_first
        return tf.TransformerBlock.forward(block, X)[0]

    for check, answer in [
        (sec06.check_block_forward, unbound_forward),
        (sec06.check_cross_attention, lambda attn, Y, M: encdec.MultiHeadCrossAttention.forward(attn, Y, M)[0]),
    ]:
        direct, replayed = check(answer), _replayed(check, answer)
        assert not direct.passed and not replayed.passed
        assert replayed.message == direct.message
    assert _replayed(sec06.check_block_forward, _block_forward).passed
    assert _replayed(sec06.check_cross_attention, _cross_attention).passed


# ---------------------------------------------------------------- 绕过实例、直接借用库里的函数，也认得出
def test_block_forward_rejects_the_library_forward_on_a_namespace_or_after_swapping_the_class():
    import types

    def on_a_namespace(block, X, norm_first):  # 借一个命名空间当 self：不读 block.norm_first，也不调用 block
        ns = types.SimpleNamespace(attn=block.attn, ffn=block.ffn, norm1=block.norm1, norm2=block.norm2,
                                   norm_first=norm_first)
        return tf.TransformerBlock.forward(ns, X)[0]

    _rejected(sec06.check_block_forward(on_a_namespace), "TransformerBlock.forward")

    def class_swapped(block, X, norm_first):  # 临时把对象的类换成库里的 TransformerBlock，再调用整个块
        cls = block.__class__
        block.__class__ = tf.TransformerBlock
        block.__dict__["norm_first"] = norm_first
        try:
            return block(X)[0]
        finally:
            del block.__dict__["norm_first"]
            block.__class__ = cls

    _rejected(sec06.check_block_forward(class_swapped), "TransformerBlock.forward")
    # 检查结束后，库里的 forward 原样恢复
    assert tf.TransformerBlock.forward.__qualname__ == "TransformerBlock.forward"
    assert sec06.check_block_forward(_block_forward).passed


def test_cross_attention_rejects_unbound_helpers_and_the_library_forward_on_a_namespace():
    import types

    from seqlab import transformer as tf_module

    def unbound_helpers(attn, Y, M):  # 从类上直接取 split_heads / merge_heads，中间用 PyTorch 的注意力
        C = encdec.MultiHeadCrossAttention
        Q, K, V = (C.split_heads(attn, f(x)) for f, x in ((attn.W_Q, Y), (attn.W_K, M), (attn.W_V, M)))
        return attn.W_O(C.merge_heads(attn, nn.functional.scaled_dot_product_attention(Q, K, V)))

    _rejected(sec06.check_cross_attention(unbound_helpers), "split_heads")

    def parent_helpers(attn, Y, M):  # 从父类 MultiHeadSelfAttention 上取同样的两个方法
        C = tf_module.MultiHeadSelfAttention
        Q, K, V = (C.split_heads(attn, f(x)) for f, x in ((attn.W_Q, Y), (attn.W_K, M), (attn.W_V, M)))
        return attn.W_O(C.merge_heads(attn, nn.functional.scaled_dot_product_attention(Q, K, V)))

    _rejected(sec06.check_cross_attention(parent_helpers), "split_heads")

    def on_a_namespace(attn, Y, M):
        ns = types.SimpleNamespace(W_Q=attn.W_Q, W_K=attn.W_K, W_V=attn.W_V, W_O=attn.W_O, n_heads=attn.n_heads,
                                   d_k=attn.d_k, d_model=attn.d_model)
        ns.split_heads = lambda X: tf_module.MultiHeadSelfAttention.split_heads(ns, X)
        ns.merge_heads = lambda H: tf_module.MultiHeadSelfAttention.merge_heads(ns, H)
        return encdec.MultiHeadCrossAttention.forward(ns, Y, M)[0]

    _rejected(sec06.check_cross_attention(on_a_namespace), "MultiHeadCrossAttention.forward")
    assert sec06.check_cross_attention(_cross_attention).passed


def test_the_grader_replays_the_namespace_forward_as_a_rejection(monkeypatch):
    import types

    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")

    def on_a_namespace(block, X, norm_first):
        ns = types.SimpleNamespace(attn=block.attn, ffn=block.ffn, norm1=block.norm1, norm2=block.norm2,
                                   norm_first=norm_first)
        return tf.TransformerBlock.forward(ns, X)[0]

    direct, replayed = sec06.check_block_forward(on_a_namespace), _replayed(sec06.check_block_forward, on_a_namespace)
    assert not direct.passed and not replayed.passed and replayed.message == direct.message


def test_top_k_probs_checker_does_not_use_the_library_reference():  # 参考是检查自己写的：库里的函数坏了也照样判对
    from seqlab import gpt

    original = gpt.next_token_probs
    try:
        gpt.next_token_probs = lambda *args, **kwargs: (_ for _ in ()).throw(AssertionError("不该被调用"))
        assert sec06.check_top_k_probs(_top_k_probs).passed
    finally:
        gpt.next_token_probs = original


def test_block_params_rejects_layernorm_gamma_only():
    _rejected(sec06.check_block_params(lambda d, f: _block_params(d, f) - 2 * d))


# ---------------------------------------------------------------- 计数器在学生手里：入口本身就不交出结果
def _reset_after_the_whole_block(block, X, norm_first):  # 调用整个块，再把计数清零
    block.norm_first = norm_first
    out = block(X)[0]
    block.forward_calls.zero_()
    return out


def _reset_after_the_module(attn, Y, M):
    out = attn(Y, M)[0]
    attn.forward_calls.zero_()
    return out


def _buffer_replaced(block, X, norm_first):  # 整个换掉缓冲区，而不是原地清零
    block.norm_first = norm_first
    out = block(X)[0]
    block.forward_calls = torch.zeros((), dtype=torch.long)
    return out


def _via_wrapped(block, X, norm_first):  # 从（检查换上的）forward 的 __wrapped__ 取回原函数，借一个命名空间当 self
    import types

    fwd = tf.TransformerBlock.forward
    fwd = getattr(fwd, "__wrapped__", fwd)
    ns = types.SimpleNamespace(attn=block.attn, ffn=block.ffn, norm1=block.norm1, norm2=block.norm2,
                               norm_first=norm_first)
    return fwd(ns, X)[0]


def _via_inspect_unwrap(block, X, norm_first):
    import inspect
    import types

    ns = types.SimpleNamespace(attn=block.attn, ffn=block.ffn, norm1=block.norm1, norm2=block.norm2,
                               norm_first=norm_first)
    return inspect.unwrap(tf.TransformerBlock.forward)(ns, X)[0]


def _cross_via_wrapped(attn, Y, M, unwrap=lambda f: getattr(f, "__wrapped__", f)):
    import types

    C, S = encdec.MultiHeadCrossAttention, tf.MultiHeadSelfAttention
    ns = types.SimpleNamespace(W_Q=attn.W_Q, W_K=attn.W_K, W_V=attn.W_V, W_O=attn.W_O, n_heads=attn.n_heads,
                               d_k=attn.d_k, d_model=attn.d_model)
    ns.split_heads = lambda X: unwrap(S.split_heads)(ns, X)
    ns.merge_heads = lambda H: unwrap(S.merge_heads)(ns, H)
    return unwrap(C.forward)(ns, Y, M)[0]


def _cross_via_inspect_unwrap(attn, Y, M):
    import inspect

    return _cross_via_wrapped(attn, Y, M, unwrap=inspect.unwrap)


_WHOLE_BLOCK_ATTACKS = [_reset_after_the_whole_block, _buffer_replaced, _via_wrapped, _via_inspect_unwrap]
_CROSS_ATTACKS = [_reset_after_the_module, _cross_via_wrapped, _cross_via_inspect_unwrap]


def test_resetting_the_counter_or_unwrapping_the_library_forward_is_rejected_directly_and_replayed(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    for check, answers, named in [(sec06.check_block_forward, _WHOLE_BLOCK_ATTACKS, "block(X)"),
                                  (sec06.check_cross_attention, _CROSS_ATTACKS, "attn(Y, M)")]:
        for answer in answers:
            direct, replayed = check(answer), _replayed(check, answer)
            _rejected(direct, named)
            assert not replayed.passed and replayed.message == direct.message, answer.__name__


def test_forbidden_entries_give_no_result_and_do_not_expose_the_original():
    seen = {}

    def probe(block, X, norm_first):  # 接住异常、把计数清零：入口仍然没有交出结果
        for name, attempt in [("block", lambda: block(X)), ("forward", lambda: tf.TransformerBlock.forward(block, X)),
                              ("norm_first", lambda: block.norm_first), ("deepcopy", lambda: copy.deepcopy(block))]:
            try:
                seen[name] = attempt()
            except RuntimeError:
                seen[name] = "raised"
        fwd = tf.TransformerBlock.forward
        seen["wrapped"] = hasattr(fwd, "__wrapped__")
        seen["closure"] = [type(c.cell_contents).__name__ for c in fwd.__closure__ or ()]
        seen["defaults"] = (fwd.__defaults__, fwd.__kwdefaults__)
        block.forward_calls.zero_()
        return _block_forward(block, X, norm_first)

    sec06.check_block_forward(probe)
    assert seen["block"] == seen["forward"] == seen["norm_first"] == seen["deepcopy"] == "raised"
    assert not seen["wrapped"] and "function" not in seen["closure"] and seen["defaults"] == (None, None)
    # 检查结束后，库里的方法原样恢复，检查之外照常可用
    assert tf.TransformerBlock.forward.__qualname__ == "TransformerBlock.forward"
    block = tf.TransformerBlock(8, 2, 16)
    assert block(torch.zeros(1, 3, 8))[0].shape == (1, 3, 8)


def test_catching_the_blocked_call_gives_the_same_verdict_directly_and_replayed(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")

    def try_then_by_hand(block, X, norm_first):  # 先试整个块，失败了再亲手算：试过就算用了
        try:
            block.norm_first = norm_first
            return block(X)[0]
        except RuntimeError:
            return _block_forward(block, X, norm_first)

    def try_reset_then_by_hand(block, X, norm_first):  # 同上，但把计数清零：结果只能是亲手算的
        try:
            return block(X)[0]
        except RuntimeError:
            block.forward_calls.zero_()
            return _block_forward(block, X, norm_first)

    direct, replayed = sec06.check_block_forward(try_then_by_hand), _replayed(sec06.check_block_forward, try_then_by_hand)
    _rejected(direct, "block(X)")
    assert not replayed.passed and replayed.message == direct.message
    direct, replayed = (sec06.check_block_forward(try_reset_then_by_hand),
                        _replayed(sec06.check_block_forward, try_reset_then_by_hand))
    assert direct.passed == replayed.passed and direct.message == replayed.message


# ---------------------------------------------------------------- 原地修改输入的正确答案照样判对
def _inplace_post(block, X, norm_first):  # post-norm 用 X += ...（no_grad 下合法的常见写法）
    if norm_first:
        X = X + block.attn(block.norm1(X))[0]
        return X + block.ffn(block.norm2(X))
    X += block.attn(X)[0]
    X = block.norm1(X)
    return block.norm2(X + block.ffn(X))


def test_block_forward_accepts_an_answer_that_updates_X_in_place(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    assert sec06.check_block_forward(_inplace_post).passed
    assert _replayed(sec06.check_block_forward, _inplace_post).passed


# ---------------------------------------------------------------- 除以 √d_model 会被点名
def test_cross_attention_names_scaling_by_sqrt_d_model(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")

    def by_sqrt_d_model(attn, Y, M):
        B, T, d = Y.shape
        n_h = attn.n_heads

        def heads(X):
            return X.view(B, X.shape[1], n_h, d // n_h).transpose(1, 2)

        Q, K, V = heads(attn.W_Q(Y)), heads(attn.W_K(M)), heads(attn.W_V(M))
        alpha = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(d), dim=-1)
        return attn.W_O((alpha @ V).transpose(1, 2).reshape(B, T, d))

    direct = sec06.check_cross_attention(by_sqrt_d_model)
    _rejected(direct, "√d_model")
    assert _replayed(sec06.check_cross_attention, by_sqrt_d_model).message == direct.message


_SAVED_FORWARD = encdec.MultiHeadCrossAttention.forward  # 检查开始之前就存下来的库函数
_SAVED_SPLIT, _SAVED_MERGE = tf.MultiHeadSelfAttention.split_heads, tf.MultiHeadSelfAttention.merge_heads


def _fresh_copy(module_name: str, alias: str):
    """把库里的模块从源文件重新载入一份（与 seqlab 里已经导入的那份互不相干）。"""
    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None
    fresh_spec = importlib.util.spec_from_file_location(alias, spec.origin)
    assert fresh_spec is not None and fresh_spec.loader is not None
    module = importlib.util.module_from_spec(fresh_spec)
    sys.modules[alias] = module
    fresh_spec.loader.exec_module(module)
    return module


def _on_a_namespace(attn, forward, split, merge):
    ns = types.SimpleNamespace(**{k: v for k, v in vars(attn).items() if not k.startswith("_")})
    ns.W_Q, ns.W_K, ns.W_V, ns.W_O = attn.W_Q, attn.W_K, attn.W_V, attn.W_O
    ns.split_heads, ns.merge_heads = (lambda x: split(ns, x)), (lambda x: merge(ns, x))
    return ns


def test_saved_or_reimported_library_functions_are_recognised_by_their_code(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")

    def saved(attn, Y, M):
        return _SAVED_FORWARD(_on_a_namespace(attn, _SAVED_FORWARD, _SAVED_SPLIT, _SAVED_MERGE), Y, M)[0]

    def reimported(attn, Y, M):
        ft, fe = _fresh_copy("seqlab.transformer", "_fresh_tf"), _fresh_copy("seqlab.encdec", "_fresh_encdec")
        split, merge = ft.MultiHeadSelfAttention.split_heads, ft.MultiHeadSelfAttention.merge_heads
        return fe.MultiHeadCrossAttention.forward(_on_a_namespace(attn, None, split, merge), Y, M)[0]

    for answer in (saved, reimported):
        direct, replayed = sec06.check_cross_attention(answer), _replayed(sec06.check_cross_attention, answer)
        assert not direct.passed and "MultiHeadCrossAttention.forward" in direct.message, answer.__name__
        assert (replayed.passed, replayed.message) == (direct.passed, direct.message), answer.__name__
