"""网页实时面的说明与 JS 模块对得上：两副面孔不会悄悄分道扬镳。

浏览器里的计算与 Python 的逐项对照在 ``tests/js/live.test.mjs``（``make test-js``，node 自带的测试运行器），
在真实浏览器里的检查在 ``tests/test_browser.py``。这里只检查不需要 node 的部分。
"""

import json
import random
import re
from pathlib import Path

import pytest
import torch

from seqlab import explorers, states
from seqlab.explorers import web
from seqlab.figures import figure_html

LIVE = Path(__file__).resolve().parent.parent / "assets" / "live"
WEB = [e for e in explorers.all_explorers() if e.web is not None]
# 打开“实时计算”时下载的说明（参数、常量、默认状态的图）。最大的是第 1.6 节训练好的 Transformer：
# 69,781 个 float32 权重（279 KB）写成 base64 约 373 KB，不损失精度就没法更小
SPEC_BUDGET_BYTES = 400_000
# 例外：第 1.4、1.6 节的注意力权重要三个检查点（Bahdanau 注意力、对照用的固定上下文模型、编码器—解码器
# Transformer，共 372,025 个 float32 权重，1.49 MB）写成 base64 约 2.0 MB；第 1.6 节逐步生成的小 GPT 有 115,576 个
# float32 权重（462 KB），写成 base64 约 617 KB。都只在打开“实时计算”时下载，仍在一节 5 MB 的预算之内
SPEC_BUDGETS = {"attention_weights": 2_100_000, "cross_attention_weights": 2_100_000, "gpt_steps": 700_000}


def declared_params(module: Path) -> list[str]:
    """JS 模块里 ``export const PARAMS = [...]`` 声明的参数名。"""
    match = re.search(r"export const PARAMS = (\[[^\]]*\]);", module.read_text(encoding="utf-8"))
    assert match, f"{module.name} 没有导出 PARAMS"
    return json.loads(match.group(1))


def test_every_explorer_is_live_on_the_web():
    assert {e.name for e in WEB} == {e.name for e in explorers.all_explorers()}, "每个探索器都要有网页实时面"


@pytest.mark.parametrize("explorer", WEB, ids=lambda e: e.name)
def test_js_module_offers_exactly_the_params_the_spec_names(explorer):
    module = LIVE / f"{explorer.name}.mjs"
    assert module.exists(), f"探索器 {explorer.name} 说有网页实时面，却没有 {module.relative_to(LIVE.parent.parent)}"
    assert declared_params(module) == list(explorer.web.params), "JS 模块的 PARAMS 与 WebFace.params 不同"


def test_every_js_face_belongs_to_an_explorer_with_a_web_face():
    faces = {m.stem for m in LIVE.glob("*.mjs") if "export const PARAMS" in m.read_text(encoding="utf-8")}
    assert faces == {e.name for e in WEB}


@pytest.mark.parametrize("explorer", WEB, ids=lambda e: e.name)
def test_static_face_names_its_explorer_and_the_spec_is_small_strict_json(explorer):
    fig = explorer.static_figure()
    assert fig.layout.meta["live"] == explorer.name
    assert "<noscript>" in figure_html(fig.to_dict()), "关掉 JavaScript 时要说明“实时计算”为什么用不了"
    text = json.dumps(web.spec(explorer), ensure_ascii=False, allow_nan=False)
    budget = SPEC_BUDGETS.get(explorer.name, SPEC_BUDGET_BYTES)
    assert len(text.encode()) < budget, f"{explorer.name} 的网页说明有 {len(text.encode())} 字节"


def test_packed_weights_read_back_bit_for_bit():
    weights = torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    assert torch.equal(torch.tensor(web.decode_arrays(states.packed(weights)), dtype=torch.float32), weights)


@pytest.mark.parametrize("raw, value", [("12", 12), (" -3 ", -3), ("1.5", 1.5), ("1e3", 1000.0), ("abc", "abc"), ("", "")])
def test_typed_number_text_is_read_as_int_float_or_left_as_text(raw, value):
    param = explorers.get("score_matrix").param("heads")
    read = web.typed_value(param, raw)
    assert read == value and type(read) is type(value)


@pytest.mark.parametrize("explorer", WEB, ids=lambda e: e.name)
def test_vectors_hold_good_and_bad_cases_with_chinese_messages(explorer):
    cases = web.vectors(explorer, randoms=2)["cases"]
    assert any("state" in c for c in cases)
    bad = [c["message"] for c in cases if "message" in c]
    assert bad and all(re.search(r"[\u4e00-\u9fff]", m) for m in bad)


def test_combobox_vectors_type_text_as_well_as_choosing_each_option():
    """可以自己输入的下拉框（句子 A、B）：测试向量里既有每个选项，也有文本框的难输入与语料里随机的一段。"""
    param = explorers.get("apple_context").param("sentence_a")
    edges = web._edge_raws(param)
    assert [value for _, value in param.options] + list(web.TEXT_EDGES) == edges
    randoms = {web._random_raw(param, random.Random(seed)) for seed in range(5)}
    assert all(isinstance(r, str) for r in randoms) and not randoms <= {value for _, value in param.options}


def test_vectors_include_the_extra_inputs_a_web_face_names():
    """``WebFace.inputs``：随机取值很少碰到的输入（这里是玩具语言的句子）也进了 node 的对照，合法的与坏的都有。"""
    explorer = explorers.get("attention_weights")
    cases = web.vectors(explorer, randoms=0)["cases"]
    extra = [c for c in cases if c["raw"] in list(explorer.web.inputs)]
    assert len(extra) >= len(explorer.web.inputs)
    assert any(c.get("state", {}).get("reference") for c in extra) and any("message" in c for c in extra)
    assert any("state" in c and c["state"]["reference"] is None for c in extra), "要有不合语法、没有标准译文的句子"
