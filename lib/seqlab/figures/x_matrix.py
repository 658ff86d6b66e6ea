"""第 1.2 节“句子矩阵”的图：一行一个位置，一列一个通道的热力图。"""

from __future__ import annotations

import plotly.graph_objects as go

from seqlab.states.x_matrix import LAYERS, MatrixState


def caption(state: MatrixState) -> str:
    S, d = state.M.shape
    note = f"；其中 {state.unknown} 个词不在词表里，用 <unk> 的向量" if state.unknown else ""
    return f"{LAYERS[state.layer]}：S = {S} 行（token），d = {d} 列（通道）{note}。"


def render(state: MatrixState) -> go.Figure:
    fig = go.Figure(
        go.Heatmap(
            colorscale="RdBu",
            zmid=0,
            zmin=-1,
            zmax=1,
            colorbar={"title": "值"},
            hovertemplate="位置 %{customdata}<br>通道 %{x}<br>值 = %{z:.3f}<extra></extra>",
        )
    )
    fig.update_xaxes(title_text="通道 j（特征维度，共 d 个）")
    fig.update_yaxes(title_text="位置 t（token）", autorange="reversed")
    patch(fig, state, state)
    return fig


def patch(fig: go.Figure, old: MatrixState, new: MatrixState) -> None:
    """换上 ``new`` 的矩阵、行名与标题（其余都与状态无关）。"""
    S, d = new.M.shape
    tokens = new.cv.tokens
    fig.data[0].update(
        z=new.M.tolist(),
        x=list(range(d)),
        y=[f"{t}·{tok}" for t, tok in enumerate(tokens)],
        customdata=[[f"{t}「{tok}」"] * d for t, tok in enumerate(tokens)],
    )
    fig.update_layout(height=max(300, 26 * S + 150), title=f"{LAYERS[new.layer]}　「{new.cv.text}」")
