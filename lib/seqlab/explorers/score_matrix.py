"""第 1.5 节的探索器：O(S²) 的分数矩阵。

选长度 ``S`` 和是否加因果掩码，看一句话的 ``S × S`` 分数矩阵 ``Q Kᵀ / √d_k``、要打分的 query–key
配对数（``S²`` 或 ``S(S+1)/2``），以及在你选的 batch × heads × layers × dtype 下分数矩阵要占多少内存。
超过内存预算的请求在分配之前就被拒绝，并说出估算值。
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from seqlab import attention
from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import score_matrix as figure
from seqlab.states import score_matrix as state

DTYPES = tuple((dtype, dtype) for dtype in attention.DTYPE_BYTES)
STATIC_LENGTHS = (4, 8, 16, 32, 64, 128, 512)  # 最后一个超出预算：静态面也演示“拒绝并报出估算值”
STATIC_CONFIG: dict[str, Any] = {"batch": 8, "heads": 12, "layers": 12, "dtype": "float32"}  # 静态面“请求”的配置


def _count(name: str, label: str, default: int) -> Param:
    """batch、头数、层数：没有上限的整数框（太大的配置由内存预算拒绝）。"""
    return Param(name, label, default, "number", low=1, width="150px", wide_label=True)


def static() -> go.Figure:
    """静态面：每个 ``STATIC_LENGTHS`` 一档，打开时停在默认长度。"""
    steps = [state.static_step(S, **STATIC_CONFIG) for S in STATIC_LENGTHS]
    return figure.static_face(steps, active=STATIC_LENGTHS.index(EXPLORER.defaults["S"]))


EXPLORER = register(
    Explorer(
        name="score_matrix",
        title="O(S²) 的分数矩阵：配对数与内存",
        params=[
            Param("S", "长度 S", 16, "slider", low=2, high=state.S_MAX),
            Param("causal", "掩码", False, "buttons", options=(("无掩码", False), ("因果掩码", True))),
            _count("batch", "batch", 1),
            _count("heads", "头数", 8),
            _count("layers", "层数", 6),
            Param("dtype", "dtype", "float32", "dropdown", options=DTYPES, width="180px"),
        ],
        state=state.score_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"S": 16, "causal": False, "batch": 1, "heads": 8, "layers": 6, "dtype": "float32"},
            {"S": 64, "causal": True, "batch": 8, "heads": 12, "layers": 12, "dtype": "float16"},
            {"S": 256, "causal": False, "batch": 4, "heads": 8, "layers": 6, "dtype": "bfloat16"},
        ],
        static=static,
        web=WebFace(params=("S", "causal", "batch", "heads", "layers", "dtype"), data=state.web_data),
    )
)
