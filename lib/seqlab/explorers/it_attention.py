"""第 1.5 节的探索器：「它」那一行注意力，在「大」与「小」之间翻转。

选一种句式、填两个名词，探索器把关键词的两种取法（如「大」和「小」）各造一句，交给训练好的
玩具模型，画出两句里「它」在最后一层的注意力权重。模型是只在模板句子上训练的小玩具。
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import ipywidgets as widgets
import plotly.graph_objects as go
import torch

from seqlab import attention, train
from seqlab.corpus import winograd
from seqlab.errors import InputError
from seqlab.explorers import Explorer, clean_text, register
from seqlab.figures import attention_heatmap, stepped_figure
from seqlab.runtime import single_thread
from seqlab.train import pronoun

MAX_NOUN_CHARS = 4
CJK = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\U00020000-\U0003134f]+$")

# 静态面的几组例子：第一组是正文的例句，其余用的都是**留出名词**（训练时从没见过）。
STATIC_EXAMPLES = [
    ("放不进", "奖杯", "箱子"),
    ("放不进", "雨伞", "鞋盒"),
    ("装不下", "饭盒", "风筝"),
    ("追不上", "乌龟", "熊猫"),
    ("压坏了", "砚台", "茶壶"),
    ("举不起", "山羊", "画框"),
]


@dataclass
class ItState:
    template: str
    examples: list[winograd.Example]  # 关键词的两种取法各一句
    rows: torch.Tensor  # (2, S)：两句里「它」在第 2 层的注意力权重
    mass: torch.Tensor  # (2, 2)：每句里落在名词 A、B 上的权重之和
    unknown: list[str]  # 模型字表里没有的字


def _noun(text: str, what: str) -> str:
    text = clean_text(text, max_chars=MAX_NOUN_CHARS, what=what)
    if not CJK.match(text):
        raise InputError(f"{what} 只能由汉字组成（1～{MAX_NOUN_CHARS} 个），「{text}」里有别的字符。")
    if winograd.PRONOUN in text:
        raise InputError(f"{what} 里不能有「它」字，否则就分不清哪个是代词了。")
    return text


def it_state(template: str, noun_a: str, noun_b: str) -> ItState:
    if template not in winograd.TEMPLATE_BY_KEY:
        raise InputError(f"没有句式「{template}」：可选 {list(winograd.TEMPLATE_BY_KEY)}。")
    noun_a, noun_b = _noun(noun_a, "名词 A"), _noun(noun_b, "名词 B")
    if noun_a == noun_b:
        raise InputError("两个名词相同，「它」指哪一个都一样：请换一个。")
    ckpt = train.load(pronoun.WINOGRAD_CHECKPOINT)
    model, vocab = ckpt.model, ckpt.config["vocab"]
    t = winograd.TEMPLATE_BY_KEY[template]
    examples = [winograd.make_example(template, noun_a, noun_b, w) for w in t.words]
    batch = attention.encode_examples(examples, vocab)
    with torch.no_grad(), single_thread():
        _, A2 = model(batch.ids)
    rows = A2[torch.arange(2), batch.pronoun]
    mass = attention.referent_mass(A2, batch.pronoun, batch.spans)
    known = set(vocab)
    unknown = sorted({ch for ch in noun_a + noun_b if ch not in known})
    return ItState(template, examples, rows, mass, unknown)


def _verdict(e: winograd.Example, mass: torch.Tensor) -> str:
    guess = e.noun_b if mass[1] > mass[0] else e.noun_a
    mark = "✓" if guess == e.referent else "✗"
    return f"「…太{e.word}了」：它 → {guess} {mark}（A {mass[0]:.2f} : B {mass[1]:.2f}）"


@register
class ItAttentionExplorer(Explorer):
    name = "it_attention"
    title = "「它」指谁：关键词一换，注意力就换了对象"
    examples: ClassVar[list[dict]] = [
        {"template": "放不进", "noun_a": "奖杯", "noun_b": "箱子"},
        {"template": "追不上", "noun_a": "乌龟", "noun_b": "熊猫"},
        {"template": "举不起", "noun_a": "山羊", "noun_b": "西瓜"},
    ]

    def controls(self):
        return {
            "template": widgets.Dropdown(
                options=list(winograd.TEMPLATE_BY_KEY), value="放不进", description="句式"
            ),
            "noun_a": widgets.Text(value="奖杯", description="名词 A", continuous_update=False),
            "noun_b": widgets.Text(value="箱子", description="名词 B", continuous_update=False),
        }

    def compute(self, template: str, noun_a: str, noun_b: str) -> ItState:
        return it_state(template, noun_a, noun_b)

    def caption(self, state: ItState) -> str:
        words = "；".join(_verdict(e, m) for e, m in zip(state.examples, state.mass))
        if state.unknown:
            words += f"。模型的字表里没有「{'」「'.join(state.unknown)}」，按“未知字”处理"
        return words

    def figure(self, state: ItState) -> go.Figure:
        a, b = state.examples
        pairs = list(zip(a.text, b.text))
        cols = [x if x == y else f"{x}<br>{y}" for x, y in pairs]  # 关键词那一列上下写出两种取法
        sentence = "".join(x if x == y else f"{x}/{y}" for x, y in pairs)
        rows = [f"它（太{a.word}）", f"它（太{b.word}）"]
        fig = attention_heatmap(
            state.rows,
            rows,
            cols,
            title=f"「{sentence}」：第 2 层里「它」的注意力",
            row_title="「它」所在的句子",
            col_title="被读取的字",
        )
        fig.update_xaxes(title_text="")
        fig.update_layout(height=330, margin={"t": 110})
        return fig

    def static_figure(self) -> go.Figure:
        states = []
        for template, noun_a, noun_b in STATIC_EXAMPLES:
            state = it_state(template, noun_a, noun_b)
            fig = self.figure(state)
            fig.add_annotation(
                text="<br>".join(_verdict(e, m) for e, m in zip(state.examples, state.mass)),
                xref="paper",
                yref="paper",
                x=0.3,
                y=-0.06,
                align="left",
                showarrow=False,
                xanchor="left",
                yanchor="top",
            )
            fig.update_layout(height=380, margin={"b": 90})
            states.append((f"{noun_a}·{noun_b}", fig))
        fig = stepped_figure(states, control="dropdown", label="例句")
        fig.layout.updatemenus[0].update(x=0.0, xanchor="left", y=-0.08, yanchor="top", direction="up")
        return fig
