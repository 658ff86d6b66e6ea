"""seqlab：《从序列建模到 Transformer》配套的小型 PyTorch 库。

一个模块对应书里的一个概念，顺序与章节一致：``corpus``、``lm``、``tokenize``、``embedding``、
``rnn``、``seq2seq``、``attention``、``transformer``；``measure`` 负责计时、内存与运算量，``train`` 负责
训练与检查点；``figures`` 与 ``explorers`` 负责画图和交互，``exercises`` 负责练习的自动检查。
各层只导入它下面的层（``pyproject.toml`` 里 import-linter 的契约，``make test-lib`` 检查）。
"""

from __future__ import annotations

import contextlib
import random
import sys
import warnings

__all__ = ["setup"]


@contextlib.contextmanager
def _without_iri_grammar():
    """在这段代码里导入的 jsonschema 跳过它在导入时构建的 IRI 文法。

    plotly 设定渲染器时导入 nbformat，nbformat 导入 jsonschema；jsonschema 只要找得到 ``rfc3987_syntax``，
    就在导入时用它构建一个 IRI 文法，每个内核启动时白白多花约 0.9 秒 CPU。本书的内核从不按 IRI 格式校验
    JSON，所以只在这一刻把它挡住：jsonschema 少了两个 IRI 格式检查，之后任何代码照样可以
    ``import rfc3987_syntax``。
    """
    blocked = "rfc3987_syntax" not in sys.modules
    if blocked:
        sys.modules["rfc3987_syntax"] = None  # import 时得到 ImportError，jsonschema 会跳过它
    try:
        yield
    finally:
        if blocked and sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]


def setup(seed: int = 0) -> None:
    """每个笔记本的第一个代码单元都调用它：固定随机种子、单线程运行 torch，设定 plotly 的离线渲染与样式。

    本书的模型都很小：多线程的调度开销远大于收益，机器繁忙时单次前向甚至会慢上几十倍；
    单线程也让计时更稳定、结果逐位可复现。
    """
    import torch

    from seqlab.figures import use_book_defaults

    random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    # 书里常在计算图中途读出一个数来打印或断言（float(loss) 之类）；PyTorch 2.13 起每次都为此
    # 警告一遍。这些读数从不参与反向传播，所以只屏蔽这一条。
    warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad=True to a scalar")
    with _without_iri_grammar():
        use_book_defaults()
