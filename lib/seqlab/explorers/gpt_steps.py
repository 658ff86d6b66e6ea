"""第 1.6 节的探索器：小 GPT 从一段提示出发逐步生成，每一步看三样东西。

1. 这一步的候选：模型分布 ``softmax(logits)`` 的前几名和它们的概率，选中的那个标成另一种颜色；
2. 这一步最后一个位置的 Query 在每层、每个头上对前文的注意力；
3. 每个位置的 Key/Value 这一步是从 KV cache 里读的，还是这一步新算的。

计算在 ``seqlab.gpt`` 里（``generate_steps``），这里只做输入检查和 plotly 画图；另有两张正文用的度量图。
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab import gpt, train
from seqlab.explorers import Explorer, clean_text, register
from seqlab.explorers.prefill_decode import _html_table
from seqlab.figures import ATTENTION_SCALE, PALETTE, stepped_figure
from seqlab.measure import StepCost
from seqlab.runtime import single_thread

EXAMPLE = "他一口气把"
MAX_PROMPT = 24
MAX_STEPS = 24
STATIC_STEPS = 12
CACHED, COMPUTED = 0, 1
KV_SCALE = [[0.0, "#c9d3df"], [0.5, "#c9d3df"], [0.5, PALETTE[1]], [1.0, PALETTE[1]]]


@dataclass(frozen=True)
class GptStepState:
    prompt: str
    decoding: gpt.Decoding
    step: gpt.Step
    last: int  # 这次生成一共有几步（从 0 数的最后一步）
    text: str  # 到这一步为止的文字（提示 + 生成的字）
    requested: int  # 读者要看的步；超过 last 时显示最后一步


@lru_cache(maxsize=64)
def _run(prompt: str, decoding: gpt.Decoding) -> tuple[gpt.Step, ...]:
    ckpt = train.load(gpt.NAME)
    with single_thread():
        return tuple(gpt.generate_steps(ckpt.model, gpt.vocab_of(ckpt.config), prompt, MAX_STEPS, decoding))


def gpt_step_state(prompt: str, step: int, sample: bool = False, temperature: float = 1.0, top_k: int = 5,
                   seed: int = 0) -> GptStepState:
    prompt = clean_text(prompt, max_chars=MAX_PROMPT, what="提示")
    decoding = gpt.Decoding(sample=sample, temperature=temperature, top_k=top_k, seed=seed) if sample else gpt.Decoding()
    steps = _run(prompt, decoding)
    shown = steps[min(step, len(steps) - 1)]
    text = prompt + "".join(s.token for s in steps[: shown.index + 1] if s.token != gpt.EOS)
    return GptStepState(prompt, decoding, shown, len(steps) - 1, text, step)


def _coords(context: list[str]) -> list[str]:
    return [f"{i}:{ch}" for i, ch in enumerate(context)]


def _context_ticks(state: GptStepState) -> dict[str, list[str]]:
    """注意力与 KV cache 两行的 x 轴：每个位置一个刻度，写成那个字。"""
    context = state.step.context
    return {"tickvals": _coords(context), "ticktext": [gpt.show(c) for c in context]}


def _head_labels(state: GptStepState) -> list[str]:
    return [f"第 {l + 1} 层·头 {h + 1}" for l, layer in enumerate(state.step.attention) for h in range(len(layer))]


def _title(state: GptStepState) -> str:
    s = state.step
    kind = "Prefill" if s.index == 0 else "Decode"
    return (f"第 {s.index} 步（{kind}）：写出「{gpt.show(s.token)}」，概率 {s.chosen_prob:.2f}<br>"
            f"<sup>KV cache 里读 {s.cached} 行，这一步新算 {s.computed} 行</sup>")


def _traces(state: GptStepState) -> list[tuple[go.BaseTraceType, int]]:
    s = state.step
    names = [gpt.show(t) for t, _ in s.probs]
    colors = [PALETTE[1] if t == s.token else PALETTE[0] for t, _ in s.probs]
    traces = [(go.Bar(x=names, y=[p for _, p in s.probs], marker_color=colors, name="模型的分布",
                      text=[f"{p:.2f}" for _, p in s.probs], textposition="outside", cliponaxis=False,
                      hovertemplate="%{x}：%{y:.3f}<extra>模型的分布</extra>"), 1)]
    coords = _coords(s.context)
    rows = [w for layer in s.attention for w in layer]
    traces.append((go.Heatmap(z=rows, x=coords, y=_head_labels(state), zmin=0, zmax=1, colorscale=ATTENTION_SCALE,
                              colorbar={"title": "权重", "len": 0.42, "y": 0.36}, name="注意力",
                              hovertemplate="%{y}<br>读 %{x}：%{z:.3f}<extra></extra>"), 2))
    kinds = [[COMPUTED if i >= s.cached else CACHED for i in range(len(coords))]]
    words = [["算" if k == COMPUTED else "读" for k in kinds[0]]]  # 一个字：手机上每格也放得下
    where = [["这一步新算" if k == COMPUTED else "从缓存读" for k in kinds[0]]]
    traces.append((go.Heatmap(z=kinds, x=coords, y=["K、V"], zmin=0, zmax=1, colorscale=KV_SCALE, showscale=False,
                              text=words, customdata=where, texttemplate="%{text}", xgap=2, name="KV cache",
                              hovertemplate="%{x}：%{customdata}<extra></extra>"), 3))
    return traces


def gpt_step_figure(state: GptStepState) -> go.Figure:
    fig = make_subplots(rows=3, cols=1, row_heights=[0.34, 0.5, 0.16], vertical_spacing=0.14,
                        subplot_titles=("候选（橙色是选中的字）", "Query 对前文的注意力（每层、每个头）",
                                        "Key/Value：从缓存读，还是新算"))
    for trace, row in _traces(state):
        fig.add_trace(trace, row=row, col=1)
    for row in (2, 3):
        fig.update_xaxes(tickmode="array", **_context_ticks(state), row=row, col=1)
    fig.update_yaxes(range=[0, 1.2], tickvals=[0, 0.5, 1], title_text="概率", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=2, col=1)
    fig.update_layout(title={"text": _title(state), "y": 0.98, "yanchor": "top", "font": {"size": 14}},
                      height=720, margin={"t": 110, "l": 100}, showlegend=False)
    return fig


@register
class GptStepsExplorer(Explorer):
    name = "gpt_steps"
    title = "小 GPT 逐步生成：候选、注意力与 KV cache"
    examples: ClassVar[list[dict]] = [
        {"prompt": EXAMPLE, "step": 0, "sample": False},
        {"prompt": EXAMPLE, "step": 5, "sample": False},
        {"prompt": "苹果公司", "step": 3, "sample": True, "temperature": 1.0, "top_k": 5, "seed": 1},
        {"prompt": "苹果公司", "step": 3, "sample": True, "temperature": 1.6, "top_k": 20, "seed": 7},
    ]

    def controls(self):
        return {
            "prompt": widgets.Text(value=EXAMPLE, description="提示", continuous_update=False),
            "step": widgets.IntSlider(value=0, min=0, max=MAX_STEPS - 1, description="第几步", continuous_update=False),
            "sample": widgets.ToggleButtons(options=[("贪心", False), ("采样", True)], value=False),
            "temperature": widgets.FloatSlider(value=1.0, min=0.1, max=2.0, step=0.1, description="温度",
                                               continuous_update=False),
            "top_k": widgets.IntSlider(value=5, min=1, max=20, description="top-k", continuous_update=False),
            "seed": widgets.IntSlider(value=0, min=0, max=99, description="种子", continuous_update=False),
        }

    def compute(self, prompt: str, step: int, sample: bool = False, temperature: float = 1.0, top_k: int = 5,
                seed: int = 0) -> GptStepState:
        return gpt_step_state(prompt, step, sample, temperature, top_k, seed)

    def caption(self, state: GptStepState) -> str:
        d = state.decoding
        how = f"采样（温度 {d.temperature:g}，top-k = {d.top_k}，种子 {d.seed}）" if d.sample else "贪心"
        words = f"{how}：到第 {state.step.index} 步为止写出「{state.text}」"
        if state.requested > state.last:
            words += f"；这次生成在第 {state.last} 步写出〈终〉就停了，后面没有新的步"
        return words + "。"

    def figure(self, state: GptStepState) -> go.Figure:
        return gpt_step_figure(state)

    def update(self, fig: go.Figure, state: GptStepState) -> None:
        """只换三条轨迹的数据、两行的 x 轴刻度和标题：三行子图不必每次重建（make_subplots 要几十毫秒）。"""
        bar, heat, kv = fig.data
        new_bar, new_heat, new_kv = (trace for trace, _ in _traces(state))
        bar.update(x=new_bar.x, y=new_bar.y, text=new_bar.text, marker_color=new_bar.marker.color)
        heat.update(z=new_heat.z, x=new_heat.x, y=new_heat.y)
        kv.update(z=new_kv.z, x=new_kv.x, text=new_kv.text, customdata=new_kv.customdata)
        for axis in (fig.layout.xaxis2, fig.layout.xaxis3):
            axis.update(_context_ticks(state))
        fig.layout.title.text = _title(state)

    def static_figure(self) -> go.Figure:
        states = [gpt_step_state(EXAMPLE, k) for k in range(STATIC_STEPS)]
        return stepped_figure([(f"{s.step.index}", gpt_step_figure(s)) for s in states if s.requested <= s.last],
                              prefix="第几步：")


# ---------------------------------------------------------------- 正文里的两张度量图
def step_cost_figure(costs: list[StepCost]) -> go.Figure:
    """沿一次生成的每一步：左边数出的运算量与搬运的字节，右边本机实测的 CPU 时间（只显示）。"""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14,
                        subplot_titles=("每一步的运算量与搬运的字节（计数）", "每一步的 CPU 时间（本机实测）"))
    x = [c.index for c in costs]
    series = [
        ("运算（有缓存）", [c.cache.flops for c in costs], PALETTE[0], "solid", 1),
        ("运算（每步重算）", [c.recompute.flops for c in costs], PALETTE[1], "solid", 1),
        ("字节（有缓存）", [c.cache.bytes_moved for c in costs], PALETTE[0], "dot", 1),
        ("字节（每步重算）", [c.recompute.bytes_moved for c in costs], PALETTE[1], "dot", 1),
        ("CPU 毫秒（有缓存）", [1e3 * c.seconds_cache for c in costs], PALETTE[0], "solid", 2),
        ("CPU 毫秒（每步重算）", [1e3 * c.seconds_recompute for c in costs], PALETTE[1], "solid", 2),
    ]
    for name, y, color, dash, col in series:
        fig.add_trace(go.Scatter(x=x, y=y, name=name, mode="lines+markers", line={"color": color, "dash": dash},
                                 hovertemplate=f"第 %{{x}} 步<br>{name}：%{{y:,.3g}}<extra></extra>"), row=1, col=col)
    fig.update_yaxes(type="log", title_text="次数 / 字节", row=1, col=1)
    fig.update_yaxes(title_text="毫秒", rangemode="tozero", row=1, col=2)
    fig.update_xaxes(title_text="第几步（0 = Prefill）")
    fig.update_layout(height=460, legend={"orientation": "h", "y": -0.25}, margin={"b": 130})
    return fig


def kv_memory_figure(contexts: list[int], formula: list[int], real: list[int]) -> go.Figure:
    """KV cache 的字节数随上下文长度：公式（线）与真实缓存张量的 ``.nbytes``（点）。"""
    fig = go.Figure([
        go.Scatter(x=contexts, y=formula, mode="lines", name="公式 2 × 层数 × T × d_model × 4 字节",
                   line={"color": PALETTE[0]}, hovertemplate="T = %{x}：%{y:,} 字节<extra>公式</extra>"),
        go.Scatter(x=contexts, y=real, mode="markers", name="真实缓存张量的 nbytes",
                   marker={"color": PALETTE[1], "size": 9}, hovertemplate="T = %{x}：%{y:,} 字节<extra>实测</extra>"),
    ])
    fig.update_layout(xaxis_title="上下文长度 T（token）", yaxis_title="KV cache（字节）", height=400,
                      legend={"orientation": "h", "y": -0.25}, margin={"b": 110})
    return fig


def perplexity_table(ngram: dict[int, float], gpt_ppl: float, gpt_label: str) -> str:
    """测试集困惑度：第 1.1 节的各阶 n-gram 与小 GPT，同一份句子、同一个口径。"""
    rows = [[f"{n}-gram（第 1.1 节）", f"{p:.2f}"] for n, p in ngram.items()] + [[gpt_label, f"{gpt_ppl:.2f}"]]
    return _html_table(["模型", "测试集困惑度"], rows, "同一份测试句子、同一个口径：每个字和句尾各算一个 token。")
