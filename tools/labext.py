"""把本书自己的 JupyterLab 前端扩展（tools/jupyterlab/seqlab-lab/）装进一个 labextensions 文件夹。

jupyterlab-myst 不认识 myst-nb 的 ``{glue:text}``、本书的参考文献（references.bib）和
sphinx-exercise 的编号；这个扩展在它渲染之后补上（见 seqlab-lab/static/plugin.js）。扩展是手写的
JavaScript，不用打包工具；这里只做三件事：

* 用 pybtex（sphinxcontrib-bibtex 依赖它）读 references.bib，按网站的 author_year 样式的规则取作者：
  一位作者写姓，两位用“和”连接，三位及以上写第一位的姓加“等”（网站上是 *et al.*），写成
  ``static/references.json``；
* 按网站的编号规则（Sphinx 的 numfig，``numfig_secnum_depth: 2``）给每个带名字的插图和带标签的公式编号：
  第 1.N 节里按出现的顺序数，写成“图 1.N.k”“(1.N.k)”，写成 ``static/numbers.json``；
* 把 ``static/remoteEntry.js`` 改名为 ``remoteEntry.<内容哈希>.js``（文件一变，浏览器就不会用缓存里的旧版本）；
* 写出 package.json，其中 ``jupyterlab._build`` 告诉 JupyterLab 从哪里加载它。

用法：``python tools/labext.py [labextensions 文件夹]``，默认是当前 Python 环境的
``<sys.prefix>/share/jupyter/labextensions``（make setup 这样调用，make lab 因此就有它）。
测试的 JupyterLab（tests/labcheck.py）与学生版压缩包（tools/student.py，``jupyterlab/labextensions/``）
各自装一份，用 ``--LabApp.extra_labextensions_path`` 指给 JupyterLab。
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tools" / "jupyterlab" / "seqlab-lab"
BIBLIOGRAPHY = ROOT / "references.bib"
CHAPTERS = ROOT / "chapters"
NAME = "seqlab-lab"
# ```{figure} 路径 / :::{figure}，后面紧跟的选项行里可能有 :name:
FIGURE = re.compile(r"^(`{3,}|:{3,})\{figure\}.*\n((?:[ \t]*:[\w-]+:.*\n)*)", re.M)
# $$ … $$ (标签)：只有带标签的公式才编号（与网站一样）；```{math} 用 :label:
EQUATION = re.compile(r"\$\$.*?\$\$[ \t]*\(([^()\s]+)\)|^(?:`{3,}|:{3,})\{math\}.*\n(?:[ \t]*:[\w-]+:.*\n)*?[ \t]*:label:\s*(\S+)",
                      re.S | re.M)


def citations(bib: Path = BIBLIOGRAPHY) -> dict[str, dict[str, str]]:
    """每个条目的作者（按上面的规则）与年份，键是 BibTeX 的键。"""
    from pybtex.database import parse_file
    from pybtex.richtext import Text
    from sphinxcontrib.bibtex.style.referencing import PersonStyle
    from sphinxcontrib.bibtex.style.template import names

    person = PersonStyle(sep="、", sep2=" 和 ", last_sep=" 和 ", other=Text(" 等"))
    template = names(role="author", sep=person.sep, sep2=person.sep2, last_sep=person.last_sep, other=person.other)
    style = type("Style", (), {"person": person})()
    out = {}
    for key, entry in parse_file(str(bib), bib_format="bibtex").entries.items():
        author = template.format_data({"entry": entry, "style": style}).render_as("text")
        title = entry.fields["title"].replace("{", "").replace("}", "").replace("--", "–")
        out[key] = {"author": author, "year": entry.fields["year"], "title": title}
    return out


def numbers(chapters: Path = CHAPTERS) -> dict[str, str]:
    """网站上每个插图与公式的编号，键是它的名字（``fig-…``/``eq-…``），值是网页上显示的文字。

    节号由文件位置给出：``chNN/MM_*.ipynb`` 是第 NN.MM 节（与 _toc.yml 的编号一致）。插图按文档顺序数：
    Markdown 里的 ``{figure}``，以及元数据 ``mystnb.figure`` 带图注的代码单元格（myst-nb 把它的输出做成插图）。
    """
    import nbformat

    out: dict[str, str] = {}
    for path in sorted(chapters.glob("ch[0-9]*/[0-9]*_*.ipynb")):
        section = f"{int(path.parent.name[2:])}.{int(path.name.split('_')[0])}"
        figures = equations = 0
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                figure = cell.metadata.get("mystnb", {}).get("figure", {})
                if figure.get("caption"):
                    figures += 1
                    if figure.get("name"):
                        out[figure["name"]] = f"图 {section}.{figures}"
                continue
            if cell.cell_type != "markdown":
                continue
            for m in FIGURE.finditer(cell.source):
                figures += 1
                name = re.search(r"^[ \t]*:name:\s*(\S+)", m.group(2), re.M)
                if name:
                    out[name.group(1)] = f"图 {section}.{figures}"
            for m in EQUATION.finditer(cell.source):
                equations += 1
                out[m.group(1) or m.group(2)] = f"({section}.{equations})"
    return out


def install(target: Path) -> Path:
    """把扩展装到 ``target/seqlab-lab``（先删掉旧的），返回这个文件夹。"""
    dest = target / NAME
    if dest.is_symlink() or dest.is_file():
        dest.unlink()
    elif dest.exists():
        shutil.rmtree(dest)
    (dest / "static").mkdir(parents=True)
    files = {p.name: p.read_bytes() for p in sorted((SOURCE / "static").glob("*.js"))}
    files["references.json"] = json.dumps(citations(), ensure_ascii=False, indent=1, sort_keys=True).encode()
    files["numbers.json"] = json.dumps(numbers(), ensure_ascii=False, indent=1, sort_keys=True).encode()
    digest = hashlib.sha256(b"".join(k.encode() + v for k, v in sorted(files.items()))).hexdigest()[:16]
    entry = f"remoteEntry.{digest}.js"
    for name, data in files.items():
        (dest / "static" / (entry if name == "remoteEntry.js" else name)).write_bytes(data)
    package = json.loads((SOURCE / "package.json").read_text(encoding="utf-8"))
    package["jupyterlab"]["_build"] = {"load": f"static/{entry}", "extension": "./extension"}
    (dest / "package.json").write_text(json.dumps(package, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return dest


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    print(f"JupyterLab 扩展 {NAME}：{install(target)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
