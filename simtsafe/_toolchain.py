"""The CUDA libraries numba-cuda loads, and the one line that says what to install.

numba-cuda finds NVVM, NVRTC, libdevice and the CUDA runtime through
``cuda.pathfinder`` when it first needs them: at import (the runtime) or at
the first compile (NVVM, NVRTC). Without them it raises from deep inside
(``DynamicLibNotFoundError``, ``NvvmSupportError``, a libdevice
``RuntimeError``). ``simtsafe check`` and ``simtsafe.check_kernel`` turn that
into ``CudaLibrariesMissing``, one line naming the library and the fix.

Shared vocabulary: imports nothing from simtsafe and nothing from numba (it
is consulted when importing numba-cuda itself may have failed), so the
errors are recognised by their class and defining package.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

__all__ = ["INSTALL", "CudaLibrariesMissing", "fail_import", "invoked_as_cli", "missing_library"]

#: What to install: the CUDA 13 toolkit wheels (NVVM, NVRTC, runtime); [cu12] for CUDA 12 drivers.
INSTALL = 'pip install "simtsafe[cu13]"'

#: (defining package prefix, class name) of the errors numba-cuda raises for a missing library.
_NOT_FOUND = (
    ("cuda.pathfinder", "DynamicLibNotFoundError"),
    ("numba.cuda", "NvvmSupportError"),
    ("numba.cuda", "NvrtcSupportError"),
    ("numba_cuda", "NvvmSupportError"),
    ("numba_cuda", "NvrtcSupportError"),
)


class CudaLibrariesMissing(ImportError):
    """The CUDA compiler libraries (NVVM, NVRTC) or the CUDA runtime cannot be loaded.

    An ``ImportError``, as numba-cuda's own ``NvvmSupportError``: a library is missing.
    """


def _is_not_found(exc: BaseException) -> bool:
    for cls in type(exc).__mro__:
        if any(
            cls.__name__ == name and cls.__module__.startswith(package)
            for package, name in _NOT_FOUND
        ):
            return True
    # numba-cuda's libdevice check raises a plain RuntimeError with this text.
    return isinstance(exc, RuntimeError) and str(exc).startswith("Missing libdevice file")


def _library(exc: BaseException) -> str:
    """The library an error names, as short as it can be said (``libnvrtc.so.13``...)."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if text.startswith("Failure finding "):
        text = text.removeprefix("Failure finding ").split(":")[0].strip('"')
    elif text.startswith("Missing libdevice file"):
        text = "libdevice"
    return text


def missing_library(exc: BaseException) -> CudaLibrariesMissing | None:
    """The one-line error for ``exc`` when it (or what caused it) is a CUDA library not found."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, CudaLibrariesMissing):
            return current
        if _is_not_found(current):
            return CudaLibrariesMissing(
                f"simtsafe: a CUDA library numba-cuda compiles with is not installed "
                f"({_library(current)} not found): {INSTALL} (for a CUDA 12 driver: "
                '"simtsafe[cu12]")'
            )
        current = current.__cause__ or current.__context__
    return None


def invoked_as_cli() -> bool:
    """Is this process the ``simtsafe`` command (the console script or ``python -m simtsafe``)?"""
    if os.path.basename(sys.argv[0]) in ("simtsafe", "simtsafe.exe"):
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(
        flag == "-m" and target in ("simtsafe", "simtsafe.cli", "simtsafe.__main__")
        for flag, target in zip(argv, argv[1:], strict=False)
    )


def fail_import(exc: BaseException) -> NoReturn:
    """Re-raise a failed ``import numba.cuda``, in one line when a CUDA library is missing.

    The ``simtsafe`` command prints that line alone and exits with status 2
    (never a traceback); a program importing simtsafe gets
    ``CudaLibrariesMissing``. Any other failure is re-raised unchanged.
    """
    missing = missing_library(exc)
    if missing is None:
        raise exc
    if invoked_as_cli():
        print(missing, file=sys.stderr)
        raise SystemExit(2)
    raise missing from None
