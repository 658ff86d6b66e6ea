"""第 1.5 节“「它」指谁”的图：两句里「它」那一行注意力的热力图。"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from seqlab.figures.heatmap import attention_heatmap
from seqlab.figures.stepped import stepped_figure
from seqlab.states.it_attention import ItState


def _verdicts(state: ItState) -> list[str]:
    """每句一条：「它」指向哪个名词、对不对、两个名词各得多少权重。"""
    out = []
    for e, guess, m in zip(state.examples, state.guesses, state.mass):
        mark = "✓" if guess == e.referent else "✗"
        out.append(f"「…太{e.word}了」：它 → {guess} {mark}（A {m[0]:.2f} : B {m[1]:.2f}）")
    return out


def caption(state: ItState) -> str:
    words = "；".join(_verdicts(state))
    if state.unknown:
        words += f"。模型的字表里没有「{'」「'.join(state.unknown)}」，按“未知字”处理"
    return words


def render(state: ItState) -> go.Figure:
    a, b = state.examples
    pairs = list(zip(a.text, b.text))
    cols = [x if x == y else f"{x}<br>{y}" for x, y in pairs]  # 关键词那一列上下写出两种取法
    sentence = "".join(x if x == y else f"{x}/{y}" for x, y in pairs)
    fig = attention_heatmap(
        state.rows,
        [f"它（太{a.word}）", f"它（太{b.word}）"],
        cols,
        title=f"「{sentence}」：第 2 层里「它」的注意力",
        row_title="「它」所在的句子",
        col_title="被读取的字",
    )
    fig.update_xaxes(title_text="")
    fig.update_layout(height=330, margin={"t": 110})
    return fig


def _with_verdicts(state: ItState) -> go.Figure:
    """静态面的一步：图下方写出两句的结论（实时面把它们写在图上方的消息里）。"""
    fig = render(state)
    fig.add_annotation(
        text="<br>".join(_verdicts(state)),
        xref="paper",
        yref="paper",
        x=0.3,
        y=-0.06,
        align="left",
        showarrow=False,
        xanchor="left",
        yanchor="top",
    )
    fig.update_layout(height=380, margin={"b": 90})
    return fig


def static(states: Sequence[ItState]) -> go.Figure:
    """静态面：几组名词，图下方的下拉菜单切换。"""
    labeled = [(f"{s.examples[0].noun_a}·{s.examples[0].noun_b}", _with_verdicts(s)) for s in states]
    fig = stepped_figure(labeled, control="dropdown", label="例句")
    fig.layout.updatemenus[0].update(x=0.0, xanchor="left", y=-0.08, yanchor="top", direction="up")
    return fig
