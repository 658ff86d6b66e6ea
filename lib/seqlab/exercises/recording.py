"""评分时把“学生的代码做了什么”与“对不对”分开：在学生的进程里只**记录**，在评分程序的进程里**判定**。

评分时学生的代码在沙箱里运行（``tools/classroom``）。那个进程里的一切——``import`` 机制、内置函数、本书的库——
学生的代码都能改写，所以那里算出的 ✅ 不可信。于是：

1. **记录**（沙箱里，:func:`save`）：对每道练习，照常运行检查函数，但把学生的每个答案换成一个记录器。
   记录器调用学生的函数，记下它能被看到的全部效果——返回值、对参数里张量与模块的原地修改、它调用了
   哪些作为参数传进来的函数（例如练习 1.5.2 的 ``measure``）、抛出的异常类型——编码成纯数据（JSON）。
   检查本身在那里的结论被丢掉。
2. **判定**（评分程序里，:func:`judge`）：在没有运行过任何学生代码的进程里，用同一个检查函数、同样的
   输入再检查一遍，只是学生的函数换成了重放器：每次调用按顺序交回记录下的效果。

学生的代码因此只能改变它自己的答案：改写检查、``import`` 或内置函数，只作用于沙箱里那一遍被丢掉的检查。
记录文件本身也可能被伪造，所以解码只接受下面这几种数据，数量和大小都有上限；学生代码产生的文字
（异常的说明）不记录，评分的说明全部出自检查函数。

编码：``None``、布尔、整数、浮点数、字符串、列表照 JSON 原样；其余是只有一个键的对象——
``{"tuple": […]}``、``{"dict": [[键, 值], …]}``、``{"tensor": {dtype, shape, data, requires_grad, grad_fn}}``、
``{"object": 类型名}``（不能编码的对象只记下类型名）。
"""

from __future__ import annotations

import base64
import builtins
import importlib
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from seqlab.exercises import CheckFailed, CheckResult, TorchTrace

MAX_RECORDING_BYTES = 64 * 2**20  # 一道题的记录最多 64 MiB
MAX_ITEMS = 1_000_000  # 解码时最多这么多个值（含张量的元素）
MAX_DEPTH = 32
MAX_TEXT = 10_000  # 一个字符串最多这么多个字符
DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.complex64, torch.complex128,
        torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
    )
}
# 重放时重新抛出的异常：只用 Python 内置的类型，说明是固定的一句（学生代码写的说明不离开沙箱）。
REPLAYED_MESSAGE = "（评分时不转述你的代码产生的文字；在笔记本里运行检查可以看到完整的出错信息）"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
# 张量运算的限定名：torch.softmax 记作 softmax，torch.ops.aten.softmax.int 记作 aten::softmax.int，
# torch.ops 里 pybind 函数的限定名可长达一百多个字符
_OP = re.compile(r"[A-Za-z_][A-Za-z0-9_.:<>]{0,199}")


class RecordingError(CheckFailed):
    """记录文件不合规定（被截断、伪造或超出上限）：这道题不计分，说明里写明原因。"""

    def __init__(self, what: str) -> None:
        super().__init__(f"这道题的记录无法使用（{what}），不计分。")


# ---------------------------------------------------------------------------------------------- 编码
def encode(value: Any) -> Any:
    """把一个值编码成 JSON 能写的纯数据（见模块说明）。"""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.generic):
        return encode(value.item())
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, torch.Tensor):
        return {"tensor": _encode_tensor(value)}
    if isinstance(value, np.ndarray):
        return {"tensor": _encode_tensor(torch.from_numpy(np.ascontiguousarray(value)))}
    return {"object": _type_name(value)}


def _type_name(value: Any) -> str:
    match = _NAME.match(type(value).__name__)
    return match.group(0) if match else "object"


def _encode_tensor(t: torch.Tensor) -> dict:
    dtype = str(t.dtype).removeprefix("torch.")
    if dtype not in DTYPES or t.layout != torch.strided:
        return {"unsupported": dtype}
    flat = t.detach().cpu().contiguous().reshape(-1)
    raw = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
    return {
        "dtype": dtype,
        "shape": list(t.shape),
        "data": base64.b64encode(raw).decode("ascii"),
        "requires_grad": bool(t.requires_grad),
        "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
    }


def _state(arg: Any) -> Any:
    """参数在调用之后的状态：张量的值与梯度、模块的参数与缓冲区（含梯度）；别的参数记为 None。"""
    if isinstance(arg, torch.Tensor):
        return {"values": encode(arg), "grad": encode(arg.grad)}
    if isinstance(arg, nn.Module):
        return {
            "module": [[name, {"values": encode(p), "grad": encode(p.grad)}] for name, p in arg.named_parameters()]
            + [[name, {"values": encode(b), "grad": None}] for name, b in arg.named_buffers()]
        }
    if isinstance(arg, (list, tuple)) and any(isinstance(a, (torch.Tensor, nn.Module)) for a in arg):
        return {"seq": [_state(a) for a in arg]}
    return None


# ---------------------------------------------------------------------------------------------- 解码
class _Decoder:
    """解码不可信的记录：只认模块说明里的几种形状，值的个数与嵌套深度都有上限。"""

    def __init__(self) -> None:
        self.items = 0

    def _count(self, n: int = 1) -> None:
        self.items += n
        if self.items > MAX_ITEMS:
            raise RecordingError("记录里的值太多")

    def value(self, data: Any, depth: int = 0) -> Any:
        self._count()
        if depth > MAX_DEPTH:
            raise RecordingError("记录嵌套太深")
        if data is None or isinstance(data, (bool, int, float)):
            return data
        if isinstance(data, str):
            if len(data) > MAX_TEXT:
                raise RecordingError("记录里的字符串太长")
            return data
        if isinstance(data, list):
            return [self.value(v, depth + 1) for v in data]
        if not (isinstance(data, dict) and len(data) == 1):
            raise RecordingError("记录里有不认识的值")
        (kind, body), = data.items()
        if kind == "float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if kind == "tuple" and isinstance(body, list):
            return tuple(self.value(v, depth + 1) for v in body)
        if kind == "dict" and isinstance(body, list):
            pairs = [self._pair(p, depth) for p in body]
            return dict(pairs)
        if kind == "tensor" and isinstance(body, dict):
            return self.tensor(body)
        if kind == "object" and isinstance(body, str) and _NAME.fullmatch(body):
            return _opaque(body)
        raise RecordingError("记录里有不认识的值")

    def _pair(self, pair: Any, depth: int) -> tuple:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise RecordingError("字典的记录不合规定")
        key = self.value(pair[0], depth + 1)
        try:
            hash(key)
        except TypeError:
            raise RecordingError("字典的键不能是列表或张量") from None
        return key, self.value(pair[1], depth + 1)

    def tensor(self, body: dict) -> torch.Tensor | Any:
        if set(body) == {"unsupported"}:
            return _opaque("Tensor")
        try:
            dtype = DTYPES[body["dtype"]]
            shape = [int(s) for s in body["shape"]]
            raw = base64.b64decode(body["data"], validate=True)
            requires_grad, grad_fn = bool(body["requires_grad"]), body["grad_fn"]
        except (KeyError, TypeError, ValueError):
            raise RecordingError("张量的记录不合规定") from None
        numel = math.prod(shape)
        if any(s < 0 for s in shape) or len(shape) > 16:
            raise RecordingError("张量的形状不合规定")
        self._count(numel)
        itemsize = torch.empty((), dtype=dtype).element_size()
        if len(raw) != numel * itemsize:
            raise RecordingError("张量的数据与形状对不上")
        t = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape).clone() if numel else (
            torch.empty(shape, dtype=dtype)
        )
        if grad_fn is not None and not (isinstance(grad_fn, str) and _NAME.fullmatch(grad_fn)):
            raise RecordingError("张量的记录不合规定")
        if requires_grad and (t.is_floating_point() or t.is_complex()):
            t = _with_graph(t, grad_fn)
        return t

    def state(self, data: Any) -> Any:
        if data is None:
            return None
        if not isinstance(data, dict):
            raise RecordingError("参数状态的记录不合规定")
        if set(data) == {"values", "grad"}:
            return {"values": self.value(data["values"]), "grad": self.value(data["grad"])}
        if "module" in data and isinstance(data["module"], list):
            return {"module": [(str(n), self.state(s)) for n, s in (self._named(e) for e in data["module"])]}
        if "seq" in data and isinstance(data["seq"], list):
            return {"seq": [self.state(s) for s in data["seq"]]}
        raise RecordingError("参数状态的记录不合规定")

    @staticmethod
    def _named(entry: Any) -> tuple:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise RecordingError("模块状态的记录不合规定")
        return entry[0], entry[1]


def _opaque(name: str) -> Any:
    """一个类型名与学生返回的对象相同的空对象：检查说“你返回的是 X”时说得对。"""
    return type(name, (), {"__repr__": lambda self: f"<{name}>"})()


def _with_graph(t: torch.Tensor, grad_fn: str | None) -> torch.Tensor:
    """重放的张量在计算图上的样子：叶子张量，或者由一次与记录同类的运算得到（索引 → 索引，其余 → 乘法）。"""
    leaf = t.detach().requires_grad_(True)
    if grad_fn is None:
        return leaf
    if "Index" in grad_fn and leaf.dim() > 0:
        return leaf[torch.arange(leaf.shape[0])]
    return leaf * 1


def decode(data: Any) -> Any:
    return _Decoder().value(data)


# ---------------------------------------------------------------------------------------------- 记录
class _Spy:
    """包住作为参数传给学生函数的函数（例如 ``measure``），记下学生用什么参数调用了它。"""

    def __init__(self, fn: Callable, log: list) -> None:
        self.fn, self.log = fn, log

    def __call__(self, *args):
        self.log.append([encode(a) for a in args])
        return self.fn(*args)


def _is_callback(arg: Any) -> bool:
    return callable(arg) and not isinstance(arg, (type, nn.Module, torch.Tensor))


def _builtin_exception(err: BaseException) -> str:
    """异常类型在 Python 内置异常里的名字（学生自己定义的异常类记为它最近的内置祖先）。"""
    for cls in type(err).__mro__:
        if getattr(builtins, cls.__name__, None) is cls:
            return cls.__name__
    return "Exception"


class _Recorder:
    """代替学生的函数交给检查：调用真正的函数，并把每次调用的效果记下来。"""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.calls: list[dict[str, Any]] = []

    def __call__(self, *args):
        callbacks: list = []
        spied = [_Spy(a, callbacks) if _is_callback(a) else a for a in args]
        entry: dict[str, Any] = {"callbacks": callbacks}
        self.calls.append(entry)
        before = [_state(a) for a in args]
        try:
            # 学生函数用掉的随机数不改变检查接下来的输入；顺便数它自己调用了多少次张量运算
            with torch.random.fork_rng(devices=[]), TorchTrace() as trace:
                result = self.fn(*spied)
            entry["torch_calls"] = dict(trace.calls)
            entry["hidden_ops"] = trace.hidden
        except CheckFailed:
            entry["raised"] = "CheckFailed"  # 来自检查的回调（例如测得太多次）；重放时由回调自己再抛一次
            raise
        except Exception as err:
            entry["raised"] = _builtin_exception(err)
            raise
        finally:  # 只记下真的被改动了的参数
            entry["after"] = [s if s != b else None for s, b in zip(map(_state, args), before)]
        entry["result"] = encode(result)
        return result

    def traced_call(self, *args) -> tuple:
        result = self(*args)
        return result, TorchTrace(self.calls[-1]["torch_calls"], self.calls[-1]["hidden_ops"])


def record(check: Any, answers: list[Any]) -> dict:
    """在学生的进程里运行检查，记下学生答案的效果；检查的结论不要。``check`` 是 ``@checker`` 包装后的函数。"""
    recorders = [_Recorder(a) if callable(a) and not isinstance(a, type) else None for a in answers]
    raw = check.__wrapped__
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        try:
            raw(*[r if r is not None else a for r, a in zip(recorders, answers)])
        except Exception:  # noqa: BLE001 —— 这里只记录；对错由 judge 在评分程序里判
            pass
    return {
        "answers": [
            {"calls": r.calls} if r is not None else {"value": encode(a)} for r, a in zip(recorders, answers)
        ]
    }


_FRESH: dict[str, Any] = {}


def fresh_checker(module: str, name: str) -> Any:
    """从磁盘重新导入一份本书的库，取出其中的检查函数；笔记本自己的那份（可能被改写过）原样留给笔记本。

    学生的代码若改写了本书的库（例如让模型的某个方法返回别的数），沙箱里的这一遍检查仍按原版的库运行，
    于是它调用学生函数的次数与参数和评分程序里那一遍一样，记录才对得上。
    """
    if module not in _FRESH:
        book = [m for m in sys.modules if m == "seqlab" or m.startswith("seqlab.")]
        theirs = {m: sys.modules.pop(m) for m in book}
        try:
            _FRESH[module] = importlib.import_module(f"seqlab.exercises.{module}")
        finally:
            for m in [m for m in sys.modules if m == "seqlab" or m.startswith("seqlab.")]:
                del sys.modules[m]
            sys.modules.update(theirs)
    return getattr(_FRESH[module], name)


def save(module: str, name: str, names: list[str], namespace: dict, path: str) -> None:
    """沙箱里每道题的记录单元格调用它：从笔记本的全局变量里取出答案，用重新导入的原版检查记录，写到 ``path``。"""
    missing = [n for n in names if n not in namespace]
    data = {"missing": missing} if missing else record(fresh_checker(module, name), [namespace[n] for n in names])
    text = json.dumps(data, ensure_ascii=False)
    Path(path).write_text(text[: MAX_RECORDING_BYTES + 1], encoding="utf-8")


# ---------------------------------------------------------------------------------------------- 重放
class _Replayer:
    """代替学生的函数交给评分程序里的检查：按顺序交回记录下的每次调用的效果。"""

    def __init__(self, calls: list) -> None:
        self.calls, self.next = calls, 0

    def __call__(self, *args):
        if self.next >= len(self.calls):
            raise CheckFailed("评分时没有记录到这次调用的结果：你的函数在沙箱里运行超时、中途退出，或者记录被改动过。")
        entry = self.calls[self.next]
        self.next += 1
        if not isinstance(entry, dict):
            raise RecordingError("调用的记录不合规定")
        callbacks = [a for a in args if _is_callback(a)]
        stopped = self._replay_callbacks(callbacks, entry.get("callbacks", []))
        self._restore(args, entry.get("after", []))
        raised = entry.get("raised")
        if raised is not None:
            if raised == "CheckFailed" and stopped is not None:
                raise stopped
            cls = getattr(builtins, raised, None) if isinstance(raised, str) else None
            if not (isinstance(cls, type) and issubclass(cls, Exception)):
                cls = Exception
            raise cls(REPLAYED_MESSAGE)
        if "result" not in entry:
            raise RecordingError("调用的记录不合规定")
        return decode(entry["result"])

    def traced_call(self, *args) -> tuple:
        result = self(*args)
        calls = self.calls[self.next - 1].get("torch_calls")
        hidden = self.calls[self.next - 1].get("hidden_ops")
        if not (
            isinstance(hidden, int) and not isinstance(hidden, bool) and hidden >= 0
            and isinstance(calls, dict)
            and len(calls) <= 1000
            and all(isinstance(k, str) and _OP.fullmatch(k) for k in calls)
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in calls.values())
        ):
            raise RecordingError("张量运算的记录不合规定")
        return result, TorchTrace(calls, hidden)

    @staticmethod
    def _replay_callbacks(callbacks: list, log: Any) -> CheckFailed | None:
        """学生的函数调用过的回调，在这里用同样的参数再调用一遍（回调是检查自己的代码）。"""
        if not isinstance(log, list):
            raise RecordingError("回调的记录不合规定")
        if log and len(callbacks) != 1:
            raise RecordingError("回调的记录不合规定")
        for args in log:
            if not isinstance(args, list):
                raise RecordingError("回调的记录不合规定")
            try:
                callbacks[0](*[decode(a) for a in args])
            except CheckFailed as err:
                return err
        return None

    def _restore(self, args: tuple, states: Any) -> None:
        """把记录下的原地修改写回评分程序里的同一个参数（形状或类型对不上的记录当作不合规定）。"""
        if not isinstance(states, list) or len(states) != len(args):
            raise RecordingError("参数状态的记录不合规定")
        for arg, data in zip(args, states):
            _apply(arg, _Decoder().state(data))


def _apply(arg: Any, state: Any) -> None:
    if state is None:
        return
    try:
        if "values" in state and isinstance(arg, torch.Tensor):
            _assign(arg, state["values"], state["grad"])
        elif "module" in state and isinstance(arg, nn.Module):
            tensors = dict(arg.named_parameters()) | dict(arg.named_buffers())
            for name, s in state["module"]:
                _assign(tensors[name], s["values"], s["grad"])
        elif "seq" in state and isinstance(arg, (list, tuple)) and len(arg) == len(state["seq"]):
            for a, s in zip(arg, state["seq"]):
                _apply(a, s)
        else:
            raise RecordingError("参数状态的记录不合规定")
    except (KeyError, RuntimeError, TypeError) as err:
        raise RecordingError("参数状态的记录与参数对不上") from err


def _assign(t: torch.Tensor, values: Any, grad: Any) -> None:
    if not isinstance(values, torch.Tensor) or values.shape != t.shape:
        raise RecordingError("参数状态的记录与参数对不上")
    with torch.no_grad():
        t.copy_(values)
    if t.requires_grad:
        t.grad = grad.detach() if isinstance(grad, torch.Tensor) else None


def judge(check: Any, data: Any) -> CheckResult:
    """在评分程序里判一道题：同一个检查，学生的函数换成重放器。``data`` 是 :func:`save` 写下的（不可信的）记录。"""
    if isinstance(data, dict) and isinstance(data.get("missing"), list):
        names = [n for n in data["missing"] if isinstance(n, str) and _NAME.fullmatch(n)]
        return CheckResult(check.exercise, False, f"笔记本里没有定义 {'、'.join(names) or '答案'}：定义它的单元格被删除或改名了？")
    try:
        answers = data["answers"] if isinstance(data, dict) else None
        if not isinstance(answers, list):
            raise RecordingError("没有答案的记录")
        stubs = []
        for answer in answers:
            if isinstance(answer, dict) and isinstance(answer.get("calls"), list):
                stubs.append(_Replayer(answer["calls"]))
            elif isinstance(answer, dict) and "value" in answer:
                stubs.append(decode(answer["value"]))
            else:
                raise RecordingError("答案的记录不合规定")
    except RecordingError as err:
        return CheckResult(check.exercise, False, str(err))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return check(*stubs)
