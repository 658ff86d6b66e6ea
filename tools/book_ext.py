"""本书的 Sphinx 扩展：让网站离线可用、中文可搜索。

* 把已安装的 plotly 包自带的 ``plotly.min.js`` 复制进网站的静态目录（版本总与 Python 包一致），
  并且只在含 plotly 图的页面里引用它一次；
* 不让 myst-nb 从 CDN 加载 ipywidgets 的 JavaScript（实时控件在网站上本来就只显示代码）；
* 用 jieba 加上本书的术语词典为中文建立搜索索引。
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import plotly

HERE = Path(__file__).resolve().parent
TERMS = HERE / "zh_terms.txt"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
PLOTLY_STATIC = "seqlab/plotly.min.js"


GLOSSARY = HERE.parent / "chapters" / "appendix" / "glossary.md"
CJK = re.compile(r"[\u4e00-\u9fff]")


def glossary_entries(path: Path = GLOSSARY) -> list[list[str]]:
    """术语表 ``{glossary}`` 块里的条目：每条是若干个同义的词条（不缩进的非空行），后面跟缩进的释义。"""
    text = path.read_text(encoding="utf-8")
    block = text[text.index("```{glossary}") : text.rindex("```")]
    entries, names = [], []
    for line in block.splitlines()[1:]:
        if line.strip() and not line.startswith(" "):
            names.append(line.strip())
        elif line.startswith(" ") and names:
            entries.append(names)
            names = []
    return entries


def glossary_terms(path: Path = GLOSSARY) -> list[str]:
    """全部词条（中英文都算）。"""
    return [name for entry in glossary_entries(path) for name in entry]


def _search_dictionary(app) -> Path:
    """jieba 用户词典 = 术语表里的中文词条 + tools/zh_terms.txt，使搜索能找到整个术语。"""
    words = dict.fromkeys(t for t in glossary_terms() if CJK.search(t) and " " not in t)
    lines = [f"{w} 50 n" for w in words] + TERMS.read_text(encoding="utf-8").splitlines()
    target = Path(app.outdir).parent / "zh_search_dict.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def launch_options(environ=os.environ) -> dict:
    """启动按钮（Binder / Colab / JupyterHub）需要知道仓库的公开地址。

    ``_config.yml`` 里配好了按钮，地址则在构建时用 ``SEQLAB_REPOSITORY_URL``（GitHub 或 GitLab 的仓库地址）
    给出：没有给出时网页上就没有这些按钮——网站本身从不依赖它们。
    """
    url = environ.get("SEQLAB_REPOSITORY_URL", "").strip()
    if not url:
        return {}
    return {
        "repository_url": url,
        "repository_branch": environ.get("SEQLAB_REPOSITORY_BRANCH", "main"),
        "use_repository_button": True,
    }


def _config_inited(app, config):
    config.html_search_options = {"dict": str(_search_dictionary(app))}
    config.html_theme_options = {**config.html_theme_options, **launch_options()}
    # myst-nb 在页面含控件状态时会从公网加载 require.js 与控件管理器：一律关掉。
    config.nb_ipywidgets_js = {}


def _copy_assets(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / PLOTLY_STATIC
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PLOTLY_JS, target)


def _page_context(app, pagename, templatename, context, doctree):
    body = context.get("body", "")
    if "plotly-graph-div" in body:
        app.add_js_file(PLOTLY_STATIC, priority=400)


def setup(app):
    app.connect("config-inited", _config_inited)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy_assets)
    app.add_css_file("seqlab/book.css")
    app.connect("builder-inited", _write_css)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def _write_css(app):
    css = HERE / "book.css"
    target = Path(app.outdir) / "_static" / "seqlab"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(css, target / "book.css")
