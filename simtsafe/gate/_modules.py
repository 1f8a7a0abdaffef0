"""The modules that paths given to ``simtsafe check`` / ``audit`` name, and importing them.

A file inside a package (directories with ``__init__.py`` all the way up) is
imported by its dotted name with the package root on ``sys.path``, so its
relative imports work and its kernels are named ``pkg.mod.qualname``. A file
outside any package is imported by its stem with its own directory on
``sys.path``, as ``python file.py`` would see its siblings. Never under a
generated name: the name is what findings call the kernels.

Each target is executed afresh (a module of that name imported earlier is set
aside and put back afterwards), so that the kernels its top-level code makes
are made while the gate watches (``_registry``).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = ["Target", "display_path", "fresh_imports", "import_target", "targets"]

#: Files a directory walk does not import: running them has effects beyond defining things.
_SKIPPED_FILES = frozenset({"__main__.py", "setup.py", "conftest.py"})
_SKIPPED_DIRS = frozenset({"__pycache__", "site-packages", "node_modules", "build", "dist"})


@dataclass(frozen=True)
class Target:
    """One module to import: its file, its dotted name, the directory that makes the name work."""

    file: str  # absolute
    name: str
    root: str  # absolute; put on sys.path while checking

    @property
    def parents(self) -> list[str]:
        parts = self.name.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts))]


def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` relative to the working directory when it lies below it, else absolute."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute)
    return absolute if rel == ".." or rel.startswith(".." + os.sep) else rel


def module_of(file: Path) -> Target:
    """The dotted name of ``file``: walk up while the directory is a package."""
    file = Path(os.path.abspath(file))
    parts = [] if file.name == "__init__.py" else [file.stem]
    directory = file.parent
    while (directory / "__init__.py").is_file() and directory.name.isidentifier():
        parts.insert(0, directory.name)
        directory = directory.parent
    if not parts:  # an __init__.py outside a package directory: a module named after its folder
        parts, directory = [file.parent.name], file.parent.parent
    return Target(str(file), ".".join(parts), str(directory))


def _walk(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.iterdir()):
        if path.is_dir():
            if not path.name.startswith(".") and path.name not in _SKIPPED_DIRS:
                yield from _walk(path)
        elif path.suffix == ".py" and path.name not in _SKIPPED_FILES:
            yield path


def targets(paths: Sequence[Path]) -> list[Target]:
    """Every module under ``paths`` (files as given; directories walked), each once, in order."""
    found: dict[str, Target] = {}
    for path in paths:
        files = [path] if path.is_file() else list(_walk(path))
        for file in files:
            target = module_of(file)
            found.setdefault(target.file, target)
    return list(found.values())


def _same_file(module: ModuleType, file: str) -> bool:
    origin = getattr(module, "__file__", None)
    return origin is not None and os.path.abspath(origin) == file


def _installed(module: ModuleType) -> bool:
    """Is ``module`` part of the Python installation (stdlib, site-packages), not user code?"""
    origin = getattr(module, "__file__", None)
    if origin is None:
        return True  # builtin or namespace: never set aside
    origin = os.path.abspath(origin)
    prefixes = {os.path.abspath(p) + os.sep for p in (sys.prefix, sys.base_prefix)}
    return any(origin.startswith(p) for p in prefixes)


@contextlib.contextmanager
def fresh_imports(todo: Sequence[Target]) -> Iterator[None]:
    """Make ``import_target`` execute each target afresh; put ``sys`` back as it was afterwards.

    Modules of the targets' names (and parent packages from another place)
    imported before are set aside and restored; what the targets' packages
    import meanwhile is dropped again, so a second run sees edited files.
    """
    expected = {t.name: t.file for t in todo}
    for t in todo:  # parent packages: their __init__.py below the target's root
        for parent in t.parents:
            init = os.path.join(t.root, *parent.split("."), "__init__.py")
            expected.setdefault(parent, init)
    packages = {n.split(".")[0] for n in expected}
    saved: dict[str, ModuleType] = {}
    for name in sorted(expected):
        module = sys.modules.get(name)
        is_target = any(t.name == name for t in todo)
        if module is None or _installed(module):
            continue  # an installed module keeps its name: import_target reports the clash
        if is_target or not _same_file(module, expected[name]):
            saved[name] = sys.modules.pop(name)
    before = set(sys.modules)
    old_path = list(sys.path)
    old_bytecode = sys.dont_write_bytecode
    for root in dict.fromkeys(t.root for t in todo):
        sys.path.insert(0, root)
    sys.dont_write_bytecode = True  # the gate leaves no __pycache__ in the user's tree
    importlib.invalidate_caches()  # files written moments ago (tests, editors) are seen
    try:
        yield
    finally:
        sys.path[:] = old_path
        sys.dont_write_bytecode = old_bytecode
        for name in list(sys.modules):
            if name not in before and name.split(".")[0] in packages:
                del sys.modules[name]
        sys.modules.update(saved)


class ShadowedModule(ImportError):
    """The dotted name of a target resolved to another file (an installed package of that name)."""


def import_target(target: Target) -> ModuleType:
    """Import ``target`` by its name (inside ``fresh_imports``).

    Raises:
        ShadowedModule: the name imports a different file than the target's.
        Exception: whatever the module's own code raises.
    """
    module = importlib.import_module(target.name)
    if not _same_file(module, target.file):
        raise ShadowedModule(
            f"the name {target.name!r} imports {getattr(module, '__file__', None)}, not "
            f"{display_path(target.file)}: another module of that name comes first on sys.path; "
            "rename the module or check its package instead"
        )
    return module
