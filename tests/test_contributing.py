"""CONTRIBUTING.md 里的示例探索器是真代码：把它的三段代码装进库里，运行与书中每个探索器相同的检查。"""

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from seqlab import explorers, states

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n# (lib/seqlab/(states|figures|explorers)/(\w+)\.py)\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str, str]]:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return [(f"seqlab.{layer}.{name}", path, code) for path, layer, name, code in BLOCK.findall(text)]


@pytest.fixture
def example(tmp_path):
    """按 状态 → 图 → 说明 的顺序导入三段代码（与库里的模块同名），用完从注册表和 sys.modules 里移走。"""
    blocks = _blocks()
    assert [path.split("/")[2] for _, path, _ in blocks] == ["states", "figures", "explorers"]
    loaded = []
    try:
        for module_name, path, code in blocks:
            file = tmp_path / Path(path).name
            file.write_text(code, encoding="utf-8")
            spec = importlib.util.spec_from_file_location(module_name, file)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            loaded.append(module_name)
            spec.loader.exec_module(module)
        yield module.EXPLORER
    finally:
        for module_name in loaded:
            sys.modules.pop(module_name, None)
        explorers.REGISTRY.pop("softmax_temperature", None)


def test_each_block_imports_only_what_its_layer_may_use():
    for module_name, _, code in _blocks():
        imported = set(re.findall(r"^(?:from|import) ([\w.]+)", code, re.M))
        if ".states." in module_name:
            assert not {"plotly", "ipywidgets"} & {m.split(".")[0] for m in imported}, imported
        if ".figures." in module_name:
            assert "ipywidgets" not in {m.split(".")[0] for m in imported} and "torch" not in imported, imported


def test_the_example_explorer_works_like_every_explorer_in_the_book(example):
    import torch

    assert explorers.get("softmax_temperature") is example
    for T in (0.5, 2.0):  # 状态与独立的计算一致：p_i = exp(s_i / T) / Σ_j exp(s_j / T)
        scores = torch.tensor([2.0, 1.5, 0.5, -0.5, -1.0], dtype=torch.float64)
        want = (scores / T).exp() / (scores / T).exp().sum()
        got = torch.tensor(example.compute(temperature=T).probs, dtype=torch.float64)
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)
    fig = example.static_figure()
    assert [s.label for s in fig.layout.sliders[0].steps] == ["温度 T = 0.25", "温度 T = 0.5", "温度 T = 1", "温度 T = 2", "温度 T = 4"]
    view = example.live()
    assert view.ok and view.set(temperature=2.0) and "最可能的「苹果」" in view.status
    for bad in (0.0, 99.0, "热", None):
        assert view.set(temperature=bad) is False and view.values() == {"temperature": 2.0}
        assert re.search(r"[\u4e00-\u9fff]", view.status) and view.unexpected is None
    json.dumps(states.to_json(example.compute(temperature=1.0)), allow_nan=False)
