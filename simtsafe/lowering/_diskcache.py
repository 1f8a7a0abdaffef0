"""The on-disk cache of ``cache=True`` kernels: compile once per machine, not once per process.

An entry holds what a compile produced and what the checks concluded: the
Numba kernel (PTX and cubin, serialized by numba-cuda itself), the PTX of a
``ptx()`` call, or the simulator's verdict -- stored only for a kernel the
checks accepted. It is found by a key that covers everything that decides
the compiled code and the verdict (the caller builds the kernel's part:
source, rewritten code, declaration, the values of its scope, options,
layouts, compute capability), to which this module adds the environment:
the versions of Python, Numba, numba-cuda, llvmlite, the CUDA bindings and
compiler wheels, and a hash of simtsafe's own source files. Any change gives
another key; an old entry is simply never found again.

Location: ``$SIMTSAFE_CACHE_DIR``, else ``$XDG_CACHE_HOME/simtsafe``, else
``~/.cache/simtsafe``. Writes are atomic (a temporary file renamed into
place); a file that cannot be read is a miss.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "environment_key", "load", "store"]

_PACKAGES = (
    "numba",
    "numba-cuda",
    "llvmlite",
    "numpy",
    "cuda-bindings",
    "cuda-core",
    "cuda-toolkit",
    "nvidia-nvvm",
    "nvidia-nvjitlink",
    "nvidia-cuda-nvrtc",
)


def cache_dir() -> Path:
    """Where entries live (created on first store)."""
    explicit = os.environ.get("SIMTSAFE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "simtsafe"


@functools.cache
def environment_key() -> str:
    """What the installation contributes to every key."""
    h = hashlib.sha256()
    h.update(sys.version.encode())
    for name in _PACKAGES:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{name}={version};".encode())
    package = Path(__file__).resolve().parent.parent  # simtsafe/
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _path(key: str) -> Path:
    digest = hashlib.sha256((environment_key() + key).encode()).hexdigest()
    return cache_dir() / digest[:2] / f"{digest}.pkl"


def load(key: str) -> dict[str, Any] | None:
    """The entry stored under ``key``, or None."""
    path = _path(key)
    try:
        with path.open("rb") as f:
            entry = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
        return None
    return entry if isinstance(entry, dict) and entry.get("key") == key else None


def store(key: str, entry: dict[str, Any]) -> None:
    """Store ``entry`` under ``key`` (best effort: a cache that cannot be written is a miss)."""
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump({**entry, "key": key}, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, RuntimeError, TypeError):
        return
