"""度量层：计时、峰值内存、运算量与操作计数、时间线、随规模变化的曲线、表 1 的计数。

分层约定：只导入模型模块（torch），不导入训练、plotly 或 ipywidgets；这些结果的图在 ``seqlab.figures``
与 ``seqlab.explorers`` 里。全书只有一个计时函数 ``timing_samples``：调用者按需要取最小值或中位数。
用时只显示、从不断言；运算量、字节数与斜率才是笔记本断言的对象。

* ``timing``：``cpu_clock``、``timing_samples``、``peak_memory_bytes``；
* ``counts``：参数个数、矩阵乘法的运算量、计算图上的最短路径、表 1 的三项、算术强度；
* ``scaling``：自注意力与 RNN 随 ``S`` 的用时、内存与运算量，Embedding 两种查表随 ``V`` 的代价；
* ``decoding``：Prefill 与 Decode 的用时与运算量、单步代价、时间线、沿一次生成的每一步。
"""

from seqlab.measure.counts import (
    Intensity,
    MatmulFlops,
    arithmetic_intensity,
    count_flops,
    count_torch_calls,
    counted_flops,
    graph_distance,
    n_parameters,
    table1_counts,
)
from seqlab.measure.decoding import (
    MODES,
    PrefillDecode,
    Span,
    StepCost,
    cache_tensor_bytes,
    decode_step_cost,
    measure_prefill_decode,
    record_timeline,
    step_costs,
)
from seqlab.measure.scaling import LookupTiming, ScalingResult, loglog_slope, measure_lookup, measure_scaling
from seqlab.measure.timing import cpu_clock, peak_memory_bytes, timing_samples

__all__ = [
    "MODES", "Intensity", "LookupTiming", "MatmulFlops", "PrefillDecode", "ScalingResult", "Span", "StepCost",
    "arithmetic_intensity", "cache_tensor_bytes", "count_flops", "count_torch_calls", "counted_flops", "cpu_clock", "decode_step_cost",
    "graph_distance", "loglog_slope", "measure_lookup", "measure_prefill_decode", "measure_scaling", "n_parameters",
    "peak_memory_bytes", "record_timeline", "step_costs", "table1_counts", "timing_samples",
]
