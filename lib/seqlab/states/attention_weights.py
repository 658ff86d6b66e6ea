"""第 1.4、1.6 节“注意力权重”的状态：一句源句的译文、α_tj 矩阵，以及第 t 步的上下文 c_t 由哪几项拼成。

权重来自第 1.4 节的 Bahdanau 注意力模型，或第 1.6 节编码器—解码器 Transformer 的交叉注意力
（``encdec_transformer.SHOWN_LAYER`` 那一层、各头平均）；对照用的是第 1.4 节的固定上下文模型的译文。

三个模型都用检查点里的权重、以 float64 计算（:func:`seqlab.states.float64_checkpoint`）：贪心解码每一步取 argmax，两个词的分数很接近时，
float32 的舍入误差就可能翻转译文；float64 算出的数几乎与求和的先后次序无关，网页实时面（同样用 float64 算）
因此能译出同样的词、得到同样的 α（都取 4 位小数）。
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import torch

from seqlab import encdec, seq2seq
from seqlab.corpus import translation as task
from seqlab.errors import InputError
from seqlab.states import checkpoint_json, clean_text, float64_checkpoint
from seqlab.train import encdec_transformer

MODEL = "seq2seq_attention"
BASELINE = "seq2seq_fixed"
MODELS = {MODEL: "Bahdanau 注意力（1.4 节）", encdec_transformer.NAME: "Transformer 交叉注意力（1.6 节）"}
ALIASES = {",": "，", "、": "，", "；": "，", ";": "，"}
MAX_CHARS = 200
TOP = 3  # c_t 的说明里列出权重最大的前几项


def parse_source(text: str) -> list[str]:
    """把读者输入的源句拆成字；空白忽略，半角逗号当作全角。坏输入抛 ``InputError``。"""
    text = clean_text(text, max_chars=MAX_CHARS, what="源句")
    chars = [ALIASES.get(ch, ch) for ch in text if not ch.isspace()]
    unknown = sorted({ch for ch in chars if ch not in task.LEXICON}, key=chars.index)
    if unknown:
        shown = "".join(unknown[:8]) + ("…" if len(unknown) > 8 else "")
        raise InputError(
            f"源句里有玩具语言不认识的符号「{shown}」。可用的字只有：名词 {''.join(task.NOUNS)}，"
            f"形容词 {''.join(task.ADJECTIVES)}，动词 {''.join(task.VERBS)}，以及逗号「，」。"
        )
    if len(chars) > task.MAX_LEN:
        raise InputError(
            f"源句有 {len(chars)} 个字，超过了模型训练时见过的最大长度 {task.MAX_LEN}：请缩短后再试。"
        )
    return chars


@dataclass(frozen=True)
class AttentionState:
    source: list[str]  # 源句的字，长度 S
    output: list[str]  # 所选模型贪心解码出的目标词，长度 T = S
    alpha: list[list[float]]  # (T, S) 的 α_tj
    reference: list[str] | None  # 标准译文（不合语法时为 None）
    gold: list[int] | None  # 标准对齐：第 t 个目标词来自哪个源位置（从 0 数）
    baseline: list[str]  # 固定上下文模型的译文
    right: int | None  # 所选模型的译文里与标准译文相同的词数（没有标准译文时为 None）
    baseline_right: int | None  # 固定上下文模型的译文里与标准译文相同的词数
    model: str  # 权重来自哪个模型（``MODELS`` 的键）
    step: int  # 当前展示的目标步 t（从 1 数）
    clamped: bool  # 步数超过了句长，被收回到最后一步
    top: list[int]  # 第 t 行里权重最大的 ``TOP`` 个源位置（从 0 数，权重从大到小）


def _attend(model: str, src: torch.Tensor, T: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``src`` (1, S) 贪心解码 ``T`` 步，返回 ``(ids (1, T), α (1, T, S))``。

    Transformer 的交叉注意力 (1, 层, 头, T, S) 取 ``encdec_transformer.SHOWN_LAYER`` 层、各头平均。
    """
    ckpt = float64_checkpoint(model)
    if model == encdec_transformer.NAME:
        ids, cross = ckpt.model_as(encdec.EncoderDecoderTransformer).greedy(src, T)
        return ids, encdec.head_mean(cross[:, encdec_transformer.SHOWN_LAYER])
    ids, alpha = ckpt.model_as(seq2seq.AttentionSeq2Seq).greedy(src, T)
    if alpha is None:
        raise TypeError(f"检查点 {model} 的模型没有给出注意力权重")
    return ids, alpha


def _right(words: list[str], reference: list[str] | None) -> int | None:
    return None if reference is None else sum(a == b for a, b in zip(words, reference))


def _top(row: list[float]) -> list[int]:
    return sorted(range(len(row)), key=lambda j: -row[j])[:TOP]


@lru_cache(maxsize=128)
def _translate(source: tuple[str, ...], model: str) -> AttentionState:
    """所选模型与固定上下文模型各贪心解码一次，得到第 1 步的状态（按源句缓存：换步数时不必重算）。"""
    words = list(source)
    src = torch.tensor([task.encode_source(words)])
    ids, alpha = _attend(model, src, len(words))
    base_ids, _ = float64_checkpoint(BASELINE).model_as(seq2seq.FixedContextSeq2Seq).greedy(src, len(words))
    grammatical = task.translatable(words)  # 形容词多于训练时的上限也照样给出标准译文
    output, baseline = task.decode_target(ids[0]), task.decode_target(base_ids[0])
    reference = task.translate(words) if grammatical else None
    # α 只留 4 位小数（图上最多显示 3 位；``top`` 按留下的数排序，并列时按位置先后）。网页实时面照搬 Python 的
    # round：按二进制的精确值四舍六入五成双，再读回最近的 float
    rows = [[round(a, 4) for a in row] for row in alpha[0].tolist()]
    return AttentionState(
        source=words,
        output=output,
        alpha=rows,
        reference=reference,
        gold=task.alignment(words) if grammatical else None,
        baseline=baseline,
        right=_right(output, reference),
        baseline_right=_right(baseline, reference),
        model=model,
        step=1,
        clamped=False,
        top=_top(rows[0]),
    )


def attention_state(text: str, step: int, model: str) -> AttentionState:
    """源句 → 两个模型的译文、α 矩阵与第 ``step`` 步的 c_t；``step`` 超出句长时收回到最后一步。"""
    if model not in MODELS:
        raise InputError(f"没有这个模型：{model!r}；可选：{'、'.join(MODELS.values())}。")
    state = _translate(tuple(parse_source(text)), model)
    t = min(max(int(step), 1), len(state.source))
    return replace(state, step=t, clamped=t != int(step), top=_top(state.alpha[t - 1]))


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``attention_state`` 所需的常量：三个检查点（两个可选的模型与对照用的固定上下文模型）的
    config 与每个参数（``state_dict`` 的名字 → :func:`seqlab.states.packed`，float32 原样），Transformer 展示的那一层；
    玩具语言的词表（名词、形容词、动词、逗号各自的译法，源与目标的 token 表，起始符）与可用的别名，
    以及源句的字数上限与 c_t 的说明列出的项数。浏览器由它们算出与本模块相同的状态。"""
    return {
        "models": {name: checkpoint_json(name) for name in (*MODELS, BASELINE)},
        "baseline": BASELINE,
        "transformer": encdec_transformer.NAME,
        "shown_layer": encdec_transformer.SHOWN_LAYER,
        "nouns": task.NOUNS,
        "adjectives": task.ADJECTIVES,
        "verbs": task.VERBS,
        "separator": task.SEPARATOR,
        "src_tokens": task.SRC_TOKENS,
        "tgt_tokens": task.TGT_TOKENS,
        "bos_id": task.BOS_ID,
        "aliases": ALIASES,
        "max_len": task.MAX_LEN,
        "max_chars": MAX_CHARS,
        "top": TOP,
    }
