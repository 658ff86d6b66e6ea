"""注意力权重热力图：第 1.4、1.5、1.6 节共用。"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from seqlab.figures.style import ATTENTION_SCALE


def attention_heatmap(
    weights,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    row_title: str = "Query（读取方）",
    col_title: str = "Key（被读取方）",
    zmax: float | None = 1.0,
) -> go.Figure:
    """注意力权重热力图：行是发出读取的位置，列是被读取的位置；悬停显示行、列与权重。

    ``weights`` 形状 ``(行数, 列数)``（``torch.Tensor``、``numpy`` 数组或嵌套列表均可）。
    第 1.4、1.5、1.6 节共用这一个函数，保证全书的注意力图长得一样。
    """
    z = weights.tolist() if hasattr(weights, "tolist") else [list(r) for r in weights]
    if len(z) != len(row_labels) or (z and len(z[0]) != len(col_labels)):
        raise ValueError("权重矩阵的形状与行、列标签的个数不一致")
    # 重复的标签会被 plotly 合并成一格，所以在坐标上用序号区分，刻度上仍显示原来的 token。
    xs = [f"{j}:{c}" for j, c in enumerate(col_labels)]
    ys = [f"{i}:{r}" for i, r in enumerate(row_labels)]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=xs,
            y=ys,
            zmin=0.0,
            zmax=zmax,
            colorscale=ATTENTION_SCALE,
            colorbar=dict(title="权重"),
            hovertemplate=f"{row_title}：%{{y}}<br>{col_title}：%{{x}}<br>权重 = %{{z:.3f}}<extra></extra>",
        )
    )
    fig.update_xaxes(
        title_text=col_title, side="top", tickmode="array", tickvals=xs, ticktext=list(col_labels)
    )
    fig.update_yaxes(
        title_text=row_title, autorange="reversed", tickmode="array", tickvals=ys, ticktext=list(row_labels)
    )
    fig.update_layout(title=title, height=max(320, 28 * len(row_labels) + 160))
    return fig
