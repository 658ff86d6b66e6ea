"""第 1.6 节的探索器：打乱 token 的顺序，看各个部件的输出怎样跟着变。

对一个置换 P，比较“先算再打乱” ``P·f(X)`` 和“先打乱再算” ``f(P·X)``：

* 不加位置的自注意力、逐位置 FFN：两者相同（置换等变），模型分不出「狗咬了人」和「人咬了狗」里的「狗」；
* 加上正弦位置以后：同一个字换了位置就拿到不同的位置向量，两者不再相同。
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import stepped_figure
from seqlab.runtime import single_thread
from seqlab.transformer import (
    MultiHeadSelfAttention,
    PositionwiseFFN,
    TransformerBlock,
    sinusoidal_positions,
)

D_MODEL = 8
MAX_TOKENS = 16
PARTS = {
    "attn": "自注意力（不加位置）",
    "ffn": "逐位置 FFN",
    "block": "整个块（不加位置）",
    "attn_pos": "自注意力（加正弦位置）",
}
SHORT = {"attn": "注意力", "ffn": "FFN", "block": "整个块", "attn_pos": "注意力 + 位置"}  # 滑块上的短标签
EXAMPLE_TEXT = "狗咬了人"
STATIC_TEXT = "狗咬了邮递员"


def token_vectors(tokens: list[str]) -> torch.Tensor:
    """每个字一个固定的随机向量（由字的编码决定，任何字符都有）：``(S, D_MODEL)``。"""
    rows = [torch.randn(D_MODEL, generator=torch.Generator().manual_seed(ord(ch))) for ch in tokens]
    return torch.stack(rows)


@cache
def parts() -> dict[str, torch.nn.Module]:
    """图里用到的三个随机初始化的部件（固定种子，只建一次）。"""
    with torch.random.fork_rng(devices=[]):  # 用自己的种子，不改动全局随机数
        torch.manual_seed(6)
        return {
            "attn": MultiHeadSelfAttention(D_MODEL, 2).eval(),
            "ffn": PositionwiseFFN(D_MODEL, 4 * D_MODEL).eval(),
            "block": TransformerBlock(D_MODEL, 2, 4 * D_MODEL).eval(),
        }


@torch.no_grad()
def apply_part(part: str, X: torch.Tensor) -> torch.Tensor:
    """把部件作用到 ``X (S, d)`` 上，返回 ``(S, d)``；``attn_pos`` 先给每一行加上它所在位置的正弦向量。"""
    modules = parts()
    with single_thread():
        return _apply(modules, part, X)


def _apply(modules: dict[str, torch.nn.Module], part: str, X: torch.Tensor) -> torch.Tensor:
    if part == "attn_pos":
        return modules["attn"]((X + sinusoidal_positions(len(X), D_MODEL))[None])[0][0]
    out = modules[part](X[None])
    return (out[0] if isinstance(out, tuple) else out)[0]


def permutation(S: int, shuffle: int) -> list[int]:
    """第 ``shuffle`` 种打乱方式（固定种子，一定不是原顺序）：``perm[i]`` 是新位置 i 上放的旧位置。"""
    perm = torch.randperm(S, generator=torch.Generator().manual_seed(shuffle)).tolist()
    if perm == list(range(S)):
        perm = perm[1:] + perm[:1]
    return perm


@dataclass
class PermutationState:
    tokens: list[str]  # 原顺序
    perm: list[int]
    part: str
    then_shuffle: list[list[float]]  # P·f(X)，(S, d)
    shuffle_then: list[list[float]]  # f(P·X)，(S, d)
    gap: list[float]  # 每个（新）位置上两者之差的最大绝对值

    @property
    def shuffled(self) -> list[str]:
        return [self.tokens[j] for j in self.perm]

    @property
    def max_gap(self) -> float:
        return max(self.gap)


def permutation_state(text: str, part: str, shuffle: int) -> PermutationState:
    text = clean_text(text, max_chars=200, what="句子")
    tokens = [ch for ch in text if not ch.isspace()]
    if len(tokens) < 2:
        raise InputError("至少需要 2 个字才谈得上打乱顺序。")
    if len(tokens) > MAX_TOKENS:
        raise InputError(f"句子有 {len(tokens)} 个字，这张图最多显示 {MAX_TOKENS} 个：请缩短后再试。")
    if part not in PARTS:
        raise InputError(f"部件只能是：{'、'.join(PARTS.values())}。")
    if not 1 <= shuffle <= 99:
        raise InputError("打乱方式的编号应在 1 到 99 之间。")
    X = token_vectors(tokens)
    perm = permutation(len(tokens), shuffle)
    A = apply_part(part, X)[perm]  # 先算再打乱
    B = apply_part(part, X[perm])  # 先打乱再算
    gap = (A - B).abs().amax(dim=-1)
    return PermutationState(tokens, perm, part, A.tolist(), B.tolist(), gap.tolist())


def _labels(state: PermutationState) -> list[str]:
    return [f"{i}:{ch}" for i, ch in enumerate(state.shuffled)]


def _title(state: PermutationState, sep: str = "｜") -> str:
    """图的标题（``sep="<br>"`` 时分两行，窄屏上不会被截断）与实时面的说明文字（一行）。"""
    order = "".join(state.tokens) + " → " + "".join(state.shuffled)
    verdict = "两者相同：置换等变" if state.max_gap < 1e-5 else "两者不同：顺序信息进来了"
    return f"{PARTS[state.part]}｜{order}{sep}最大差异 {state.max_gap:.1e}，{verdict}"


FLOOR = 1e-9  # 对数坐标画不了 0：比它还小的差异按它来画（悬停时显示真实值）


def _zmax(state: PermutationState) -> float:
    return max(abs(v) for row in state.then_shuffle + state.shuffle_then for v in row) or 1.0


def _traces(state: PermutationState) -> list[go.BaseTraceType]:
    labels = _labels(state)
    z = _zmax(state)
    heat = {
        "y": labels,
        "zmid": 0,
        "zmin": -z,
        "zmax": z,
        "colorscale": "RdBu",
        "showscale": False,
        "hovertemplate": "位置 %{y}<br>第 %{x} 维 = %{z:.3f}<extra></extra>",
    }
    return [
        go.Heatmap(z=state.then_shuffle, **heat),
        go.Heatmap(z=state.shuffle_then, **heat),
        go.Bar(
            x=[max(g, FLOOR) for g in state.gap],
            y=labels,
            orientation="h",
            marker_color="#b5485d",
            customdata=state.gap,
            hovertemplate="位置 %{y}：最大差异 %{customdata:.2e}<extra></extra>",
        ),
    ]


def permutation_figure(state: PermutationState) -> go.Figure:
    fig = make_subplots(
        rows=1,
        cols=3,
        column_widths=[0.34, 0.34, 0.32],
        horizontal_spacing=0.07,
        shared_yaxes=True,
        subplot_titles=("先算再打乱：P·f(X)", "先打乱再算：f(P·X)", "两者之差（每行最大绝对值）"),
    )
    for col, trace in enumerate(_traces(state), start=1):
        fig.add_trace(trace, row=1, col=col)
    fig.update_yaxes(autorange="reversed", title_text="打乱后的位置", row=1, col=1)
    fig.update_xaxes(title_text="输出的维度", row=1, col=1)
    fig.update_xaxes(title_text="输出的维度", row=1, col=2)
    fig.update_xaxes(
        title_text="最大绝对差（对数坐标）", type="log", range=[-9, 0.5], dtick=3, exponentformat="power", row=1, col=3
    )
    fig.update_layout(
        title={"text": _title(state, "<br>"), "font": {"size": 14}},
        height=_height(state),
        showlegend=False,
        margin={"t": 110},
    )
    return fig


def _height(state: PermutationState) -> int:
    return max(420, 28 * len(state.tokens) + 240)


@register
class PermutationExplorer(Explorer):
    name = "permutation"
    title = "打乱 token：自注意力与 FFN 的置换等变，以及位置表示如何打破它"
    examples: ClassVar[list[dict]] = [
        {"text": EXAMPLE_TEXT, "part": "attn", "shuffle": 1},
        {"text": EXAMPLE_TEXT, "part": "attn_pos", "shuffle": 1},
        {"text": "奖杯放不进箱子因为它太大", "part": "ffn", "shuffle": 3},
        {"text": "奖杯放不进箱子因为它太大", "part": "block", "shuffle": 5},
    ]

    def controls(self):
        return {
            "text": widgets.Text(value=EXAMPLE_TEXT, description="句子", continuous_update=False),
            "part": widgets.Dropdown(
                options=[(v, k) for k, v in PARTS.items()], value="attn", description="部件"
            ),
            "shuffle": widgets.IntSlider(
                value=1, min=1, max=20, description="打乱方式", continuous_update=False
            ),
        }

    def compute(self, text: str, part: str, shuffle: int) -> PermutationState:
        return permutation_state(text, part, shuffle)

    def caption(self, state: PermutationState) -> str:
        return _title(state)

    def figure(self, state: PermutationState) -> go.Figure:
        return permutation_figure(state)

    def update(self, fig: go.Figure, state: PermutationState) -> None:
        """只替换三条轨迹的数据和标题，不重建子图。"""
        for old, new in zip(fig.data, _traces(state)):
            if isinstance(new, go.Heatmap):
                old.z, old.y, old.zmin, old.zmax = new.z, new.y, new.zmin, new.zmax
            else:
                old.x, old.y, old.customdata = new.x, new.y, new.customdata
        fig.layout.title.text = _title(state, "<br>")
        fig.layout.height = _height(state)

    def static_figure(self) -> go.Figure:
        states = [
            (SHORT[part], permutation_figure(permutation_state(STATIC_TEXT, part, 2))) for part in PARTS
        ]
        return stepped_figure(states, prefix="部件：")
