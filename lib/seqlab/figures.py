"""图形层：plotly 的默认样式、离线渲染器，以及“静态探索器”用的滑块图。

分层约定：模型与数学（torch）← 图形（本模块，plotly）← 控件（explorers，ipywidgets）。
这里不导入 ipywidgets，也不导入任何模型代码。
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io.base_renderers import MimetypeRenderer

RENDERER = "seqlab_html"
FONT = "Noto Sans CJK SC, Source Han Sans SC, PingFang SC, Microsoft YaHei, sans-serif"
PALETTE = ["#3b6ea5", "#e07b39", "#4a9c6d", "#b5485d", "#7d5ba6", "#8c7a4f", "#2f9fb3", "#c2a83e"]


class OfflineHTMLRenderer(MimetypeRenderer):
    """把图渲染成不含 plotly.js、不含 MathJax 的 ``text/html`` 片段。

    网站由本书的 Sphinx 扩展在页面里只引用一次本地的 ``plotly.min.js``；
    JupyterLab 则使用同时输出的 ``application/vnd.plotly.v1+json``。
    """

    def to_mimebundle(self, fig_dict):
        html = pio.to_html(
            fig_dict,
            include_plotlyjs=False,
            include_mathjax=False,
            full_html=False,
            validate=False,
            config={"displaylogo": False, "responsive": True},
        )
        return {"text/html": html}


def use_book_defaults() -> None:
    """注册离线渲染器并设定全书统一的图形模板（可重复调用）。"""
    pio.renderers[RENDERER] = OfflineHTMLRenderer()
    pio.renderers.default = f"plotly_mimetype+{RENDERER}"
    template = go.layout.Template(pio.templates["plotly_white"])
    template.layout.font = dict(family=FONT, size=13)
    template.layout.colorway = PALETTE
    template.layout.margin = dict(l=60, r=30, t=60, b=50)
    # 透明背景：网站切换到深色模式时图不会变成一块白板。
    template.layout.paper_bgcolor = "rgba(0,0,0,0)"
    template.layout.plot_bgcolor = "rgba(0,0,0,0)"
    pio.templates["seqlab"] = template
    pio.templates.default = "seqlab"


def stepped_figure(
    states: Sequence[tuple[str, go.Figure]],
    *,
    control: str = "slider",
    prefix: str = "",
    active: int = 0,
) -> go.Figure:
    """把若干个预先算好的状态合成一张带滑块（或下拉菜单）的静态图。

    ``states`` 是 ``(标签, 图)`` 的列表；每张图的轨迹数可以不同。所有轨迹都放进
    一张图里，滑块的每一步只切换哪些轨迹可见，并换上该状态自己的标题、坐标轴与注释。
    这样的图不需要 Python 内核，在网页上离线也能拖动。
    """
    if not states:
        raise ValueError("stepped_figure 至少需要一个状态")
    if control not in {"slider", "dropdown"}:
        raise ValueError("control 只能是 'slider' 或 'dropdown'")
    fig = go.Figure()
    spans = []
    for _, state in states:
        start = len(fig.data)
        fig.add_traces(state.data)
        spans.append((start, len(fig.data)))
    n = len(fig.data)
    base = states[active][1].layout
    fig.update_layout(base)
    steps = []
    for k, ((label, state), (a, b)) in enumerate(zip(states, spans)):
        visible = [a <= i < b for i in range(n)]
        relayout = _switchable_layout(state.layout)
        steps.append(dict(label=label, method="update", args=[{"visible": visible}, relayout]))
        if k == active:
            for i, trace in enumerate(fig.data):
                trace.visible = visible[i]
    if control == "slider":
        fig.update_layout(
            sliders=[
                dict(
                    active=active,
                    steps=steps,
                    currentvalue=dict(prefix=prefix, font=dict(size=13)),
                    pad=dict(t=45, b=10),
                )
            ]
        )
    else:
        fig.update_layout(
            updatemenus=[
                dict(
                    type="dropdown",
                    active=active,
                    buttons=steps,
                    x=0.0,
                    xanchor="left",
                    y=1.18,
                    yanchor="top",
                    showactive=True,
                )
            ]
        )
    return fig


def _switchable_layout(layout: go.Layout) -> dict:
    """一个状态里随滑块一起切换的版面属性：标题、坐标轴、注释。"""
    keys = ("title", "annotations", "shapes")
    full = layout.to_plotly_json()
    out = {key: full.get(key, [] if key != "title" else {}) for key in keys}
    for key, value in full.items():
        if key.startswith(("xaxis", "yaxis")):
            out[key] = value
    return out


# 权重为 0 的格子透明、权重越大蓝色越浓：浅色和深色页面上都清楚（不会在深色页面上出现一块白板）。
ATTENTION_SCALE = [[0.0, "rgba(59, 110, 165, 0.0)"], [0.5, "rgba(59, 110, 165, 0.55)"], [1.0, "rgba(31, 71, 128, 1.0)"]]


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
