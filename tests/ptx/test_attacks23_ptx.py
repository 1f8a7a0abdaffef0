"""Attack round 23 (tests/kernels/attacks23.py) on the real target (NVVM, no GPU): a helper
reached through a module attribute (`mod.helper(x)`) is part of what the kernel reaches -- its
unsafe region untrusts memory, its source and constant arrays join the cache key -- and
constant memory is not trusted beside an unsafe region that stores (an unchecked store may
land there); a fence-only region keeps it trusted."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks23 import FINDINGS, HELPER_MODULES
from tests.kernels.constmem_cases import UNIFORM_BESIDE_UNSAFE

pytestmark = pytest.mark.ptx

CC = (9, 0)
UNIFORMITY = "needs every thread of the block to reach it"


@pytest.fixture
def helper_modules(tmp_path: Path) -> Iterator[Path]:
    """attacks23's helper modules, importable (fresh names per test)."""
    where = tmp_path / "helpers"
    where.mkdir()
    for name, source in HELPER_MODULES.items():
        (where / f"{name}.py").write_text(source)
    sys.path.insert(0, str(where))
    try:
        yield where
    finally:
        sys.path.remove(str(where))
        for name in HELPER_MODULES:
            sys.modules.pop(name, None)


def test_a_module_helpers_unsafe_region_untrusts_memory(
    tmp_path: Path, helper_modules: Path
) -> None:
    """Finding 2: x[0] steered block.sum although the helper's unchecked store may land in x;
    refused as when the helper is imported by name."""
    mod = load_kernel_module(tmp_path, FINDINGS["module-helper-unsafe-trusts-memory"])
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    assert info.value.rule == "uniformity" and UNIFORMITY in str(info.value), str(info.value)


def test_a_module_helper_is_reached(tmp_path: Path, helper_modules: Path) -> None:
    """Finding 1's cause: the helper called as ``hm23.bias`` is among what the kernel reaches,
    so its source and its constant array's snapshot are in the kernel's cache key."""
    mod = load_kernel_module(tmp_path, FINDINGS["module-helper-cache-key"])
    mod.k.ptx(cc=CC)
    names = {f.name for f in mod.k._reachable()}
    assert names == {"k", "bias"}, names


def test_constant_memory_untrusted_beside_a_storing_unsafe_region(tmp_path: Path) -> None:
    """Finding 3: the unchecked store may land in constant memory's bytes; refused. The
    accepted twin: an unsafe region holding only a fence keeps constant reads trusted."""
    mod = load_kernel_module(tmp_path, FINDINGS["const-trusted-beside-unchecked-store"])
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    assert info.value.rule == "uniformity" and UNIFORMITY in str(info.value), str(info.value)
    twin = tmp_path / "twin"
    twin.mkdir()
    assert "bar.sync" in load_kernel_module(twin, UNIFORM_BESIDE_UNSAFE).steer.ptx(cc=CC)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("longdouble-table", "takes an array of numbers (bool, integers, floats, complex); got"),
        (
            "lying-nbytes",
            "takes at most 65536 bytes (the GPU's constant bank), got an array of 80000",
        ),
    ],
)
def test_tables_no_gpu_can_hold_refused_at_decoration(
    tmp_path: Path, name: str, fragment: str
) -> None:
    """Findings 4 and 5: a longdouble table (no GPU type: Numba's raw 'Unsupported array
    dtype') and a subclass whose nbytes lies (ptxas: too much constant data)."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, FINDINGS[name])
    assert info.value.rule == "const-array" and fragment in str(info.value), str(info.value)
