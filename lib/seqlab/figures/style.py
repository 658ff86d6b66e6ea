"""全书统一的图形样式：字体、配色、工具栏，以及 plotly 模板 ``seqlab``。"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

FONT = "Noto Sans CJK SC, Source Han Sans SC, PingFang SC, Microsoft YaHei, sans-serif"
PALETTE = ["#3b6ea5", "#e07b39", "#4a9c6d", "#b5485d", "#7d5ba6", "#8c7a4f", "#2f9fb3", "#c2a83e"]

# 权重为 0 的格子透明、权重越大蓝色越浓：浅色和深色页面上都清楚（不会在深色页面上出现一块白板）。
ATTENTION_SCALE = [[0.0, "rgba(59, 110, 165, 0.0)"], [0.5, "rgba(59, 110, 165, 0.55)"], [1.0, "rgba(31, 71, 128, 1.0)"]]


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


def register_template() -> None:
    """登记并启用全书的图形模板 ``seqlab``（可重复调用）。"""
    template = go.layout.Template(pio.templates["plotly_white"])
    template.layout.font = dict(family=FONT, size=13)
    template.layout.colorway = PALETTE
    template.layout.margin = dict(l=60, r=30, t=60, b=50)
    # 透明背景：网站切换到深色模式时图不会变成一块白板。
    template.layout.paper_bgcolor = "rgba(0,0,0,0)"
    template.layout.plot_bgcolor = "rgba(0,0,0,0)"
    pio.templates["seqlab"] = template
    pio.templates.default = "seqlab"
