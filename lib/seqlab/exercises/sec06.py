"""第 1.6 节练习的自动检查。"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator

import torch
from torch import nn

from seqlab import measure
from seqlab import transformer as tf
from seqlab.exercises import (
    CheckFailed,
    call,
    call_tracing_torch,
    checker,
    entry_points_watched,
    expect,
    expect_close,
    expect_number,
    expect_tensor,
    fail,
)

# 练习 1.6.2 与 1.6.7 只许用题目给的部件。新建一个带参数的层（再把权重拷过去）会调用参数初始化，
# PyTorch 现成的多头注意力和编码器层各有一个融合的入口：这些运算名在学生函数里出现，就说明没有亲手组装。
READY_MADE_LAYERS = (
    "uniform_", "normal_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "trunc_normal_",
    "multi_head_attention_forward", "_native_multi_head_attention", "_transformer_encoder_layer_fwd",
)


def _integer(value, what: str) -> int:
    """学生返回的数必须是整数（``3.0`` 这样的整数值也算），否则说明收到的是什么。"""
    number = expect_number(value, what)
    if number != int(number):
        fail(f"{what}应该是整数，你返回的是 {value!r}。")
    return int(number)


class _Blocked(RuntimeError):
    """学生的函数用到了题目不许用的入口：它拿不到结果，只会得到这个异常。"""

    def __init__(self) -> None:
        super().__init__("题目不许用这个入口，请只用题目给的部件。")


# 学生的函数运行期间为真：这时题目不许用的入口一律先计数、再抛出 _Blocked，而不是照常算出结果。
# 计数器在学生手里（它可以把计数清零），所以单靠计数不够：入口本身就不交出结果。
_blocking = False


def _bump(module: nn.Module) -> None:
    """给模块当前的 ``forward_calls`` 缓冲区加 1（学生把它换成了别的东西时不计：评分时的重放也看不到它）。"""
    counter = module._buffers.get("forward_calls")
    if isinstance(counter, torch.Tensor) and counter.numel() == 1:
        with torch.no_grad():
            counter += 1


def _calls(module: nn.Module) -> int:
    """模块当前的 ``forward_calls``；读法与 ``_bump`` 相同，直接调用与评分时的重放读到的是同一个数。"""
    counter = module._buffers.get("forward_calls")
    return int(counter) if isinstance(counter, torch.Tensor) and counter.numel() == 1 else 0


class _CallCounter(nn.Module):
    """混入检查用的模块：学生的函数运行期间，题目不许用的入口每被用到一次，缓冲区 ``forward_calls`` 加 1，
    然后抛出 ``_Blocked``——用到它的人拿不到结果。

    这些入口是：调用整个模块（``forward``），库里那份 ``forward`` 才会用到的东西（子类用 ``_trap`` 挂上，例如
    ``block.norm_first``、``attn.split_heads``——事先存好 ``TransformerBlock.forward``、再用在 ``block`` 上时也会用到它们），
    以及把整个模块深拷贝一份。缓冲区是模块状态的一部分，评分时随参数的原地修改一起记录、重放，
    检查靠它选说明：学生的函数报错或返回时计数不是 0，就点名它用了不许用的入口；
    学生即使接住异常、把计数清零，也拿不到这些入口的结果，答案只能自己算出来。
    """

    forward_calls: torch.Tensor

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.register_buffer("forward_calls", torch.zeros((), dtype=torch.long))

    def _block(self) -> None:
        """学生的函数运行期间：计数，再抛出 ``_Blocked``；其余时候（检查自己算参考时）什么也不做。"""
        if _blocking:
            _bump(self)
            raise _Blocked

    def forward(self, *args, **kwargs):
        self._block()
        return super().forward(*args, **kwargs)

    def __deepcopy__(self, memo):
        self._block()
        clone = self.__class__.__new__(self.__class__)
        memo[id(self)] = clone
        clone.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return clone


def _trap(name: str):
    """一个设了关卡的方法：学生的函数运行期间计数并抛出 ``_Blocked``，其余时候照常调用父类的同名方法。"""

    def method(self, *args, **kwargs):
        self._block()
        return getattr(super(type(self), self), name)(*args, **kwargs)

    return method


class _CountedBlock(_CallCounter, tf.TransformerBlock):
    """库里的 ``TransformerBlock.forward`` 按 ``self.norm_first`` 选放法；题目的放法由参数给出，用不着读它。"""

    @property
    def norm_first(self) -> bool:
        self._block()
        return self._norm_first

    @norm_first.setter
    def norm_first(self, value: bool) -> None:
        self._norm_first = value


@contextlib.contextmanager
def _library_calls_blocked(module: nn.Module, owner: type, names: tuple[str, ...]) -> Iterator[None]:
    """学生的函数运行期间，把库里这几个方法（在定义它们的那个类上）换成“给 ``module`` 的计数加 1、再抛出 ``_Blocked``”的版本，
    同时打开 ``_CallCounter`` 的关卡。

    这样不管学生怎样用到它们——绑定在对象上调用、从类上直接取、借一个命名空间当 ``self``、
    还是把对象的类换掉——都拿不到结果，并计到 ``module.forward_calls`` 上（它是模块的缓冲区，评分时随模块状态一起记录、重放）。
    换上的版本不引用原来的函数（没有 ``__wrapped__``，闭包里也没有），从它身上找不回原函数。
    事先把原函数存进变量、或者重新载入模块再借一个命名空间当 ``self`` 调用，由 ``entry_points_watched`` 按代码认出。
    """
    global _blocking
    patched, targets = [], []
    for name in names:
        definer = next(klass for klass in owner.__mro__ if name in klass.__dict__)
        original = definer.__dict__[name]
        targets.append(original.fget if isinstance(original, property) else original)

        def blocked(*args, **kwargs):
            _bump(module)
            raise _Blocked

        blocked.__name__, blocked.__qualname__ = original.__name__, original.__qualname__
        patched.append((definer, name, original))
        setattr(definer, name, blocked)
    _blocking = True
    try:
        with entry_points_watched(targets):
            yield
    finally:
        _blocking = False
        for definer, name, original in reversed(patched):
            setattr(definer, name, original)


def _call_blocking(module: _CallCounter, owner: type, names: tuple[str, ...], message: str, fn, *args) -> tuple:
    """在关卡打开时调用学生的函数（``call_tracing_torch``）。函数报错或返回时 ``module`` 的计数不是 0，就用 ``message`` 判错。

    重放时学生的函数换成了记录：它按记录把计数恢复、再抛出同类的异常或交回结果，这里得出同样的结论。"""
    module.forward_calls.zero_()
    try:
        with _library_calls_blocked(module, owner, names):
            result = call_tracing_torch(fn, *args)
    except (CheckFailed, NotImplementedError):
        raise
    except Exception:
        if _calls(module):
            fail(message)
        raise
    if _calls(module) or result[1].used("library_entry_point"):
        fail(message)
    return result


def _ready_made(trace) -> list[str]:
    return sorted({n.rsplit(".", 1)[-1] for n in trace.used(*READY_MADE_LAYERS)})


@checker(
    "1.6.1",
    "一个块有多少参数",
    objective="数清一个 Transformer 块里每个矩阵、偏置和归一化参数的个数",
    difficulty=1,
    minutes=10,
)
def check_block_params(block_params):
    """学生函数 ``block_params(d_model, d_ff) -> int``，与实际的模块逐一比对。"""
    # d_ff 故意取得不是 4·d_model（只有最后一组是原论文的 4 倍）：只对 d_ff = 4d 成立的公式在前面就会被认出来
    for d, h, d_ff in [(8, 2, 20), (64, 4, 100), (12, 3, 96), (512, 8, 2048)]:
        got = call(block_params, d, d_ff)
        want = sum(p.numel() for p in tf.TransformerBlock(d, h, d_ff).parameters())
        torch_count = sum(p.numel() for p in nn.TransformerEncoderLayer(d, h, d_ff).parameters())
        if torch_count != want:  # 检查自身的前提：库里的块与 PyTorch 的编码器层参数一样多
            raise RuntimeError(f"TransformerBlock 与 nn.TransformerEncoderLayer 的参数个数不同：{want} 对 {torch_count}")
        attn, ffn, norms = 4 * (d * d + d), 2 * d * d_ff + d_ff + d, 4 * d
        got_i = _integer(got, "参数个数")
        if d_ff != 4 * d and got_i == want - ffn + (2 * d * 4 * d + 4 * d + d):
            fail(f"d_model = {d}、d_ff = {d_ff} 时，你的结果等于 d_ff = 4·d_model = {4 * d} 时的个数：d_ff 是单独的参数，"
                 "不一定是 d_model 的 4 倍（那只是原论文的取法），FFN 的两层要按 d_ff 来数。")
        if got_i == want - 4 * d:  # 两个 LayerNorm 的 γ、β 与四个投影的偏置恰好都是 4d 个，分不出漏了哪一样
            fail(f"d = {d} 时少了 4d = {4 * d} 个：两个 LayerNorm 各有 d 个 γ 和 d 个 β，"
                 "W_Q、W_K、W_V、W_O 也各带一个 d 维偏置——你漏了其中一样。")
        if got_i == want - 8 * d:
            fail(f"d = {d} 时少了 8d = {8 * d} 个：两个 LayerNorm 的 γ、β 和四个投影的偏置都要算进去。")
        if got_i == want - d_ff - d:
            fail(f"d = {d} 时少了 d_ff + d = {d_ff + d} 个：FFN 的两层线性变换各有偏置。")
        if got_i == want - attn // 4:
            fail("差了一整个 d × d 的投影：注意力里有四个矩阵 W_Q、W_K、W_V 和输出的 W_O。")
        expect(
            got_i == want,
            f"d_model = {d}、d_ff = {d_ff} 时应为 {want:,}，你的是 {got_i:,}。分项：注意力 {attn:,}，"
            f"FFN {ffn:,}，归一化 {norms:,}——你和哪一项对不上？",
        )
    return (f"与 TransformerBlock 和 torch.nn.TransformerEncoderLayer 的参数个数都一致；d = 512、d_ff = 2048 时是 {want:,}，"
            f"其中 FFN 占 {ffn / want:.0%}。")


@checker(
    "1.6.2",
    "pre-norm 与 post-norm",
    objective="用同一组部件分别按 post-norm 和 pre-norm 的顺序组装一个块，并与库里的实现比对",
    difficulty=2,
    minutes=15,
)
def check_block_forward(block_forward):
    """学生函数 ``block_forward(block, X, norm_first) -> (B, S, d)``。"""
    torch.manual_seed(16)
    block = _CountedBlock(16, 2, 32).eval()
    with torch.no_grad():  # 让 LayerNorm 的 γ、β 不是 1 和 0，否则有些错误看不出来
        for norm in (block.norm1, block.norm2):
            norm.gamma.uniform_(0.5, 1.5)
            norm.beta.uniform_(-0.5, 0.5)
    X = torch.randn(2, 5, 16) * 3
    want = {}
    with torch.no_grad():
        for norm_first in (False, True):
            block.norm_first = norm_first
            want[norm_first] = block(X)[0]
    names = {False: "post-norm（norm_first=False）", True: "pre-norm（norm_first=True）"}
    whole_block = ("题目只许用四个部件：不能调用 block(X)、TransformerBlock.forward 或它的拷贝（它们按 block.norm_first "
                   "自己选放法，你的函数用不着读 block.norm_first），要用 block.attn、block.ffn、block.norm1、block.norm2 亲手组装。")
    for norm_first in (False, True):
        with torch.no_grad():  # 每次交一份 X 的副本：学生原地改 X（X += ...）不会改动下一次调用的输入
            got, trace = _call_blocking(block, tf.TransformerBlock, ("forward",), whole_block,
                                        block_forward, block, X.clone(), norm_first)
        if ready := _ready_made(trace):
            fail(f"你的函数调用了 {'、'.join(ready)}：它新建了带参数的层或用了 PyTorch 现成的实现。"
                 "题目只许用 block 的四个部件，不要新建层再把权重拷过去。")
        if isinstance(got, tuple):
            fail("请只返回块的输出张量；block.attn(...) 返回（输出，权重）两项，要先取出第 0 项。")
        expect_tensor(got)
        expect(got.shape == X.shape, f"输出形状应与输入相同 {tuple(X.shape)}，你的是 {tuple(got.shape)}。")
        if torch.allclose(got, want[not norm_first], atol=1e-5):
            fail(f"{names[norm_first]} 的结果等于另一种放法：两种顺序弄反了。")
        if norm_first and got.std(dim=-1).sub(1).abs().max() < 0.2:
            fail("pre-norm 的输出不应再被归一化：残差流 X 自己从不经过 LayerNorm，只有送进子层的副本才归一化。")
        expect(
            torch.allclose(got, want[norm_first], atol=1e-5),
            f"{names[norm_first]} 与库里的实现不一致（最大差 {(got - want[norm_first]).abs().max():.3g}）。"
            "post-norm：X = LN₁(X + Attn(X))，X = LN₂(X + FFN(X))；"
            "pre-norm：X = X + Attn(LN₁(X))，X = X + FFN(LN₂(X))。",
        )
    return "两种放法都与 TransformerBlock 一致。注意 pre-norm 里有一条从输入直达输出、不经过任何归一化的残差通路。"


def _measured_step_flops(T: int, d: int, d_ff: int, n_layers: int, vocab: int) -> int:
    torch.manual_seed(0)
    model = tf.TinyDecoder(vocab, d, 2, d_ff, n_layers).eval()
    ids = torch.randint(vocab, (1, T + 1))
    cache = tf.KVCache()
    with torch.no_grad():
        model(ids[:, :T], cache)
        return measure.count_flops(lambda: model(ids[:, T:], cache))


@checker(
    "1.6.3",
    "有 KV cache 时一步解码的浮点运算数",
    objective="写出带 KV cache 生成一个 token 的浮点运算数，看清哪一项随上下文长度增长",
    difficulty=3,
    minutes=20,
)
def check_decode_step_flops(decode_step_flops):
    """学生函数 ``decode_step_flops(T_kv, d_model, d_ff, n_layers, vocab) -> int``，与在真实模型上数出的浮点运算数比对。"""
    cases = [(10, 16, 64, 1, 20), (37, 32, 48, 2, 50), (100, 64, 256, 3, 30)]
    for T, d, d_ff, n_layers, vocab in cases:
        want = _measured_step_flops(T, d, d_ff, n_layers, vocab)  # 先数好：学生的函数改不了参照值
        got = call(decode_step_flops, T, d, d_ff, n_layers, vocab)
        got_f = expect_number(got)
        diff = want - got_f
        if diff == 2 * d * vocab:
            fail(f"T_kv = {T} 时少了 2·d·V = {2 * d * vocab:,}：最后还要把向量乘上输出矩阵，得到词表上的 logits。")
        if diff == 4 * d * n_layers:
            fail("少了每层 4d：新 token 在缓存里的 T_kv 个 Key 之外，还要读它自己，所以是 T_kv + 1 个。")
        if diff == n_layers * 4 * d * (T + 1):
            fail("注意力那两项（分数 q·Kᵀ 与加权求和 α·V）都随上下文长度 T_kv 增长，你好像漏掉了它们。")
        expect_close(
            got_f, want,
            f"T_kv = {T}、d = {d}、d_ff = {d_ff}、{n_layers} 层、V = {vocab} 时的浮点运算数（在真实模型上数出）",
        )
    return ("与在真实模型上数出的浮点运算数一致。只有注意力那两项随 T_kv 线性增长；投影、FFN 和输出层与 T_kv 无关——"
            "不用缓存时，这些与 T_kv 无关的工作要对全部 T_kv + 1 个位置再做一遍。")


@checker(
    "1.6.5",
    "温度与 top-k 采样",
    objective="把 logits 变成采样用的分布：先除以温度，只留概率最高的 k 个，再归一化",
    difficulty=2,
    minutes=15,
)
def check_top_k_probs(top_k_probs):
    """学生函数 ``top_k_probs(logits (V,), k, temperature) -> (V,)``，与检查里自己写的参考（float64、逐个排序）比对。"""

    def reference(logits: torch.Tensor, k: int, temperature: float) -> torch.Tensor:
        z = logits.double() / temperature
        keep = sorted(range(len(z)), key=lambda w: -float(z[w]))[:k]  # 最大的 k 个编号
        kept = torch.full_like(z, float("-inf"))
        kept[keep] = z[keep]
        return torch.softmax(kept, dim=-1).float()

    logits = torch.randn(12, generator=torch.Generator().manual_seed(65)) * 2
    for k, temperature in [(3, 1.0), (5, 0.5), (1, 2.0), (12, 1.5)]:
        got = call(top_k_probs, logits.clone(), k, temperature)
        want = reference(logits, k, temperature)
        expect(isinstance(got, torch.Tensor) and got.shape == logits.shape,
               f"应返回与 logits 同形状 {tuple(logits.shape)} 的张量，你返回的是 {got!r:.60}。")
        got = got.detach().float()
        kept = int((got > 0).sum())
        if kept != k:
            fail(f"k = {k} 时应恰好有 {k} 个 token 的概率大于 0，你的有 {kept} 个。")
        if not torch.isclose(got.sum(), torch.tensor(1.0), atol=1e-5):
            fail(f"截断之后要重新归一化：你的概率加起来是 {got.sum():.4f}，不是 1。")
        if temperature != 1.0 and k > 1 and torch.allclose(got, reference(logits, k, 1.0), atol=1e-5):
            fail(f"温度 τ = {temperature} 没有起作用：要先把 logits 除以 τ，再做 softmax。")
        expect(
            torch.allclose(got, want, atol=1e-5),
            f"k = {k}、τ = {temperature} 时与参考不一致（最大差 {(got - want).abs().max():.3g}）。"
            "顺序是：logits / τ → 只留最大的 k 个（其余设为 −∞）→ softmax。",
        )
    return "与参考实现一致（库里的 seqlab.gpt.next_token_probs 也是这样算的）。k = 1 就是贪心；k 等于词表大小、τ = 1 就是直接从模型的分布里采样。"


def _real_cache_bytes(n_layers: int, d_model: int, T: int, batch: int, dtype: torch.dtype) -> int:
    """建一个真实的模型，Prefill ``batch × T`` 个 token，返回缓存里全部 K、V 张量的 ``.nbytes`` 之和。"""
    torch.manual_seed(0)
    model = tf.TinyDecoder(20, d_model, 2, 2 * d_model, n_layers).to(dtype).eval()
    cache = tf.KVCache()
    with torch.no_grad():
        model(torch.zeros(batch, T, dtype=torch.long), cache)
    return sum(t.nbytes for t in cache.K + cache.V)


@checker(
    "1.6.6",
    "KV cache 有多大，能放下多长的上下文",
    objective="由层数、宽度、batch 和数的精度算出 KV cache 的大小，并反过来求给定显存预算下能放下的最长上下文",
    difficulty=2,
    minutes=15,
)
def check_kv_cache_size(kv_cache_size, max_context):
    """学生函数 ``kv_cache_size(n_layers, d_model, T_kv, batch, bytes_per_value) -> int``，与真实缓存的 ``.nbytes`` 比对；
    ``max_context(n_layers, d_model, batch, bytes_per_value, budget) -> int``，在小配置上用真实缓存核对
    “T_kv 放得下、T_kv + 1 放不下”，在大配置上按缓存公式核对。"""
    cases = [(1, 16, 10, 1, torch.float32), (3, 32, 7, 4, torch.float64), (2, 64, 50, 2, torch.float32)]
    for n_layers, d, T, B, dtype in cases:
        size = torch.empty((), dtype=dtype).element_size()
        want = _real_cache_bytes(n_layers, d, T, B, dtype)  # 先量好：学生的函数改不了参照值
        got = call(kv_cache_size, n_layers, d, T, B, size)
        got_i = _integer(got, "字节数")
        where = f"{n_layers} 层、d_model = {d}、T_kv = {T}、batch = {B}、每个数 {size} 字节"
        if 2 * got_i == want:
            fail(f"{where}时只有真实缓存的一半：K 和 V 各存一份。")
        if got_i * n_layers == want and n_layers > 1:
            fail(f"{where}时少了层数这个因子：每一层都有自己的 K、V。")
        if got_i * B == want and B > 1:
            fail(f"{where}时少了 batch 这个因子：每条序列都有自己的缓存。")
        expect(got_i == want, f"{where}时真实缓存张量的 nbytes 之和是 {want:,}，你的是 {got_i:,}。")

    # 小配置：用真实的缓存核对（T_kv 放得下，T_kv + 1 放不下）
    for n_layers, d, B, dtype, budget in [(2, 16, 3, torch.float32, 10_000), (1, 8, 2, torch.float64, 5_000),
                                          (2, 16, 3, torch.float32, 700)]:
        size = torch.empty((), dtype=dtype).element_size()
        where = f"{n_layers} 层、d_model = {d}、batch = {B}、每个数 {size} 字节、预算 {budget:,} 字节"
        got_T = _integer(call(max_context, n_layers, d, B, size, budget), "上下文长度")
        expect(got_T >= 0, f"{where}时你返回了 {got_T}：上下文长度不能是负数。")
        if got_T > 0:
            used = _real_cache_bytes(n_layers, d, got_T, B, dtype)
            expect(used <= budget, f"{where}时，上下文 {got_T} 的真实缓存有 {used:,} 字节，超过了预算。")
        bigger = _real_cache_bytes(n_layers, d, got_T + 1, B, dtype)
        expect(bigger > budget, f"{where}时，上下文 {got_T + 1} 的真实缓存也只有 {bigger:,} 字节，还放得下：你给的不是最长的。")

    # 接近真实大模型的配置：真实张量太大，按缓存公式核对
    for n_layers, d, B, size, budget in [(32, 4096, 8, 2, 16 * 2**30), (32, 4096, 8, 2, 4_194_304 * 2384 + 3_000_000),
                                         (80, 8192, 1, 2, 40 * 10**9)]:
        per_position = 2 * n_layers * B * d * size
        want_T = budget // per_position
        where = f"{n_layers} 层、d_model = {d}、batch = {B}、每个数 {size} 字节、预算 {budget:,} 字节"
        got_T = _integer(call(max_context, n_layers, d, B, size, budget), "上下文长度")
        if got_T == want_T * B and B > 1:
            fail(f"{where}时你的结果是应有的 batch 倍：{B} 条序列各有各的缓存，要一起装进预算。")
        if got_T == 2 * want_T or got_T == 2 * want_T + 1:
            fail(f"{where}时你的结果大约多了一倍：每个位置要存 K 和 V 两份。")
        expect(got_T <= want_T, f"{where}时，上下文 {got_T:,} 的缓存是 {got_T * per_position:,} 字节，超过了预算（要向下取整）。")
        expect(got_T == want_T, f"{where}时最多能放 {want_T:,} 个位置，你的是 {got_T:,}。")
    return ("与真实缓存张量的 nbytes 一致：2 × 层数 × batch × T_kv × d_model × 每个数的字节，与头数无关。"
            "能放下的上下文是预算 ÷ 每个位置的字节数，向下取整：精度减半、上下文翻倍；batch 翻倍、上下文减半。")


@checker(
    "1.6.7",
    "交叉注意力子层",
    objective="用四个投影写出多头交叉注意力：Query 来自解码器，Key 与 Value 来自编码器，并与 PyTorch 逐数比对",
    difficulty=2,
    minutes=20,
)
def check_cross_attention(cross_attention):
    """学生函数 ``cross_attention(attn, Y (B, T, d), M (B, S, d)) -> (B, T, d)``；参考是拷贝了同样权重的
    ``torch.nn.MultiheadAttention(query=Y, key=M, value=M)``。"""
    from torch import nn

    from seqlab import encdec

    class CountedCrossAttention(_CallCounter, encdec.MultiHeadCrossAttention):
        # 库里的 forward 用这两个方法分头、拼接；题目只许用四个线性层和头数，用不着它们
        split_heads = _trap("split_heads")
        merge_heads = _trap("merge_heads")

    torch.manual_seed(67)
    d, h = 12, 3
    attn = CountedCrossAttention(d, h).eval()
    reference = nn.MultiheadAttention(d, h, batch_first=True).eval()
    with torch.no_grad():
        reference.in_proj_weight.copy_(torch.cat([attn.W_Q.weight, attn.W_K.weight, attn.W_V.weight]))
        reference.in_proj_bias.copy_(torch.cat([attn.W_Q.bias, attn.W_K.bias, attn.W_V.bias]))
        reference.out_proj.weight.copy_(attn.W_O.weight)
        reference.out_proj.bias.copy_(attn.W_O.bias)
    Y, M = torch.randn(2, 4, d), torch.randn(2, 7, d)
    with torch.no_grad():
        want = reference(Y, M, M, need_weights=False)[0]
        self_attn = reference(Y, Y, Y, need_weights=False)[0]
        got, trace = _call_blocking(
            attn, encdec.MultiHeadCrossAttention, ("forward", "split_heads", "merge_heads"),
            "题目只许用四个线性层和头数：不能调用 attn(Y, M)、MultiHeadCrossAttention.forward（或它的 split_heads、"
            "merge_heads）或它的拷贝，要自己写出投影、分头、softmax 和拼接。",
            cross_attention, attn, Y.clone(), M.clone())
    if ready := _ready_made(trace):
        fail(f"你的函数调用了 {'、'.join(ready)}：它新建了带参数的层（比如 torch.nn.MultiheadAttention）"
             "或用了 PyTorch 现成的多头注意力。题目只许用 attn 的四个线性层和头数。")
    if isinstance(got, tuple):
        fail("请只返回输出张量（形状 (B, T, d)），不要连权重一起返回。")
    expect_tensor(got)
    if got.shape == (2, 7, d):
        fail("输出有 S = 7 行，和源句一样长：Query 应来自解码器 Y（每个目标位置一行），Key 与 Value 才来自编码器 M。")
    expect(got.shape == want.shape, f"输出形状应为 {tuple(want.shape)}，你的是 {tuple(got.shape)}。")
    if torch.allclose(got, self_attn, atol=1e-5):
        fail("这是自注意力：Key 与 Value 也来自 Y。交叉注意力的 Key、Value 来自编码器的输出 M。")
    with torch.no_grad():
        Q, K, V = (x.view(2, -1, h, d // h).transpose(1, 2) for x in (attn.W_Q(Y), attn.W_K(M), attn.W_V(M)))
        unscaled = torch.softmax(Q @ K.transpose(-2, -1), dim=-1) @ V
        unscaled = attn.W_O(unscaled.transpose(1, 2).reshape(2, 4, d))
        one_head = torch.softmax(attn.W_Q(Y) @ attn.W_K(M).transpose(-2, -1) / d**0.5, dim=-1) @ attn.W_V(M)
        one_head = attn.W_O(one_head)
        by_d_model = torch.softmax(Q @ K.transpose(-2, -1) / d**0.5, dim=-1) @ V
        by_d_model = attn.W_O(by_d_model.transpose(1, 2).reshape(2, 4, d))
    if torch.allclose(got, unscaled, atol=1e-5):
        fail(f"分数要除以 √d_k（这里 d_k = d / n_h = {d // h}）再做 softmax。")
    if torch.allclose(got, by_d_model, atol=1e-5):
        fail(f"你把分数除以了 √d_model = √{d}：每个头的点积只有 d_k = d / n_h = {d // h} 项，要除以 √d_k = √{d // h}。")
    if torch.allclose(got, one_head, atol=1e-5):
        fail(f"你只用了一个 {d} 维的头：要把 Q、K、V 各自切成 n_h = {h} 个 {d // h} 维的头，分别做注意力，再拼回来经过 W_O。")
    expect(torch.allclose(got, want, atol=1e-5),
           f"与 torch.nn.MultiheadAttention 不一致（最大差 {(got - want).abs().max():.3g}）。"
           "顺序：Q = W_Q(Y)，K = W_K(M)，V = W_V(M) → 切成 n_h 个头 → softmax(QKᵀ/√d_k)V → 拼接 → W_O。")
    lib = attn(Y, M)[0]
    expect(torch.allclose(got, lib, atol=1e-5), "与库里的 MultiHeadCrossAttention 不一致。")
    return ("与 torch.nn.MultiheadAttention（query = Y，key = value = M）及库里的实现都一致。输出的行数跟着解码器走，"
            "每一行读的是整个源句：这正是第 1.4 节 Bahdanau 注意力的读法，只是打分换成了缩放点积。")
