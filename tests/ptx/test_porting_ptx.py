"""Every kernel ported in docs/porting.md has the global loads/stores of its original.

The guide's code is loaded on the CUDA target with only its definitions (no
launches: there is no GPU here); each (port, original) pair in ``PAIRS`` is
compiled to PTX for the port's argument types and compared.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import uuid
from pathlib import Path

from numba import cuda

from simtsafe.lowering._compat import assume_compute_capability
from tests.sim.test_tutorial import python_blocks

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "porting.md"
CC = (9, 0)


def _definitions_only(source: str) -> str:
    """Imports, functions, constants and PAIRS bookkeeping: no launches, no asserts."""
    tree = ast.parse(source)
    keep: list[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef):
            keep.append(stmt)
        elif isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id.isupper() for t in stmt.targets
        ):
            keep.append(stmt)
        elif isinstance(stmt, ast.Expr) and ast.unparse(stmt).startswith("PAIRS.append"):
            keep.append(stmt)
    return ast.unparse(ast.Module(body=keep, type_ignores=[]))


def _count(ptx: str, op: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(op)}\b", ptx, flags=re.MULTILINE))


def test_ported_kernels_have_the_originals_memory_traffic(tmp_path: Path) -> None:
    name = f"ss_porting_defs_{uuid.uuid4().hex}"
    path = tmp_path / f"{name}.py"
    path.write_text(_definitions_only("\n\n".join(python_blocks(GUIDE.read_text()))))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    assert len(module.PAIRS) >= 5
    for port, original in module.PAIRS:
        safe = port.ptx(cc=CC)
        with assume_compute_capability(CC):
            raw, _ = cuda.compile_ptx(original.py_func, port.argtypes(), cc=CC)
        for op in ("ld.global", "st.global"):
            assert _count(safe, op) == _count(raw, op), (
                f"{port.name}: {op} safe {_count(safe, op)} vs original {_count(raw, op)}"
            )
        assert "trap;" not in safe
