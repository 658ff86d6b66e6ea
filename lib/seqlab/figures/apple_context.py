"""第 1.2 节“同一个词，两种上下文”的图：四个向量的热力图，和两种余弦相似度的柱。"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.embedding import ContextVectors
from seqlab.figures.stepped import stepped_figure
from seqlab.figures.style import PALETTE
from seqlab.states.apple_context import AppleState

ROWS = ["A：输入 x", "B：输入 x", "A：隐藏状态 h", "B：隐藏状态 h"]


def _mark(cv: ContextVectors, t: int) -> str:
    """把句子的第 ``t`` 个 token 用【】框起来。"""
    return "".join(f"【{tok}】" if k == t else tok for k, tok in enumerate(cv.tokens))


def caption(state: AppleState) -> str:
    return (
        f"A：{_mark(state.a, state.i)}　B：{_mark(state.b, state.j)}。"
        f"输入向量的余弦相似度 = {state.cos_x:.3f}，上下文层之后 = {state.cos_h:.3f}。"
    )


def render(state: AppleState) -> go.Figure:
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.7, 0.3],
        horizontal_spacing=0.2,
        subplot_titles=("四个向量的各个通道", "余弦相似度（A 对 B）"),
    )
    fig.add_trace(
        go.Heatmap(
            colorscale="RdBu",
            zmid=0,
            zmin=-1,
            zmax=1,
            y=ROWS,
            colorbar={"title": "值", "x": 0.58, "len": 0.9, "thickness": 14},
            hovertemplate="%{y}<br>通道 %{x}<br>值 = %{z:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(
            x=["输入 x", "隐藏状态 h"],
            marker_color=[PALETTE[0], PALETTE[1]],
            textposition="outside",
            showlegend=False,
            hovertemplate="%{x}：cos = %{y:.3f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_xaxes(title_text="通道（特征维度）", row=1, col=1)
    fig.update_yaxes(range=[-1.05, 1.25], row=1, col=2)
    fig.update_layout(height=450, margin={"t": 165})
    patch(fig, state, state)
    return fig


def patch(fig: go.Figure, old: AppleState, new: AppleState) -> None:
    """换上 ``new`` 的四个向量、两个余弦和标题（图的骨架不重建）。"""
    z = new.vectors.tolist()
    fig.data[0].update(z=z, x=list(range(len(z[0]))))
    fig.data[1].update(y=[new.cos_x, new.cos_h], text=[f"{new.cos_x:.3f}", f"{new.cos_h:.3f}"])
    # 两句各占一行：正文栏只有约 680 像素宽，放在一行里长句会被裁掉
    fig.layout.title = {
        "text": f"A：{_mark(new.a, new.i)}<br>B：{_mark(new.b, new.j)}",
        "font": {"size": 15},
        "y": 0.92,
        "yanchor": "top",
    }


def static(states: Sequence[AppleState], *, word: str) -> go.Figure:
    """静态面：几组句子对，下拉菜单切换；比较的词不是 ``word`` 时写进菜单项里。"""
    labeled = [
        (f"{s.a.text} ／ {s.b.text}" + ("" if s.word == word else f"（比较「{s.word}」）"), render(s)) for s in states
    ]
    fig = stepped_figure(labeled, control="dropdown", label="句子对")
    fig.update_layout(updatemenus=[{**fig.layout.updatemenus[0].to_plotly_json(), "x": -0.14, "y": 1.34}])
    return fig
