"""Attack round 13 on whole-tile fills, compiled form (NVVM, no GPU): the test that lets every
run of a fill be one ``cp.async`` (tests/kernels/attacks13.py). Its ignore-src predicate is
"the run's first column lies outside the input", right only where no run straddles the row's
start: the test must require the row's start aligned, not only the origin's and the end's
addresses -- else a view from an element offset with a negative origin got its first
elements zero-filled on the GPU (the values themselves: tests/sim/test_attacks13_sim.py, on
a GPU through tests/gpu/test_async_fill_gpu.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels import load_kernel_module
from tests.kernels.attacks13 import ROW_START

pytestmark = pytest.mark.ptx

CC = (9, 0)
#: The input ``a``'s data pointer: field 4 of its array struct, after the 7 fields of ``out``
#: (meminfo, parent, nitems, itemsize, data, shape, strides) and 4 of ``a``'s own.
DATA_PARAM = "_param_11"


def _definitions(ptx: str) -> dict[str, str]:
    """Each register's defining instruction (the kernel's registers are assigned once)."""
    out: dict[str, str] = {}
    for line in ptx.splitlines():
        m = re.match(r"\s*([a-z][\w.]*)\s+(%\w+),", line)
        if m:
            out[m.group(2)] = line.strip()
    return out


def _or_leaves(defs: dict[str, str], reg: str) -> set[str]:
    """The operands an ``or.b64`` tree rooted at ``reg`` combines."""
    line = defs.get(reg, "")
    m = re.match(r"or\.b64\s+%\w+, (%\w+), (%\w+);", line)
    if not m:
        return {reg}
    return _or_leaves(defs, m.group(1)) | _or_leaves(defs, m.group(2))


def _alignment_tests(ptx: str) -> list[set[str]]:
    """The leaves of every ``(x | y | ...) & 15 == 0`` test of the kernel."""
    defs = _definitions(ptx)
    tests = []
    for line in ptx.splitlines():
        m = re.match(r"\s*setp\.eq\.s64\s+%p\d+, (%rd\d+), 0;", line)
        if not m:
            continue
        masked = re.match(r"and\.b64\s+%rd\d+, (%rd\d+), 15;", defs.get(m.group(1), ""))
        if masked:
            tests.append(_or_leaves(defs, masked.group(1)))
    return tests


@pytest.mark.parametrize("name", sorted(ROW_START))
def test_the_whole_runs_test_requires_the_row_start_aligned(tmp_path: Path, name: str) -> None:
    body, _ = ROW_START[name]
    ptx = load_kernel_module(tmp_path, body).k.ptx(cc=CC)  # accepted (layout "C")
    assert re.search(r"@%\w+ cp\.async\.cg\.shared\.global \[%r\d+\], \[%\w+\], 16, %\w+;", ptx)
    defs = _definitions(ptx)
    tests = [t for t in _alignment_tests(ptx) if len(t) >= 2]
    assert tests, "no whole-runs test found"
    # one leaf of the test is the data pointer itself (a[r, 0] of row 0), besides a[r, c0]'s
    # and a[r, cols]'s addresses (and the pitch, 2D)
    for leaves in tests:
        assert any(DATA_PARAM in defs.get(r, "") for r in leaves), (leaves, name)
