"""探索器框架：一个计算函数，两副面孔。

* **静态面**（``static_figure``）：plotly 图自带的滑块 / 下拉菜单在预先算好的状态之间切换，
  不需要内核，网页离线可用。
* **实时面**（``live``）：ipywidgets 控件驱动同一个计算函数，原地更新一张图（``PlotView``），
  用于无法预先计算的情形（任意输入的文字、任意数值）。

坏输入永远不会在控件里抛出异常：``InputError`` 的中文消息显示在控件里，图保持上一次的
正常状态。代价随 ``S`` 或 ``V`` 增长的计算应先估算内存，超出预算就用 ``MemoryBudgetError``
拒绝并说出估算值。
"""

from __future__ import annotations

import html
import math
import numbers
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

import ipywidgets as widgets
import plotly.graph_objects as go

from seqlab.errors import InputError
from seqlab.explorers.plotview import PlotView, figure_json

MAX_TEXT_CHARS = 2000

State = TypeVar("State")  # 一个探索器的“状态”：compute 的结果，figure、update、caption 的输入


class Explorer(Generic[State]):
    """所有探索器的基类。子类设置 ``name``、``title``、``examples`` 并实现各个钩子。

    * ``controls()``：返回 ``{参数名: ipywidgets 控件}``，参数名与 ``compute`` 的关键字一致。
    * ``compute(**params)``：纯计算，返回一个“状态”；坏输入抛 ``InputError``（中文消息）。
    * ``figure(state)``：由状态画出一张完整的 ``go.Figure``。
    * ``update(fig, state)``：把状态原地画进已有的 ``go.Figure``；默认逐条替换轨迹。
    * ``static_figure()``：静态面。
    * ``caption(state)``：实时面在图上方显示的一句话（可选）。
    * ``examples``：几组合法的控件取值，测试和 ``make bench`` 用它们驱动实时面。
    """

    name: ClassVar[str]
    title: ClassVar[str]
    examples: ClassVar[list[dict[str, Any]]] = []

    def controls(self) -> dict[str, widgets.ValueWidget]:
        raise NotImplementedError

    # 每个子类按自己的参数写出 compute（例如 ``compute(self, text: str, step: int = 1)``），所以这里只声明
    # “接受控件的取值、返回状态”，不限定参数表。
    compute: Callable[..., State]

    def figure(self, state: State) -> go.Figure:
        raise NotImplementedError

    def static_figure(self) -> go.Figure:
        raise NotImplementedError

    def caption(self, state: State) -> str:
        return ""

    def update(self, fig: go.Figure, state: State) -> None:
        new = self.figure(state)
        if len(new.data) != len(fig.data):
            fig.data = []
            fig.add_traces(new.data)
        else:
            for old, trace in zip(fig.data, new.data):
                old.update(trace.to_plotly_json(), overwrite=True)
        fig.layout.update(_updatable_layout(new.layout), overwrite=False)

    def live(self) -> LiveView:
        return LiveView(self)


def _updatable_layout(layout: go.Layout) -> dict:
    full = layout.to_plotly_json()
    full.pop("template", None)
    return full


class LiveView:
    """探索器的实时面：控件 + 一行消息 + 原地更新的图。

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

    def set(self, **values) -> bool:
        """以编程方式设置若干控件并更新一次；成功返回 ``True``。

        要么全部生效，要么全都不生效：任何一个值不合法（类型不对、不在选项里、超出范围、NaN……），
        或者计算拒绝了这组输入，控件就全部退回上一次的正常状态，图不变，消息说明原因，返回 ``False``。
        """
        try:
            unknown = sorted(set(values) - set(self.controls))
            if unknown:
                raise InputError(f"没有这些控件：{unknown}；可用的控件：{list(self.controls)}。")
            checked = {name: checked_value(name, self.controls[name], value) for name, value in values.items()}
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
            _reject_non_finite(params)
            state = self.explorer.compute(**params)
            caption = self.explorer.caption(state)
            self.explorer.update(self.figure, state)
        except InputError as err:
            self._show(str(err), ok=False)
            return False
        except Exception as err:  # noqa: BLE001 —— 控件里绝不抛异常
            self.unexpected = err
            self._restore_figure()
            self._show(f"计算时出现意外错误（{type(err).__name__}）。请换一个输入再试。", ok=False)
            return False
        self._good_values, self._good_state = params, state
        self.plot.show(self.figure)
        self._show(caption, ok=True)
        return True

    def _assign(self, values: dict[str, Any]) -> None:
        self._hold = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._hold = False

    def _restore_figure(self) -> None:
        """更新到一半出错时，把图画回上一次的正常状态（前端一直显示着它，这里让 ``figure`` 也回到它）。"""
        try:
            self.explorer.update(self.figure, self._good_state)
        except Exception:  # noqa: BLE001 —— 连旧状态都画不出来时，保留现有的图
            pass

    def _on_change(self, _change) -> None:
        if not self._hold:
            self.refresh()

    def _show(self, text: str, *, ok: bool) -> None:
        self.status, self.ok = text, ok
        color = "inherit" if ok else "#b5485d"
        icon = "" if ok or not text else "⚠️ "
        self.message.value = f'<span style="color:{color}">{icon}{html.escape(text)}</span>'

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


def checked_value(name: str, control: widgets.ValueWidget, value: Any) -> Any:
    """检查 ``value`` 能否放进控件 ``control``：类型、选项、范围都要对；不对就抛出中文的 ``InputError``。

    ipywidgets 自己遇到坏值会抛 ``TraitError``，遇到超出范围的数会悄悄截断——两者都不该发生在读者面前。
    """
    label = f"「{control.description or name}」"
    try:
        if isinstance(control, (widgets.Text, widgets.Textarea, widgets.Combobox)):
            if not isinstance(value, str):
                raise InputError(f"{label}需要一段文字，收到的是 {type(value).__name__}。")
            return value
        if hasattr(control, "options"):
            allowed = [o[1] if isinstance(o, tuple) else o for o in control.options]
            if not any(type(value) is type(a) and value == a for a in allowed):
                shown = "、".join(str(o[0] if isinstance(o, tuple) else o) for o in control.options)
                raise InputError(f"{label}只能从这些选项中选一个：{shown}；收到的是 {value!r:.40}。")
            return value
        if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
            if not isinstance(value, bool):
                raise InputError(f"{label}只能是 True 或 False，收到的是 {value!r:.40}。")
            return value
        integer = isinstance(control, (widgets.IntSlider, widgets.IntText, widgets.BoundedIntText))
        if integer and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise InputError(f"{label}需要一个整数，收到的是 {value!r:.40}。")
        if not integer and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise InputError(f"{label}需要一个数，收到的是 {value!r:.40}。")
        value = int(value) if integer else float(value)
        if not math.isfinite(value):
            raise InputError(f"{label}必须是有限的实数（不能是 NaN 或无穷大）。")
        low, high = getattr(control, "min", None), getattr(control, "max", None)
        if low is not None and high is not None and not low <= value <= high:
            raise InputError(f"{label}应在 {low} 到 {high} 之间，收到的是 {value}。")
        return value
    except InputError:
        raise
    except Exception as err:  # 连比较都会出错的怪值（例如自定义对象）：转成 InputError 再抛出
        raise InputError(f"{label}收不下这个值（{type(value).__name__}）。") from err


def _enter_hint(controls: dict[str, widgets.ValueWidget]) -> list[widgets.HTML]:
    """有“改完才提交”的文本框时，在控件下面说一句怎样让图更新（否则读者会以为图没反应）。"""
    typed = [c for c in controls.values() if isinstance(c, (widgets.Text, widgets.Textarea)) and not c.continuous_update]
    if not typed:
        return []
    return [widgets.HTML('<span style="opacity:.75">✏️ 改完文字后按回车键（或点到别处），图就会更新。</span>')]


def _reject_non_finite(params: dict[str, Any]) -> None:
    for value in params.values():
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError("数值必须是有限的实数（不能是 NaN 或无穷大）。")


def clean_text(text: str, *, max_chars: int = MAX_TEXT_CHARS, what: str = "文本") -> str:
    """探索器共用的文本检查：去掉首尾空白，拒绝空文本和过长文本。"""
    if not isinstance(text, str):
        raise InputError(f"{what}必须是字符串。")
    text = text.strip()
    if not text:
        raise InputError(f"{what}是空的：请输入至少一个字符。")
    if len(text) > max_chars:
        raise InputError(f"{what}有 {len(text)} 个字符，超过了上限 {max_chars}：请缩短后再试。")
    return text
