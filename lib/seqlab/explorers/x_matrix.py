"""第 1.2 节的探索器：一句话就是一个矩阵——行是位置，列是特征通道。"""

from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import x_matrix as figure
from seqlab.states import x_matrix as state

SENTENCES = ("我今天吃了一个苹果，又甜又脆", "苹果公司发布了新的手机")

EXPLORER = register(
    Explorer(
        name="x_matrix",
        title="句子矩阵 X ∈ R^(S×d)：一行一个位置，一列一个通道",
        params=[
            Param("text", "句子", SENTENCES[0], "text", width="24em", static=SENTENCES, static_labels=("句 1", "句 2")),
            Param("layer", "矩阵", "X", "buttons", options=(("X", "X"), ("H", "H")), static=("X", "H")),
        ],
        state=state.matrix_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"text": SENTENCES[0], "layer": "X"},
            {"text": SENTENCES[0], "layer": "H"},
            {"text": SENTENCES[1], "layer": "X"},
        ],
        static_label="句子与矩阵",
        web=WebFace(params=("text", "layer"), data=state.web_data),
    )
)
