"""第 1.5 节的探索器：「它」那一行注意力，在「大」与「小」之间翻转。

选一种句式、填两个名词，探索器把关键词的两种取法（如「大」和「小」）各造一句，交给训练好的
玩具模型，画出两句里「它」在最后一层的注意力权重。模型是只在模板句子上训练的小玩具。
"""

import plotly.graph_objects as go

from seqlab.corpus import winograd
from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import it_attention as figure
from seqlab.states import it_attention as state

# 静态面的几组例子：第一组是正文的例句，其余用的都是**留出名词**（训练时从没见过）。
STATIC_EXAMPLES = (
    ("放不进", "奖杯", "箱子"),
    ("放不进", "雨伞", "鞋盒"),
    ("装不下", "饭盒", "风筝"),
    ("追不上", "乌龟", "熊猫"),
    ("压坏了", "砚台", "茶壶"),
    ("举不起", "山羊", "画框"),
)


def static() -> go.Figure:
    """静态面：``STATIC_EXAMPLES`` 里的每一组，下拉菜单切换。"""
    return figure.static([EXPLORER.compute(template=t, noun_a=a, noun_b=b) for t, a, b in STATIC_EXAMPLES])


EXPLORER = register(
    Explorer(
        name="it_attention",
        title="「它」指谁：关键词一换，注意力就换了对象",
        params=[
            Param("template", "句式", "放不进", "dropdown", options=tuple((k, k) for k in winograd.TEMPLATE_BY_KEY)),
            Param("noun_a", "名词甲", "奖杯", "text"),
            Param("noun_b", "名词乙", "箱子", "text"),
        ],
        state=state.it_state,
        render=figure.render,
        caption=figure.caption,
        examples=[
            {"template": "放不进", "noun_a": "奖杯", "noun_b": "箱子"},
            {"template": "追不上", "noun_a": "乌龟", "noun_b": "熊猫"},
            {"template": "举不起", "noun_a": "山羊", "noun_b": "西瓜"},
        ],
        static=static,
        web=WebFace(params=("template", "noun_a", "noun_b"), data=state.web_data),
    )
)
