"""第 1.1 节的探索器：n-gram 语言模型逐位置的条件概率与下一个字的候选。"""

from seqlab import corpus
from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import next_token as figure
from seqlab.states import next_token as state

EXPLORER = register(
    Explorer(
        name="next_token",
        title="n-gram 语言模型：每个位置的条件概率",
        params=[
            Param("text", "句子", corpus.EXAMPLE_PREFIX, "text"),
            Param("order", "阶数 n", 3, "buttons", options=tuple((str(n), n) for n in state.ORDERS),
                  static=state.ORDERS, static_labels=tuple(f"n = {n}" for n in state.ORDERS)),
        ],
        state=state.next_token_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"text": corpus.EXAMPLE_PREFIX, "order": 3},
            {"text": corpus.EXAMPLE_PREFIX, "order": 1},
            {"text": "他一口气把那本小说读", "order": 2},
            {"text": "苹果公司发布了新的手机", "order": 3},
        ],
        static_prefix="阶数 ",
        web=WebFace(params=("text", "order"), data=state.web_data),
    )
)
