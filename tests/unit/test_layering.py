"""Imports flow one way (DESIGN.md section 3, STYLE.md), for every module and import form.

Parts, bottom to top: the shared vocabulary (``_errors``, ``_spaces``,
``_unsafe``), the annotations built on it (``_views``, ``thread``),
``lowering`` (the only code touching numba-cuda internals), ``decoration``,
``host``, ``sim``, then the facade, ``cli`` and its entry point
``__main__``. Every import of a simtsafe module is found -- ``import simtsafe.x``, ``from simtsafe.x import y``,
``from simtsafe import x``, relative imports of any depth, and
``importlib.import_module("simtsafe....")`` with a literal name -- at module
level (import time) and inside functions (call time). Imports under
``if TYPE_CHECKING:`` exist only for type checkers and are not edges.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "simtsafe"

VOCABULARY = {"_errors", "_spaces", "_unsafe", "_collective", "_toolchain", "_dtypes", "_records"}
ANNOTATIONS = {
    "_views",
    "_coopviews",
    "_atomicviews",
    "thread",
    "block",
    "warp",
    "grid",
    "shared",
    "random",
    "vec",
    "hashing",
    "mma",
    "wgmma",
}


def part_of(module: str) -> str:
    """The part a dotted module name below simtsafe belongs to."""
    first = module.split(".")[0] if module else "__init__"
    if first in VOCABULARY:
        return "vocabulary"
    if first in ANNOTATIONS:
        return "annotations"
    return first


#: The parts, bottom to top; each may import only the parts below it (DESIGN.md 3, 11).
ORDER = [
    "vocabulary",
    "annotations",
    "lowering",  # the only code touching numba-cuda internals
    "verify",  # the compiled-form checks
    "decoration",  # declarations: the source rules, the frozen rewritten function
    "host",  # contract, prepare, launch
    "sim",  # the CPU checker
    "_compose",  # Kernel / DeviceFunction: declaration + compile + launch, at the top
    "lib",  # library launches: checked host calls of simtsafe's own Tier-2 kernels
    "gate",  # simtsafe check / audit / check_kernel (compiles composed kernels)
    "__init__",
    "cli",
]
#: part -> parts it may import, at import time and inside functions alike.
AT_IMPORT: dict[str, set[str]] = {part: set(ORDER[:k]) for k, part in enumerate(ORDER)}
# `python -m simtsafe`: the entry point above the command line, and the only importer of cli.
AT_IMPORT["__main__"] = {"cli"}
# The simulator's compile worker process: an entry point above every part.
AT_IMPORT["_workermain"] = set(ORDER[:-1])
#: Extra edges allowed only inside functions (none: the circle between decoration and
#: host is cut -- the composed object at the top calls both).
AT_CALL: dict[str, set[str]] = {}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    parts = [p for p in rel.parts if p != "__init__"]
    return ".".join(parts)


def _resolve_relative(path: Path, level: int, module: str | None) -> str:
    package = list(path.relative_to(PKG).parent.parts)
    base = package[: len(package) - (level - 1)] if level > 1 else package
    return ".".join([*base, *([module] if module else [])])


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skip.update(id(n) for n in ast.walk(child))
    return skip


def imports_of(path: Path) -> list[tuple[str, bool, int]]:
    """(simtsafe module imported, inside a function?, line) for every import in ``path``."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_nodes(tree)
    found: list[tuple[str, bool, int]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if id(child) not in skip:
                for name in _targets(child):
                    found.append((name, nested, getattr(child, "lineno", 0)))
            visit(child, nested)

    def _targets(node: ast.AST) -> list[str]:
        names: list[str] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "simtsafe" or alias.name.startswith("simtsafe."):
                    names.append(alias.name.removeprefix("simtsafe").lstrip("."))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _resolve_relative(path, node.level, node.module)
            elif node.module == "simtsafe" or (node.module or "").startswith("simtsafe."):
                base = (node.module or "").removeprefix("simtsafe").lstrip(".")
            else:
                return names
            for alias in node.names:
                # `from . import x` / `from simtsafe import x` may import submodule x.
                sub = f"{base}.{alias.name}" if base else alias.name
                is_module = (PKG / sub.replace(".", "/")).with_suffix(".py").exists() or (
                    PKG / sub.replace(".", "/")
                ).is_dir()
                names.append(sub if is_module else base)
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
        ):
            text = (
                node.args[0].value
                if isinstance(node.args[0], ast.Constant)
                else "".join(v.value for v in node.args[0].values if isinstance(v, ast.Constant))
            )
            if isinstance(text, str) and text.startswith("simtsafe"):
                names.append(text.removeprefix("simtsafe").lstrip("."))
        return names

    visit(tree, False)
    return found


SOURCES = sorted(PKG.rglob("*.py"))


def test_every_module_belongs_to_a_part() -> None:
    for path in SOURCES:
        part = part_of(_module_name(path))
        assert part in AT_IMPORT, f"{path.relative_to(PKG)} is in no known part ({part})"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PKG)))
def test_imports_flow_one_way(path: Path) -> None:
    me = part_of(_module_name(path))
    for target, in_function, line in imports_of(path):
        other = part_of(target)
        if other == me:
            continue
        allowed = AT_IMPORT[me] | (AT_CALL.get(me, set()) if in_function else set())
        assert other in allowed, (
            f"{path.relative_to(PKG)}:{line} imports simtsafe.{target} ({other}); "
            f"{me} may import {sorted(allowed)}" + ("" if in_function else " at import time")
        )


def test_nothing_imports_cli() -> None:
    for path in SOURCES:
        if path.name == "cli.py" or path.relative_to(PKG) == Path("__main__.py"):
            continue  # __main__ is `python -m simtsafe`, the command line's entry point
        assert all(part_of(t) != "cli" for t, _, _ in imports_of(path)), path


def test_vocabulary_modules_import_nothing_from_simtsafe() -> None:
    for name in sorted(VOCABULARY):
        assert imports_of(PKG / f"{name}.py") == [], name


def test_numba_cuda_internals_only_in_lowering() -> None:
    """Private numba-cuda modules are imported only by simtsafe.lowering."""
    private = (
        "numba.cuda.cudadrv",
        "numba.cuda.core",
        "numba.cuda.typing",
        "numba.cuda.np",
        "numba.cuda.simulator",
        "numba.cuda.dispatcher",
        "numba.cuda.cgutils",
        "numba.cuda.nvvmutils",
        "numba.cuda.extending",
        "numba.core",
        "cuda.core",
        "cuda.bindings",
        "llvmlite",
    )
    for path in SOURCES:
        if part_of(_module_name(path)) == "lowering":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            for name in names:
                assert not name.startswith(private), (
                    f"{path.relative_to(PKG)}:{node.lineno} imports {name}: numba-cuda and driver "
                    "internals belong in simtsafe.lowering"
                )


def test_import_forms_are_all_seen(tmp_path: Path) -> None:
    """The scanner itself: every form of import is reported, TYPE_CHECKING ones are not."""
    probe = PKG / "host" / "_layering_probe.py"
    probe.write_text(
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "import simtsafe.cli\n"
        "from simtsafe.sim import x\n"
        "from simtsafe import thread\n"
        "from .. import _errors\n"
        "from ..decoration._params import Param\n"
        "from . import _launch\n"
        "if TYPE_CHECKING:\n"
        "    from ..host import hidden\n"
        "def f():\n"
        "    from ..decoration import _rewrite\n"
        "    importlib.import_module('simtsafe.lowering._sim')\n"
    )
    try:
        got = {(t, f) for t, f, _ in imports_of(probe)}
    finally:
        probe.unlink()
    assert got == {
        ("cli", False),
        ("sim", False),
        ("thread", False),
        ("_errors", False),
        ("decoration._params", False),
        ("host._launch", False),
        ("decoration._rewrite", True),
        ("lowering._sim", True),
    }
