"""随书附带的检查点：格式、唯一的读取入口，以及配方能否重新训练出它们。

可复现性的保证分两条（README 与 ``seqlab.train`` 的文档写的也是这两条）：

* 同一台机器、同样的设置：同一个配方运行两次，权重**逐位相同**；
* 换一种 CPU 指令集（用 ``ATEN_CPU_CAPABILITY`` 模拟另一台机器）：权重不必逐位相同，但重新训练出的模型的
  指标与随书检查点记录的指标之差不超过配方声明的容差（``train.TOLERANCES``）。

重训全部检查点要几分钟；这里重训最快的两个（各十几秒），其余的由各节的测试检查它们在新数据上的表现。
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from seqlab import train

FAST_RECIPES = ["embedding", "winograd_attention"]


def _names_on_disk() -> set[str]:
    return {p.stem for p in train.CHECKPOINT_DIR.glob("*.safetensors")}


def test_every_checkpoint_has_a_recipe_a_builder_a_record_and_fits_in_2_mb():
    train._load_model_modules()
    on_disk = _names_on_disk()
    assert on_disk and on_disk == set(train.RECIPES) == set(train.BUILDERS) == set(train.TOLERANCES)
    assert not list(train.CHECKPOINT_DIR.glob("*.pt")), "检查点不再用 pickle（.pt）保存"
    for name in on_disk:
        weights, record = train.weights_path(name), train.record_path(name)
        assert weights.stat().st_size <= 2 * 2**20, f"{weights.name} 超过 2 MB"
        # safetensors：8 字节的头长度 + JSON 头 + 原始字节；读取不执行任何代码
        header_len = int.from_bytes(weights.read_bytes()[:8], "little")
        header = json.loads(weights.read_bytes()[8 : 8 + header_len])
        assert set(header) - {"__metadata__"} == set(load_file(weights))
        assert set(json.loads(record.read_text(encoding="utf-8"))) == {"config", "meta"}
        for metric in train.TOLERANCES[name]:
            assert metric in train.load(name).meta, f"{name} 的 meta 里没有声明了容差的指标 {metric}"


@pytest.mark.parametrize("name", sorted(_names_on_disk()))
def test_load_hands_out_an_independent_eval_copy_and_leaves_the_global_rng_alone(name):
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    first = train.load(name)
    assert torch.equal(torch.rand(3), expected_next), "读检查点改变了全局随机数"
    assert not first.model.training
    stored = load_file(train.weights_path(name))
    assert all(torch.equal(first.model.state_dict()[k], v) for k, v in stored.items())
    with torch.no_grad():  # 一个单元格改坏了自己拿到的模型……
        for p in first.model.parameters():
            p.zero_()
    first.config["tampered"] = True
    first.meta.clear()
    again = train.load(name)  # ……下一个单元格拿到的仍是检查点里的模型
    assert all(torch.equal(again.model.state_dict()[k], v) for k, v in stored.items())
    assert "tampered" not in again.config and again.meta


def test_unknown_checkpoint_gets_a_clear_message():
    with pytest.raises(KeyError, match="未知的检查点"):
        train.load("no_such_model")


def _run_recipe(name: str, out: Path, capability: str | None) -> dict:
    """在一个新进程里运行配方（``ATEN_CPU_CAPABILITY`` 只在进程启动时读取），返回它写出的检查点。"""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    code = (
        "import sys, torch; from pathlib import Path; from seqlab import train\n"
        "train.CHECKPOINT_DIR = Path(sys.argv[2]); train._load_model_modules()\n"
        "train.RECIPES[sys.argv[1]]()\n"
        "print(torch.backends.cpu.get_cpu_capability())"
    )
    out.mkdir()
    done = subprocess.run([sys.executable, "-c", code, name, str(out)], env=env, capture_output=True, text=True,
                          check=True)
    if capability:
        assert done.stdout.strip().lower() == capability
    weights = load_file(out / f"{name}.safetensors")
    record = json.loads((out / f"{name}.json").read_text(encoding="utf-8"))
    return {"weights": weights, **record}


@pytest.mark.slow
@pytest.mark.parametrize("name", FAST_RECIPES)
def test_recipe_is_bit_for_bit_reproducible_on_the_same_machine(name, tmp_path):
    first = _run_recipe(name, tmp_path / "a", None)
    second = _run_recipe(name, tmp_path / "b", None)
    assert first["config"] == second["config"]
    assert first["weights"].keys() == second["weights"].keys()
    for key, value in first["weights"].items():
        assert torch.equal(second["weights"][key], value), f"{name}: 两次运行的参数 {key} 不同"


@pytest.mark.slow
@pytest.mark.parametrize("capability", ["default", "avx2"])
@pytest.mark.parametrize("name", FAST_RECIPES)
def test_recipe_on_another_cpu_reproduces_the_committed_metrics_within_tolerance(name, capability, tmp_path):
    if capability == "avx2" and torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("这台机器的 CPU 不支持 AVX2")
    fresh = _run_recipe(name, tmp_path / capability, capability)
    committed = train.load(name)
    assert fresh["config"] == committed.config
    for metric, tol in train.TOLERANCES[name].items():
        got, want = fresh["meta"][metric], committed.meta[metric]
        assert abs(got - want) <= tol, f"{name}（{capability}）：{metric} = {got}，随书检查点为 {want}，容差 {tol}"
