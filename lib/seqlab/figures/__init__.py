"""图形层（plotly）：全书的每一张图都在这里画。

* 公共部分：样式（``style``）、网页上的离线片段（``page``）、静态探索器的滑块图（``stepped``）、
  注意力热力图（``heatmap``）、坐标轴的刻度（``axes``）、HTML 表格（``tables``）；
* 每个探索器一个模块（与 ``seqlab.explorers`` 里的同名）：``render(state) -> go.Figure`` 是纯函数，
  可选的 ``patch(fig, old, new)`` 只改上一张图里变了的部分，``caption(state)`` 是图上方的一句话；
  图太大时分成几个模块（``jacobian_traces``、``jacobian_tour``、``score_memory``、``attention_weights_static``）；
* 各节测量与训练的图：``lookup``（1.2）、``rnn``（1.3）、``accuracy_by_length``（1.4）、``scaling``、``reach``（1.5）、
  ``decoding``、``kv_cache``、``complexity``（1.6）、``training``（梯度裁剪）。

分层约定：这里只用 plotly，不导入 ipywidgets，也不做计算——要画的数都在传进来的状态或测量结果里。
"""

from seqlab.figures.heatmap import attention_heatmap
from seqlab.figures.page import RENDERER, figure_html, static_controls, text_alternative, use_book_defaults
from seqlab.figures.stepped import stepped_figure
from seqlab.figures.style import ATTENTION_SCALE, CONFIG, FONT, PALETTE
from seqlab.figures.training import clipping_curves

__all__ = [
    "ATTENTION_SCALE", "CONFIG", "FONT", "PALETTE", "RENDERER",
    "attention_heatmap", "clipping_curves", "figure_html", "static_controls", "stepped_figure",
    "text_alternative", "use_book_defaults",
]
