"""实时面的图：一个 anywidget，前端用 plotly.js 的 ``Plotly.react`` 按整张图的 JSON 重画。

为什么不用 plotly 的 ``FigureWidget``：它的前端模块连同 plotly.js 有 5 MB，在 anywidget 初始化模型时执行，
而这一步只有 2 秒的时限；机器繁忙时（例如“全部运行”一整节）超时，控制台报 “Failed to initialize model”，
图停在空坐标轴上。这里的前端模块只有几十行，plotly.js 在第一次画图时才执行。

plotly.js 取自已安装的 plotly 包（``package_data/plotly.min.js``，与静态图同一个版本），
随小部件的状态一起发到前端，每页只执行一次：不访问任何外部地址，学生版环境里也一样。
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

import anywidget
import plotly
import plotly.graph_objects as go
import traitlets
from _plotly_utils.utils import PlotlyJSONEncoder, is_homogeneous_array, to_typed_array_spec

from seqlab import figures

_ESM = """
const CONFIG = %(config)s;

// plotly.js 每页只加载一次（几个 MB）：它随小部件的状态到达，在第一次画图时才执行，
// 不在 anywidget 初始化模型时执行——初始化有 2 秒的时限，机器繁忙时解析 plotly.js 会超过它。
function loadPlotly(model) {
  const cache = (globalThis.__seqlabPlotly ??= {});
  const version = model.get("_plotly_version");
  if (!cache[version]) {
    // plotly.min.js 是 UMD：看到 module.exports 就把 Plotly 放进去。
    const source = ["const module = { exports: {} };\\n", model.get("_plotly_js"), "\\nexport default module.exports;\\n"];
    const url = URL.createObjectURL(new Blob(source, { type: "text/javascript" }));
    cache[version] = import(url).then(m => m.default).finally(() => URL.revokeObjectURL(url));
  }
  return cache[version];
}

// 坐标轴的 automargin 让 plotly.js 先按给定边距画一遍、量出刻度标签要多宽，再按量出的边距重画一遍：
// 每次 Plotly.react 都从给定边距重新开始，所以每次更新都画两遍。把上一次画好的边距作为这一次的起点，
// 标签放得下时就只画一遍；放不下时 automargin 照样把边距撑大。边距因此只增不减，图不会随标签宽窄来回跳动。
function keepMargins(el, layout) {
  const size = el._fullLayout && el._fullLayout._size;
  if (!size) return layout;
  const given = layout.margin || {};
  const margin = { ...given };
  for (const side of ["l", "r", "t", "b"]) margin[side] = Math.max(size[side], given[side] ?? 0);
  return { ...layout, margin };
}

async function render({ model, el }) {
  const Plotly = await loadPlotly(model);
  // 一次只画一张；画的过程中又来了新图，就在画完之后只画最新的那张。
  let drawing = Promise.resolve(), drawn = null;
  const draw = () => {
    const figure = model.get("figure");
    if (figure === drawn) return;
    drawn = figure;
    return Plotly.react(el, figure.data || [], keepMargins(el, figure.layout || {}), CONFIG);
  };
  const redraw = () => {
    drawing = drawing.then(draw).catch(err => console.error("图没能画出来：", err));
  };
  redraw();
  model.on("change:figure", redraw);
  return () => { model.off("change:figure", redraw); Plotly.purge(el); };
}

export default { render };
"""


@cache
def _plotly_js() -> str:
    return resources.files("plotly").joinpath("package_data", "plotly.min.js").read_text(encoding="utf-8")


class _Encoder(PlotlyJSONEncoder):
    """plotly 的 JSON 编码器，numpy 数组写成 plotly.js 认得的 base64 形式（体积小）。"""

    def default(self, obj):
        if is_homogeneous_array(obj):
            spec = to_typed_array_spec(obj)
            if isinstance(spec, dict):
                return spec
        return super().default(obj)


def figure_json(fig: go.Figure) -> dict:
    """``fig`` 的纯 JSON 形式，与 ``json.loads(plotly.io.to_json(fig))`` 相同（tests/test_plotview.py 逐个探索器对照）。

    不经过 ``fig.to_dict()``：它先深拷贝整张图，实时更新时这一步比编码本身还慢。这里把图的属性（``_data``、
    ``_layout``，plotly 图对象内部存放已校验属性的字典）直接编码成 JSON 再读回来，读回来的本身就是一份拷贝。
    """
    return json.loads(json.dumps({"data": fig._data, "layout": fig._layout}, cls=_Encoder, separators=(",", ":")))


class PlotView(anywidget.AnyWidget):
    """显示 ``figure``（plotly 图的 JSON）；给 ``figure`` 赋新值，前端就重画。

    第一张图要在构造时传入（``PlotView(figure=...)``）：这样它随小部件的创建消息一起到达前端。
    先创建、再赋值的话，前端还在加载这个模块时到达的那次更新可能丢失，图就一直是空的。
    """

    _esm = _ESM % {"config": json.dumps(figures.CONFIG)}
    _plotly_js = traitlets.Unicode(_plotly_js()).tag(sync=True)
    _plotly_version = traitlets.Unicode(plotly.__version__).tag(sync=True)
    figure = traitlets.Dict().tag(sync=True)

    def show(self, fig: go.Figure) -> None:
        self.figure = figure_json(fig)
