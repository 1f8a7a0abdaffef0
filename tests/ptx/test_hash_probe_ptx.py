"""The probe loop of a hash insert against its raw twin's, in PTX (issue 19).

``benchmarks/irregular.py`` times the safe insert (``keys.insert``) and the TSDF
allocation (``examples/tsdf``) against raw Numba twins of the same probe: a plain
load of each slot, ``cuda.atomic.cas`` at an empty one. The safe loop used to read
each slot with ``ld.volatile`` (an L2 round trip per probed slot, where the raw
twin's neighbouring slots hit L1) and to carry the outcome through the loop (28
instructions against the raw twin's 26 for the insert, 24 for the allocation).
Pinned here: the safe probe loop holds the raw twin's memory instructions (one
weak ``ld.global`` of the key, the ``atom.global.cas``), no volatile or strong load
and no other atomic (failures are counted once, after the loop), and no more
instructions than the raw twin's loop.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from numba import cuda

from simtsafe.lowering._compat import assume_compute_capability
from tests.ptx.ptx_text import innermost_loop, loop_span

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples"))

import irregular  # noqa: E402  (benchmarks/irregular.py)
from tsdf import kernels as K  # noqa: E402
from tsdf import raw as R  # noqa: E402

pytestmark = pytest.mark.ptx

CC = (9, 0)
PAIRS: dict[str, tuple[Any, Any, int]] = {
    "hash insert": (irregular.hash_insert, irregular.hash_insert_raw, 32),
    "tsdf allocate": (K.allocate, R.allocate_raw, 64),
}
_CAS = r"^atom\.global\.cas\.b(32|64)\b"
_PTX: dict[str, tuple[str, str]] = {}


def _ptx(name: str) -> tuple[str, str]:
    if name not in _PTX:
        safe, raw, _ = PAIRS[name]
        with assume_compute_capability(CC):
            raw_ptx, _ = cuda.compile_ptx(raw.py_func, safe.argtypes(), cc=CC)
        _PTX[name] = (safe.ptx(cc=CC), raw_ptx)
    return _PTX[name]


def _memory(loop: list[str]) -> list[str]:
    """The loop's memory instructions (opcode only), sorted."""
    ops = (re.sub(r"^@!?%p\d+\s+", "", line).split()[0] for line in loop)
    return sorted(op for op in ops if op.startswith(("ld.", "st.", "atom.", "red.")))


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_probe_loop_is_the_raw_twins(name: str) -> None:
    safe_ptx, raw_ptx = _ptx(name)
    bits = PAIRS[name][2]
    safe, raw = innermost_loop(safe_ptx, _CAS), innermost_loop(raw_ptx, _CAS)
    mem = sorted([f"ld.global.u{bits}", f"atom.global.cas.b{bits}"])
    assert _memory(safe) == mem == _memory(raw), (safe, raw)
    assert not [line for line in safe if ".volatile" in line or ".relaxed" in line]
    assert len(safe) <= len(raw), "\n".join(safe)


def _exits(span: list[str], inside: set[str]) -> int:
    """Branches from the loop to a label outside it (the back edge excluded)."""
    targets = (re.search(r"\bbra(?:\.uni)?\s+(\$L\w+);", line) for line in span[:-1])
    return sum(1 for m in targets if m and m.group(1) not in inside)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_probe_loop_is_counted_and_leaves_where_it_decides(name: str) -> None:
    # Issue 19, H100: insert at load 0.9 ran at 0.908 of the raw twin. The probe that
    # ended back at its home slot, with one exit after a join behind the swap, made ptxas
    # put a YIELD (a forward-progress point for loops it cannot count) and a convergence
    # barrier around the swap into every probe (sm_90 SASS: 2 YIELDs in the insert
    # kernel, the raw twin 1). The probe now counts the slots left, as the raw twin's
    # range() does, and leaves at each decision: the peek's hit, the swap won, the swap
    # lost to the same key.
    safe_ptx, raw_ptx = _ptx(name)
    safe, inside = loop_span(safe_ptx, _CAS)
    raw, raw_inside = loop_span(raw_ptx, _CAS)
    assert _exits(safe, inside) >= 3
    assert _exits(safe, inside) >= _exits(raw, raw_inside)
    back = re.match(r"^@(%p\d+)\s+bra(?:\.uni)?\s+\$L\w+;", safe[-1])
    assert back is not None, safe[-1]
    test = next(
        line for line in reversed(safe) if re.match(rf"^setp\.[\w.]+\s+{back.group(1)},", line)
    )
    counter = re.match(r"^setp\.ne\.[su]64\s+%p\d+,\s+(%rd\d+),\s+0;", test)
    assert counter is not None, test  # the back edge tests a count against 0
    assert any(
        re.match(rf"^add\.s64\s+{re.escape(counter.group(1))},\s+%rd\d+,\s+-1;", line)
        for line in safe
    ), "\n".join(safe)
