"""第 1.3 节“雅可比矩阵连乘”的静态面：上面的滑块在导览的场景之间切换，下面的滑块改变距离 r。

场景滑块用 ``update`` 切换可见的轨迹和版面；r 滑块用 ``restyle`` 只改每个场景的竖线、圆点
与奇异值轨迹的数据（右图与圆点随之变化），所以两者互不干扰：换场景时 r 保持不变。
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from seqlab.figures.jacobian import LEGEND, STATIC_HEIGHT, layout
from seqlab.figures.jacobian_traces import N_TRACES, at_r, traces
from seqlab.states.jacobian import TourState


def tour_figure(tour: TourState) -> go.Figure:
    """每个场景的状态都停在同一个距离 r（r 滑块的初值）。"""
    fig = make_subplots(rows=1, cols=2)
    for scene in tour.scenes:
        fig.add_traces(traces(scene.state))
    active, r0 = 0, tour.scenes[0].state.r
    scene_steps = _scene_steps(tour)
    fig.update_layout(scene_steps[active]["args"][1])
    for trace, visible in zip(fig.data, scene_steps[active]["args"][0]["visible"]):
        trace.visible = visible
    fig.update_layout(
        height=STATIC_HEIGHT,
        legend=LEGEND,
        margin={"t": 105, "b": 200, "l": 70, "r": 20},
        sliders=[
            _slider(active, scene_steps, "场景 ", pad=58),
            _slider(tour.distances.index(r0), _distance_steps(tour), "距离 r = ", pad=150),
        ],
    )
    return fig


def _slider(active: int, steps: list[dict[str, Any]], prefix: str, pad: int) -> dict[str, Any]:
    return {
        "active": active,
        "steps": steps,
        "currentvalue": {"prefix": prefix, "font": {"size": 13}},
        "pad": {"t": pad, "b": 0},
        "y": 0,
        "yanchor": "top",
        "font": {"size": 12},
    }


def _scene_steps(tour: TourState) -> list[dict[str, Any]]:
    """场景滑块的每一步：只显示这个场景的一组轨迹，换上它的版面。"""
    n = len(tour.scenes) * N_TRACES
    steps = []
    for k, scene in enumerate(tour.scenes):
        visible = [i // N_TRACES == k for i in range(n)]
        relayout = layout(scene.state, scene.headline, "所选距离 r 处乘积的全部奇异值", STATIC_HEIGHT)
        steps.append({"label": scene.label, "method": "update", "args": [{"visible": visible}, relayout]})
    return steps


def _distance_steps(tour: TourState) -> list[dict[str, Any]]:
    """r 滑块的每一步：改写每个场景里随 r 变化的轨迹（竖线、圆点、奇异值）。"""
    steps = []
    for j, r in enumerate(tour.distances):
        xs, ys, idx = [], [], []
        for k, scene in enumerate(tour.scenes):
            for i, (x, y) in at_r(scene.state, r, scene.singular[j]).items():
                xs.append(x)
                ys.append(y)
                idx.append(k * N_TRACES + i)
        steps.append({"label": str(r), "method": "restyle", "args": [{"x": xs, "y": ys}, idx]})
    return steps
