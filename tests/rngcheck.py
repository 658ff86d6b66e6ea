"""测试共用：一个函数是否让全局随机数发生器（torch 与 Python 的 ``random``）保持原样。"""

import random

import torch


def leaves_rng_alone(fn) -> bool:
    """先记下“不调用 ``fn``”时接下来的随机数，再在同样的种子下调用 ``fn``，比较之后的随机数。"""
    torch.manual_seed(2024)
    random.seed(2024)
    expected = (torch.rand(4), random.random())
    torch.manual_seed(2024)
    random.seed(2024)
    fn()
    return torch.equal(torch.rand(4), expected[0]) and random.random() == expected[1]
