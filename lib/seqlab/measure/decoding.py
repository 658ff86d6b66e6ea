"""Prefill 与 Decode 的实测：三种处理方式的用时与运算量、单步代价、每一层的时间线，以及沿一次真实生成的
每一步的代价与真实 KV cache 的字节数。用时只显示、不断言；运算量与字节数与机器忙闲无关。"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass

import torch

from seqlab.errors import InputError
from seqlab.measure.counts import Intensity, arithmetic_intensity, count_flops
from seqlab.measure.timing import cpu_clock, timing_samples
from seqlab.runtime import single_thread
from seqlab.transformer import KVCache, TinyDecoder, guard_decoder


@dataclass
class PrefillDecode:
    """同样 ``S`` 个 token 的三种处理方式（``MODES``）的实测结果。

    ``samples[mode]`` 是每次重复占用的 CPU 时间（秒），``seconds[mode]`` 是它们的中位数；
    ``wall[mode]`` 是同时记下的墙钟时间（机器繁忙时包含排队等 CPU 的时间）；
    ``flops[mode]`` 是数出来的矩阵乘法运算量（与机器忙闲无关，没有抖动）。
    """

    S: int
    samples: dict[str, list[float]]
    wall: dict[str, list[float]]
    flops: dict[str, int]

    @property
    def seconds(self) -> dict[str, float]:
        return {m: statistics.median(v) for m, v in self.samples.items()}


MODES = ("prefill", "decode_cache", "decode_recompute")


def _run_mode(model: TinyDecoder, ids: torch.Tensor, mode: str) -> None:
    S = ids.shape[1]
    if mode == "prefill":  # 一次前向同时处理全部 S 个位置
        model(ids)
    elif mode == "decode_cache":  # S 步，每步只送入一个 token，历史 K、V 从缓存读
        cache = KVCache()
        for t in range(S):
            model(ids[:, t : t + 1], cache)
    elif mode == "decode_recompute":  # S 步，每步把前 t+1 个 token 整段重算
        for t in range(S):
            model(ids[:, : t + 1])
    else:
        raise InputError(f"未知的模式 {mode!r}；可选 {MODES}。")


@torch.no_grad()
def measure_prefill_decode(model: TinyDecoder, S: int, *, repeats: int = 5, seed: int = 0) -> PrefillDecode:
    """对同一段随机的 ``S`` 个 token，比较：一次 Prefill；逐个生成（有 KV cache）；逐个生成（每步重算）。

    每种方式重复 ``repeats`` 次，记下 CPU 时间（见 ``cpu_clock``）和墙钟时间。三种方式轮流计时
    （而不是先把一种测完再测下一种），机器忙闲的变化就会大致均匀地落在三者头上。
    """
    guard_decoder(model, S)
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(model.config["vocab_size"], (1, S), generator=g)
    samples: dict[str, list[float]] = {m: [] for m in MODES}
    wall: dict[str, list[float]] = {m: [] for m in MODES}
    with single_thread():
        for m in MODES:  # 热身
            _run_mode(model, ids, m)
        for _ in range(repeats):
            for m in MODES:
                start, start_wall = cpu_clock(), time.perf_counter()
                _run_mode(model, ids, m)
                samples[m].append(cpu_clock() - start)
                wall[m].append(time.perf_counter() - start_wall)
        flops = {m: count_flops(functools.partial(_run_mode, model, ids, m)) for m in MODES}
    return PrefillDecode(S, samples, wall, flops)


@torch.no_grad()
def decode_step_cost(model: TinyDecoder, T: int, *, repeats: int = 7, seed: int = 0) -> dict:
    """上下文已有 ``T`` 个 token 时，生成下一个 token 的单步代价。

    返回 ``seconds_cache``、``seconds_recompute``（CPU 时间的中位数，秒）、``samples_cache``、``samples_recompute``
    （每次的读数）与 ``flops_cache``、``flops_recompute``：有缓存时只为 1 个新 token 做投影与 FFN，
    再读 T+1 个 K、V；没有缓存时把 T+1 个 token 整段重算。
    """
    guard_decoder(model, T + 1)
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(model.config["vocab_size"], (1, T + 1), generator=g)
    cache = KVCache()
    model(ids[:, :T], cache)

    def step_cache():
        model(ids[:, T:], cache)
        for layer in range(len(cache.K)):  # 撤销这一步追加的 K、V，保证每次计时的上下文长度相同
            cache.K[layer], cache.V[layer] = cache.K[layer][..., :T, :], cache.V[layer][..., :T, :]

    def step_recompute():
        model(ids)

    with single_thread():
        samples = {
            "cache": timing_samples(step_cache, 3 * repeats),  # 单步很短，多测几次压住抖动
            "recompute": timing_samples(step_recompute, repeats),
        }
        flops = {"cache": count_flops(step_cache), "recompute": count_flops(step_recompute)}
    out: dict = {}
    for key in ("cache", "recompute"):
        out[f"seconds_{key}"] = statistics.median(samples[key])
        out[f"samples_{key}"] = samples[key]
        out[f"flops_{key}"] = flops[key]
    return out


# ---------------------------------------------------------------- 时间线
@dataclass
class Span:
    """时间线上的一段：第 ``layer`` 层处理了位置 ``first…last``，从 ``start`` 到 ``end``（毫秒）。"""

    layer: int
    first: int
    last: int
    start: float
    end: float


@torch.no_grad()
def record_timeline(model: TinyDecoder, S: int, mode: str, *, runs: int = 5, seed: int = 0) -> list[Span]:
    """实际运行 ``mode``（见 ``MODES``），用钩子记下每一层每一次调用处理了哪些位置、用了多久。

    时间是本线程占用的 CPU 时间（见 ``cpu_clock``），单位毫秒。同一件事连做 ``runs`` 次；每一次调用
    （以及它与前一次调用之间的空档）取这几次里最短的用时，再首尾相接排成时间线：干扰只会把某一次
    拉长、不会让它变短，所以最短用时最接近“没有干扰”时的样子；哪些调用存在、各自覆盖哪些位置、
    谁等谁，每次运行都完全一样。矩形之间的空档是块以外的工作：Embedding、位置向量、输出层和
    Python 的循环本身。
    """
    guard_decoder(model, S)
    if mode not in MODES:
        raise InputError(f"未知的模式 {mode!r}；可选 {MODES}。")
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(model.config["vocab_size"], (1, S), generator=g)
    calls: list[tuple[int, int, int, float, float]] = []  # (层, 第一个位置, 最后一个位置, 开始, 结束)
    clock: dict[int, float] = {}
    state = {"first": 0}

    def before(layer):
        def hook(_m, inputs):
            clock[layer] = cpu_clock()
        return hook

    def after(layer):
        def hook(_m, inputs, output):
            n = inputs[0].shape[1]
            calls.append((layer, state["first"], state["first"] + n - 1, clock[layer], cpu_clock()))
        return hook

    handles = []
    for layer, block in enumerate(model.blocks):
        handles.append(block.register_forward_pre_hook(before(layer)))
        handles.append(block.register_forward_hook(after(layer)))
    recorded = []
    try:
        with single_thread():
            _run_mode(model, ids, mode)  # 预热，不记录
            for _ in range(max(1, runs)):
                calls.clear()
                if mode == "decode_cache":
                    cache = KVCache()
                    for t in range(S):
                        state["first"] = t
                        model(ids[:, t : t + 1], cache)
                else:
                    state["first"] = 0
                    _run_mode(model, ids, mode)
                recorded.append(list(calls))
    finally:
        for h in handles:
            h.remove()
    spans, now = [], 0.0
    for i, (layer, first, last, _, _) in enumerate(recorded[0]):
        gap = 0.0 if i == 0 else min(run[i][3] - run[i - 1][4] for run in recorded)
        busy = min(run[i][4] - run[i][3] for run in recorded)
        start = now + 1000 * gap
        now = start + 1000 * busy
        spans.append(Span(layer, first, last, start, now))
    return spans


# ---------------------------------------------------------------- 沿一次生成的每一步
@dataclass(frozen=True)
class StepCost:
    """生成的第 ``index`` 步。``T``：这一步开始时缓存里已有的位置数（第 0 步是 Prefill，缓存还是空的）。

    ``cache``、``recompute``：有 KV cache 与每步重算时的 ``Intensity``（运算量、搬运的字节）；
    ``seconds_cache``、``seconds_recompute``：这台机器此刻测得的 CPU 时间（中位数，秒），只显示、不断言。
    """

    index: int
    T: int
    cache: Intensity
    recompute: Intensity
    seconds_cache: float
    seconds_recompute: float


def step_costs(model: TinyDecoder, prompt_len: int, n_new: int, *, repeats: int = 5) -> list[StepCost]:
    """提示 ``prompt_len`` 个 token、再生成 ``n_new`` 个时每一步的代价。

    第 0 步：有缓存时就是 Prefill（``prompt_len`` 个位置一次算完）；之后第 ``k`` 步上下文有
    ``T = prompt_len + k`` 个位置：有缓存时只算 1 个新位置、读 ``T`` 行旧的 K、V；每步重算时把
    ``T + 1`` 个位置整段再算一遍（等于一次长度 ``T + 1`` 的 Prefill）。
    """
    costs = []
    for k in range(n_new):
        T = prompt_len + k - 1  # 第 k 步开始前已经缓存的位置数（第 0 步之前没有缓存）
        if k == 0:
            cached = arithmetic_intensity(model, prompt_len, "prefill")
            seconds = _median_prefill(model, prompt_len, repeats)
            costs.append(StepCost(0, 0, cached, cached, seconds, seconds))
            continue
        timing = decode_step_cost(model, T, repeats=repeats)
        costs.append(StepCost(
            k, T, arithmetic_intensity(model, T, "decode"), arithmetic_intensity(model, T + 1, "prefill"),
            timing["seconds_cache"], timing["seconds_recompute"],
        ))
    return costs


@torch.no_grad()
def _median_prefill(model: TinyDecoder, S: int, repeats: int) -> float:
    ids = torch.zeros(1, S, dtype=torch.long)
    with single_thread():
        return statistics.median(timing_samples(lambda: model(ids, KVCache()), repeats))


@torch.no_grad()
def cache_tensor_bytes(model: TinyDecoder, T: int) -> int:
    """Prefill ``T`` 个 token 后，真实缓存里所有 K、V 张量的 ``.nbytes`` 之和（不经过任何公式）。"""
    cache = KVCache()
    model(torch.zeros(1, T, dtype=torch.long), cache)
    return sum(t.nbytes for t in cache.K + cache.V)
