"""Helpers for tests that need kernels defined from inline source.

``@simtsafe.kernel`` reads the function's source and rejects closures, so a
test cannot define a kernel inside its own body. ``load_kernel_module``
writes the source to a real ``.py`` file under the test's ``tmp_path`` and
imports it as a fresh module: every test keeps its kernel next to its
assertions, and decoration-time rejections surface as exceptions raised by
the import itself.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
import types
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "HEADER",
    "assert_ptx_accepted",
    "assert_refused",
    "line_of",
    "load_kernel_module",
    "ptx_refusal",
]

#: Prepended to every inline kernel module (the usual simtsafe imports).
HEADER = (
    "import numpy as np\n"
    "from numba import cuda\n"
    "import simtsafe as ss\n"
    "from simtsafe import (\n"
    "    DisjointSlice, DisjointSlice2D, DisjointSlice3D, In, In2D, In3D, Index1D, Index2D,\n"
    "    Index3D, PerBlock, PerWarp, thread,\n"
    ")\n"
)


def load_kernel_module(tmp_path: Path, source: str) -> types.ModuleType:
    """Write ``HEADER + source`` to ``tmp_path/mod_<uuid>.py`` and import it.

    Exceptions raised while the module executes (a kernel rejected at
    decoration) propagate unchanged; the half-imported module is dropped.
    """
    name = f"ss_testmod_{uuid.uuid4().hex}"
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + textwrap.dedent(source).lstrip("\n"))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def source_path(tmp_path: Path) -> Path:
    """The single module file ``load_kernel_module`` wrote under ``tmp_path``."""
    (path,) = tmp_path.glob("ss_testmod_*.py")
    return path


def line_of(tmp_path: Path, marker: str) -> int:
    """1-based line number of the only line of the written module containing ``marker``."""
    lines = source_path(tmp_path).read_text().splitlines()
    hits = [n for n, text in enumerate(lines, start=1) if marker in text]
    assert len(hits) == 1, f"marker {marker!r} found on lines {hits}"
    return hits[0]


def run_or_compile(kernel, grid, block, *host_args):  # type: ignore[no-untyped-def]
    """Accept-path helper shared by tests/sim and tests/ptx.

    On the real CUDA target: compile the kernel to PTX (a rule that wrongly
    rejects it raises here) and return None. On the simulator: copy the numpy
    arguments to the device, launch through ``prepare`` and return the host
    copies of every array argument afterwards (scalars are passed through).
    """
    import numpy as np
    from numba import cuda

    import simtsafe

    if not simtsafe.SIMULATOR:
        ptx = kernel.ptx()
        assert ".entry" in ptx
        return None
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in host_args]
    kernel.prepare(grid=grid, block=block)(*dev)
    return [d.copy_to_host() if hasattr(d, "copy_to_host") else d for d in dev]


def assert_refused(
    tmp_path: Path, source: str, fragment: str, act: Callable[[types.ModuleType], object]
) -> Any:
    """Load ``source``, run ``act`` on the module (compile it, or launch it on the
    simulator), and check the ``SafetyError`` it raises: ``fragment`` in the message and
    the line marked ``# BAD`` as its line. Returns the error."""
    import pytest

    import simtsafe

    with pytest.raises(simtsafe.SafetyError) as info:
        act(load_kernel_module(tmp_path, source))
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")
    return info.value


def assert_ptx_accepted(tmp_path: Path, source: str, cc: tuple[int, int] = (9, 0)) -> None:
    """``source``'s kernel ``k`` passes every compile-time check and compiles for ``cc``."""
    import simtsafe

    k = load_kernel_module(tmp_path, source).k
    assert simtsafe.check_kernel(k) == []
    assert ".entry" in k.ptx(cc=cc)


def ptx_refusal(tmp_path: Path, source: str, cc: tuple[int, int] = (9, 0)) -> str:
    """Compile ``source``'s kernel ``k`` for ``cc`` with NVVM and return the message of the
    ``SafetyError`` it raises (the test fails if it compiles)."""
    import pytest

    import simtsafe

    with pytest.raises(simtsafe.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=cc)
    return str(info.value)
