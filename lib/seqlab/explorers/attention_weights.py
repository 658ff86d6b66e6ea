"""第 1.4 节的探索器：Bahdanau 注意力的权重 α_tj，以及第 t 步的上下文 c_t 是怎样拼出来的。

左边是热力图：行是模型逐步生成的目标词，列是源句的字，格子的颜色是 α_tj；空心圆标出玩具任务
的标准对齐（模型训练时从没见过它）。右边的条形图是当前这一步的那一行权重——``c_t`` 就是按这些
比例把各个 ``h_j`` 加起来。
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
import torch

from seqlab.corpus import translation as task
from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import PALETTE, attention_heatmap, stepped_figure

MODEL = "seq2seq_attention"
BASELINE = "seq2seq_fixed"
ALIASES = {",": "，", "、": "，", "；": "，", ";": "，"}
TOP = 3  # 说明文字里列出 c_t 的前几项


@cache
def _model(name: str):
    from seqlab.seq2seq import load_model

    return load_model(name)[0]


def parse_source(text: str) -> list[str]:
    """把读者输入的源句拆成字；空白忽略，半角逗号当作全角。坏输入抛 ``InputError``。"""
    text = clean_text(text, max_chars=200, what="源句")
    chars = [ALIASES.get(ch, ch) for ch in text if not ch.isspace()]
    unknown = sorted({ch for ch in chars if ch not in task.LEXICON}, key=chars.index)
    if unknown:
        shown = "".join(unknown[:8]) + ("…" if len(unknown) > 8 else "")
        raise InputError(
            f"源句里有玩具语言不认识的符号「{shown}」。可用的字只有：名词 {''.join(task.NOUNS)}，"
            f"形容词 {''.join(task.ADJECTIVES)}，动词 {''.join(task.VERBS)}，以及逗号「，」。"
        )
    if len(chars) > task.MAX_LEN:
        raise InputError(
            f"源句有 {len(chars)} 个字，超过了模型训练时见过的最大长度 {task.MAX_LEN}：请缩短后再试。"
        )
    return chars


@dataclass
class AttentionState:
    source: list[str]  # 源句的字，长度 S
    output: list[str]  # 注意力模型贪心解码出的目标词，长度 T = S
    alpha: list[list[float]]  # (T, S) 的 α_tj
    reference: list[str] | None  # 标准译文（不合语法时为 None）
    gold: list[int] | None  # 标准对齐：第 t 个目标词来自哪个源位置
    baseline: list[str]  # 固定上下文模型的译文
    step: int  # 当前展示的目标步 t（从 1 数）
    clamped: bool  # 滑块超过了句长，被收回到最后一步


def attention_state(text: str, step: int = 1) -> AttentionState:
    source = parse_source(text)
    src = torch.tensor([task.encode_source(source)])
    S = len(source)
    ids, alpha = _model(MODEL).greedy(src, S)
    base_ids, _ = _model(BASELINE).greedy(src, S)
    grammatical = task.is_grammatical(source)
    t = min(max(int(step), 1), S)
    return AttentionState(
        source=source,
        output=task.decode_target(ids[0]),
        alpha=alpha[0].tolist(),
        reference=task.translate(source) if grammatical else None,
        gold=task.alignment(source) if grammatical else None,
        baseline=task.decode_target(base_ids[0]),
        step=t,
        clamped=t != int(step),
    )


def _score(words: list[str], reference: list[str] | None) -> str:
    if reference is None:
        return ""
    right = sum(a == b for a, b in zip(words, reference))
    return f"（{right}/{len(reference)} 个词与标准译文一致）"


def attention_figure(state: AttentionState) -> go.Figure:
    """左：α 热力图（当前行加框）与标准对齐；右：第 t 行的权重条形图与 c_t 的主要组成。"""
    S, t = len(state.source), state.step
    fig = attention_heatmap(
        state.alpha,
        state.output,
        state.source,
        title=f"注意力模型翻译「{''.join(state.source)}」",
        row_title="目标词（第 t 步）",
        col_title="源字 j",
    )
    xs, ys = fig.data[0].x, fig.data[0].y
    fig.data[0].colorbar.update(x=0.6, len=0.8, thickness=12)
    fig.add_trace(
        go.Scatter(
            x=[xs[j] for j in state.gold] if state.gold else [],
            y=list(ys) if state.gold else [],
            mode="markers",
            marker={"symbol": "circle-open", "size": 16, "color": PALETTE[1], "line": {"width": 2}},
            name="标准对齐",
            hovertemplate="标准对齐：%{y} ← %{x}<extra></extra>",
        )
    )
    row = state.alpha[t - 1]
    fig.add_trace(
        go.Bar(
            x=list(xs),
            y=row,
            xaxis="x2",
            yaxis="y2",
            marker_color=PALETTE[0],
            name=f"α_{t}j",
            hovertemplate="α = %{y:.3f}<extra>%{x}</extra>",
        )
    )
    band = {"type": "rect", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": t - 1.5, "y1": t - 0.5}
    fig.update_layout(
        shapes=[dict(band, line={"color": PALETTE[1], "width": 3}, fillcolor="rgba(0,0,0,0)")],
        xaxis={"domain": [0.0, 0.56]},
        xaxis2={
            "domain": [0.68, 1.0], "anchor": "y2", "tickmode": "array", "tickvals": list(xs), "ticktext": state.source,
            "title_text": "源字 j",
        },
        yaxis2={"domain": [0.0, 0.8], "anchor": "x2", "range": [0, 1.05], "title_text": f"第 {t} 步的权重 α_{t}j"},
        legend={"orientation": "h", "x": 0.0, "y": -0.08},
        annotations=[
            {
                "xref": "paper", "yref": "paper", "x": 0.84, "y": 0.98, "xanchor": "center", "showarrow": False,
                "text": f"第 {t} 步输出「{state.output[t - 1]}」<br>c_{t} ≈ {_context_terms(state)}",
            }
        ],
        height=max(420, 26 * S + 200),
    )
    return fig


def _context_terms(state: AttentionState) -> str:
    row = state.alpha[state.step - 1]
    top = sorted(range(len(row)), key=lambda j: -row[j])[:TOP]
    terms = " + ".join(f"{row[j]:.2f}·h_{j + 1}「{state.source[j]}」" for j in top)
    return terms + (" + …" if len(row) > TOP else "")


def length_figure(curves: dict[str, dict[int, float]], *, title: str) -> go.Figure:
    """准确率随源句长度变化的折线图：``curves`` 是 ``{图例: {长度: 准确率}}``。"""
    fig = go.Figure()
    for label, acc in curves.items():
        fig.add_trace(
            go.Scatter(
                x=list(acc),
                y=list(acc.values()),
                mode="lines+markers",
                name=label,
                hovertemplate=f"{label}<br>长度 %{{x}}：%{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="源句长度（字数）", dtick=3)
    fig.update_yaxes(title_text="逐词准确率（贪心解码）", range=[0, 1.02])
    fig.update_layout(title=title, height=420, legend={"x": 0.01, "y": 0.02, "xanchor": "left", "yanchor": "bottom"})
    return fig


@register
class AttentionWeightsExplorer(Explorer):
    name = "attention_weights"
    title = "注意力权重 α_tj：解码每一步读源句的哪里"
    examples: ClassVar[list[dict]] = [
        {"text": task.EXAMPLES[0], "step": 3},
        {"text": task.EXAMPLES[1], "step": 5},
        {"text": task.EXAMPLES[2], "step": 19},
        {"text": "小猫看大鱼", "step": 2},
    ]

    def controls(self):
        return {
            "text": widgets.Text(value=task.EXAMPLES[1], description="源句", continuous_update=False),
            "step": widgets.IntSlider(value=1, min=1, max=task.MAX_LEN, description="第 t 步"),
        }

    def compute(self, text: str, step: int = 1) -> AttentionState:
        return attention_state(text, step)

    def figure(self, state: AttentionState) -> go.Figure:
        return attention_figure(state)

    def caption(self, state: AttentionState) -> str:
        words = f"注意力模型：{' '.join(state.output)}{_score(state.output, state.reference)}；"
        words += f"固定上下文模型：{' '.join(state.baseline)}{_score(state.baseline, state.reference)}。"
        if state.reference is None:
            words += "这句话不合玩具语法，没有标准译文，只能看模型怎样分配权重。"
        if state.clamped:
            words += f"这句只有 {len(state.source)} 个目标词，滑块停在最后一步。"
        return words

    def update(self, fig: go.FigureWidget, state: AttentionState) -> None:
        new = self.figure(state)
        for old, trace in zip(fig.data, new.data):
            for key in ("x", "y", "z", "name"):
                if key in trace:
                    old[key] = trace[key]
        fig.layout.update(
            {key: new.layout[key] for key in ("title", "shapes", "annotations", "height", "xaxis", "yaxis",
                                               "xaxis2", "yaxis2")},
        )

    def static_figure(self) -> go.Figure:
        states = []
        for k, text in enumerate(task.EXAMPLES, start=1):
            for t in range(1, len(parse_source(text)) + 1):
                states.append((f"例{k}·t={t}", self.figure(attention_state(text, t))))
        return stepped_figure(states, prefix="例句与解码步 ", active=2)
