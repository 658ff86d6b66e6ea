"""练习的自动检查。

每个检查函数用 ``@checker`` 登记，附上难度、预计用时和它练习的学习目标。检查函数里用
``expect(条件, 中文说明)`` 或 ``fail(中文说明)`` 指出学生的答案哪里不对；包装器会把结果
变成一个 ``CheckResult``：在笔记本里显示为 ✅ / ❌ 加一句解释，**不抛异常**，所以没做完的
练习不会打断“全部运行”。

环境变量 ``SEQLAB_STRICT_CHECKS=1`` 时（CI 执行完整版笔记本、构建网站时），**答错**的检查抛出
``AssertionError``——完整版里每个参考答案后面的检查必须通过；**还没做完**的练习（起始代码里的
``NotImplementedError``、仍是 ``None`` 的答案）在严格模式下也只显示 ❌：完整版里紧跟起始代码的那一格检查
判的就是读者自己写的代码，参考答案在它之后。

各节的检查在 ``seqlab.exercises.sec01`` … ``sec06`` 里。
"""

from __future__ import annotations

import collections
import contextlib
import functools
import html
import inspect
import math
import os
import re
import subprocess
import sys
import sysconfig
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NoReturn

import torch
from torch.utils._python_dispatch import TorchDispatchMode

PASS_MARK = "✅"
FAIL_MARK = "❌"


class CheckFailed(Exception):
    """检查未通过；消息是给学生看的中文说明。"""


class Unfinished(CheckFailed):
    """答案还没有写（仍是 ``None``）：严格模式下也不抛出。"""


def fail(message: str) -> NoReturn:
    raise CheckFailed(message)


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def expect_tensor(value, what: str = "返回值") -> torch.Tensor:
    """学生返回的 ``value`` 必须是张量，否则说明收到的是什么类型；是张量就交回同一份数据的普通张量
    （张量的子类可以改写比较运算，检查只和普通张量比）。评分时重放的结果本来就是普通张量。"""
    if not isinstance(value, torch.Tensor):
        fail(f"「{what}」应该是 torch.Tensor，你返回的是 {type(value).__name__}。")
    if type(value) is torch.Tensor:
        return value
    with torch._C.DisableTorchFunctionSubclass():
        return torch.Tensor.as_subclass(value, torch.Tensor)


def expect_number(value, what: str = "返回值", *, integer: bool = False) -> float:
    """学生返回的 ``value`` 必须能转换成一个数（``integer=True`` 时转换成整数），否则说明收到的是什么。"""
    try:
        return int(value) if integer else float(value)
    except (TypeError, ValueError):
        fail(f"{what}应该是一个{'整数' if integer else '数'}，但你给的是 {type(value).__name__}：{value!r}")


def expect_close(got, want, what: str, *, tol: float = 1e-6) -> None:
    """比较两个实数（或可以转换成实数的对象），不符时说出期望值和实际值。"""
    got_f = expect_number(got, what)
    if not math.isfinite(got_f):
        fail(f"{what}是 {got_f}，不是有限的数。")
    if not math.isclose(got_f, float(want), rel_tol=tol, abs_tol=tol):
        fail(f"{what}应为 {float(want):.6g}，你的结果是 {got_f:.6g}。")


@dataclass(frozen=True)
class Exercise:
    """一道练习的元数据（网站和笔记本里都会显示）。"""

    key: str
    title: str
    objective: str
    difficulty: int  # 1 = 基础，2 = 进阶，3 = 挑战
    minutes: int

    @property
    def stars(self) -> str:
        return "★" * self.difficulty + "☆" * (3 - self.difficulty)


@dataclass(frozen=True)
class CheckResult:
    exercise: Exercise
    passed: bool
    message: str
    unfinished: bool = False  # 还没有做完（不是做错）

    def __bool__(self) -> bool:
        return self.passed

    def _text(self) -> str:
        mark = PASS_MARK if self.passed else FAIL_MARK
        return f"{mark} 练习 {self.exercise.key}「{self.exercise.title}」：{self.message}"

    def __repr__(self) -> str:
        return self._text()

    def _repr_html_(self) -> str:
        color = "#2e7d4f" if self.passed else "#b5485d"
        return (
            f'<div class="seqlab-check" style="border-left:4px solid {color};padding:4px 10px;">'
            f"{html.escape(self._text())}</div>"
        )


EXERCISES: dict[str, Exercise] = {}
EXERCISE_OWNERS: dict[str, tuple[str, str]] = {}  # 编号 → 登记它的检查函数（模块, 名字）


def strict() -> bool:
    return os.environ.get("SEQLAB_STRICT_CHECKS", "") == "1"


def checker(key: str, title: str, *, objective: str, difficulty: int, minutes: int, passed: str = "正确！"):
    """把一个“会在答案不对时调用 ``fail``”的函数变成友好的检查函数。"""
    exercise = Exercise(key, title, objective, difficulty, minutes)

    def wrap(check: Callable[..., str | None]):
        # 同一个检查函数重新登记（``importlib.reload`` 之后）以新者为准；两个不同的函数用同一个编号才是错误
        owner = (check.__module__, check.__qualname__)
        if EXERCISE_OWNERS.setdefault(key, owner) != owner:
            raise ValueError(f"练习编号重复：{key}")
        EXERCISES[key] = exercise

        @functools.wraps(check)
        def run(*args, **kwargs) -> CheckResult:
            try:
                with torch.random.fork_rng(devices=[]):  # 检查用自己的随机数，不改动笔记本里的全局随机数
                    detail = check(*args, **kwargs)
                result = CheckResult(exercise, True, detail or passed)
            except Unfinished as err:
                result = CheckResult(exercise, False, str(err), unfinished=True)
            except CheckFailed as err:
                result = CheckResult(exercise, False, str(err))
            except NotImplementedError:
                result = CheckResult(
                    exercise, False, "还没有完成：请把代码里的 NotImplementedError 换成你的实现。", unfinished=True
                )
            except Exception as err:  # noqa: BLE001 —— 学生代码里的任何错误都变成说明
                result = CheckResult(exercise, False, f"你的代码运行时出错：{type(err).__name__}: {err}")
            if strict() and not result.passed and not result.unfinished:
                raise AssertionError(result._text())
            return result

        run.exercise = exercise  # type: ignore[attr-defined]  # 给包装后的函数挂上它检查的练习
        return run

    return wrap


class TorchTrace(torch.overrides.TorchFunctionMode):
    """记下 ``with`` 块里调用了哪些张量运算、各几次（取下标、乘法、``torch.softmax``……各算一次）。

    只记最外层的调用（一个运算内部再调用的运算不重复计数）。名字是函数的限定名：``torch.softmax`` 记作
    ``softmax``，张量的方法记作 ``TensorBase.softmax`` 之类，``F.embedding`` 记作 ``embedding``。
    ``hidden`` 数的是绕开了这份记录的底层运算（例如在 ``torch._C.DisableTorchFunction()`` 里算的）：
    它们在分派层（``TorchDispatchMode``）照样看得见，只是不属于任何一次记下的调用；另开线程、子进程也算
    （记录只看得见本进程的本线程）。
    """

    def __init__(self, calls: dict[str, int] | None = None, hidden: int = 0):
        super().__init__()
        self.calls: collections.Counter[str] = collections.Counter(calls or {})
        self.hidden = hidden
        self._frames: list = []  # 正在执行的、记下了的调用（各自的栈帧），外层在前
        self._watch = _HiddenOps(self)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls[getattr(func, "__qualname__", None) or getattr(func, "__name__", "运算")] += 1
        self._frames.append(sys._getframe())
        try:
            return func(*args, **(kwargs or {}))
        finally:
            self._frames.pop()

    def __enter__(self):
        # 记录只看得见本进程的本线程：另开线程或子进程都算作绕开了记录
        self._saved = [(owner, name, getattr(owner, name)) for owner, name in _ELSEWHERE if hasattr(owner, name)]
        for owner, name, original in self._saved:
            setattr(owner, name, self._counting(original))
        self._watch.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            self._watch.__exit__(*exc)
            for owner, name, original in self._saved:
                setattr(owner, name, original)

    def _counting(self, original):
        def counted(*args, **kwargs):
            self.hidden += 1
            return original(*args, **kwargs)

        return counted

    @property
    def count(self) -> int:
        return sum(self.calls.values())

    def used(self, *names: str) -> list[str]:
        """调用过的运算里，名字（或按 ``.`` 与 ``::`` 切开后的某一段）在 ``names`` 里的那些：
        ``used("gru_cell")`` 认得 ``gru_cell``、``TensorBase.gru_cell`` 与 ``aten::gru_cell.default``。"""
        return sorted(n for n in self.calls if n in names or any(part in names for part in re.split(r"\.|::", n)))


# PyTorch 自己、标准库、已安装的包与本模块的代码：记下的调用途中执行它们不算“回头执行别处的代码”
_TRUSTED_CODE = tuple({os.path.dirname(torch.__file__), os.path.dirname(__file__), "<frozen ",
                       *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib"))})
# 在别处（另一个线程、另一个进程）运行代码的入口：记录期间调用它们，就算绕开了记录
_ELSEWHERE = [(threading.Thread, "start"), (subprocess.Popen, "__init__"), (os, "fork"), (os, "system"),
              (os, "posix_spawn"), (os, "posix_spawnp")]


class _HiddenOps(TorchDispatchMode):
    """分派层的每一个底层运算：不在任何一次记下的调用里面的，就算作绕开了记录。

    只搬数据、不做计算的几个例外：``torch.from_numpy``、``torch.Tensor(数组)`` 不经过记录，
    它们在分派层只留下把数组“抬”成张量、复制成另一种 dtype 的运算。"""

    DATA_ONLY = frozenset({"lift_fresh", "lift", "lift_fresh_copy", "_to_copy"})

    def _outside_any_call(self) -> bool:
        """这个底层运算不属于任何一次记下的调用：不在调用里面，或者虽在里面、却是调用途中回头执行的
        别处的代码（例如 ``torch.tensor(对象)`` 读对象的 ``__len__`` 时）算的——从这里沿栈往上走到
        那次调用，途中出现 PyTorch、标准库、已安装的包与本模块以外的代码，就是后一种。"""
        if not self.trace._frames:
            return True
        frame: types.FrameType | None = sys._getframe(2)
        call = self.trace._frames[-1]
        while frame is not None and frame is not call:
            name = frame.f_code.co_filename
            if not name.startswith(_TRUSTED_CODE):
                return True
            frame = frame.f_back
        return False

    def __init__(self, trace: TorchTrace) -> None:
        super().__init__()
        self.trace = trace

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ not in self.DATA_ONLY and self._outside_any_call():
            self.trace.hidden += 1
        return func(*args, **(kwargs or {}))


def _entry_dispatch(x):
    return (x,)


@torch.overrides.wrap_torch_function(_entry_dispatch)
def library_entry_point(x):
    """一个什么也不做的“运算”：``entry_points_watched`` 看着的函数一开始执行，就调用它一次，
    于是它出现在张量运算的记录里（评分时随记录一起重放，学生清不掉）。"""
    return x


@contextlib.contextmanager
def entry_points_watched(functions) -> Iterator[None]:
    """学生的函数运行期间用：``functions`` 里任何一个开始执行，就留下一次 ``library_entry_point`` 的记录，
    检查用 ``trace.used("library_entry_point")`` 认出“用了题目不许用的现成实现”。

    认的是代码本身（源文件与限定名，``sys.setprofile``），所以事先存进变量的函数、绑定方法、装饰器里面的那一层、
    重新载入的模块副本里的同名函数也一样认得出。只看得见本线程：别的线程已经算作绕开了记录。"""
    targets = set()
    for function in functions:
        code = inspect.unwrap(function).__code__
        targets.add((code.co_filename, code.co_qualname))
    token = torch.zeros(())

    def profile(frame, event, arg):
        if event == "call" and (frame.f_code.co_filename, frame.f_code.co_qualname) in targets:
            library_entry_point(token)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


HIDDEN_OPS_MESSAGE = ("检查需要看到你的函数调用了哪些张量运算，可是有些运算绕开了这份记录"
                      "（例如写在 torch._C.DisableTorchFunction() 里，或者放到另一个线程、另一个进程里算）。请去掉这样的写法。")


def op_name(name: str) -> str:
    """运算记录里的名字只留运算本身：``TensorBase.mul`` → ``mul``，``aten::softmax.int``、``aten.cumsum.default`` →
    ``softmax``、``cumsum``。"""
    parts = re.split(r"\.|::", name)
    return parts[parts.index("aten") + 1] if "aten" in parts[:-1] else parts[-1]


def call_tracing_torch(fn, *args) -> tuple:
    """调用学生写的函数，同时记下它调用了哪些张量运算，返回 ``(结果, TorchTrace)``；有运算绕开了记录就判错。

    评分时学生的函数换成了记录器或重放器（``seqlab.exercises.recording``），由它们只记学生函数自己的运算。
    """
    traced = getattr(fn, "traced_call", None)
    if traced is not None:
        result, trace = traced(*args)
    else:
        with TorchTrace() as trace:
            result = call(fn, *args)
    if trace.hidden:
        fail(HIDDEN_OPS_MESSAGE)
    return result, trace


def call(fn, *args):
    """调用学生写的函数；如果学生还没有写（``None``），给出清楚的提示。"""
    if fn is None:
        raise Unfinished("还没有完成：答案仍然是 None。")
    if not callable(fn):
        fail(f"这里需要一个函数，但你给的是 {type(fn).__name__}。")
    return fn(*args)
