"""第 1.2 节的探索器：同一个词在两句话里——输入向量相同，经过上下文层后的隐藏状态不同。"""

import plotly.graph_objects as go

from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import apple_context as figure
from seqlab.states import apple_context as state

SENTENCES = (
    "苹果公司发布了新的手机",
    "我今天吃了一个苹果，又甜又脆",
    "他在苹果公司工作，负责设计手表",
    "妈妈在市场买了一袋苹果和橘子",
    "苹果公司的电脑卖得很好",
    "我喜欢吃苹果",
    "他昨天去北京出差，晚上才回来",
    "北京的天气很冷",
)
# 静态面里预先算好的几组对照：(句子 A, 句子 B, 要比较的词)
PAIRS = (
    (SENTENCES[0], SENTENCES[1], "苹果"),
    (SENTENCES[2], SENTENCES[3], "苹果"),
    (SENTENCES[4], SENTENCES[2], "苹果"),
    (SENTENCES[1], SENTENCES[5], "苹果"),
    (SENTENCES[6], SENTENCES[7], "北京"),
)


def static() -> go.Figure:
    """静态面：``PAIRS`` 里的每一组对照，下拉菜单切换。"""
    states = [EXPLORER.compute(sentence_a=a, sentence_b=b, word=w) for a, b, w in PAIRS]
    return figure.static(states, word=EXPLORER.defaults["word"])


def _sentence(name: str, label: str, default: str) -> Param:
    """句子 A、B 的控件：可以从 ``SENTENCES`` 里选，也可以自己输入。"""
    return Param(name, label, default, "combobox", options=tuple((s, s) for s in SENTENCES), width="24em")


EXPLORER = register(
    Explorer(
        name="apple_context",
        title="同一个词，两种上下文：输入向量与隐藏状态",
        params=[
            _sentence("sentence_a", "句子 A", PAIRS[0][0]),
            _sentence("sentence_b", "句子 B", PAIRS[0][1]),
            Param("word", "比较的词", PAIRS[0][2], "text", width="12em"),
        ],
        state=state.apple_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[{"sentence_a": a, "sentence_b": b, "word": w} for a, b, w in (PAIRS[0], PAIRS[1], PAIRS[4])],
        static=static,
        web=WebFace(params=("sentence_a", "sentence_b", "word"), data=state.web_data),
    )
)
