"""框架本身：离线渲染器、滑块图、内存预算、练习检查、实时面的容错。"""

import math

import ipywidgets as widgets
import plotly.graph_objects as go
import plotly.io as pio
import pytest

import seqlab
from seqlab import exercises, figures
from seqlab.errors import InputError, MemoryBudgetError, format_bytes, guard_memory
from seqlab.explorers import Explorer, Param
from seqlab.states import clean_text

seqlab.setup()


def test_offline_renderer_emits_html_without_plotly_js_mathjax_or_cdn():
    bundle = pio.renderers[figures.RENDERER].to_mimebundle(go.Figure(go.Bar(y=[1, 2])).to_dict())
    html = bundle["text/html"]
    assert "plotly-graph-div" in html
    assert "cdn" not in html.lower() and "https://" not in html and "mathjax" not in html.lower()
    assert len(html) < 20_000, "plotly.js 被内联进了图里"
    assert pio.renderers.default == f"plotly_mimetype+{figures.RENDERER}"


def test_stepped_figure_switches_visibility_and_titles():
    states = [(f"s{k}", go.Figure(go.Scatter(y=[k, k + 1]), layout=dict(title=f"状态 {k}"))) for k in range(3)]
    fig = figures.stepped_figure(states, active=1)
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["s0", "s1", "s2"]
    assert [t.visible for t in fig.data] == [False, True, False]
    assert steps[2].args[0]["visible"] == [False, False, True]
    assert steps[2].args[1]["title"]["text"] == "状态 2"
    menu = figures.stepped_figure(states, control="dropdown")
    assert len(menu.layout.updatemenus[0].buttons) == 3
    with pytest.raises(ValueError):
        figures.stepped_figure([])


def test_attention_heatmap_keeps_duplicate_tokens_apart():
    fig = figures.attention_heatmap([[0.5, 0.5], [1.0, 0.0]], ["我", "我"], ["书", "书"])
    assert list(fig.layout.yaxis.ticktext) == ["我", "我"] and len(set(fig.data[0].y)) == 2
    with pytest.raises(ValueError):
        figures.attention_heatmap([[1.0]], ["a", "b"], ["c"])


def test_clipping_curves_puts_the_two_runs_side_by_side_and_marks_the_overflow():
    plain = [1.3, 1.0, 10.0, 1e20, math.inf]
    clipped = [1.3, 0.5, 0.1, 0.01]
    fig = figures.clipping_curves(plain, clipped, tau=1.0, title="裁剪")
    left, right = fig.data
    assert (left.xaxis, right.xaxis) == ("x", "x2")
    assert fig.layout.xaxis.domain[1] < fig.layout.xaxis2.domain[0], "两个子图应当左右并排"
    assert fig.layout.yaxis.type == fig.layout.yaxis2.type == "log"
    assert list(left.x) == [1, 2, 3, 4, 5] and left.y[-1] is None and list(right.y) == clipped
    marks = [s for s in fig.layout.shapes if s.x0 == s.x1 == 5 and s.xref == "x"]
    assert len(marks) == 1, "不裁剪的那次溢出的第 5 步应当画一条竖线"
    assert any("第 5 步" in a.text and "inf" in a.text for a in fig.layout.annotations)
    assert not fig.layout.showlegend and [a.text for a in fig.layout.annotations[:2]] == ["不裁剪", "裁剪到 τ = 1"]
    calm = figures.clipping_curves([1.0, 0.5], [1.0, 0.4])  # 没有溢出：不画竖线
    assert not [s for s in calm.layout.shapes if s.x0 == s.x1]


def test_memory_guard_refuses_with_the_estimate():
    assert guard_memory("小矩阵", 1024, budget_bytes=2048) == 1024
    with pytest.raises(MemoryBudgetError) as err:
        guard_memory("分数矩阵", 3 * 2**30, budget_bytes=2**30)
    assert "3.0 GiB" in str(err.value) and "1.0 GiB" in str(err.value)
    with pytest.raises(MemoryBudgetError):
        guard_memory("NaN", math.nan)
    assert format_bytes(512) == "512 B" and format_bytes(1536) == "1.5 KiB"


def test_clean_text_messages():
    assert clean_text("  你好 ") == "你好"
    for bad in ["", "  ", "x" * 5000]:
        with pytest.raises(InputError):
            clean_text(bad)


_demo = exercises.checker("0.0.1", "演示", objective="测试框架", difficulty=1, minutes=1)


@_demo
def check_demo(fn):
    exercises.expect_close(exercises.call(fn, 2), 4, "f(2)")


exercises.EXERCISES.pop("0.0.1")  # 演示用的练习不属于本书


def test_checker_reports_instead_of_raising(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    assert check_demo(lambda x: x * x).passed
    result = check_demo(lambda x: x + 3)
    assert not result and "应为 4" in result.message and "5" in result.message
    assert "None" in check_demo(None).message
    assert "NotImplementedError" in check_demo(lambda x: (_ for _ in ()).throw(NotImplementedError())).message
    crash = check_demo(lambda x: 1 / 0)
    assert not crash and "ZeroDivisionError" in crash.message
    assert exercises.FAIL_MARK in crash._repr_html_() and exercises.FAIL_MARK in repr(crash)
    assert check_demo.exercise.stars == "★☆☆"


def test_checker_raises_in_strict_mode_on_wrong_answers_only(monkeypatch):
    """严格模式：答错抛出；没做完（None、NotImplementedError）只显示 ❌——完整版的起始代码后面就是这种检查。"""
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "1")
    with pytest.raises(AssertionError):
        check_demo(lambda x: 0)
    with pytest.raises(AssertionError):
        check_demo(lambda x: 1 / 0)
    assert check_demo(lambda x: 4)
    for unfinished in (None, lambda x: (_ for _ in ()).throw(NotImplementedError())):
        result = check_demo(unfinished)
        assert not result and result.unfinished and "还没有完成" in result.message


def _square(n):
    if n > 1e6:
        raise RuntimeError("模拟一个意料之外的错误")
    return n


_SQUARE = Explorer(
    name="square-test",
    title="测试用",
    params=[Param("n", "n", 2.0, "number", low=0.0, high=None, static=(1.0, 2.0))],
    state=_square,
    render=lambda n: go.Figure(go.Bar(y=[n, n**2])),
    examples=[{"n": 2.0}, {"n": 3.0}],
)


def test_live_view_keeps_last_good_figure_and_reports():
    view = _SQUARE.live()
    assert isinstance(view.controls["n"], widgets.FloatText)
    assert view.set(n=3.0) and list(view.figure.data[0].y) == [3.0, 9.0]
    assert not view.set(n=-1.0) and "至少是 0" in view.status and list(view.figure.data[0].y) == [3.0, 9.0]
    assert not view.set(n=math.nan) and "NaN" in view.status
    assert view.unexpected is None
    assert not view.set(n=1e9) and "意外" in view.status and isinstance(view.unexpected, RuntimeError)
    view.controls["n"].value = 4.0  # 控件的 observe 也会触发更新
    assert list(view.figure.data[0].y) == [4.0, 16.0] and view.ok
    assert not view.set(m=1) and "没有这个控件" in view.status  # 不存在的控件：一句中文说明，不抛异常
    assert view.values() == {"n": 4.0}
    assert [s.label for s in _SQUARE.static_figure().layout.sliders[0].steps] == ["n = 1", "n = 2"]


def test_timing_samples_warm_up_once_and_read_the_given_clock_around_each_run():
    """计时本身不断言（机器忙闲会改变读数）；断言的是计时的做法：先热身一次，每次运行前后各读一次时钟，
    默认的时钟是本线程的 CPU 时间。"""
    from seqlab import measure

    assert measure.cpu_clock.__code__.co_names == ("time", "thread_time")
    assert measure.timing_samples.__defaults__ == (measure.cpu_clock,)
    ticks = iter([1.0, 1.5, 2.0, 4.0, 10.0, 10.25])
    calls = []
    samples = measure.timing_samples(lambda: calls.append(1), 3, clock=lambda: next(ticks))
    assert samples == [0.5, 2.0, 0.25] and len(calls) == 4  # 热身一次 + 三次计时


def test_single_thread_restores_the_thread_count():
    import torch

    from seqlab import runtime

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with runtime.single_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
