"""Attack round 35 (tests/kernels/attacks35.py) on the real target (NVVM, no GPU).

FINDING 1: the launch path's dispatcher is shared by ``kernel.unchecked`` and the checked
launches; an overload Numba compiled for an unchecked launch (outside simtsafe's compile, so
NVVM got Numba's text with its poison flags, not the wrapping form) was reused by
``specialize`` for a checked launch of the same argument types, and accepted -- the analysis
reads the wrapping form of any text -- while its PTX has round 34's exit before the barrier.
Fixed: the unchecked launcher compiles inside simtsafe's compile, and ``_verify`` refuses
texts that are not the wrapping form NVVM must have compiled.

No GPU here: Numba's launch is run with its device steps stubbed (``_Kernel.bind``/
``launch``, the device's compute capability), so that the dispatcher compiles for the
arguments' types exactly as a launch does and nothing runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.lowering._compat import assume_compute_capability
from tests.kernels import load_kernel_module
from tests.kernels.attacks33 import poison_kernel
from tests.kernels.attacks34 import FINDING_EXITS
from tests.kernels.attacks34 import FINDINGS as ROUND34

pytestmark = pytest.mark.ptx

CC = (9, 0)

#: the refusal of an overload whose texts are not the wrapping form
NOT_SIMTSAFE_COMPILED = "its compiled code was not made by simtsafe's compile"


def _before_barrier(ptx: str) -> str:
    entry = ptx[ptx.index(".entry") :]
    return entry[: entry.index("bar.sync")]


@pytest.fixture
def no_device(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Numba's launch path without a GPU: compile for the arguments' types, run nothing."""
    import numba.cuda.dispatcher as dispatcher
    from numba.cuda.codegen import CUDACodeLibrary

    monkeypatch.setattr(CUDACodeLibrary, "_ensure_cc", lambda self, cc: cc or (*CC, ""))
    monkeypatch.setattr(dispatcher._Kernel, "bind", lambda self: None)
    monkeypatch.setattr(dispatcher._Kernel, "launch", lambda self, *a, **k: None)
    monkeypatch.setattr(dispatcher.config, "CUDA_LOW_OCCUPANCY_WARNINGS", False)
    with assume_compute_capability(CC):
        yield


def _kernel(tmp_path: Path, name: str) -> Any:
    return load_kernel_module(tmp_path, poison_kernel(ROUND34[name])).k


def _unchecked_launch(k: Any) -> None:
    # host arrays of the ABI's types (the stubbed launch moves nothing)
    out, a = np.zeros(128, np.float32), np.zeros(128, np.int64)
    with ss.unsafe("SAFETY: one block of 128 threads, arrays of 128 elements"):
        k.unchecked[1, 128](out, a, np.int64(128))


# ------------------------------------------------------------------ FINDING 1 (fixed)


@pytest.mark.usefixtures("no_device")
@pytest.mark.parametrize("name", sorted(ROUND34))
def test_a_checked_launch_after_an_unchecked_one_has_no_exit(tmp_path: Path, name: str) -> None:
    """Accepted and safe: the unchecked launch's overload, which the checked launch reuses
    (same argument types, one dispatcher), is compiled inside simtsafe's compile, so NVVM
    got the wrapping form and its default level has nothing to fold one half of the identity
    through. Before the fix the checked launch ran PTX with round 34's exit before
    ``bar.sync`` (NVVM had Numba's ``add nsw`` / oversized ``shl``)."""
    k = _kernel(tmp_path, name)
    _unchecked_launch(k)
    spec = k.specialize()
    ptx = spec.numba_kernel._codelibrary.get_asm_str()
    assert not re.search(FINDING_EXITS[name], _before_barrier(ptx))


@pytest.mark.usefixtures("no_device")
@pytest.mark.parametrize("name", sorted(ROUND34))
def test_an_overload_compiled_outside_simtsafe_is_refused(tmp_path: Path, name: str) -> None:
    """Refused: an overload the shared dispatcher compiled outside simtsafe's compile (what
    any raw launch of its compiled function does) has Numba's text, which the checks do not
    read; the checked launch no longer reuses it. Before the fix: accepted, with the exit."""
    k = _kernel(tmp_path, name)
    k._get_dispatcher().compile(k.argtypes())  # Numba's own launch, outside simtsafe_typing
    with pytest.raises(ss.SafetyError) as info:
        k.specialize()
    assert NOT_SIMTSAFE_COMPILED in str(info.value)
    assert "Compile it through simtsafe (prepare(), ptx())" in str(info.value)


@pytest.mark.usefixtures("no_device")
@pytest.mark.parametrize("name", sorted(ROUND34))
def test_a_checked_launch_alone_has_no_exit(tmp_path: Path, name: str) -> None:
    """The twin with no unchecked launch before it: accepted, no exit (round 34's fix)."""
    k = _kernel(tmp_path, name)
    ptx = k.specialize().numba_kernel._codelibrary.get_asm_str()
    assert not re.search(FINDING_EXITS[name], _before_barrier(ptx))
