"""第 1.6 节的探索器：2 层 Transformer 在“循环复读”任务上，各层各头的注意力图。

第 1 层里有一个头主要看“前一个字”；第 2 层的头在第二遍里看“当前字上一次出现的位置的下一格”——
那一格本身的字和当前字毫无关系，能匹配上，全靠第 1 层已经把“前一个字是谁”写进了那个位置的表示。
"""

from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import layer_heads as figure
from seqlab.states import layer_heads as state

EXAMPLE = "苹果天雨山"

EXPLORER = register(
    Explorer(
        name="layer_heads",
        title="2 层 Transformer 的注意力图：按层、按头",
        params=[
            Param("segment", "一段字", EXAMPLE, "text"),
            Param("layer", "层", 1, "buttons", options=(("第 1 层", 1), ("第 2 层", 2)), static=(1, 2)),
            Param("head", "头", 1, "buttons", options=(("头 1", 1), ("头 2", 2)), static=(1, 2)),
        ],
        state=state.layer_head_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"segment": EXAMPLE, "layer": 1, "head": 1},
            {"segment": EXAMPLE, "layer": 2, "head": 1},
            {"segment": "书读过完吃", "layer": 2, "head": 2},
            {"segment": "花月星云风雪", "layer": 1, "head": 2},
        ],
        static_label="层与头",
        web=WebFace(params=("segment", "layer", "head"), data=state.web_data),
    )
)
