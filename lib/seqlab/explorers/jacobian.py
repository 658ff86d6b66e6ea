"""第 1.3 节的探索器：雅可比矩阵连乘——梯度为什么会消失或爆炸。

三类循环矩阵（正交、高斯、非正规）取相同的谱半径一起算，读者选中的那一类画粗线。静态面是一段“导览”：
每个场景换一组设置，标题说出该看什么；另一个滑块改变距离 r。
"""

import plotly.graph_objects as go

from seqlab import rnn
from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import jacobian as figure
from seqlab.figures.jacobian_tour import tour_figure
from seqlab.states import jacobian as state

# 静态面 r 滑块的取值（默认停在 30），以及“导览”：每个场景换一组设置，标题说出该看什么。三类矩阵总是同时画出。
STATIC_R = [1, 2, 3, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100]
STATIC_R_DEFAULT = 30
TOUR = [
    (
        "①衰减",
        {"matrix": "orthogonal", "rho": 0.9, "phi": "linear"},
        "① 线性、正交、ρ = 0.9：范数恰好是 0.9ʳ，对数坐标上是一条下降的直线",
    ),
    (
        "②临界",
        {"matrix": "orthogonal", "rho": 1.0, "phi": "linear"},
        "② 线性、正交、ρ = 1：范数恒为 1，既不消失也不爆炸",
    ),
    (
        "③增长",
        {"matrix": "orthogonal", "rho": 1.1, "phi": "linear"},
        "③ 线性、正交、ρ = 1.1：范数按 1.1ʳ 增长，r = 100 时约 1.4 万倍",
    ),
    (
        "④非正规",
        {"matrix": "nonnormal", "rho": 0.9, "phi": "linear"},
        "④ 同样 ρ = 0.9 的非正规矩阵：先增长到十几倍，再衰减",
    ),
    (
        "⑤高斯",
        {"matrix": "gaussian", "rho": 0.9, "phi": "linear"},
        "⑤ 同样 ρ = 0.9 的高斯随机矩阵：前十来步停在 1 之上，奇异值铺得很开",
    ),
    (
        "⑥ρ=1",
        {"matrix": "nonnormal", "rho": 1.0, "phi": "linear"},
        "⑥ ρ = 1 也不安全：非正规矩阵的范数按 r 线性增长",
    ),
    (
        "⑦ tanh 小",
        {"matrix": "orthogonal", "rho": 1.1, "phi": "tanh", "input_scale": 0.1},
        "⑦ tanh、ρ = 1.1、输入很小：状态自己长到 tanh 弯曲处，先略升、再衰减",
    ),
    (
        "⑧ tanh 饱和",
        {"matrix": "orthogonal", "rho": 1.1, "phi": "tanh", "input_scale": 2.0},
        "⑧ 同一个矩阵，输入变大使 tanh 饱和：增长变成了衰减",
    ),
    (
        "⑨溢出",
        {"matrix": "orthogonal", "rho": 3.0, "phi": "linear"},
        "⑨ 线性、ρ = 3：从 r = {over} 起 float32 装不下这个乘积",
    ),
]


def static() -> go.Figure:
    """静态面：导览的每个场景取默认的距离 r，外加 r 滑块每一格的奇异值。"""
    scenes = [(label, headline, EXPLORER.compute(r=STATIC_R_DEFAULT, **values)) for label, values, headline in TOUR]
    return tour_figure(state.tour_state(STATIC_R, scenes))


EXPLORER = register(
    Explorer(
        name="jacobian_product",
        title="雅可比矩阵连乘：梯度为什么消失或爆炸",
        # 只有距离 r 在拖动途中就更新：各类曲线取自缓存，只需重求距离 r 处的奇异值（几毫秒）。其余滑块一改就要
        # 重跑三类矩阵的连乘（上百毫秒），松开才更新：拖动途中的每个值都算一遍，最后那个值反而要排在它们后面。
        params=[
            Param(
                "matrix", "循环矩阵 W_h", "nonnormal", "dropdown",
                options=tuple((label, kind) for kind, label in state.KIND_LABELS.items()), wide_label=True,
            ),
            Param("rho", "谱半径 ρ", 0.9, "slider", low=state.RHO_RANGE[0], high=state.RHO_RANGE[1], step=0.01,
                  wide_label=True),
            Param("beta", "非正规强度 β", 4.0, "slider", low=state.BETA_RANGE[0], high=state.BETA_RANGE[1], step=0.1,
                  wide_label=True),
            Param("phi", "φ", "linear", "buttons", options=tuple((phi, phi) for phi in rnn.PHIS), wide_label=True),
            Param("input_scale", "输入幅度（tanh 饱和）", 0.5, "slider", low=state.INPUT_RANGE[0],
                  high=state.INPUT_RANGE[1], step=0.05, wide_label=True),
            Param("r", "距离 r", 30, "slider", low=1, high=state.R_MAX, continuous=True, wide_label=True),
            Param("d", "状态维度 d", 32, "slider", low=state.D_RANGE[0], high=state.D_RANGE[1], wide_label=True),
            Param("seed", "随机种子", 0, "slider", low=0, high=state.SEEDS - 1, wide_label=True),
        ],
        state=state.jacobian_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"matrix": "orthogonal", "rho": 0.9, "phi": "linear", "r": 30},
            {"matrix": "orthogonal", "rho": 1.1, "phi": "linear", "r": 60},
            {"matrix": "nonnormal", "rho": 0.9, "beta": 4.0, "phi": "linear", "r": 10},
            {"matrix": "gaussian", "rho": 1.2, "phi": "tanh", "input_scale": 2.0, "r": 50, "d": 64},
            {"matrix": "orthogonal", "rho": 3.0, "phi": "linear", "r": 100, "d": 64},
        ],
        static=static,
        web=WebFace(params=("matrix", "rho", "beta", "phi", "input_scale", "r"), data=state.web_data),
    )
)
