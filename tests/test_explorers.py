"""对注册表里的每一个探索器做同样的检查：静态面、实时面、坏输入。"""

import math
import re

import ipywidgets as widgets
import pytest

import seqlab
from seqlab import explorers

seqlab.setup()
ALL = explorers.all_explorers()
CJK = re.compile(r"[\u4e00-\u9fff]")

BAD_TEXT = ["", "   \n\t ", "书" * 10_000, "😀🙂🚀", "𠀀𪚥䶵"]
BAD_FLOAT = [-1.0, 0.0, math.nan, 1e308, -1e308, math.inf]
BAD_INT = [-1, 0, 10**12, -(10**12)]


def test_registry_is_not_empty_and_names_are_unique():
    assert "next_token" in explorers.REGISTRY
    assert len({e.name for e in ALL}) == len(ALL)


@pytest.fixture(params=ALL, ids=lambda e: e.name)
def explorer(request):
    return request.param


def _data(view):
    # 序列化后再比较：轨迹里可以是 numpy 数组（一维数值数组以二进制传给前端，实时更新更快），
    # 而 numpy 数组不能直接用 == 比较真假。
    from plotly.io.json import to_json_plotly

    return [to_json_plotly(t.to_plotly_json()) for t in view.figure.data]


def test_static_face_has_controls_whose_steps_differ(explorer):
    fig = explorer.static_figure()
    steps = [s.args for slider in fig.layout.sliders for s in slider.steps]
    steps += [b.args for menu in fig.layout.updatemenus for b in menu.buttons]
    assert len(steps) >= 2, "静态面至少要有一个带两步以上的滑块或下拉菜单"
    assert len({repr(a) for a in steps}) == len(steps), "滑块的每一步都应切换到不同的状态"
    assert len(fig.to_json()) < 600_000, "静态面的 JSON 太大，会让页面超出 1.5 MB 的预算"
    assert "$" not in fig.to_json(), "图中不要用 LaTeX（网站上的图不加载 MathJax）"


def test_live_face_changes_its_figure_for_each_example(explorer):
    assert len(explorer.examples) >= 2
    view = explorer.live()
    assert view.ok, view.status
    previous = None
    for example in explorer.examples:
        assert view.set(**example), f"示例 {example} 应当是合法输入：{view.status}"
        current = _data(view)
        if previous is not None:
            assert current != previous, f"示例 {example} 没有改变图"
        previous = current
    assert view.unexpected is None


def _bad_values(control):
    if isinstance(control, (widgets.Text, widgets.Textarea)):
        return BAD_TEXT
    if isinstance(control, (widgets.FloatText, widgets.BoundedFloatText)):
        return BAD_FLOAT
    if isinstance(control, (widgets.IntText, widgets.BoundedIntText)):
        return BAD_INT
    if hasattr(control, "min") and hasattr(control, "max"):
        return [control.min, control.max]
    return []


def test_bad_input_gives_a_chinese_message_and_keeps_the_last_good_figure(explorer):
    view = explorer.live()
    swept = 0
    for name, control in view.controls.items():
        for bad in _bad_values(control):
            view.set(**explorer.examples[0])
            good = _data(view)
            try:
                control.value = bad
            except Exception:  # 控件自己拒绝了这个值（例如整数框里放 NaN）：读者根本输不进去
                continue
            swept += 1
            assert view.unexpected is None, f"{name}={bad!r} 引发了意外异常：{view.unexpected!r}"
            if not view.ok:
                assert CJK.search(view.status), f"{name}={bad!r} 的提示应当是中文：{view.status!r}"
                assert _data(view) == good, f"{name}={bad!r} 被拒绝后图应保持上一次的状态"
    assert swept > 0 or not view.controls


def test_live_face_is_a_widget_with_its_controls(explorer):
    view = explorer.live()
    assert isinstance(view.widget, widgets.VBox)
    assert set(view.controls) <= set(explorer.compute.__code__.co_varnames)
