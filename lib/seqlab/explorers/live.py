"""探索器的实时面：由参数生成的控件 + 一行消息 + 原地更新的图。"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from seqlab.errors import InputError
from seqlab.explorers.base import Explorer
from seqlab.explorers.plotview import PlotView, figure_json


class LiveView:
    """探索器的实时面。

    ``set(**values)`` 以编程方式设置控件（测试与基准测试用），只触发一次更新。
    ``status`` 是最近一次更新给读者的消息（纯文本）；``unexpected`` 记录意料之外的异常
    （正常情况下永远是 ``None``，测试会检查它）。
    """

    def __init__(self, explorer: Explorer[Any]):
        self.explorer = explorer
        self.controls = explorer.controls()
        self.message = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.status = ""
        self.ok = False
        self.unexpected: BaseException | None = None
        self._hold = False
        self._good_values = self.values()
        self._good_state = explorer.compute(**self._good_values)
        self.figure = explorer.figure(self._good_state)
        self.plot = PlotView(figure=figure_json(self.figure))
        self._show(explorer.caption(self._good_state), ok=True)
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.widget = widgets.VBox(
            [widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")),
             *_enter_hint(self.controls), self.message, self.plot]
        )

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def set(self, **values: Any) -> bool:
        """以编程方式设置若干控件并更新一次；成功返回 ``True``。

        要么全部生效，要么全都不生效：任何一个值不合法（类型不对、不在选项里、超出范围、NaN……），
        或者计算拒绝了这组输入，控件就全部退回上一次的正常状态，图不变，消息说明原因，返回 ``False``。
        """
        try:
            checked = self.explorer.check(values)
        except InputError as err:
            self._show(str(err), ok=False)
            return False
        self._assign(checked)
        if self.refresh():
            return True
        self._assign(self._good_values)  # 控件与图一致：都停在上一次的正常状态
        return False

    def refresh(self) -> bool:
        """用当前控件值重新计算；成功返回 ``True``，坏输入返回 ``False``（图不变）。"""
        try:
            params = self.values()
            state = self.explorer.compute(**params)
            caption = self.explorer.caption(state)
            figure = self.explorer.update(self.figure, self._good_state, state)
        except InputError as err:
            self._show(str(err), ok=False)
            return False
        except Exception as err:  # noqa: BLE001 —— 控件里绝不抛异常
            self.unexpected = err
            self.figure = self.explorer.figure(self._good_state)  # 改到一半的图不要留下：画回上一次的正常状态
            self._show(f"计算时出现意外错误（{type(err).__name__}）。请换一个输入再试。", ok=False)
            return False
        self._good_values, self._good_state, self.figure = params, state, figure
        self.plot.show(figure)
        self._show(caption, ok=True)
        return True

    def _assign(self, values: dict[str, Any]) -> None:
        self._hold = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._hold = False

    def _on_change(self, _change: Any) -> None:
        if not self._hold:
            self.refresh()

    def _show(self, text: str, *, ok: bool) -> None:
        self.status, self.ok = text, ok
        color = "inherit" if ok else "#b5485d"
        icon = "" if ok or not text else "⚠️ "
        self.message.value = f'<span style="color:{color}">{icon}{html.escape(text)}</span>'

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def _enter_hint(controls: dict[str, widgets.ValueWidget]) -> list[widgets.HTML]:
    """有“改完才提交”的文本框时，在控件下面说一句怎样让图更新（否则读者会以为图没反应）。"""
    typed = [c for c in controls.values() if isinstance(c, (widgets.Text, widgets.Textarea)) and not c.continuous_update]
    if not typed:
        return []
    return [widgets.HTML('<span style="opacity:.75">✏️ 改完文字后按回车键（或点到别处），图就会更新。</span>')]
