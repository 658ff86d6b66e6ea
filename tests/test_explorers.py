"""对注册表里的每一个探索器做同样的检查：静态面、实时面、坏输入。"""

import dataclasses
import json
import math
import re

import ipywidgets as widgets
import pytest

import seqlab
from seqlab import explorers
from seqlab.explorers import web

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


def _plain(x):
    """图的 JSON 里画出来一样的东西写成一样：30 与 30.0 都是浮点数，base64 数组解码成数值，空的 ``{}`` 去掉。"""
    if isinstance(x, bool) or not isinstance(x, (int, float, list, dict)):
        return x
    if isinstance(x, list):
        return [_plain(v) for v in x]
    if isinstance(x, dict) and {"dtype", "bdata"} <= set(x):  # plotly.js 的 base64 数组：解码后比较数值
        return _plain(web.decode_arrays(x))
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items() if v != {}}
    return float(x)


def _data(view):
    """读者看到的图：发到前端的那份 JSON 里的轨迹（它必须与 Python 这边的 ``view.figure`` 一致）。"""
    from plotly.io.json import to_json_plotly

    shown = [_plain(t) for t in view.plot.figure["data"]]
    assert shown == [_plain(json.loads(to_json_plotly(t.to_plotly_json()))) for t in view.figure.data], \
        "发到前端的图与 view.figure 不一致"
    return shown


def test_patching_the_last_figure_draws_what_drawing_afresh_draws(explorer):
    """实时面只改上一张图里变了的部分（``patch``，为了快）；从任何一个示例状态改到另一个，
    发到前端的图都必须与按新状态从头画的图（``render``）完全一样：没有漏改的轨迹、标题或刻度。"""
    from seqlab.explorers.plotview import figure_json

    states = [explorer.compute(**example) for example in explorer.examples]
    for i, before in enumerate(states):
        for j, after in enumerate(states):
            fig = explorer.update(explorer.figure(before), before, after)
            assert _plain(figure_json(fig)) == _plain(figure_json(explorer.figure(after))), \
                f"从示例 {i} 改到示例 {j}：改出来的图与从头画的不一样"


def test_every_state_is_frozen_and_has_a_json_form(explorer):
    """状态是冻结的 dataclass，``states.to_json`` 把它写成严格的 JSON（网页上的实时面读的就是它）。"""
    from seqlab import states

    for example in explorer.examples:
        state = explorer.compute(**example)
        assert dataclasses.is_dataclass(state) and type(state).__dataclass_params__.frozen, type(state)
        text = json.dumps(states.to_json(state), ensure_ascii=False, allow_nan=False)
        assert json.loads(text) == states.to_json(state)


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
            except Exception:  # noqa: BLE001 —— 控件自己拒绝了这个值（例如整数框里放 NaN）：读者根本输不进去
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
    assert list(view.controls) == [p.name for p in explorer.params]
    assert view.values() == explorer.defaults, "控件的初值就是参数的默认值"


def test_a_spec_whose_params_do_not_match_its_state_function_is_refused(explorer):
    with pytest.raises(ValueError, match="对不上"):
        dataclasses.replace(explorer, params=[*explorer.params, explorers.Param("no_such", "无", 1, "slider", low=0, high=2)])
    with pytest.raises(ValueError, match="对不上"):
        dataclasses.replace(explorer, params=explorer.params[1:])


# ---------------------------------------------------------------- set()：任何值都不抛异常，而且要么全生效、要么全不生效
class _Weird:
    def __eq__(self, other):
        raise RuntimeError("比较时出错的怪值")

    __hash__ = object.__hash__


def _options(control):
    return [o[1] if isinstance(o, tuple) else o for o in control.options]


def _wrong_values(control):
    """放不进这个控件、或计算必须拒绝的值：类型不对、不在选项里、超出范围、NaN……"""
    common = [None, [1, 2], {"a": 1}, _Weird(), b"bytes"]
    if isinstance(control, (widgets.Text, widgets.Textarea, widgets.Combobox)):
        return common + [5, 2.5, True, "", "   \n"]
    if hasattr(control, "options"):
        allowed = _options(control)
        candidates = common + ["不存在的选项", 12345, 1.5, True, False, 0, 1]
        return [v for v in candidates if not any(type(v) is type(a) and v == a for a in allowed)]
    numbers = common + ["3", math.nan, math.inf, -math.inf, True]
    if isinstance(control, (widgets.IntSlider, widgets.IntText, widgets.BoundedIntText)):
        numbers.append(2.5)
    if hasattr(control, "min") and hasattr(control, "max"):
        numbers += [control.min - 1, control.max + 1]
    return numbers


def _assert_rejected_cleanly(view, call, good_values, good_data):
    assert view.set(**call) is False, f"set({call!r}) 应当被拒绝"
    assert CJK.search(view.status), f"set({call!r}) 的提示应当是中文：{view.status!r}"
    assert view.values() == good_values, f"set({call!r}) 被拒绝后控件应退回上一次的正常状态"
    assert _data(view) == good_data, f"set({call!r}) 被拒绝后图应保持上一次的状态"
    assert view.unexpected is None, f"set({call!r}) 引发了意外异常：{view.unexpected!r}"


def test_set_rejects_every_wrong_value_with_a_chinese_message_and_changes_nothing(explorer):
    view = explorer.live()
    assert view.set(**explorer.examples[0]), view.status
    good_values, good_data = view.values(), _data(view)
    tried = 0
    for name, control in view.controls.items():
        for bad in _wrong_values(control):
            _assert_rejected_cleanly(view, {name: bad}, good_values, good_data)
            tried += 1
    _assert_rejected_cleanly(view, {"no_such_control": 1}, good_values, good_data)
    assert tried >= 5 * len(view.controls)


def test_multi_value_set_is_atomic(explorer):
    """前面的值合法、后面的值不合法：前面的控件也不能变。"""
    view = explorer.live()
    assert view.set(**explorer.examples[0]), view.status
    good_values, good_data = view.values(), _data(view)
    other = explorer.examples[1]
    changed = [name for name in view.controls if other.get(name, good_values[name]) != good_values[name]]
    assert changed, "两个示例至少要有一个控件不同"
    for name in view.controls:
        call = {k: v for k, v in other.items() if k != name}
        bad = _wrong_values(view.controls[name])[0]
        _assert_rejected_cleanly(view, {**call, name: bad}, good_values, good_data)


def test_failure_halfway_through_drawing_is_caught_and_the_figure_restored(explorer):
    view = explorer.live()
    assert view.set(**explorer.examples[0]), view.status
    good_values, good_data = view.values(), _data(view)

    def half_drawn(fig, old, new):  # 新状态画到一半就出错
        fig.data = fig.data[:1]
        fig.layout.title = "画到一半"
        raise RuntimeError("画图时出错")

    view.explorer = dataclasses.replace(explorer, patch=half_drawn)
    assert view.set(**explorer.examples[1]) is False
    assert isinstance(view.unexpected, RuntimeError) and CJK.search(view.status)
    assert view.values() == good_values and _data(view) == good_data


def test_registries_survive_reload():
    import importlib

    from seqlab import exercises
    from seqlab.exercises import sec01
    from seqlab.explorers import x_matrix

    before_explorers, before_exercises = set(explorers.REGISTRY), set(exercises.EXERCISES)
    importlib.reload(x_matrix)
    importlib.reload(sec01)
    assert set(explorers.REGISTRY) == before_explorers and set(exercises.EXERCISES) == before_exercises
    assert explorers.REGISTRY["x_matrix"] is x_matrix.EXPLORER
    assert explorers.get("x_matrix").live().ok
    with pytest.raises(ValueError, match="名字重复"):
        explorers.register(dataclasses.replace(x_matrix.EXPLORER, state=lambda text, layer: None))
