"""Attack round 35 (tests/kernels/attacks35.py) on the real target (NVVM, no GPU).

FINDING 1: the launch path's dispatcher is shared by ``kernel.unchecked`` and the checked
launches; an overload Numba compiled for an unchecked launch (outside simtsafe's compile, so
NVVM got Numba's text with its poison flags, not the wrapping form) was reused by
``specialize`` for a checked launch of the same argument types, and accepted -- the analysis
reads the wrapping form of any text -- while its PTX has round 34's exit before the barrier.
Fixed: the unchecked launcher compiles inside simtsafe's compile, and ``_verify`` refuses
texts that are not the wrapping form NVVM must have compiled.

Held: carried-copy twins (15 unsafe refused, 7 safe accepted, 6 safe still refused),
``max_threads`` ranges (8 accepted and safe, 7 refused), libdevice rebound by name (2),
complex tiles as one integer (5 refused, 4 accepted and safe).

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
from tests.kernels import load_kernel_module, ptx_refusal
from tests.kernels.attacks33 import NOT_UNIFORM_BLOCK, poison_kernel
from tests.kernels.attacks34 import FINDING_EXITS
from tests.kernels.attacks34 import FINDINGS as ROUND34
from tests.kernels.attacks35 import (
    COMPLEX_TILES_ACCEPTED,
    COMPLEX_TILES_REFUSED,
    LIBDEVICE_REFUSED,
    MAX_THREADS_ACCEPTED,
    MAX_THREADS_PAST_A_BLOCK,
    MAX_THREADS_REFUSED,
    NOT_UNIFORM_SYNC,
    TUPLE_INDEX,
    TWINS_ACCEPTED,
    TWINS_REFUSED,
    TWINS_STILL_REFUSED,
    bound_kernel,
    complex_tile_kernel,
    twin_kernel,
)

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


# ------------------------------------------------------------------ held: carried copies


@pytest.mark.parametrize("name", sorted(TWINS_REFUSED))
def test_unsafe_carried_copies_are_refused(tmp_path: Path, name: str) -> None:
    """Some run reads the tuple at 4 or more: refused at the tuple index."""
    msg = ptx_refusal(tmp_path, twin_kernel(TWINS_REFUSED[name]))
    assert NOT_UNIFORM_BLOCK in msg
    assert TUPLE_INDEX in msg


@pytest.mark.parametrize("name", sorted(TWINS_ACCEPTED))
def test_safe_carried_copies_are_accepted(tmp_path: Path, name: str) -> None:
    """Every read is inside the tuple (attacks35's docstring says why, shape by shape)."""
    ptx = load_kernel_module(tmp_path, twin_kernel(TWINS_ACCEPTED[name])).k.ptx(cc=CC)
    assert "bar.sync" in ptx


@pytest.mark.parametrize("name", sorted(TWINS_STILL_REFUSED))
def test_safe_carried_copies_still_refused(tmp_path: Path, name: str) -> None:
    body, fragment = TWINS_STILL_REFUSED[name]
    msg = ptx_refusal(tmp_path, twin_kernel(body))
    assert NOT_UNIFORM_BLOCK in msg
    assert fragment in msg


# ------------------------------------------------------------------ held: max_threads


@pytest.mark.parametrize("name", sorted(MAX_THREADS_ACCEPTED))
def test_branches_max_threads_decides_are_accepted(tmp_path: Path, name: str) -> None:
    """No thread leaves in a block of at most max_threads threads (or the whole block does);
    the bound the proof used is the one stamped (``.maxntid``), which prepare's function
    check and the driver enforce."""
    domain, most, cond = MAX_THREADS_ACCEPTED[name]
    ptx = load_kernel_module(tmp_path, bound_kernel(domain, most, cond)).k.ptx(cc=CC)
    stamped = re.search(r"\.maxntid (\d+), 1, 1", ptx)
    assert stamped is not None
    assert int(stamped.group(1)) == most % 2**32


@pytest.mark.parametrize("name", sorted(MAX_THREADS_REFUSED))
def test_branches_max_threads_leaves_open_are_refused(tmp_path: Path, name: str) -> None:
    domain, most, cond, fragment = MAX_THREADS_REFUSED[name]
    msg = ptx_refusal(tmp_path, bound_kernel(domain, most, cond))
    assert NOT_UNIFORM_SYNC in msg
    assert f"control flow here is {fragment}" in msg


# ------------------------------------------------------------------ held: libdevice identity


@pytest.mark.parametrize("name", sorted(LIBDEVICE_REFUSED))
def test_a_rebound_libdevice_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    import numba.cuda.libdevice as libdevice

    src, attribute, fragment = LIBDEVICE_REFUSED[name]
    monkeypatch.setattr(libdevice, attribute, getattr(libdevice, attribute))  # restored after
    msg = ptx_refusal(tmp_path, src)
    assert fragment in msg


# ------------------------------------------------------------------ held: complex tiles


@pytest.mark.parametrize("name", sorted(COMPLEX_TILES_REFUSED))
def test_another_threads_complex_element_in_the_fill_interval_is_refused(
    tmp_path: Path, name: str
) -> None:
    dims, dtype, pad, body, fragment = COMPLEX_TILES_REFUSED[name]
    msg = ptx_refusal(tmp_path, complex_tile_kernel(dims, dtype, pad, body))
    assert fragment in msg


@pytest.mark.parametrize("name", sorted(COMPLEX_TILES_ACCEPTED))
def test_own_complex_elements_are_accepted_with_aligned_accesses(tmp_path: Path, name: str) -> None:
    dims, dtype, pad, body, access = COMPLEX_TILES_ACCEPTED[name]
    ptx = load_kernel_module(tmp_path, complex_tile_kernel(dims, dtype, pad, body)).k.ptx(cc=CC)
    assert access in ptx
    assert set(re.findall(r"\.shared \.align (\d+)", ptx)) == {"16"}


@pytest.mark.parametrize("most", MAX_THREADS_PAST_A_BLOCK)
def test_max_threads_past_a_cuda_block_is_refused_by_the_contract(most: int) -> None:
    with pytest.raises(
        ValueError,
        match=f"max_threads must be <= 1024, the most threads a CUDA block has, got {most}",
    ):
        ss.LaunchContract(domain=1, max_threads=most)
    assert ss.LaunchContract(domain=1, max_threads=1024).max_threads == 1024
