"""``simtsafe check``: every rule on every line, as a CI gate, without a GPU.

Imports the given modules (files, directories, or packages), which decorates
their kernels and helpers (decoration-time rules), then compiles every
kernel to PTX with NVVM (the strict analysis of the frozen scope, then
Numba's typing with simtsafe's rules: every line is typed, not only the
lines a simulated thread happens to run), checks every helper's frozen
scope, and scans the sources for raw launches (``kernel.unchecked[...]``)
outside ``with simtsafe.unsafe(...)``. A finding is
``file:line:col: CODE message``; codes are ``SS-<rule>``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import sys
import traceback
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .._errors import LaunchContractError, SafetyError

__all__ = ["Finding", "GateReport", "check_paths", "raw_launches"]


@dataclass(frozen=True)
class Finding:
    """One problem, at a place in a file."""

    path: str
    line: int
    col: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class GateReport:
    """What ``check_paths`` found and what it checked."""

    findings: list[Finding]
    kernels: list[str]
    helpers: list[str]
    files: list[str]


class _RawLaunchFinder(ast.NodeVisitor):
    """Finds ``X.unchecked[...]`` outside ``with <...>.unsafe(...)`` blocks."""

    def __init__(self) -> None:
        self.depth = 0
        self.found: list[tuple[int, int]] = []

    def visit_With(self, node: ast.With) -> None:
        is_unsafe = any(
            isinstance(item.context_expr, ast.Call)
            and (
                (isinstance(f := item.context_expr.func, ast.Attribute) and f.attr == "unsafe")
                or (isinstance(f, ast.Name) and f.id == "unsafe")
            )
            for item in node.items
        )
        self.depth += is_unsafe
        self.generic_visit(node)
        self.depth -= is_unsafe

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        # Kernel bodies are checked by the decorator (`.unchecked` of a view there
        # is a different thing); only host code is scanned for raw launches.
        if any("kernel" in ast.unparse(d) for d in node.decorator_list):
            return
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if (
            isinstance(node.value, ast.Attribute)
            and node.value.attr == "unchecked"
            and not self.depth
        ):
            self.found.append((node.lineno, node.col_offset + 1))
        self.generic_visit(node)


def raw_launches(path: Path) -> list[Finding]:
    """Raw launches outside ``simtsafe.unsafe`` in one source file."""
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        return [Finding(str(path), exc.lineno or 1, exc.offset or 1, "SS-syntax", str(exc.msg))]
    finder = _RawLaunchFinder()
    finder.visit(tree)
    return [
        Finding(
            str(path),
            line,
            col,
            "SS-raw-launch",
            'raw launch `.unchecked[...]` outside `with simtsafe.unsafe("SAFETY: ..."):`: use '
            "kernel.prepare(...) or state why the launch is sound",
        )
        for line, col in finder.found
    ]


def _col(source_line: str | None) -> int:
    if not source_line:
        return 1
    return len(source_line) - len(source_line.lstrip()) + 1


def _finding(exc: BaseException, fallback: Path) -> Finding:
    if isinstance(exc, SafetyError):
        return Finding(
            exc.filename or str(fallback),
            exc.lineno or 1,
            _col(exc.source_line),
            f"SS-{exc.rule or 'safety'}",
            str(exc).splitlines()[0],
        )
    if isinstance(exc, LaunchContractError):
        return Finding(str(fallback), 1, 1, "SS-contract", str(exc).splitlines()[0])
    line = 1
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename).resolve() == fallback.resolve():
            line = frame.lineno or 1
    return Finding(str(fallback), line, 1, "SS-import", f"{type(exc).__name__}: {exc}")


def _modules(path: Path) -> Iterator[tuple[Path, str, str | None]]:
    """(file, module name, package root to put on sys.path) for everything under ``path``."""
    if path.is_file():
        yield path, f"_simtsafe_check_{path.stem}", None
        return
    if (path / "__init__.py").exists():
        root = path.parent
        yield path / "__init__.py", path.name, str(root)
        for info in pkgutil.walk_packages([str(path)], prefix=f"{path.name}."):
            rel = info.name.split(".")[1:]
            file = path.joinpath(*rel)
            file = file / "__init__.py" if info.ispkg else file.with_suffix(".py")
            yield file, info.name, str(root)
        return
    for file in sorted(path.rglob("*.py")):
        yield file, f"_simtsafe_check_{file.stem}_{abs(hash(file))}", None


def _import(file: Path, name: str, root: str | None) -> ModuleType:
    if root is not None:
        return importlib.import_module(name)
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(file.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(file.parent))
    return module


def _instances(kernel: Any) -> list[Any]:
    """A concrete kernel, or every instance of a dtype-generic one over its constraints.

    A type variable with a bound but no constraints is compiled for float32
    (its first admissible common dtype), as a representative.
    """
    import itertools

    import numpy as np

    from ._params import admits, allowed_types

    tvs = kernel.typevars
    if not tvs:
        return [kernel]
    choices = []
    for tv in tvs.values():
        allowed = allowed_types(tv)
        if allowed is None:
            allowed = tuple(
                t for t in (np.float32, np.float64, np.int32, np.int64) if admits(tv, np.dtype(t))
            )[:1]
        choices.append(allowed)
    return [
        kernel.instantiate(**dict(zip(tvs, combo, strict=True)))
        for combo in itertools.product(*choices)
    ]


def check_paths(paths: list[Path], cc: tuple[int, int] = (9, 0)) -> GateReport:
    """Import, decorate, compile and scan everything under ``paths``."""
    from ._decorators import DeviceFunction, Kernel

    report = GateReport([], [], [], [])
    roots: list[str] = []
    try:
        for path in paths:
            for file, name, root in _modules(path):
                report.files.append(str(file))
                report.findings += raw_launches(file)
                if root is not None and root not in sys.path:
                    sys.path.insert(0, root)
                    roots.append(root)
                try:
                    module = _import(file, name, root)
                except Exception as exc:  # a decoration refusal, or any import failure
                    report.findings.append(_finding(exc, file))
                    continue
                for attr, value in sorted(vars(module).items()):
                    if not isinstance(value, Kernel | DeviceFunction):
                        continue
                    if value.py_func.__module__ != module.__name__:
                        continue  # imported from elsewhere: checked where it is defined
                    try:
                        if isinstance(value, Kernel):
                            report.kernels.append(f"{name}.{attr}")
                            for concrete in _instances(value):
                                concrete.ptx(cc=cc)
                        else:
                            report.helpers.append(f"{name}.{attr}")
                            value._recheck()
                    except (SafetyError, LaunchContractError) as exc:
                        report.findings.append(_finding(exc, file))
    finally:
        for root in roots:
            sys.path.remove(root)
    report.findings = sorted(set(report.findings), key=lambda f: (f.path, f.line, f.code))
    return report
