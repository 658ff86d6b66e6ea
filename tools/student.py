"""生成学生版：去掉答案的笔记本、一个可以直接分发的 zip，以及给教师的答案。

完全由单元格标签驱动（不做文本匹配）：
* 标签 ``solution`` 的单元格（答案代码、答案的 {solution-start}/{solution-end} 说明）被删除；
* 标签 ``exercise-starter`` 的起始代码和 ``exercise-check`` 的检查保留；
* 所有输出与执行计数被清空；
* 笔记本引用的插图（每章的 ``images/`` 文件夹）复制到笔记本旁边，相对路径不变。

用法：``python tools/student.py [输出目录]``（默认 ``_build/student``）。
"""

from __future__ import annotations

import ast
import functools
import shutil
import stat
import sys
import time
import zipfile
from pathlib import Path

import nbformat

from labext import install as install_labext

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
SOLUTION_TAG = "solution"
# 学生需要的库文件（检查点在 lib/seqlab/checkpoints 里，随库一起打包）。压缩包里的 requirements.txt
# 不是本书的那份（那份还有 Jupyter Book、Sphinx、pytest、Playwright……），而是 requirements-student.txt
# 加上安装 seqlab 的一行；间接依赖仍由本书的 constraints.txt 固定。
SUPPORT = ["lib", "pyproject.toml", "constraints.txt"]
STUDENT_REQUIREMENTS = ROOT / "requirements-student.txt"
# JupyterLab 的默认设置（中文界面、不弹新闻），与 make lab 用的是同一份。
LAB_SETTINGS = ROOT / "tools" / "jupyterlab" / "overrides.json"
# 本书自己的 JupyterLab 扩展（glue 的数值、参考文献、练习编号），预先装好放进压缩包的 jupyterlab/labextensions/，
# 学生的环境里不需要 pybtex 或任何构建工具。
LAB_EXTENSIONS = "jupyterlab/labextensions"
ZIP_ROOT = "seqlab-student"
# 压缩包里每个文件的权限（rw-r--r--）；zip 的时间戳不能早于 1980 年。
FILE_MODE = 0o644
ZIP_EPOCH = 315532800 + 86400
# 压缩包里给学生的说明（学生拿到的只有压缩包，看不到本书的 README）。
STUDENT_README = """\
# 《从序列建模到 Transformer》第 1 章 · 学生版

这里是第 1 章每一节的笔记本（01_…ipynb … 06_…ipynb），练习的参考答案已经去掉；
lib/ 是笔记本用到的小型库 seqlab（含训练好的检查点）。

## 第一次使用（需要 Python 3.11 或更新的版本，不需要 GPU）

    cd seqlab-student
    python3 -m venv .venv
    .venv/bin/python -m pip install -r requirements.txt
    .venv/bin/jupyter lab --LabApp.app_settings_dir=jupyterlab --LabApp.extra_labextensions_path=jupyterlab/labextensions

第一个参数让 JupyterLab 以中文界面打开、不弹出“Jupyter 新闻”的询问（设置在 jupyterlab/overrides.json 里，
随时可以在“设置 → 语言”里换回英文）；第二个参数加载本书自己的一个小扩展，让正文里的数值、
参考文献和练习编号与网站上的一样。

requirements.txt 里有一行 --extra-index-url https://download.pytorch.org/whl/cpu：它让 pip 装 PyTorch
只用 CPU 的版本。在 Linux 上，PyPI 默认的 torch 带 CUDA，连同 nvidia-* 依赖要下载好几 GB，
本书用不上。在 Linux 与 Windows 上，装好后可以用 .venv/bin/python -m pip show torch 确认版本号以 +cpu
结尾；如果连不上
download.pytorch.org，pip 会退回 PyPI 上带 CUDA 的版本，请换一个网络再装。想用 GPU，删掉这一行即可。

Windows 上把 .venv/bin/ 换成 .venv\\Scripts\\。

## 做练习

每道练习下面有一格“检查”：写完代码后运行它，会看到 ✅ 或 ❌ 和一句说明。
还没做完的练习只会显示 ❌，不会打断“全部运行”。
"""


def notebooks() -> list[Path]:
    return sorted(CHAPTERS.glob("*/[0-9][0-9]_*.ipynb"))


def image_dirs() -> list[Path]:
    """笔记本旁边的插图文件夹（笔记本用相对路径 ``images/…`` 引用它们）。"""
    return sorted({path.parent / "images" for path in notebooks() if (path.parent / "images").is_dir()})


def _support_files(name: str) -> list[Path]:
    src = ROOT / name
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
    return [f for f in files if "__pycache__" not in f.parts and f.suffix != ".pyc" and ".egg-info" not in str(f)]


def student_requirements() -> str:
    """压缩包里的 requirements.txt：学生版的固定依赖，最后以可编辑方式安装随包的 seqlab。"""
    return STUDENT_REQUIREMENTS.read_text(encoding="utf-8") + "-e .\n"


def is_solution(cell) -> bool:
    return SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def clear_outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    return nb


def student_version(nb):
    """返回去掉全部答案单元格、清空输出的副本。"""
    nb = nbformat.from_dict(nb)
    nb.cells = [cell for cell in nb.cells if not is_solution(cell)]
    return clear_outputs(nb)


def _add(zf: zipfile.ZipFile, name: str, data: str | bytes, date_time: tuple[int, ...] | None = None) -> None:
    """把一个文件写进压缩包的 ``seqlab-student/`` 下，权限一律是普通文件的 0644。

    ``ZipFile.writestr`` 给字符串写出的条目默认是 0600，``ZipFile.write`` 照搬磁盘上的权限：解压后
    README.md 与 requirements.txt 只有解压的人自己能读，放进 JupyterHub 镜像或共享文件夹就出问题。
    """
    info = zipfile.ZipInfo(f"{ZIP_ROOT}/{name}", date_time or time.localtime()[:6])
    info.external_attr = (stat.S_IFREG | FILE_MODE) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def _add_file(zf: zipfile.ZipFile, path: Path, name: str) -> None:
    _add(zf, name, path.read_bytes(), time.localtime(max(path.stat().st_mtime, ZIP_EPOCH))[:6])


def build(out: Path) -> Path:
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    (out / "answer_key").mkdir()
    for path in notebooks():
        nb = nbformat.read(path, as_version=4)
        nbformat.write(student_version(nb), out / "notebooks" / path.name)
        nbformat.write(clear_outputs(nbformat.from_dict(nb)), out / "answer_key" / path.name)
    # 插图：(源文件, 相对笔记本的路径)，例如 images/02_lookup_vs_onehot.svg
    images = [(f, f.relative_to(d.parent)) for d in image_dirs() for f in sorted(d.rglob("*")) if f.is_file()]
    for folder in ("notebooks", "answer_key"):
        for f, rel in images:
            target = out / folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)
    archive = out / "seqlab-student.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        _add(zf, "README.md", STUDENT_README)
        for path in sorted((out / "notebooks").glob("*.ipynb")):
            _add_file(zf, path, path.name)
        for f, rel in images:
            _add_file(zf, f, rel.as_posix())
        _add(zf, "requirements.txt", student_requirements())
        _add_file(zf, LAB_SETTINGS, "jupyterlab/overrides.json")
        labext = install_labext(out / "labextensions")
        for f in sorted(p for p in labext.rglob("*") if p.is_file()):
            _add_file(zf, f, f"{LAB_EXTENSIONS}/{f.relative_to(labext.parent).as_posix()}")
        for name in SUPPORT:
            for f in _support_files(name):
                _add_file(zf, f, f.relative_to(ROOT).as_posix())
    return archive



# ---------------------------------------------------------------- 学生环境需要哪些第三方模块
# 由 import 语句推出来（ast），不靠手抄：每个笔记本的第一格（环境检查）列出的模块、requirements-student.txt
# 应当提供的模块，都由这里的函数算出，tests/test_student_requirements.py 拿它们与实际的文件比较。
LIB = ROOT / "lib"
PACKAGE = "seqlab"
# 可以缺少的导入：写在 ``try: … except ImportError`` 里、缺了有退路的（例如 seqlab.glue 里的 myst_nb）。
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(k, ast.Name) and k.id in _IMPORT_ERRORS for k in kinds):
            return True
    return False


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk_imports(node: ast.AST, optional: bool = False):
    """逐个产出 ``(导入语句, 是否可以缺少)``；``if TYPE_CHECKING:`` 里的导入运行时不发生，跳过。"""
    if isinstance(node, ast.If) and _is_type_checking(node):
        yield from (item for child in node.orelse for item in _walk_imports(child, optional))
        return
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node, optional
        return
    if isinstance(node, ast.Try) and _catches_import_error(node):
        for child in node.body:
            yield from _walk_imports(child, True)
        for child in [*node.handlers, *node.orelse, *node.finalbody]:
            yield from _walk_imports(child, optional)
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_imports(child, optional)


def library_modules() -> dict[str, Path]:
    """seqlab 的全部模块：模块名 → 文件（包的 ``__init__.py`` 以包名登记）。"""
    modules = {}
    for path in sorted((LIB / PACKAGE).rglob("*.py")):
        parts = path.relative_to(LIB).with_suffix("").parts
        if "__pycache__" in parts:
            continue
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imported_names(tree: ast.AST, package: str, modules: dict[str, Path]) -> tuple[set[str], set[str]]:
    """一段代码导入的模块全名：``(必需的, 可以缺少的)``。``package`` 用来解析相对导入。"""
    needed: set[str] = set()
    optional: set[str] = set()
    for node, maybe in _walk_imports(tree):
        target = optional if maybe else needed
        if isinstance(node, ast.Import):
            target.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([base] if base else [])])
        target.add(base)
        # from seqlab import corpus：corpus 是子模块时，导入的是 seqlab.corpus
        target.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules)
    return needed, optional


def _dynamic_imports(tree: ast.AST, name: str, modules: dict[str, Path]) -> set[str]:
    """按名字导入的本库模块：字符串里写出的模块名（如 seqlab.train 的 RECIPE_MODULES），以及包的
    ``__init__`` 用 ``importlib.import_module`` 遍历的全部子模块（如 seqlab.explorers 的 ``_import_all``）。"""
    found = {node.value for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in modules}
    calls_import = any(isinstance(node, ast.Attribute) and node.attr == "import_module" for node in ast.walk(tree))
    if calls_import and modules[name].name == "__init__.py":
        found.update(m for m in modules if m.startswith(name + ".") and "." not in m[len(name) + 1:])
    return found


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


@functools.cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _is_third_party(top: str) -> bool:
    return top not in sys.stdlib_module_names and top not in {PACKAGE, "__future__"}


def third_party_closure(names: set[str], modules: dict[str, Path] | None = None) -> set[str]:
    """从这些模块出发，连同它们（递归地）导入的本库模块，必需的第三方顶层模块。"""
    modules = modules if modules is not None else library_modules()
    seen: set[str] = set()
    todo = [p for n in names for p in _with_parents(n)]
    third_party = {n.split(".")[0] for n in names if _is_third_party(n.split(".")[0])}
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        tree = _parse(modules[name])
        package = name if modules[name].name == "__init__.py" else name.rpartition(".")[0]
        needed, _ = _imported_names(tree, package, modules)
        needed |= _dynamic_imports(tree, name, modules)
        third_party.update(n.split(".")[0] for n in needed if _is_third_party(n.split(".")[0]))
        todo.extend(p for n in needed if n.split(".")[0] == PACKAGE for p in _with_parents(n))
    return third_party


def library_third_party() -> dict[str, set[str]]:
    """本库每个模块自己必需的第三方顶层模块（不含可以缺少的）。"""
    modules = library_modules()
    result = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        needed, _ = _imported_names(_parse(path), package, modules)
        result[name] = {n.split(".")[0] for n in needed if _is_third_party(n.split(".")[0])}
    return result


def code_cells(nb) -> list[str]:
    """笔记本的代码单元格，魔法命令（``%pip``、``!unzip``）先按 IPython 的规则改写成普通的 Python。"""
    from IPython.core.inputtransformer2 import TransformerManager

    transform = TransformerManager().transform_cell
    return [transform(cell.source) for cell in nb.cells if cell.cell_type == "code"]


def notebook_imports(nb) -> set[str]:
    """笔记本（除第一格的环境检查外）导入的模块全名。"""
    modules = library_modules()
    names: set[str] = set()
    for source in code_cells(nb)[1:]:
        needed, _ = _imported_names(ast.parse(source), "", modules)
        names |= needed
    return names


def notebook_third_party(nb) -> set[str]:
    """这一节运行时需要的第三方顶层模块：笔记本自己导入的，加上它用到的 seqlab 模块（递归地）导入的。"""
    return third_party_closure(notebook_imports(nb))


@functools.cache
def module_owners() -> dict[str, list[str]]:
    """顶层模块 → 提供它的包（当前环境里装好的包的元数据）。"""
    from importlib.metadata import packages_distributions

    return packages_distributions()


def distribution_of(module: str) -> str:
    """提供这个顶层模块的 pip 包名（按当前环境里装好的包的元数据）。"""
    dists = module_owners().get(module, [])
    if len(dists) != 1:
        raise LookupError(f"找不到唯一提供 {module} 的包：{dists}")
    return dists[0]


def environment_check_needs(nb) -> dict[str, str]:
    """第一格应当检查的模块 → pip 包：seqlab 在最前，其余按模块名排序。"""
    needs = {PACKAGE: PACKAGE}
    needs.update((m, distribution_of(m)) for m in sorted(notebook_third_party(nb), key=str.lower))
    return needs


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "_build" / "student"
    archive = build(out)
    print(f"学生版笔记本：{out / 'notebooks'}")
    print(f"教师答案：    {out / 'answer_key'}")
    print(f"分发用压缩包：{archive}（{archive.stat().st_size / 2**20:.1f} MiB）")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
