"""探索器：一份小小的说明（参数、状态函数、画图函数），两副面孔。

* **静态面**（``static_figure``）：plotly 图自带的滑块 / 下拉菜单在预先算好的状态之间切换，
  不需要内核，网页离线可用。默认由各参数的 ``static`` 取值的所有组合生成（只有一个取值的参数就固定在它上）。
* **实时面**（``live``）：由参数生成的 ipywidgets 控件驱动同一个状态函数，原地更新一张图，
  用于无法预先计算的情形（任意输入的文字、任意数值）。
* **网页实时面**（``web``，可选）：网页上静态面的“实时计算”开关打开后，浏览器里的
  ``assets/live/<探索器名>.mjs`` 算出同一个状态（见 :class:`WebFace` 与 ``seqlab.explorers.web``）。

坏输入永远不会在控件里抛出异常：``InputError`` 的中文消息显示在控件里，图保持上一次的正常状态。
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import ipywidgets as widgets
import plotly.graph_objects as go

from seqlab.errors import InputError
from seqlab.explorers.params import Param
from seqlab.figures import stepped_figure

if TYPE_CHECKING:
    from seqlab.explorers.live import LiveView

State = TypeVar("State")  # 一个探索器的状态：状态函数的结果（seqlab.states 里的冻结 dataclass）


def _no_caption(state: Any) -> str:
    return ""


@dataclass(frozen=True)
class WebFace:
    """探索器在网页上的实时面：不需要内核，浏览器里的 ``assets/live/<探索器名>.mjs`` 计算同一个状态。

    * ``params``：网页上提供的参数（其余参数固定在默认值）。JS 模块导出的 ``PARAMS`` 必须与它相同，
      有测试检查，两副面孔不会悄悄分道扬镳；
    * ``data``：浏览器计算状态所需的常量（固定种子的向量、权重、曲线的横坐标……），构建网站时经
      ``states.to_json`` 写进网站，只在读者打开“实时计算”时才下载；
    * ``inputs``：可选，node 测试向量里另加的几组控件取值（缺的参数取默认值）——随机取值很少碰到、
      却要与 Python 一致的输入，例如玩具语言里合法的句子。
    """

    params: tuple[str, ...]
    data: Callable[[], dict[str, Any]]
    inputs: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Explorer(Generic[State]):
    """一个探索器的说明。

    * ``params``：参数（也是控件），顺序就是控件的顺序；
    * ``state(**values)``：状态函数（``seqlab.states.<名字>``），坏输入抛 ``InputError``；
    * ``render(state)``：由状态画出一张完整的图（``seqlab.figures.<名字>``）；
    * ``patch(fig, old, new)``：可选的快速路径，把 ``fig``（由 ``old`` 画出）就地改成 ``new`` 的样子；
      测试检查它改出来的图与 ``render(new)`` 完全一样。没有它，实时面每次都从头画；
    * ``caption(state)``：实时面在图上方显示的一句话；
    * ``examples``：几组合法的参数取值，测试和 ``make bench`` 用它们驱动实时面；
    * ``static``：可选，自己拼出静态面的函数（默认由参数的 ``static`` 取值生成，见 ``static_figure``）；
      ``static_label`` 是默认静态面上那个控件的名字，``static_prefix`` 是滑块当前值前面的文字；
    * ``web``：可选，网页上的实时面（:class:`WebFace`）；有它时静态面的图在 ``layout.meta.live`` 里记下探索器的名字，
      网页据此在图上放“实时计算”开关。
    """

    name: str
    title: str
    params: Sequence[Param]
    state: Callable[..., State]
    render: Callable[[State], go.Figure]
    examples: Sequence[dict[str, Any]]
    caption: Callable[[State], str] = _no_caption
    patch: Callable[[go.Figure, State, State], None] | None = None
    static: Callable[[], go.Figure] | None = None
    static_label: str = ""
    static_prefix: str = ""
    web: WebFace | None = None
    defaults: dict[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        accepted = inspect.signature(self.state).parameters
        missing = [n for n, p in accepted.items() if p.default is inspect.Parameter.empty and n not in names]
        unknown = [n for n in names if n not in accepted]
        if missing or unknown or len(set(names)) != len(names):
            raise ValueError(f"探索器 {self.name}：参数 {names} 与状态函数的参数 {list(accepted)} 对不上")
        if self.web is not None and not set(self.web.params) <= set(names):
            raise ValueError(f"探索器 {self.name}：网页实时面的参数 {list(self.web.params)} 不都在 {names} 里")
        object.__setattr__(self, "defaults", {p.name: p.default for p in self.params})

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise InputError(f"没有这个控件：{name!r}；可用的控件：{[p.name for p in self.params]}。")

    def check(self, values: dict[str, Any]) -> dict[str, Any]:
        """逐个检查参数取值（类型、选项、范围），返回检查后的取值；不合法就抛 ``InputError``。"""
        return {name: self.param(name).check(value) for name, value in values.items()}

    def compute(self, **values: Any) -> State:
        """没有给出的参数取默认值；检查每个取值，然后计算状态。"""
        return self.state(**self.check({**self.defaults, **values}))

    def figure(self, state: State) -> go.Figure:
        return self.render(state)

    def update(self, fig: go.Figure, old: State, new: State) -> go.Figure:
        """把由 ``old`` 画出的 ``fig`` 变成 ``new`` 的图并返回它：有 ``patch`` 就就地改，否则从头画。"""
        if self.patch is None:
            return self.render(new)
        self.patch(fig, old, new)
        return fig

    def controls(self) -> dict[str, widgets.ValueWidget]:
        return {p.name: p.control() for p in self.params}

    def static_figure(self) -> go.Figure:
        """静态面：有 ``static`` 就用它；否则取各参数 ``static`` 取值的所有组合，每个组合预先算好一张图，
        滑块上是取值不止一个的那些参数的名字，打开时停在默认值的那一格（默认值在网格里时）。"""
        fig = self._static_grid() if self.static is None else self.static()
        if self.web is not None:
            meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
            fig.update_layout(meta={**meta, "live": self.name})
        return fig

    def _static_grid(self) -> go.Figure:
        grid = [dict(zip((p.name for p in self.params), values))
                for values in itertools.product(*(p.static_values for p in self.params))]
        varied = [p for p in self.params if len(p.static_values) > 1]
        states = [(" · ".join(p.value_label(values[p.name]) for p in varied), self.render(self.compute(**values)))
                  for values in grid]
        defaults = [k for k, values in enumerate(grid) if all(values[p.name] == self.defaults[p.name] for p in varied)]
        return stepped_figure(states, label=self.static_label, prefix=self.static_prefix, active=(defaults or [0])[0])

    def live(self) -> LiveView:
        from seqlab.explorers.live import LiveView

        return LiveView(self)
