"""把一个算出来的值“粘”进笔记本的输出，网站正文用 myst-nb 的 ``{glue}`` 角色引用它。

装了 myst-nb（本书的构建环境）就直接用 ``myst_nb.glue``。学生的环境里没有 myst-nb（它会带来 Sphinx
和整套建站工具）：那时写出与 ``myst_nb.glue`` 相同的输出——值照常显示，元数据里记下名字——
笔记本照样从头运行到尾。
"""

from __future__ import annotations

from typing import Any

# myst-nb 用它标记“只粘贴、不显示”的输出（myst_nb.ext.glue.GLUE_PREFIX）
HIDDEN_PREFIX = "application/papermill.record/"


def glue(name: str, variable: Any, display: bool = True) -> None:
    """记下 ``variable`` 的显示形式，名字为 ``name``；``display=False`` 时不在笔记本里显示。"""
    try:
        from myst_nb import glue as myst_glue
    except ModuleNotFoundError:
        from IPython.core.formatters import format_display_data
        from IPython.display import display as show

        bundle, metadata = format_display_data(variable)
        prefix = "" if display else HIDDEN_PREFIX
        metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
        show({prefix + mime: value for mime, value in bundle.items()}, raw=True, metadata=metadata)
    else:
        myst_glue(name, variable, display)
