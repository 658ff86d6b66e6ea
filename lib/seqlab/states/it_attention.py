"""第 1.5 节“「它」指谁”的状态：关键词的两种取法各造一句，两句里「它」在最后一层的注意力。

选一种句式、填两个名词，把关键词的两种取法（如「大」和「小」）各造一句，交给训练好的玩具模型
（只在模板句子上训练的小玩具），取出两句里「它」在第 2 层的注意力权重。

模型用检查点里的权重、以 float64 计算（:func:`_model`）：落在无关字上的权重小到 1e-17，float32 算出的这些数
与精确值的相对误差很大，float64 算出的数几乎与求和的先后次序无关，网页实时面（同样用 float64 算）因此能得到相同的状态。
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

from seqlab import attention
from seqlab.corpus import winograd
from seqlab.errors import InputError
from seqlab.runtime import single_thread
from seqlab.states import checkpoint_json, clean_text, float64_checkpoint
from seqlab.train import pronoun

MAX_NOUN_CHARS = 4
CJK = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\U00020000-\U0003134f]+$")


@dataclass(frozen=True)
class ItState:
    template: str
    examples: list[winograd.Example]  # 关键词的两种取法各一句
    rows: torch.Tensor  # (2, S)：两句里「它」在第 2 层的注意力权重
    mass: torch.Tensor  # (2, 2)：每句里落在名词甲、乙上的权重之和
    guesses: list[str]  # 每句里模型认为「它」指的名词（权重之和大的那个）
    unknown: list[str]  # 模型字表里没有的字


def _model() -> tuple[attention.PronounResolver, list[str]]:
    """检查点里的模型（float64，见 :func:`seqlab.states.float64_checkpoint`）与它的字表。"""
    ckpt = float64_checkpoint(pronoun.WINOGRAD_CHECKPOINT)
    return ckpt.model_as(attention.PronounResolver), ckpt.config["vocab"]


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
    noun_a, noun_b = _noun(noun_a, "名词甲"), _noun(noun_b, "名词乙")
    if noun_a == noun_b:
        raise InputError("两个名词相同，「它」指哪一个都一样：请换一个。")
    model, vocab = _model()
    examples = [winograd.make_example(template, noun_a, noun_b, w) for w in winograd.TEMPLATE_BY_KEY[template].words]
    batch = attention.encode_examples(examples, vocab)
    with torch.no_grad(), single_thread():
        _, A2 = model(batch.ids)
    rows = A2[torch.arange(2), batch.pronoun]
    mass = attention.referent_mass(A2, batch.pronoun, batch.spans)
    guesses = [e.noun_b if m[1] > m[0] else e.noun_a for e, m in zip(examples, mass)]
    known = set(vocab)
    unknown = sorted({ch for ch in noun_a + noun_b if ch not in known})
    return ItState(template, examples, rows, mass, guesses, unknown)


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``it_state`` 所需的常量：检查点的 config（含字表）与每个参数（``state_dict`` 的名字 →
    :func:`seqlab.states.packed`，float32 原样），每种句式的填空模板与两个关键词（``make_example`` 由它们造句、
    找出两个名词与「它」的位置），代词与名词的字数上限。浏览器由它们算出与本模块相同的状态。"""
    return {
        **checkpoint_json(pronoun.WINOGRAD_CHECKPOINT),
        "templates": {t.key: {"text": t.text, "words": t.words} for t in winograd.TEMPLATES},
        "pronoun": winograd.PRONOUN,
        "max_noun_chars": MAX_NOUN_CHARS,
    }
