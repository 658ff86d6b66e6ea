"""图在网页上的样子：不含任何脚本的 HTML 片段、网页控件的说明、给读屏软件的文字说明。"""

from __future__ import annotations

import html
import json
import re
import uuid

import plotly.io as pio
from plotly.io.base_renderers import MimetypeRenderer

from seqlab.figures.style import CONFIG, register_template

RENDERER = "seqlab_html"
# 有网页实时面的图：浏览器关掉了 JavaScript 时，图与“实时计算”开关都画不出来，说明一下为什么
NO_SCRIPT = (
    '<noscript><p class="seqlab-live-note">这张图和它的“实时计算”开关需要 JavaScript：'
    "浏览器关闭了 JavaScript，只能读到图的文字说明。</p></noscript>"
)


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
    meta = layout.get("meta")
    live = isinstance(meta, dict) and meta.get("live")
    return (
        f'<figure class="seqlab-figure" aria-labelledby="{div}-alt">'
        f'<p class="seqlab-alt" id="{div}-alt">{alt}</p>'
        + (NO_SCRIPT if live else "") +
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
    register_template()
