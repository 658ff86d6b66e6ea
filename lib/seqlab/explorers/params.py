"""探索器的参数：一个 ``Param`` 同时给出控件、默认值、取值检查和静态面预先计算的取值。"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Literal

import ipywidgets as widgets

from seqlab.errors import InputError

Widget = Literal["text", "combobox", "buttons", "dropdown", "slider", "number"]


@dataclass(frozen=True)
class Param:
    """状态函数的一个参数，也是实时面上的一个控件。

    * ``name``：状态函数的关键字参数名；``label``：控件旁的中文名字（也用在错误消息里）。
    * ``default``：默认值——全书只在这里写一次。它的类型决定参数的类型（``str``、``bool``、``int``、``float``）。
    * ``widget``：``"text"``（改完按回车才更新）、``"combobox"``（可以从 ``options`` 里选，也可以自己输入，也是改完才更新）、
      ``"buttons"`` / ``"dropdown"``（只能从 ``options`` 里选）、``"slider"``、``"number"``（数字框）。
    * ``options``：可选的值，每项是 ``(显示的名字, 值)``。
    * ``low``、``high``、``step``：数值参数的范围与步长（只有下限时 ``high`` 为 ``None``）。
    * ``continuous``：滑块拖动的途中是否就更新（默认松手才更新）。
    * ``static``：静态面预先计算的取值（空：只用默认值）；``static_labels``：它们在静态面滑块上的名字。
    * ``width``：控件的宽度（CSS，例如 ``"24em"``；一排按钮时是每个按钮的宽度）；``wide_label``：名字较长时不截断。
    """

    name: str
    label: str
    default: Any
    widget: Widget
    options: tuple[tuple[str, Any], ...] = ()
    low: float | None = None
    high: float | None = None
    step: float | None = None
    continuous: bool = False
    static: tuple[Any, ...] = ()
    static_labels: tuple[str, ...] = ()
    width: str = ""
    wide_label: bool = False

    def __post_init__(self) -> None:
        if self.static_labels and len(self.static_labels) != len(self.static):
            raise ValueError(f"参数 {self.name}：static_labels 与 static 的个数不同")
        if self.widget in ("buttons", "dropdown", "combobox") and not self.options:
            raise ValueError(f"参数 {self.name}：{self.widget} 需要 options")
        self.check(self.default)
        for value in self.static:
            self.check(value)

    # ------------------------------------------------------------ 取值
    @property
    def static_values(self) -> tuple[Any, ...]:
        return self.static or (self.default,)

    def value_label(self, value: Any) -> str:
        """``value`` 在静态面滑块上的名字。"""
        if value in self.static and self.static_labels:
            return self.static_labels[self.static.index(value)]
        for label, option in self.options:
            if type(option) is type(value) and option == value:
                return label
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return f"{self.label} = {value:g}"
        return str(value)

    def check(self, value: Any) -> Any:
        """``value`` 能否作为这个参数：类型、选项、范围都要对；不对就抛出中文的 ``InputError``。

        ipywidgets 自己遇到坏值会抛 ``TraitError``，遇到超出范围的数会悄悄截断——两者都不该发生在读者面前。
        """
        label = f"「{self.label}」"
        try:
            if self.widget in ("text", "combobox"):
                if not isinstance(value, str):
                    raise InputError(f"{label}需要一段文字，收到的是 {type(value).__name__}。")
                return value
            if self.options:
                if not any(type(value) is type(v) and value == v for _, v in self.options):
                    shown = "、".join(name for name, _ in self.options)
                    raise InputError(f"{label}只能从这些选项中选一个：{shown}；收到的是 {value!r:.40}。")
                return value
            return self._check_number(value, label)
        except InputError:
            raise
        except Exception as err:  # 连比较都会出错的怪值（例如自定义对象）：转成 InputError 再抛出
            raise InputError(f"{label}收不下这个值（{type(value).__name__}）。") from err

    def _check_number(self, value: Any, label: str) -> int | float:
        integer = isinstance(self.default, int)
        if integer and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise InputError(f"{label}需要一个整数，收到的是 {value!r:.40}。")
        if not integer and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise InputError(f"{label}需要一个数，收到的是 {value!r:.40}。")
        number = int(value) if integer else float(value)
        if not math.isfinite(number):
            raise InputError(f"{label}必须是有限的实数（不能是 NaN 或无穷大）。")
        if self.high is None and self.low is not None and number < self.low:
            raise InputError(f"{label}至少是 {self.low:g}，收到的是 {number:g}。")
        if self.high is not None and self.low is not None and not self.low <= number <= self.high:
            raise InputError(f"{label}应在 {self.low:g} 到 {self.high:g} 之间，收到的是 {number:g}。")
        return number

    # ------------------------------------------------------------ 控件
    def control(self) -> widgets.ValueWidget:
        """实时面上的控件，取值是 ``default``。"""
        common: dict[str, Any] = {"value": self.default, "description": self.label}
        style = {"description_width": "initial"} if self.wide_label else {}
        if self.width and self.widget == "buttons":  # 一排按钮：宽度指每个按钮的宽度
            style["button_width"] = self.width
        elif self.width:
            common["layout"] = widgets.Layout(width=self.width)
        if style:
            common["style"] = style
        options = list(self.options)
        if self.widget == "text":
            return widgets.Text(continuous_update=False, **common)
        if self.widget == "combobox":
            return widgets.Combobox(
                options=[v for _, v in options], ensure_option=False, continuous_update=False, **common
            )
        if self.widget == "buttons":
            return widgets.ToggleButtons(options=options, **common)
        if self.widget == "dropdown":
            return widgets.Dropdown(options=options, **common)
        integer = isinstance(self.default, int)
        if self.widget == "number":  # 不设上下限：超出范围的数交给 check 用中文拒绝，而不是被控件悄悄截断
            return (widgets.IntText if integer else widgets.FloatText)(**common)
        slider = widgets.IntSlider if integer else widgets.FloatSlider
        step = {} if self.step is None else {"step": self.step}
        return slider(min=self.low, max=self.high, continuous_update=self.continuous, **step, **common)
