"""make bench 的训练配方部分：表怎样判定预算，以及重训不会碰随书附带的检查点。

这里不对任何测出的时间做断言（时间随机器负载变化）：判定预算的逻辑用给定的数字检查，
真正重训的那个测试只检查它写在哪里、量到了什么、指标是否在容差内。
"""

import hashlib
import math

import pytest

import bench
from seqlab import train


def _fake(name, cpu_s, size_bytes=100_000):
    return bench.RecipeRun(name, cpu_s=cpu_s, wall_s=cpu_s, startup_s=2.0, size_bytes=size_bytes, drift={"loss": 0.0})


def test_recipe_table_marks_what_is_over_budget(capsys):
    rows = [_fake("fast", 12.0), _fake("slow", bench.RECIPE_CPU_BUDGET_S + 1), _fake("big", 5.0, 3 * 2**20),
            bench.RecipeRun("broken", error="RuntimeError: 坏了")]
    assert not bench.print_recipes(rows)
    table = [line.split() for line in capsys.readouterr().out.splitlines() if line.strip() and not line[0].isspace()]
    lines = {cells[0]: cells for cells in table}
    assert lines["fast"][-3:] == ["✓", "✓", "✓"]
    assert lines["slow"][-3:] == ["✗", "✓", "✓"]
    assert lines["big"][-3:] == ["✓", "✗", "✓"]
    assert lines["broken"][-3:] == ["✗", "✗", "✗"]
    assert bench.print_recipes([_fake("fast", 12.0)])


def test_strict_fails_on_an_over_budget_recipe_and_skip_recipes_skips_them(monkeypatch):
    monkeypatch.setattr(bench, "bench_site", lambda: (None, None))
    monkeypatch.setattr(bench, "bench_browser", lambda: None)
    ran = []

    def run(name):
        ran.append(name)
        return _fake(name, bench.RECIPE_CPU_BUDGET_S * 2)

    monkeypatch.setattr(bench, "run_recipe", run)
    quick = ["--skip-notebooks", "--skip-explorers", "--strict"]
    assert bench.main([*quick, "--recipes", "embedding"]) == 1 and ran == ["embedding"]
    assert bench.main([*quick[:2], "--recipes", "embedding"]) == 0, "不加 --strict 只报告，不失败"
    ran.clear()
    assert bench.main([*quick, "--skip-recipes"]) == 0 and ran == []
    with pytest.raises(SystemExit, match="未知的配方"):
        bench.main([*quick, "--recipes", "no_such_recipe"])


def _digest(name):
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in (train.weights_path(name), train.record_path(name))]


@pytest.mark.slow
def test_run_recipe_retrains_in_a_temporary_folder_and_reproduces_the_committed_metrics():
    name = "embedding"  # 最快的配方之一（十几秒）
    before = _digest(name)
    run = bench.run_recipe(name)
    assert _digest(name) == before, "make bench 改动了随书附带的检查点"
    assert not run.error
    assert math.isfinite(run.cpu_s) and math.isfinite(run.wall_s)
    committed = sum(p.stat().st_size for p in (train.weights_path(name), train.record_path(name)))
    assert abs(run.size_bytes - committed) < 0.01 * committed  # 记录里有用时之类的数，长短可能差几个字节
    assert set(run.drift) == set(train.TOLERANCES[name]) and run.reproduces
