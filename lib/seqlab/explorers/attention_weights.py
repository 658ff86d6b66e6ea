"""第 1.4、1.6 节的探索器：注意力权重 α_tj，以及第 t 步的上下文 c_t 是怎样拼出来的。

同一份说明登记两次，只差“模型”的默认值：``attention_weights`` 是第 1.4 节的 Bahdanau 注意力，
``cross_attention_weights`` 是第 1.6 节编码器—解码器 Transformer 的交叉注意力（所选一层、各头平均）。
两者的实时面都能在“模型”里切换；静态面各画自己默认的那个模型。
"""

import random
from functools import partial

import plotly.graph_objects as go

from seqlab.corpus import translation as task
from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import attention_weights as figure
from seqlab.figures.attention_weights_static import static_face
from seqlab.states import attention_weights as state
from seqlab.train import encdec_transformer

SHOWN = (1, 5)  # 静态面打开时：第 2 句的第 5 步（动词被挪到了分句末尾）
MODEL_OPTIONS = tuple((label, name) for name, label in state.MODELS.items())
# 网页实时面的测试向量另加的源句：随机取值是本书语料里的一段，几乎都有玩具语言之外的字。
# 半角标点、拉丁字母紧挨着汉字是故意的（读者会这样输入）：拼起来写，排版检查（tests/test_messages.py）才不把它们当成消息
EDGE_TEXTS = (
    ",".join(("猫追狗", "小鸟看鱼")), ";".join((" 大猫 追、小狗；鱼咬牛", "马看鸟 ")), "猫\u3000追\xa0狗\x1c", "猫\u200b追狗",  # 别名与空白
    "猫追狗，", "，猫追狗", "猫追狗，，马看牛", "猫猫猫", "大大大大猫追狗", "猫追看狗", "大猫追", "追猫狗",  # 语法
    "，", "猫" * task.MAX_LEN, "猫" * (task.MAX_LEN + 1), "猫追狗" + "ABCDEFGHIJ", "猫。追！狗", "猫追🐟",  # 长度与生字
)


def vector_inputs(seed: int = 16) -> tuple[dict[str, object], ...]:
    """网页实时面的测试向量另加的输入：随机长度的合法句子、随机排列的词（多半不合语法）与 ``EDGE_TEXTS``，
    各配一个随机的步数（常常超过句长）和模型。"""
    rng = random.Random(seed)
    lexicon = list(task.LEXICON)
    texts = [
        *("".join(task.sample_source(rng.randint(task.MIN_LEN, task.MAX_LEN), rng)) for _ in range(10)),
        *("".join(rng.choices(lexicon, k=rng.randint(1, task.MAX_LEN))) for _ in range(10)),
        *EDGE_TEXTS,
    ]
    return tuple({"text": text, "step": rng.randint(1, task.MAX_LEN), "model": rng.choice(MODEL_OPTIONS)[1]}
                 for text in texts)


def static(model: str) -> go.Figure:
    """静态面：每个例句的每一步都预先算好，交给 ``static_face`` 拼成一张图。"""
    sentences = [
        [state.attention_state(text, t, model) for t in range(1, len(state.parse_source(text)) + 1)]
        for text in task.EXAMPLES
    ]
    return static_face(sentences, SHOWN)


def _spec(name: str, title: str, model: str, other: str) -> Explorer[state.AttentionState]:
    """``model`` 是默认的模型（也是静态面画的模型）；最后一个示例切换到 ``other``。"""
    return Explorer(
        name=name,
        title=title,
        params=[
            Param("text", "源句", task.EXAMPLES[1], "text"),
            # 松开滑块才更新：拖动途中的每个值都重画一遍，最后一个值反而要排在它们后面才画出来
            Param("step", "第 t 步", 1, "slider", low=1, high=task.MAX_LEN),
            Param("model", "模型", model, "dropdown", options=MODEL_OPTIONS),
        ],
        state=state.attention_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"text": task.EXAMPLES[0], "step": 3},
            {"text": task.EXAMPLES[1], "step": 5},
            {"text": task.EXAMPLES[2], "step": 19},
            {"text": "小猫看大鱼", "step": 2},
            {"text": task.EXAMPLES[1], "step": 4, "model": other},
        ],
        static=partial(static, model),
        web=WebFace(params=("text", "step", "model"), data=state.web_data, inputs=vector_inputs()),
    )


EXPLORER = register(_spec("attention_weights", "注意力权重 α_tj：解码每一步读源句的哪里", state.MODEL, encdec_transformer.NAME))
CROSS_EXPLORER = register(
    _spec("cross_attention_weights", "交叉注意力权重 α_tj：Transformer 解码每一步读源句的哪里", encdec_transformer.NAME, state.MODEL)
)
