"""第 1.4 节的探索器：Bahdanau 注意力的权重 α_tj，以及第 t 步的上下文 c_t 是怎样拼出来的。

左边是热力图：行是模型逐步生成的目标词，列是源句的字，格子的颜色是 α_tj；空心圆标出玩具任务
的标准对齐（模型训练时从没见过它）。右边的条形图是当前这一步的那一行权重——``c_t`` 就是按这些
比例把各个 ``h_j`` 加起来。
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
import torch

from seqlab.corpus import translation as task
from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import PALETTE, attention_heatmap

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


@lru_cache(maxsize=128)
def _translate(source: tuple[str, ...]) -> AttentionState:
    """两个模型各贪心解码一次（按源句缓存：拖动步数滑块时不必重算）。"""
    src = torch.tensor([task.encode_source(list(source))])
    ids, alpha = _model(MODEL).greedy(src, len(source))
    base_ids, _ = _model(BASELINE).greedy(src, len(source))
    grammatical = task.is_grammatical(list(source))
    return AttentionState(
        source=list(source),
        output=task.decode_target(ids[0]),
        alpha=[[round(a, 4) for a in row] for row in alpha[0].tolist()],
        reference=task.translate(list(source)) if grammatical else None,
        gold=task.alignment(list(source)) if grammatical else None,
        baseline=task.decode_target(base_ids[0]),
        step=1,
        clamped=False,
    )


def attention_state(text: str, step: int = 1) -> AttentionState:
    """探索器的计算函数：源句 → 两个模型的译文、α 矩阵；``step`` 超出句长时收回到最后一步。"""
    state = _translate(tuple(parse_source(text)))
    t = min(max(int(step), 1), len(state.source))
    return replace(state, step=t, clamped=t != int(step))


def _score(words: list[str], reference: list[str] | None) -> str:
    if reference is None:
        return ""
    right = sum(a == b for a, b in zip(words, reference))
    return f"（{right}/{len(reference)} 个词与标准译文一致）"


def _categories(labels: list[str]) -> list[str]:
    """与 ``figures.attention_heatmap`` 相同的坐标约定：``序号:token``，重复的 token 不会被合并。"""
    return [f"{i}:{c}" for i, c in enumerate(labels)]


def _gold_xy(state: AttentionState) -> tuple[list[str], list[str]]:
    if state.gold is None:
        return [], []
    xs, ys = _categories(state.source), _categories(state.output)
    return [xs[j] for j in state.gold], ys


def _bar(state: AttentionState, t: int) -> dict:
    return {"x": _categories(state.source), "y": state.alpha[t - 1], "name": f"α_{t}j"}


def _layout(state: AttentionState) -> dict:
    """随状态变化的版面：标题、高度、坐标刻度、当前行的框、c_t 的说明。"""
    t, xs, ys = state.step, _categories(state.source), _categories(state.output)
    return {
        "title": {"text": f"注意力模型翻译「{''.join(state.source)}」", "y": 0.98, "yanchor": "top"},
        "height": max(480, 26 * len(state.source) + 300),
        "xaxis": {"tickvals": xs, "ticktext": state.source},
        "yaxis": {"tickvals": ys, "ticktext": state.output},
        "xaxis2": {"tickvals": xs, "ticktext": state.source},
        "yaxis2": {"title": {"text": f"第 {t} 步的权重 α_{t}j"}},
        "shapes": [
            {
                "type": "rect",
                "xref": "x domain",
                "yref": "y",
                "x0": 0,
                "x1": 1,
                "y0": t - 1.5,
                "y1": t - 0.5,
                "line": {"color": PALETTE[1], "width": 3},
                "fillcolor": "rgba(0,0,0,0)",
            }
        ],
        "annotations": [
            {
                "xref": "paper",
                "yref": "paper",
                "x": 0.86,
                "y": 1.0,
                "yanchor": "top",
                "showarrow": False,
                "align": "left",
                "font": {"size": 12},
                "text": f"第 {t} 步输出「{state.output[t - 1]}」<br>c_{t} ≈ {_context_terms(state)}",
            }
        ],
    }


def attention_figure(state: AttentionState) -> go.Figure:
    """左：α 热力图（当前行加框）与标准对齐；右：第 t 行的权重条形图与 c_t 的主要组成。

    轨迹固定是三条：热力图、标准对齐的空心圆、当前步的条形图（实时面据此原地更新）。
    """
    fig = attention_heatmap(
        state.alpha, state.output, state.source, row_title="目标词（第 t 步）", col_title="源字 j"
    )
    fig.data[0].colorbar.update(x=0.58, len=0.8, thickness=12)
    gx, gy = _gold_xy(state)
    fig.add_trace(
        go.Scatter(
            x=gx,
            y=gy,
            mode="markers",
            marker={"symbol": "circle-open", "size": 16, "color": PALETTE[1], "line": {"width": 2}},
            name="标准对齐（训练时从未给出）",
            hovertemplate="标准对齐：%{y} ← %{x}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            **_bar(state, state.step),
            xaxis="x2",
            yaxis="y2",
            marker_color=PALETTE[0],
            hovertemplate="α = %{y:.3f}<extra>%{x}</extra>",
            showlegend=False,
        )
    )
    fig.update_layout(
        xaxis={"domain": [0.0, 0.54]},
        xaxis2={
            "domain": [0.72, 1.0],
            "anchor": "y2",
            "tickmode": "array",
            "tickangle": 0,
            "tickfont": {"size": 10},
            "title": {"text": "源字 j"},
        },
        yaxis2={"domain": [0.0, 0.6], "anchor": "x2", "range": [0, 1.05]},
        legend={"orientation": "h", "x": 0.0, "y": -0.06},
        margin={"t": 150},
    )
    fig.update_layout(_layout(state))
    return fig


def _context_terms(state: AttentionState) -> str:
    row = state.alpha[state.step - 1]
    top = sorted(range(len(row)), key=lambda j: -row[j])[:TOP]
    terms = "<br>   + ".join(f"{row[j]:.2f}·h_{j + 1}「{state.source[j]}」" for j in top)
    return terms + ("<br>   + …" if len(row) > TOP else "")


def length_figure(
    curves: dict[str, dict[int, float]], *, title: str, colors: list[int] | None = None
) -> go.Figure:
    """准确率随源句长度变化的折线图：``curves`` 是 ``{图例: {长度: 准确率}}``。

    ``colors`` 是每条曲线在全书调色板里的序号（让同一个模型在几张图里颜色一致）。
    """
    fig = go.Figure()
    for k, (label, acc) in enumerate(curves.items()):
        fig.add_trace(
            go.Scatter(
                x=list(acc),
                y=list(acc.values()),
                mode="lines+markers",
                name=label,
                line={"color": PALETTE[colors[k] if colors else k % len(PALETTE)]},
                hovertemplate=f"{label}<br>长度 %{{x}}：%{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_xaxes(title_text="源句长度（字数）", dtick=3)
    fig.update_yaxes(title_text="逐词准确率（贪心解码）", range=[0, 1.02])
    fig.update_layout(
        title=title, height=420, legend={"x": 0.01, "y": 0.02, "xanchor": "left", "yanchor": "bottom"}
    )
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
        """只替换数据数组与少数版面属性，不重建图（实时更新的预算是 50 ms）。"""
        heat, gold, bar = fig.data
        heat.update(z=state.alpha, x=_categories(state.source), y=_categories(state.output))
        gold.x, gold.y = _gold_xy(state)
        bar.update(_bar(state, state.step))
        fig.layout.update(_layout(state))

    def static_figure(self) -> go.Figure:
        """每个例句只存一份热力图，滑块的每一步切换例句与条形图、并换上该步的框与说明。"""
        fig, steps = None, []
        for k, text in enumerate(task.EXAMPLES, start=1):
            base = attention_state(text, 1)
            if fig is None:
                fig = attention_figure(base)
                fig.data = fig.data[:2]
            else:
                fig.add_traces(attention_figure(base).data[:2])
            pair = len(fig.data) - 2
            for t in range(1, len(base.source) + 1):
                state = replace(base, step=t)
                fig.add_trace(
                    go.Bar(
                        **_bar(state, t),
                        xaxis="x2",
                        yaxis="y2",
                        marker_color=PALETTE[0],
                        hovertemplate="α = %{y:.3f}<extra>%{x}</extra>",
                        showlegend=False,
                    )
                )
                steps.append((f"例{k}·t={t}", (pair, len(fig.data) - 1), _layout(state)))
        n = len(fig.data)
        slider_steps = [
            {
                "label": label,
                "method": "update",
                "args": [{"visible": [i in (a, a + 1, b) for i in range(n)]}, layout],
            }
            for label, (a, b), layout in steps
        ]
        active = 2
        for i, trace in enumerate(fig.data):
            trace.visible = slider_steps[active]["args"][0]["visible"][i]
        fig.update_layout(steps[active][2])
        fig.update_layout(
            sliders=[
                {
                    "active": active,
                    "steps": slider_steps,
                    "pad": {"t": 50},
                    "currentvalue": {"prefix": "例句与解码步 "},
                }
            ]
        )
        return fig
