"""``simtsafe check``: every rule on every line, as a CI gate, without a GPU.

Imports the given modules (files, directories, or packages; ``_modules``),
which decorates their kernels and helpers (decoration-time rules), then
checks every kernel and helper *made while they were imported* -- wherever
it ended up: a module attribute, a list or dict, a class attribute, a closure
behind a rebound name, a factory's result (``_registry``). Each kernel is
compiled to PTX with NVVM (the strict analysis of the frozen scope, then
Numba's typing with simtsafe's rules: every line is typed, not only the lines
a simulated thread happens to run); a dtype-generic kernel once per binding
its type variables admit (``bindings``). Each helper's frozen scope is
checked. The sources are scanned for raw launches (``kernel.unchecked[...]``)
outside ``with simtsafe.unsafe(...)``.

A finding is ``file:line:col: CODE message``; codes are ``SS-<rule>`` for the
safety rules, ``SS-import`` for a module that fails to import, ``SS-internal``
for an error inside simtsafe or Numba (a bug to report).

What the gate cannot see: a kernel a factory makes after import (when the
program runs). It is checked at its first compile, or in a test with
``simtsafe.check_kernel(kernel)``, which runs exactly these checks on one
object.
"""

from __future__ import annotations

import ast
import itertools
import math
import os
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._compose import DeviceFunction, Kernel
from .._errors import LaunchContractError, SafetyError
from .._toolchain import missing_library
from ..decoration import _registry
from ..decoration._params import admits, allowed_types
from ..lowering._compat import SIMULATOR
from ._modules import Target, display_path, fresh_imports, import_target, targets

__all__ = [
    "MAX_BINDINGS",
    "NOT_SEEN",
    "Finding",
    "GateReport",
    "Note",
    "bindings",
    "check_kernel",
    "check_paths",
    "collect",
    "qualified_name",
    "raw_launches",
]

#: What the gate cannot see, said in every summary.
NOT_SEEN = (
    "kernels a factory makes after import are checked at their first compile, "
    "or in a test with simtsafe.check_kernel(kernel)"
)

#: Dtype bindings compiled per generic kernel at most (every admitted type still gets one).
MAX_BINDINGS = 16

#: The numpy scalar types a type variable's bound is tried with, most common first.
SCALAR_TYPES: tuple[type, ...] = (
    np.float32,
    np.float64,
    np.int32,
    np.int64,
    np.float16,
    np.int8,
    np.int16,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.bool_,
    np.complex64,
    np.complex128,
)


@dataclass(frozen=True)
class Finding:
    """One problem, at a place in a file (``path`` relative to the working directory)."""

    path: str
    line: int
    col: int
    code: str
    message: str
    kernel: str = ""  # module.qualname of the kernel or helper, when there is one

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Note:
    """Something the gate did not fully check, and why (not a failure)."""

    path: str
    line: int
    kernel: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: note: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class GateReport:
    """What ``check_paths`` found and what it checked."""

    findings: list[Finding]
    kernels: list[str]
    helpers: list[str]
    files: list[str]
    generic: int = 0  # dtype-generic kernels among ``kernels``
    bindings: int = 0  # dtype bindings compiled for them
    notes: list[Note] = field(default_factory=list)


# --------------------------------------------------------------------------- raw launches


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


def _syntax_finding(exc: SyntaxError, fallback: str) -> Finding:
    return Finding(
        display_path(exc.filename or fallback),
        exc.lineno or 1,
        exc.offset or 1,
        "SS-syntax",
        str(exc.msg),
    )


def raw_launches(path: Path) -> list[Finding]:
    """Raw launches outside ``simtsafe.unsafe`` in one source file."""
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        return [_syntax_finding(exc, str(path))]
    finder = _RawLaunchFinder()
    finder.visit(tree)
    return [
        Finding(
            display_path(path),
            line,
            col,
            "SS-raw-launch",
            'raw launch `.unchecked[...]` outside `with simtsafe.unsafe("SAFETY: ..."):`: use '
            "kernel.prepare(...) or state why the launch is sound",
        )
        for line, col in finder.found
    ]


# --------------------------------------------------------------------------- one object


def qualified_name(obj: Kernel[Any] | DeviceFunction) -> str:
    """``module.qualname`` of the function a kernel or helper was made from."""
    fn = obj.py_func
    return f"{fn.__module__}.{fn.__qualname__}"


def _where(obj: Kernel[Any] | DeviceFunction) -> tuple[str, int, int]:
    """The ``def`` line of a kernel or helper."""
    node = obj._decl.source.node
    return display_path(obj.filename), node.lineno, node.col_offset + 1


def _one_line(text: str) -> str:
    return " ".join(text.split())


def bindings(kernel: Kernel[Any]) -> tuple[list[dict[str, type]], int]:
    """The dtype bindings the gate compiles a generic kernel for, and how many it admits.

    Each type variable ranges over its constraints, or for a bound (or none)
    over the numpy scalar types in ``SCALAR_TYPES`` that the bound admits.
    Up to ``MAX_BINDINGS`` of the product are compiled: when it is larger,
    bindings that use every admitted type of every variable at least once,
    then the product in order up to the cap.
    """
    tvs = kernel.typevars
    choices: list[tuple[type, ...]] = []
    for tv in tvs.values():
        allowed = allowed_types(tv)
        if allowed is None:
            allowed = tuple(t for t in SCALAR_TYPES if admits(tv, np.dtype(t)))
        choices.append(allowed)
    total = math.prod(len(c) for c in choices)
    if total <= MAX_BINDINGS:
        combos = list(itertools.product(*choices))
    else:
        combos = [tuple(c[i % len(c)] for c in choices) for i in range(max(map(len, choices)))]
        for combo in itertools.product(*choices):
            if len(combos) >= MAX_BINDINGS:
                break
            if combo not in combos:
                combos.append(combo)
    return [dict(zip(tvs, combo, strict=True)) for combo in combos], total


def _label(binding: dict[str, type]) -> str:
    return ", ".join(f"{n}={np.dtype(t).name}" for n, t in binding.items())


@dataclass
class _Checked:
    findings: list[Finding] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    compiled: list[Any] = field(default_factory=list)  # the concrete kernels compiled
    bindings: int = 0


def _failure(exc: Exception, obj: Kernel[Any] | DeviceFunction, name: str) -> Finding:
    """A finding for ``exc`` raised while checking ``obj``; CUDA libraries missing re-raise."""
    missing = missing_library(exc)
    if missing is not None:
        raise missing from None
    path, line, col = _where(obj)
    if isinstance(exc, SafetyError):
        at = exc.lineno or line
        where = exc.source_line
        col = len(where) - len(where.lstrip()) + 1 if where else 1
        return Finding(
            display_path(exc.filename or obj.filename),
            at,
            col,
            f"SS-{exc.rule or 'safety'}",
            _one_line(exc.message),
            name,
        )
    if isinstance(exc, LaunchContractError):
        return Finding(path, line, col, "SS-contract", _one_line(str(exc)), name)
    return Finding(
        path,
        line,
        col,
        "SS-internal",
        f"checking {name!r} raised {type(exc).__name__}: {_one_line(str(exc))} -- an error "
        "inside simtsafe or numba-cuda that no simtsafe rule names; if the kernel is valid "
        "code, please report it with this line",
        name,
    )


def _check(obj: Kernel[Any] | DeviceFunction, cc: tuple[int, int]) -> _Checked:
    """What the gate does with one kernel or helper."""
    name = qualified_name(obj)
    done = _Checked()
    if isinstance(obj, DeviceFunction):
        try:
            obj._recheck()
        except Exception as exc:
            done.findings.append(_failure(exc, obj, name))
        return done
    if not obj.typevars:
        done.compiled.append(obj)
        try:
            obj.ptx(cc=cc)
        except Exception as exc:
            done.findings.append(_failure(exc, obj, name))
        return done
    chosen, total = bindings(obj)
    path, line, _ = _where(obj)
    if not chosen:
        done.notes.append(
            Note(
                path,
                line,
                name,
                f"kernel {name!r}: its type variables admit no numpy scalar "
                "type the gate can compile; bind them with constraints, e.g. "
                "TypeVar('T', np.float32, np.float64)",
            )
        )
    elif len(chosen) < total:
        done.notes.append(
            Note(
                path,
                line,
                name,
                f"kernel {name!r} admits {total} dtype bindings; compiled {len(chosen)} that use "
                f"every admitted type of each type variable at least once (cap {MAX_BINDINGS}). "
                "Narrow the TypeVars with constraints, or check others in a test with "
                "simtsafe.check_kernel(kernel.instantiate(...))",
            )
        )
    # One finding per distinct failure, naming every binding that hits it.
    failed: dict[Finding, list[str]] = {}
    for binding in chosen:
        done.bindings += 1
        try:
            concrete = obj.instantiate(**binding)
            done.compiled.append(concrete)
            concrete.ptx(cc=cc)
        except Exception as exc:
            failed.setdefault(_failure(exc, obj, name), []).append(_label(binding))
    for finding, labels in failed.items():
        message = f"{finding.message} (compiled for {'; '.join(labels)})"
        done.findings.append(
            Finding(finding.path, finding.line, finding.col, finding.code, message, name)
        )
    return done


def check_kernel(
    obj: Kernel[Any] | DeviceFunction, *, cc: tuple[int, int] = (9, 0)
) -> list[Finding]:
    """Run the gate's checks on one kernel or helper; an empty list means it passes.

    ``simtsafe check`` sees the kernels made while it imports your modules.
    A kernel a factory makes later -- when the program runs -- is checked at
    its first compile; call this in a test to check it in CI instead::

        def test_blur_kernels_pass_the_gate():
            for radius in (1, 2, 3):
                assert simtsafe.check_kernel(make_blur(radius)) == []

    Exactly what the gate does for each object: a kernel is compiled to PTX
    for ``cc`` with NVVM (no GPU), a dtype-generic one for every binding its
    type variables admit (at most ``MAX_BINDINGS``: instantiate others
    yourself); a helper's frozen scope is checked. Rule violations come back
    as findings (``Finding.code`` ``SS-<rule>``), as does any other error while
    compiling (``SS-internal``).

    Raises:
        TypeError: ``obj`` is not a ``@simtsafe.kernel`` or ``@simtsafe.device``.
        RuntimeError: ``NUMBA_ENABLE_CUDASIM=1`` is set (PTX needs the CUDA target).
        ImportError: ``CudaLibrariesMissing``, NVVM or NVRTC cannot be loaded;
            the message says what to install.
    """
    if not isinstance(obj, Kernel | DeviceFunction):
        raise TypeError(
            f"simtsafe.check_kernel checks a @simtsafe.kernel or @simtsafe.device, got "
            f"{type(obj).__name__}"
        )
    if SIMULATOR:
        raise RuntimeError(
            "simtsafe.check_kernel compiles to PTX with NVVM (no GPU needed); unset "
            "NUMBA_ENABLE_CUDASIM to run it"
        )
    return _check(obj, cc).findings


# --------------------------------------------------------------------------- the gate


def _import_finding(exc: BaseException, target: Target, files: set[str]) -> Finding:
    """A finding for a module whose import raised ``exc``, at the line that raised it."""
    if isinstance(exc, SyntaxError):
        return _syntax_finding(exc, target.file)
    if isinstance(exc, SafetyError) and exc.filename is not None:
        col = len(exc.source_line) - len(exc.source_line.lstrip()) + 1 if exc.source_line else 1
        return Finding(
            display_path(exc.filename),
            exc.lineno or 1,
            col,
            f"SS-{exc.rule or 'safety'}",
            _one_line(exc.message),
            str(exc.kernel or ""),
        )
    frames = traceback.extract_tb(exc.__traceback__)
    path, line = target.file, 1
    for frame in frames:  # innermost frame in a checked file: the user's line
        if os.path.abspath(frame.filename) in files:
            path, line = os.path.abspath(frame.filename), frame.lineno or 1
    code = "SS-import"
    if isinstance(exc, SafetyError):
        code = f"SS-{exc.rule or 'safety'}"
    elif isinstance(exc, LaunchContractError):
        code = "SS-contract"
    raised = ""
    if frames and os.path.abspath(frames[-1].filename) != path:
        raised = f" (raised at {display_path(frames[-1].filename)}:{frames[-1].lineno})"
    return Finding(
        display_path(path),
        line,
        1,
        code,
        f"importing {target.name} failed: {type(exc).__name__}: {_one_line(str(exc))}{raised}; "
        "the kernels made before this line are checked, the rest of the module is not",
    )


@dataclass
class Collected:
    """The kernels and helpers made while importing some modules, and the import failures."""

    objects: list[Kernel[Any] | DeviceFunction]
    failures: list[Finding]


def collect(todo: Sequence[Target]) -> Collected:
    """Import every target and gather the kernels and helpers their import made, in order.

    Call inside ``fresh_imports(todo)``: the objects live as long as their
    modules, which stay imported until it exits. Kept: what a target's
    top-level code made (directly, or through a factory defined anywhere),
    and what functions of a target made while some target was imported.
    Kernels of other libraries the targets import are theirs to check.
    """
    names = {t.name for t in todo}
    files = {t.file for t in todo}
    made: list[_registry.Created] = []
    failures: list[Finding] = []
    for target in todo:
        position = _registry.mark()
        failure: BaseException | None = None
        try:
            import_target(target)
        except (Exception, SystemExit) as exc:  # a decoration refusal, or any import failure
            failure = exc  # keeps the failed module's frames (and its kernels) alive
        made += _registry.created_since(position)
        if failure is not None:
            missing = missing_library(failure)
            if missing is not None:  # e.g. a module that compiles a kernel at import
                raise missing from None
            failures.append(_import_finding(failure, target, files))
            del failure
    seen: set[int] = set()
    objects: list[Kernel[Any] | DeviceFunction] = []
    for entry in made:
        obj = entry.obj
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if entry.module in names or obj.py_func.__module__ in names:
            objects.append(obj)
    return Collected(objects, failures)


def check_paths(paths: Sequence[Path], cc: tuple[int, int] = (9, 0)) -> GateReport:
    """Import, decorate, compile and scan everything under ``paths``.

    Raises:
        CudaLibrariesMissing: NVVM or NVRTC cannot be loaded (nothing else is reported).
    """
    todo = targets(paths)
    report = GateReport([], [], [], [display_path(t.file) for t in todo])
    syntax_errors: set[str] = set()
    for target in todo:
        found = raw_launches(Path(target.file))
        report.findings += found
        syntax_errors.update(f.path for f in found if f.code == "SS-syntax")
    with fresh_imports(todo):
        collected = collect([t for t in todo if display_path(t.file) not in syntax_errors])
        report.findings += collected.failures
        checked: set[int] = set()  # concrete kernels compiled (instances of generics included)
        for obj in collected.objects:
            if id(obj) in checked:
                continue  # an instance the user made of a generic kernel checked above
            name = qualified_name(obj)
            (report.helpers if isinstance(obj, DeviceFunction) else report.kernels).append(name)
            done = _check(obj, cc)
            checked.update(id(k) for k in done.compiled)
            report.findings += done.findings
            report.notes += done.notes
            report.bindings += done.bindings
            report.generic += bool(done.bindings)
        del collected
    report.findings = sorted(set(report.findings), key=lambda f: (f.path, f.line, f.col, f.code))
    return report
