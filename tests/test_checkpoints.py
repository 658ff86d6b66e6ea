"""随书附带的检查点都能由文档里的命令重新训练出来：用同一个种子重训，参数逐位相同。

重训全部检查点要几分钟；这里重训最快的两个（各约 10 秒），其余的由各节的测试检查在新数据上的准确率。
"""

import pytest
import torch

from seqlab import train

pytestmark = pytest.mark.slow


def test_every_checkpoint_has_a_recipe():
    train._load_recipes()
    on_disk = {p.stem for p in train.CHECKPOINT_DIR.glob("*.pt")}
    assert on_disk and on_disk == set(train.RECIPES)
    for path in train.CHECKPOINT_DIR.glob("*.pt"):
        assert path.stat().st_size <= 2 * 2**20, f"{path.name} 超过 2 MB"


@pytest.mark.parametrize("name", ["embedding", "winograd_attention"])
def test_recipe_recreates_the_committed_checkpoint_bit_for_bit(name, tmp_path, monkeypatch):
    train._load_recipes()
    committed = train.load_checkpoint(name)
    monkeypatch.setattr(train, "CHECKPOINT_DIR", tmp_path)
    path = train.RECIPES[name]()
    assert path.parent == tmp_path
    fresh = torch.load(path, map_location="cpu", weights_only=True)
    assert fresh["config"] == committed["config"]
    assert fresh["state_dict"].keys() == committed["state_dict"].keys()
    for key, value in committed["state_dict"].items():
        assert torch.equal(fresh["state_dict"][key], value), f"{name}: 参数 {key} 与随书的检查点不同"
