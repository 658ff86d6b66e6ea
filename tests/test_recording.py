"""评分的记录与重放（seqlab.exercises.recording）：重放的判定与直接检查一致；伪造的记录只会让这道题不计分。"""

from __future__ import annotations

import json
import math
import subprocess
import threading

import numpy as np
import pytest
import torch
from torch import nn

from seqlab import exercises
from seqlab.exercises import recording, sec01, sec03, sec04, sec05
from test_checkers_sec05 import _scan  # 练习 1.5.4 的一个正确答案（倍增扫描），与那里的检查测试共用


def _roundtrip(check, *answers):
    data = json.loads(json.dumps(recording.record(check, list(answers))))
    return recording.judge(check, data)


def _direct(check, *answers):
    return check(*answers)


def _right(model, text):
    return sum(math.log(model.prob(ch, text[:t])) for t, ch in enumerate(text))


def _loop(a, b):
    h, prev = [], torch.zeros_like(b[0])
    for t in range(a.shape[0]):
        prev = a[t] * prev + b[t]
        h.append(prev)
    return [b] + [torch.stack(h)] * (a.shape[0] - 1).bit_length()  # 只报告了轮数，没有真的做


_START, _POPEN = threading.Thread.start, subprocess.Popen.__init__


class _SneakySequence:
    """``torch.tensor`` 把它当作序列读：读长度的时候顺便算了一次 softmax。"""

    def __len__(self):
        torch.softmax(torch.ones(3), 0)
        return 1

    def __getitem__(self, i):
        if i:
            raise IndexError
        return 1.0


def _hidden_softmax(scores):
    with torch._C.DisableTorchFunction():
        return torch.softmax(scores, -1)


CASES = [
    (sec01.check_sentence_log_prob, [_right]),
    (sec01.check_sentence_log_prob, [lambda model, text: 42.0]),
    (sec01.check_sentence_log_prob, [lambda model, text: math.exp(_right(model, text))]),
    (sec01.check_sentence_log_prob, [None]),
    (sec01.check_sentence_log_prob, [lambda model, text: (_ for _ in ()).throw(NotImplementedError())]),
    (sec01.check_perplexity, [lambda probs: math.exp(-sum(map(math.log, probs)) / len(probs))]),
    (sec01.check_perplexity, [lambda probs: "困惑度"]),
    # 原地修改参数（p.grad）与返回值一起判
    (sec03.check_clip_gradients, [lambda params, max_norm: float(nn.utils.clip_grad_norm_(params, max_norm))]),
    (sec03.check_clip_gradients, [lambda params, max_norm: float(torch.cat([p.grad.flatten() for p in params]).norm())]),
    # 学生调用检查给的 measure（回调）：重放时评分程序用同样的参数再调用一次
    (sec05.check_first_length_over, [lambda measure, budget: next(s for s in range(1, 10_000) if measure(s) > budget)]),
    (sec05.check_first_length_over, [lambda measure, budget: 7]),
    # 学生函数调用了哪些张量运算（逐位置的循环要几百次）：在沙箱里记下，重放时交给检查
    (sec05.check_linear_scan, [_scan]),
    (sec05.check_linear_scan, [_loop]),
    # 直接调用 PyTorch 的算子（名字是 aten::softmax.int、一长串的 pybind 限定名）：照样记录，由检查判定
    (sec04.check_context, [lambda e, H: (torch.ops.aten.softmax.int(e, 0), torch.ops.aten.softmax.int(e, 0) @ H)]),
    (sec05.check_self_attention, [lambda X, W_Q, W_K, W_V: torch.ops.aten._scaled_dot_product_attention_math(
        X @ W_Q, X @ W_K, X @ W_V)[0]]),
    # 把运算藏到记录之外（DisableTorchFunction）：分派层照样看得见，重放时同样判错
    (sec05.check_self_attention, [lambda X, W_Q, W_K, W_V: _hidden_softmax(X @ W_Q @ (X @ W_K).T / W_K.shape[1] ** 0.5)
                                  @ (X @ W_V)]),
]


@pytest.mark.parametrize(("check", "answers"), CASES, ids=lambda x: getattr(x, "__name__", "answers"))
def test_replayed_verdict_equals_the_direct_check(check, answers, monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    direct, replayed = _direct(check, *answers), _roundtrip(check, *answers)
    assert (replayed.passed, replayed.unfinished) == (direct.passed, direct.unfinished)
    assert replayed.message == direct.message


def test_a_recording_carries_no_text_from_the_students_exception(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")

    def leaky(model, text):
        raise KeyError("机密：答案是 -11.68")

    data = recording.record(sec01.check_sentence_log_prob, [leaky])
    assert "机密" not in json.dumps(data, ensure_ascii=False)
    result = recording.judge(sec01.check_sentence_log_prob, data)
    assert not result.passed and "KeyError" in result.message and "机密" not in result.message


def test_custom_exception_classes_are_named_by_their_builtin_ancestor():
    class 机密_answer_is_42(ValueError):  # 学生可以用类名夹带文字
        pass

    data = recording.record(sec01.check_perplexity, [lambda probs: (_ for _ in ()).throw(机密_answer_is_42())])
    assert "机密" not in json.dumps(data, ensure_ascii=False)
    assert data["answers"][0]["calls"][0]["raised"] == "ValueError"


FORGED = [
    None,
    [],
    {"answers": "全对"},
    {"answers": [{"value": {"tensor": {"dtype": "float64", "shape": [10**9], "data": "", "requires_grad": False, "grad_fn": None}}}]},
    {"answers": [{"calls": [{"result": {"tensor": {"dtype": "float64", "shape": [2], "data": "AAAA", "requires_grad": False, "grad_fn": None}}}]}]},
    {"answers": [{"calls": [{"result": {"eval": "__import__('os').system('true')"}}]}]},
    {"answers": [{"calls": [{"result": 1.0, "after": "x"}]}]},
    {"answers": [{"calls": [{"raised": "SystemExit"}]}]},
    {"answers": [{"calls": [{"result": "x" * 20_000}]}]},
    {"answers": [{"value": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]},
    {"missing": ["<script>", "sentence_log_prob"]},
]


@pytest.mark.parametrize("data", FORGED, ids=range(len(FORGED)))
def test_forged_recordings_earn_nothing_and_raise_nothing(data, monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    result = recording.judge(sec01.check_sentence_log_prob, data)
    assert isinstance(result, exercises.CheckResult) and not result.passed
    assert "<script>" not in result.message and "__import__" not in result.message


def test_tensors_round_trip_bit_for_bit_with_their_graph_kind():
    g = torch.Generator().manual_seed(0)
    for t in [torch.randn(3, 4, generator=g, dtype=torch.float64), torch.arange(5), torch.tensor(True),
              torch.randn(2, generator=g).to(torch.bfloat16), torch.empty(0, 3)]:
        back = recording.decode(json.loads(json.dumps(recording.encode(t))))
        assert back.dtype == t.dtype and back.shape == t.shape and torch.equal(back, t)
    leaf = torch.randn(4, 2, generator=g, requires_grad=True)
    for made, kind in [(leaf[torch.tensor([1, 2])], "Index"), (leaf @ torch.eye(2), "Mm")]:
        back = recording.decode(recording.encode(made))
        assert back.requires_grad and (kind == "Index") == ("Index" in type(back.grad_fn).__name__)
    assert recording.decode(recording.encode({1: (2.5, None, "字")})) == {1: (2.5, None, "字")}
    assert math.isnan(recording.decode(recording.encode(float("nan"))))


def test_the_trace_names_an_operation_however_it_was_called():
    """``used`` 认得同一个运算的各种叫法：函数、张量的方法、torch.ops 里带重载名的算子。"""
    x, h = torch.randn(1, 3), torch.randn(1, 4)
    w_ih, w_hh = torch.randn(12, 3), torch.randn(12, 4)
    for call in (lambda: torch.gru_cell(x, h, w_ih, w_hh), lambda: torch.ops.aten.gru_cell.default(x, h, w_ih, w_hh)):
        with exercises.TorchTrace() as trace:
            call()
        assert trace.used("gru_cell") and not trace.used("gru")
    with exercises.TorchTrace() as trace:
        x.softmax(0), torch.ops.aten.softmax.int(x, 0)
    assert trace.used("softmax") == ["TensorBase.softmax", "aten::softmax.int"]


def test_operations_hidden_from_the_trace_are_counted_and_fail_the_check(monkeypatch):
    monkeypatch.setenv("SEQLAB_STRICT_CHECKS", "0")
    x = torch.randn(3, 4, requires_grad=True)
    with exercises.TorchTrace() as trace:
        (x.exp() @ torch.ones(4)).sum().backward()  # 反向传播的底层运算属于记下的那次 backward
    assert trace.hidden == 0 and trace.count == 5
    with exercises.TorchTrace() as trace:  # 从 NumPy 数组来的张量：只搬数据，不算绕开
        torch.from_numpy(np.ones(3)).float() @ torch.Tensor(np.ones(3))
    assert trace.hidden == 0
    with exercises.TorchTrace() as trace:
        with torch._C.DisableTorchFunction():
            torch.softmax(x, -1)
    assert trace.hidden > 0 and not trace.used("softmax")
    with exercises.TorchTrace() as trace:  # 另开的线程看不见：也算绕开
        worker = threading.Thread(target=torch.softmax, args=(x, -1))
        worker.start(), worker.join()
    assert trace.hidden == 1 and threading.Thread.start is _START
    with exercises.TorchTrace() as trace:  # torch.tensor 读序列的长度时回头执行的代码，记录也看不见
        torch.tensor(_SneakySequence())
    assert trace.hidden > 0 and not trace.used("softmax")
    with exercises.TorchTrace() as trace:  # 子进程也看不见
        subprocess.run(["true"], check=True)
    assert trace.hidden == 1 and subprocess.Popen.__init__ is _POPEN
    for result in (_direct(sec05.check_linear_scan, _hidden_loop), _roundtrip(sec05.check_linear_scan, _hidden_loop)):
        assert not result.passed and "DisableTorchFunction" in result.message


def _hidden_loop(a, b):
    with torch._C.DisableTorchFunction():
        return _loop(a, b)


class _Liar(torch.Tensor):
    """一个改写了比较的张量子类：和谁比都说“相等”。"""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.equal):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def test_a_tensor_subclass_cannot_lie_to_the_comparisons():
    liar = torch.zeros(3).as_subclass(_Liar)
    assert torch.allclose(liar, torch.ones(3))
    plain = exercises.expect_tensor(liar)
    assert type(plain) is torch.Tensor and not torch.allclose(plain, torch.ones(3))
