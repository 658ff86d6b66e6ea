"""实时面的图（seqlab.explorers.plotview）：前端模块能被解析，plotly.js 与静态图同一版本，发出的 JSON 能还原成同一张图。"""

import json
import shutil
import subprocess

import plotly
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from seqlab import explorers
from seqlab.explorers.plotview import PlotView, figure_json


@pytest.mark.skipif(shutil.which("node") is None, reason="没有 node：无法检查前端模块的语法")
def test_front_end_module_parses_as_an_es_module(tmp_path):
    module = tmp_path / "plotview.mjs"
    module.write_text(PlotView._esm, encoding="utf-8")
    result = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_front_end_module_is_small_and_plotly_travels_with_the_state():
    # anywidget 初始化模型（执行 _esm）只有 2 秒；几个 MB 的 plotly.js 不能放在那里。
    assert len(PlotView._esm.encode()) < 5_000
    view = PlotView(figure={})
    assert view._plotly_version == plotly.__version__
    assert "window.Plotly = Plotly" in view._plotly_js  # 确实是完整的 plotly.min.js


def test_figure_json_round_trips_to_the_same_figure():
    fig = go.Figure(go.Heatmap(z=[[1.5, 2.0], [3.0, 4.25]], x=["甲", "乙"]), layout={"title": {"text": "标题"}})
    fig.add_scatter(y=[0.1, 0.2, 0.3])
    again = go.Figure(figure_json(fig))
    assert again.to_plotly_json() == go.Figure(fig).to_plotly_json()


def test_figure_json_agrees_with_plotly_io_for_every_explorer():
    # figure_json 不经过 fig.to_dict()（为了快）：结果必须与 plotly 自己的 to_json 一字不差，含 numpy 数组的 base64 形式
    for explorer in explorers.all_explorers():
        view = explorer.live()
        for values in [{}, *explorer.examples]:
            assert view.set(**values), (explorer.name, values, view.status)
            expected = json.loads(pio.to_json(view.figure, validate=False, remove_uids=True))
            assert figure_json(view.figure) == expected, (explorer.name, values)
