"""第 1.6 节的探索器：打乱 token 的顺序，看各个部件的输出怎样跟着变。

对一个置换 P，比较“先算再打乱” ``P·f(X)`` 和“先打乱再算” ``f(P·X)``：不加位置的自注意力、逐位置 FFN
两者相同（置换等变）；加上正弦位置以后两者不再相同。
"""

from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import permutation as figure
from seqlab.states import permutation as state

EXAMPLE_TEXT = "狗咬了人"
LONG_TEXT = "奖杯放不进箱子因为它太大"
STATIC_TEXT, STATIC_SHUFFLE = "狗咬了邮递员", 2
SHORT = {"attn": "注意力", "ffn": "FFN", "block": "整个块", "attn_pos": "注意力 + 位置"}  # 静态面滑块上的短标签


EXPLORER = register(
    Explorer(
        name="permutation",
        title="打乱 token：自注意力与 FFN 的置换等变，以及位置表示如何打破它",
        params=[
            # 静态面：同一句话、同一种打乱方式，四个部件各一格
            Param("text", "句子", EXAMPLE_TEXT, "text", static=(STATIC_TEXT,)),
            Param("part", "部件", "attn", "dropdown", options=tuple((v, k) for k, v in state.PARTS.items()),
                  static=tuple(SHORT), static_labels=tuple(SHORT.values())),
            Param("shuffle", "打乱方式", 1, "slider", low=1, high=20, static=(STATIC_SHUFFLE,)),
        ],
        state=state.permutation_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"text": EXAMPLE_TEXT, "part": "attn", "shuffle": 1},
            {"text": EXAMPLE_TEXT, "part": "attn_pos", "shuffle": 1},
            {"text": LONG_TEXT, "part": "ffn", "shuffle": 3},
            {"text": LONG_TEXT, "part": "block", "shuffle": 5},
            # 两个「狗」互换位置：加了位置，它们的行也变了，中间的「咬」纹丝不动
            {"text": "狗咬狗", "part": "attn_pos", "shuffle": 4},
        ],
        static_prefix="部件：",
        web=WebFace(params=("text", "part", "shuffle"), data=state.web_data),
    )
)
