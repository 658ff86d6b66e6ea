"""第 1.6 节“小 GPT 逐步生成”的状态：从一段提示出发生成，停在读者要看的那一步。

每一步（``gpt.Step``，冻结的 dataclass，字段都是数、字符串和列表）给出三样东西：候选 token 的分布、
最后一个位置的 Query 在每层每个头上的注意力、各位置的 K/V 是从 KV cache 读的还是这一步新算的。
计算在 ``seqlab.gpt.generate_steps`` 里，这里只做输入检查，并缓存同一设置下的整次生成。

模型用检查点里的权重、以 float64 计算（:func:`seqlab.states.float64_checkpoint`），网页实时面因此能得到相同的状态。
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from seqlab import gpt
from seqlab.runtime import single_thread
from seqlab.states import checkpoint_json, clean_text, float64_checkpoint
from seqlab.tokenize import Vocab
from seqlab.train import gpt_chars
from seqlab.transformer import TinyDecoder

MAX_PROMPT = 24
MAX_STEPS = 24


@dataclass(frozen=True)
class GptStepState:
    prompt: str
    decoding: gpt.Decoding
    step: gpt.Step
    last: int  # 这次生成一共有几步（从 0 数的最后一步）
    text: str  # 到这一步为止的文字（提示 + 生成的字）
    requested: int  # 读者要看的步；超过 last 时显示最后一步


@lru_cache(maxsize=1)
def _vocab() -> Vocab:
    return gpt.vocab_of(float64_checkpoint(gpt_chars.NAME).config)


@lru_cache(maxsize=64)
def _run(prompt: str, decoding: gpt.Decoding) -> tuple[gpt.Step, ...]:
    model = float64_checkpoint(gpt_chars.NAME).model_as(TinyDecoder)
    with single_thread():
        return tuple(gpt.generate_steps(model, _vocab(), prompt, MAX_STEPS, decoding))


def gpt_step_state(prompt: str, step: int, sample: bool, temperature: float, top_k: int, seed: int) -> GptStepState:
    """``sample=False`` 时贪心生成（``temperature``、``top_k``、``seed`` 不起作用）；否则按它们采样。"""
    prompt = clean_text(prompt, max_chars=MAX_PROMPT, what="提示")
    decoding = gpt.Decoding(sample=sample, temperature=temperature, top_k=top_k, seed=seed) if sample else gpt.Decoding()
    steps = _run(prompt, decoding)
    shown = steps[min(step, len(steps) - 1)]
    text = prompt + "".join(s.token for s in steps[: shown.index + 1] if s.token != gpt.EOS)
    return GptStepState(prompt, decoding, shown, len(steps) - 1, text, step)


def web_data() -> dict[str, Any]:
    """网页实时面计算 ``gpt_step_state`` 所需的常量：检查点的 config（含词表 ``itos``）与每个参数
    （``state_dict`` 的名字 → :func:`seqlab.states.packed`，float32 原样），特殊 token 与它们在图里的写法，
    提示的字数上限、生成的步数与记下的候选个数。浏览器由它们算出与本模块相同的状态。"""
    return {
        **checkpoint_json(gpt_chars.NAME),
        "specials": {"bos": gpt.BOS, "eos": gpt.EOS, "all": list(gpt.SPECIALS)},
        "shown": gpt.SHOWN,
        "max_prompt": MAX_PROMPT,
        "max_steps": MAX_STEPS,
        "top": gpt.TOP,
    }
