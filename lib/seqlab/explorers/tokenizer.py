"""第 1.2 节的探索器：同一段文字按字、按词（jieba）、按字节级 BPE 切分，以及序列长度与词表大小。"""

from seqlab.explorers import Explorer, Param, WebFace, register
from seqlab.figures import tokenizer as figure
from seqlab.states import tokenizer as state
from seqlab.tokenize import BPE_SIZES

TEXT = "我在苹果公司工作，周末爱吃苹果🍎"


EXPLORER = register(
    Explorer(
        name="tokenizer",
        title="同一段文字的三种切分：字、词、字节级 BPE",
        params=[
            Param("text", "文本", TEXT, "text", width="28em"),
            Param("vocab_size", "BPE 词表", 300, "buttons", options=tuple((str(v), v) for v in BPE_SIZES), width="4.2em",
                  static=BPE_SIZES, static_labels=tuple(f"V = {v}" for v in BPE_SIZES)),
        ],
        state=state.tokenizer_state,
        render=figure.render,
        patch=figure.patch,
        caption=figure.caption,
        examples=[
            {"text": TEXT, "vocab_size": 300},
            {"text": TEXT, "vocab_size": 1000},
            {"text": "这本书我已经读过了", "vocab_size": 256},
            {"text": "鲲鹏展翅九万里 hello 😀", "vocab_size": 600},
        ],
        static_prefix="BPE 词表大小 ",
        web=WebFace(params=("text", "vocab_size"), data=state.web_data),
    )
)
