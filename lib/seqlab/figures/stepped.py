"""静态探索器的图：若干个预先算好的状态合成一张带滑块（或下拉菜单）的图，不需要内核。"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go


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
    fig.update_layout(_control(control, steps, label=label, prefix=prefix, active=active))
    return fig


def _control(control: str, steps: list[dict], *, label: str, prefix: str, active: int) -> dict:
    """切换各步的那个控件（版面里的 ``sliders`` 或 ``updatemenus``）。"""
    if control == "slider":
        slider = dict(name=label or None, active=active, steps=steps,
                      currentvalue=dict(prefix=prefix, font=dict(size=13)), pad=dict(t=45, b=10))
        return {"sliders": [slider]}
    menu = dict(name=label or None, type="dropdown", active=active, buttons=steps,
                x=0.0, xanchor="left", y=1.18, yanchor="top", showactive=True)
    return {"updatemenus": [menu]}


def _switchable_layout(layout: go.Layout) -> dict:
    """一个状态里随滑块一起切换的版面属性：标题、坐标轴、注释。"""
    keys = ("title", "annotations", "shapes")
    full = layout.to_plotly_json()
    out = {key: full.get(key, [] if key != "title" else {}) for key in keys}
    for key, value in full.items():
        if key.startswith(("xaxis", "yaxis")):
            out[key] = value
    return out
