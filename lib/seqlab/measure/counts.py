"""运算量与操作计数：矩阵乘法的浮点运算数、计算图的深度与最短路径、Vaswani 等（2017）表 1 的三项、
一次前向的算术强度。这些数与机器忙闲无关，没有抖动，笔记本可以对它们做断言。"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from seqlab.attention import scaled_dot_product_attention
from seqlab.errors import InputError, guard_memory
from seqlab.rnn import ElmanRNN, graph_depth, phi_fn
from seqlab.transformer import KVCache, MultiHeadSelfAttention, TinyDecoder, guard_decoder


# ---------------------------------------------------------------- 参数个数与浮点运算数
def n_parameters(model: nn.Module) -> int:
    """模型的参数个数（所有参数张量的元素个数之和）。"""
    return sum(p.numel() for p in model.parameters())



MATMULS = frozenset({"linear", "matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "addmm", "baddbmm"})


class MatmulFlops(TorchFunctionMode):
    """在 ``with`` 块内数矩阵乘法的浮点运算数：输出的每个元素要做 k 次乘加，记 ``2·k`` 次运算。

    只数矩阵乘法（``nn.Linear``、``@``、``bmm`` 等）——模型里几乎全部的运算量都在这里；
    Embedding 查表、softmax、归一化、逐元素的加法都不计。这与 PyTorch 的 ``FlopCounterMode``
    的约定相同，但它不需要加载编译器相关的模块，第一次使用时快得多。
    """

    def __init__(self) -> None:
        super().__init__()
        self.flops = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if name in MATMULS:
            # 收缩的那一维 k：A 的最后一维（addmm/baddbmm 的 A 是第 2 个参数，__rmatmul__ 的 A 在后面）
            A = args[1] if name in {"__rmatmul__", "addmm", "baddbmm"} else args[0]
            self.flops += 2 * out.numel() * A.shape[-1]
        return out


def count_flops(fn: Callable[[], object]) -> int:
    """运行 ``fn()``，返回其中矩阵乘法的浮点运算数（见 ``MatmulFlops``）。"""
    with MatmulFlops() as counter:
        fn()
    return counter.flops


class TorchCalls(TorchFunctionMode):
    """在 ``with`` 块内数调用了多少次张量运算（矩阵乘法、加法、softmax、取下标……各算一次，只数最外层的调用）。

    每次调用都要付一份与张量大小无关的调度开销；张量很小时，一次前向的用时主要取决于这个次数。
    """

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def count_torch_calls(fn: Callable[[], object]) -> int:
    """运行 ``fn()``，返回其中张量运算的调用次数（见 ``TorchCalls``）。"""
    with TorchCalls() as counter:
        fn()
    return counter.calls


def counted_flops(fn: Callable[[], object]) -> int:
    """运行 ``fn`` 一次，返回 PyTorch 的 ``FlopCounterMode`` 数出的浮点运算数（与机器忙闲无关）。"""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


# ---------------------------------------------------------------- 计算图：最短路径（最长依赖链是 ``seqlab.rnn.graph_depth``）
def graph_distance(output: torch.Tensor, leaf: torch.Tensor) -> int:
    """从输入 ``leaf`` 到 ``output`` 的最短依赖链有多少个运算：信息最少要经过几步才能从一处到达另一处。"""
    frontier, seen, steps = [output.grad_fn], set(), 0
    while frontier:
        nxt: list = []
        for node in frontier:
            if node is None or node in seen:
                continue
            seen.add(node)
            if getattr(node, "variable", None) is leaf:
                return steps
            nxt.extend(c for c, _ in node.next_functions)
        frontier, steps = nxt, steps + 1
    raise InputError("output 不依赖于这个输入。")


# ---------------------------------------------------------------- Vaswani 等（2017）表 1
def table1_counts(n: int, d: int, *, seed: int = 0) -> dict[str, dict[str, int]]:
    """在长度 ``n``、宽度 ``d`` 上实测表 1 的三项，分别对自注意力层与循环层（``seqlab.rnn.ElmanRNN``）。

    运算量按两种口径各数一次，两种口径对两种层一视同仁：

    * ``flops_mixing``：只数**跨位置混合**的部分——自注意力是 ``softmax(QKᵀ/√d)V`` 的两次矩阵乘
      （``4n²d``），循环层是每步的 ``W_h h_{t-1}``（``2nd²``）；逐位置的投影（``W_Q``、``W_K``、``W_V``、
      ``W_O`` 与循环层的 ``W_x x_t``）都不计；
    * ``flops_layer``：整层的全部矩阵乘法——自注意力再加四个投影（``8nd²``），循环层再加 ``W_x x_t``（``2nd²``）；
    * ``sequential``：整张计算图最长依赖链的运算数（必须串行的步数）；
    * ``path``：从第 1 个位置的输入到第 n 个位置输出的最短依赖链的运算数。
    """
    guard_memory(f"n = {n} 的表 1 计数", 4 * n * n + 8 * n * d * 4)
    g = torch.Generator().manual_seed(seed)
    xs = [torch.randn(d, generator=g, requires_grad=True) for _ in range(n)]
    X = torch.stack(xs)[None]  # (1, n, d)
    torch.manual_seed(seed)
    attn, rnn = MultiHeadSelfAttention(d, 1), ElmanRNN(d, d)
    Q, K, V = (W(X) for W in (attn.W_Q, attn.W_K, attn.W_V))
    Y_attn, _ = attn(X)

    def run_rnn() -> torch.Tensor:  # 一步一步地喂，每个 x_t 单独进入计算图，图才能分辨“哪个位置连到哪个位置”
        h = torch.zeros(d)
        for x_t in xs:
            h, _ = rnn.step(x_t, h)
        return h

    U = X[0] @ rnn.W_x.T  # (n, d)：逐位置的 W_x x_t，可以先对所有位置一次算完

    def recurrence_only() -> None:  # 真正必须一步接一步的部分：h_t = φ(u_t + W_h h_{t-1} + b)
        h = torch.zeros(d)
        for u_t in U:
            h = phi_fn(u_t + h @ rnn.W_h.T + rnn.b, rnn.phi)

    h_n = run_rnn()
    return {
        "self_attention": {
            "flops_mixing": count_flops(lambda: scaled_dot_product_attention(Q, K, V)),
            "flops_layer": count_flops(lambda: attn(X)),
            "sequential": graph_depth(Y_attn),
            "path": graph_distance(Y_attn[0, -1], xs[0]),
        },
        "recurrent": {
            "flops_mixing": count_flops(recurrence_only),
            "flops_layer": count_flops(run_rnn),
            "sequential": graph_depth(h_n),
            "path": graph_distance(h_n, xs[0]),
        },
    }


# ---------------------------------------------------------------- 算术强度：每搬 1 字节做多少次运算
@dataclass(frozen=True)
class Intensity:
    """一次前向的运算量与搬运量。``flops``：矩阵乘法的浮点运算数（``count_flops`` 数出）；
    ``weight_bytes``：这次前向读到的权重（矩阵乘法用到的全部参数，每个至少读一遍，Embedding 只读用到的行）；
    ``cache_bytes``：读写的 KV cache（Prefill 写入 S 个位置，一步 Decode 读入 T 个旧位置、写入 1 个新位置）。"""

    flops: int
    weight_bytes: int
    cache_bytes: int

    @property
    def bytes_moved(self) -> int:
        return self.weight_bytes + self.cache_bytes

    @property
    def flops_per_byte(self) -> float:
        return self.flops / self.bytes_moved


def _matmul_weight_bytes(model: TinyDecoder) -> int:
    """每次前向都要完整读一遍的参数：Embedding 表以外的全部参数（真实张量的字节数）。"""
    return sum(p.nbytes for name, p in model.named_parameters() if not name.startswith("embed."))


@torch.no_grad()
def arithmetic_intensity(model: TinyDecoder, S: int, mode: str, *, batch: int = 1) -> Intensity:
    """``mode = "prefill"``：一次处理 ``S`` 个 token；``mode = "decode"``：上下文已有 ``S`` 个 token 时的一步。

    ``batch`` 条序列一起算：权重每次前向只读一遍，却要用在 ``batch`` 倍的行上；每条序列有自己的 KV cache。
    运算量是在真实模型上数出来的；字节数来自真实张量：参数的 ``nbytes``、前向前后 KV cache 的 ``nbytes()``，
    以及 Embedding 表里真正被读到的行。
    """
    if not isinstance(batch, int) or batch < 1:
        raise InputError(f"batch 大小必须是正整数，现在是 {batch!r}。")
    guard_decoder(model, S + 1, batch)
    ids = torch.zeros(batch, S + 1, dtype=torch.long)
    row_bytes = model.embed.weight[0].nbytes
    cache = KVCache()
    if mode == "prefill":
        flops = count_flops(lambda: model(ids[:, :S], cache))
        return Intensity(flops, _matmul_weight_bytes(model) + batch * S * row_bytes, cache.nbytes())
    if mode == "decode":
        model(ids[:, :S], cache)
        flops = count_flops(lambda: model(ids[:, S:], cache))
        return Intensity(flops, _matmul_weight_bytes(model) + batch * row_bytes, cache.nbytes())
    raise InputError(f"未知的模式 {mode!r}；可选 'prefill' 或 'decode'。")
