"""图形层：plotly 的默认样式、离线渲染器，以及“静态探索器”用的滑块图。

分层约定：模型与数学（torch）← 图形（本模块，plotly）← 控件（explorers，ipywidgets）。
这里不导入 ipywidgets，也不导入任何模型代码。
"""

from __future__ import annotations

import html
import json
import math
import re
import uuid
from collections.abc import Sequence

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io.base_renderers import MimetypeRenderer
from plotly.subplots import make_subplots

RENDERER = "seqlab_html"
FONT = "Noto Sans CJK SC, Source Han Sans SC, PingFang SC, Microsoft YaHei, sans-serif"
PALETTE = ["#3b6ea5", "#e07b39", "#4a9c6d", "#b5485d", "#7d5ba6", "#8c7a4f", "#2f9fb3", "#c2a83e"]


# 图的工具栏只留读者用得上的按钮：存为图片、缩放、平移、复原。没有上传到云端的“分享”按钮，也没有标志。
CONFIG = {
    "displaylogo": False,
    "responsive": True,
    "showSendToCloud": False,
    "showEditInChartStudio": False,
    "showLink": False,
    "locale": "zh-CN",
    "modeBarButtons": [["toImage", "zoom2d", "pan2d", "resetScale2d"]],
}


class OfflineHTMLRenderer(MimetypeRenderer):
    """把图渲染成不含 plotly.js、不含 MathJax、也不含任何立即执行的脚本的 ``text/html`` 片段。

    片段里是一个空的 ``plotly-graph-div``、一段简短的中文文字说明，以及一个 ``application/json`` 块
    （图的数据、版面、控件）。网站的脚本 ``assets/seqlab-figures.js`` 在 plotly.js（延迟加载、全站只有一份）
    到达之后画图，并把滑块和下拉菜单换成网页自己的控件；JupyterLab 则使用同时输出的
    ``application/vnd.plotly.v1+json``。
    """

    def to_mimebundle(self, fig_dict):
        return {"text/html": figure_html(fig_dict)}


def figure_html(fig_dict: dict) -> str:
    """一张图在网页上的 HTML 片段（见 :class:`OfflineHTMLRenderer`）。"""
    spec = json.loads(pio.to_json(fig_dict, validate=False, remove_uids=True))
    layout = spec.setdefault("layout", {})
    controls = static_controls(layout)
    div = f"seqlab-fig-{uuid.uuid4().hex[:12]}"
    height = int(layout.get("height") or 450)
    payload = {"id": div, "data": spec.get("data", []), "layout": layout, "config": CONFIG, "controls": controls}
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    alt = html.escape(text_alternative(layout, controls))
    return (
        f'<figure class="seqlab-figure" aria-labelledby="{div}-alt">'
        f'<p class="seqlab-alt" id="{div}-alt">{alt}</p>'
        f'<div class="seqlab-controls"></div>'
        f'<div id="{div}" class="plotly-graph-div seqlab-plot" style="height:{height}px; width:100%;"></div>'
        f'<script type="application/json" class="seqlab-figure-spec">{text}</script>'
        "</figure>"
    )


def static_controls(layout: dict) -> list[dict]:
    """把版面里的滑块与下拉菜单取出来，改写成网页控件的说明（就地删去 ``layout`` 里的它们）。

    每个控件：``kind``（``"range"`` 或 ``"select"``）、原来的位置 ``origin``（如 ``"sliders[1]"``，
    各步的 ``args`` 里用它显示、隐藏或拨动别的控件）、中文标签 ``label``、当前项 ``active``、是否显示
    ``visible``，以及 ``steps``——每步的标签和 plotly 的调用（``method`` 与 ``args``，与 plotly 自己的滑块相同）。
    滑块原来在图下占的空白也一并收回。
    """
    controls = []
    for k, menu in enumerate(layout.pop("updatemenus", [])):
        label = menu.get("name") or "选择要显示的内容"
        controls.append(_control("select", ("updatemenus", k), menu, menu.get("buttons", []), label))
    sliders = layout.pop("sliders", [])
    for k, slider in enumerate(sliders):
        current = slider.get("currentvalue", {})
        prefix = current.get("prefix", "")
        label = slider.get("name") or prefix.strip(" ：:=") or "状态"
        control = _control("range", ("sliders", k), slider, slider.get("steps", []), label)
        control.update(prefix=prefix, suffix=current.get("suffix", ""))
        controls.append(control)
    if sliders:
        margin = layout.setdefault("margin", {})
        reserved = max(s.get("pad", {}).get("t", 0) for s in sliders) + 40
        margin["b"] = max(60, margin.get("b", 80) - reserved)
    return controls


def _control(kind: str, origin: tuple[str, int], source: dict, steps: list[dict], label: str) -> dict:
    return {
        "kind": kind,
        "origin": f"{origin[0]}[{origin[1]}]",
        "label": label,
        "active": source.get("active", 0),
        "visible": source.get("visible", True),
        "steps": [{"label": s.get("label", str(k)), "method": s.get("method", "update"), "args": s.get("args", [])}
                  for k, s in enumerate(steps)],
    }


def text_alternative(layout: dict, controls: list[dict]) -> str:
    """图的简短中文文字说明：说的是什么（``layout.meta.alt`` 或标题）、两根轴、可以怎样切换。"""
    meta = layout.get("meta")
    what = meta.get("alt") if isinstance(meta, dict) else None
    if not what:
        what = _plain(_title(layout.get("title"))) or "交互图"
    parts = [f"图：{what.rstrip('。')}。"]
    axes = [(key, value) for key, value in sorted(layout.items()) if key.startswith(("xaxis", "yaxis"))]
    names = {"x": "横轴", "y": "纵轴"}
    seen = []
    for key, axis in axes:
        title = _plain(_title(axis.get("title"))) if isinstance(axis, dict) else ""
        if title and title not in seen:
            seen.append(title)
            parts.append(f"{names[key[0]]}：{title}。")
    for control in controls:
        parts.append(f"用“{control['label']}”控件在 {len(control['steps'])} 个预先算好的状态之间切换。")
    return "".join(parts)


def _title(title) -> str:
    if isinstance(title, dict):
        return title.get("text") or ""
    return title or ""


def _plain(text: str) -> str:
    """去掉 plotly 标题里的 HTML 标签（``<br>``、``<sup>`` 等）。"""
    return re.sub(r"\s+", " ", re.sub(r"<br\s*/?>", " ", re.sub(r"<(?!br)[^>]+>", "", text))).strip()


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
    label: str = "",
    active: int = 0,
) -> go.Figure:
    """把若干个预先算好的状态合成一张带滑块（或下拉菜单）的静态图。

    ``states`` 是 ``(标签, 图)`` 的列表；每张图的轨迹数可以不同。所有轨迹都放进
    一张图里，滑块的每一步只切换哪些轨迹可见，并换上该状态自己的标题、坐标轴与注释。
    这样的图不需要 Python 内核，在网页上离线也能拖动。``label`` 是控件的中文名字（网页上控件旁的标签、
    读屏软件读出的名字）；不给时用 ``prefix``。
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
    for k, ((step_label, state), (a, b)) in enumerate(zip(states, spans)):
        visible = [a <= i < b for i in range(n)]
        relayout = _switchable_layout(state.layout)
        steps.append(dict(label=step_label, method="update", args=[{"visible": visible}, relayout]))
        if k == active:
            for i, trace in enumerate(fig.data):
                trace.visible = visible[i]
    if control == "slider":
        fig.update_layout(
            sliders=[
                dict(
                    name=label or None,
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
                    name=label or None,
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


def clipping_curves(unclipped: Sequence[float], clipped: Sequence[float], *, tau: float = 1.0, title: str = "") -> go.Figure:
    """梯度裁剪实验（第 1.3 节）：不裁剪与裁剪两次训练的损失曲线，左右两个子图。

    ``unclipped``、``clipped`` 是每一步的损失（第 1 步在前）。纵轴都是对数坐标，但各用各的范围：不裁剪的
    损失涨过几十个数量级，和它共用一根轴，裁剪后那几个数量级的下降就被压成一条平线。两次训练的起点相同，
    两个子图都用一条点线标出它，高低仍能对照。横轴各自画到自己训练到的那一步。不裁剪的那次若在最后一步
    溢出成 ``inf`` 或 ``NaN``（对数轴上画不出来），就在那一步画一条竖线并写明。窄屏上网页的脚本把两个子图
    上下叠放。
    """
    runs = [("不裁剪", list(unclipped), PALETTE[1]), (f"裁剪到 τ = {tau:g}", list(clipped), PALETTE[0])]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.13, subplot_titles=[name for name, _, _ in runs])
    for col, (name, losses, color) in enumerate(runs, start=1):
        fig.add_scatter(
            x=list(range(1, len(losses) + 1)),
            y=[v if math.isfinite(v) else None for v in losses],
            name=name,
            mode="lines",
            line=dict(color=color, width=2.5),
            hovertemplate=f"{name}<br>第 %{{x}} 步：损失 %{{y:.3g}}<extra></extra>",
            row=1,
            col=col,
        )
        if losses and math.isfinite(losses[0]):
            fig.add_hline(y=losses[0], line=dict(color="#888888", width=1, dash="dot"), row=1, col=col)
        fig.update_xaxes(title_text="训练步数", row=1, col=col)
        fig.update_yaxes(title_text="均方误差（对数坐标）", type="log", exponentformat="power", row=1, col=col)
    if clipped and math.isfinite(clipped[0]):
        # 对数轴上，注释的 y 要写成 log10（形状的 y 则直接写数值）
        fig.add_annotation(x=1, xref="x2 domain", y=math.log10(clipped[0]), yref="y2", text="起点（两次相同）", showarrow=False,
                           xanchor="right", yanchor="top", font=dict(size=12, color="#777777"))
    blown = next((k for k, v in enumerate(runs[0][1]) if not math.isfinite(v)), None)
    if blown is not None:
        step, value = blown + 1, runs[0][1][blown]
        fig.add_vline(x=step, line=dict(color=PALETTE[3], width=1.5, dash="dash"), row=1, col=1)
        fig.add_annotation(
            x=step, xref="x", y=0.04, yref="y domain", text=f"第 {step} 步<br>损失溢出为 {value}",
            showarrow=False, xanchor="right", yanchor="bottom", align="right", xshift=-4, font=dict(color=PALETTE[3]),
        )
    fig.update_layout(
        title=title,
        height=400,
        showlegend=False,
        margin=dict(t=90),
        meta=dict(alt=(title or "梯度裁剪实验的损失曲线") + f"：两幅子图，一幅不裁剪，一幅裁剪到 τ = {tau:g}；点线是两次共同的起点"
                  + ("；竖线标出不裁剪的那次损失溢出的那一步" if blown is not None else "")),
    )
    return fig
