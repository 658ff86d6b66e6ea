"""状态层（torch，不用 plotly）：每个探索器一个模块，负责检查输入并计算它的“状态”。

一个状态是一个冻结的 dataclass：读者在图上看到的每一个数都在它的字段里，画图的代码只读它、不再计算。
字段只用这些类型，它们都有确定的 JSON 形式（见 :func:`to_json`），网页上的实时面可以读写同样的状态：

* ``int``、``float``、``bool``、``str``、``None``；
* 元素也是这些类型的 ``list``、``tuple``（JSON 里都是数组）与键为字符串的 ``dict``；
* ``torch.Tensor`` 与 ``numpy.ndarray``：嵌套的数组（``tensor.tolist()``）；
* 嵌套的 dataclass：字段名到字段值的对象。

非有限的浮点数（``nan``、``±inf``）在 JSON 里写成 ``null``。

坏输入抛 :class:`seqlab.errors.InputError`（中文消息）；代价随长度增长的计算先估算内存，超出预算就抛
:class:`seqlab.errors.MemoryBudgetError`。
"""

from __future__ import annotations

import base64
import dataclasses
import math
from functools import cache
from typing import Any

import numpy as np
import torch

from seqlab import train
from seqlab.errors import InputError

MAX_TEXT_CHARS = 2000


def clean_text(text: str, *, max_chars: int = MAX_TEXT_CHARS, what: str = "文本") -> str:
    """各个状态共用的文本检查：去掉首尾空白，拒绝空文本和过长文本。"""
    if not isinstance(text, str):
        raise InputError(f"{what}必须是字符串。")
    text = text.strip()
    if not text:
        raise InputError(f"{what}是空的：请输入至少一个字符。")
    if len(text) > max_chars:
        raise InputError(f"{what}有 {len(text)} 个字符，超过了上限 {max_chars}：请缩短后再试。")
    return text


def to_json(value: Any) -> Any:
    """状态（或它的任何一个字段）的 JSON 形式：只含 ``dict``、``list``、``str``、``int``、``float``、``bool``、``None``。

    遇到上面没有列出的类型就抛 ``TypeError``：状态里不该有它。
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (torch.Tensor, np.ndarray, np.generic)):
        return to_json(value.tolist())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: to_json(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: to_json(v) for k, v in value.items()}
    raise TypeError(f"状态里不该有 {type(value).__name__} 类型的值（它没有确定的 JSON 形式）")


_PACKED_DTYPES = {torch.float32: "f4", torch.float64: "f8"}


def packed(tensor: torch.Tensor) -> dict[str, str]:
    """一个 float32（或 float64）张量的紧凑 JSON 形式（网页实时面的模型权重、固定的随机矩阵）：小端的 base64，
    写法与 plotly.js 的 base64 数组相同，``{"dtype": "f4", "bdata": …, "shape": "64,64"}``（各维的长度，逗号分隔），
    不损失任何一位。``seqlab.explorers.web.decode_arrays`` 与 ``assets/live/nn.mjs`` 的 ``unpack`` 把它读回来。"""
    if tensor.dtype not in _PACKED_DTYPES:
        raise TypeError(f"只打包 float32 或 float64 的张量，收到的是 {tensor.dtype}")
    dtype = _PACKED_DTYPES[tensor.dtype]
    data = tensor.detach().contiguous().numpy().astype("<" + dtype).tobytes()
    return {"dtype": dtype, "bdata": base64.b64encode(data).decode("ascii"), "shape": ",".join(map(str, tensor.shape))}


def packed_weights(model: torch.nn.Module) -> dict[str, dict[str, str]]:
    """模型的每个参数（``state_dict`` 的名字 → :func:`packed`）：网页实时面由它们重建同一个模型。"""
    return {name: packed(t) for name, t in model.state_dict().items()}


def checkpoint_json(name: str) -> dict[str, Any]:
    """检查点 ``name`` 在网页实时面上的样子：config 与每个参数（:func:`packed_weights`，float32 原样）。"""
    ckpt = train.load(name)
    return {"config": ckpt.config, "weights": packed_weights(ckpt.model)}


@cache
def float64_checkpoint(name: str) -> train.Checkpoint:
    """检查点 ``name``，模型的参数换成 float64（每个数与 float32 的权重完全相同）；整个进程只建一次。

    有网页实时面的状态用它计算：float32 算出的很小的数（注意力权重、接近 0 的隐藏状态）与精确值的相对误差
    可达 1e-5 以上，float64 算出的数几乎与求和的先后次序无关，网页（由 :func:`checkpoint_json` 的同一份权重、
    同样用 float64 算）因此能得到相同的状态。"""
    ckpt = train.load(name)
    ckpt.model.double()
    return ckpt


__all__ = ["MAX_TEXT_CHARS", "checkpoint_json", "clean_text", "float64_checkpoint", "packed", "packed_weights", "to_json"]
