"""第 1.6 节的探索器：小 GPT 从一段提示出发逐步生成，每一步看候选、注意力与 KV cache。"""

from typing import Any

import plotly.graph_objects as go

from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import gpt_steps as figure
from seqlab.states import gpt_steps as state

EXAMPLE = "他一口气把"
STATIC_STEPS = 12


def static() -> go.Figure:
    """静态面：从 ``EXAMPLE`` 出发贪心生成的前 ``STATIC_STEPS`` 步（提前写出〈终〉时只到那一步）。"""
    states = [EXPLORER.compute(prompt=EXAMPLE, step=k) for k in range(STATIC_STEPS)]
    return figure.static_figure([s for s in states if s.requested <= s.last])


def web_data() -> dict[str, Any]:
    """网页实时面的常量：状态所需的（``state.web_data``），加上图里两种柱子的颜色（画图的约定在 figures 层，状态层不导入它）。"""
    return {**state.web_data(), "colors": {"candidate": figure.CANDIDATE, "chosen": figure.CHOSEN}}


EXPLORER = register(
    Explorer(
        name="gpt_steps",
        title="小 GPT 逐步生成：候选、注意力与 KV cache",
        params=[
            Param("prompt", "提示", EXAMPLE, "text"),
            Param("step", "第几步", 0, "slider", low=0, high=state.MAX_STEPS - 1),
            Param("sample", "解码", False, "buttons", options=(("贪心", False), ("采样", True))),
            Param("temperature", "温度", 1.0, "slider", low=0.1, high=2.0, step=0.1),
            Param("top_k", "top-k", 5, "slider", low=1, high=20),
            Param("seed", "种子", 0, "slider", low=0, high=99),
        ],
        state=state.gpt_step_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"prompt": EXAMPLE, "step": 0, "sample": False},
            {"prompt": EXAMPLE, "step": 5, "sample": False},
            {"prompt": "苹果公司", "step": 3, "sample": True, "temperature": 1.0, "top_k": 5, "seed": 1},
            {"prompt": "苹果公司", "step": 3, "sample": True, "temperature": 1.6, "top_k": 20, "seed": 7},
        ],
        static=static,
        web=WebFace(params=("prompt", "step", "sample", "temperature", "top_k", "seed"), data=web_data),
    )
)
