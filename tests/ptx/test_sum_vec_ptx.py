"""examples/sum_vec.py in PTX: the hot loop reads 16-byte runs (four loads in flight per
thread), the kernel synchronizes the grid once and touches no local memory."""

from __future__ import annotations

import re

import pytest

from tests.coop_examples import example
from tests.ptx.ptx_text import control_flow, count, fast_path, loads_in_flight, loops

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize(("kernel", "width"), [("sum_f32", "f32"), ("sum_i32", "u32")])
def test_runs_are_read_with_vector_loads(kernel: str, width: str) -> None:
    ptx = getattr(example("sum_vec"), kernel).ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert ".reqntid 256, 1, 1" in ptx
    loads = re.findall(r"^\s*ld\.global\.v4\.(\w+)", body, re.MULTILINE)
    assert loads and set(loads) == {width}
    # The float kernel's main loop issues four independent 16-byte loads per step, the int
    # kernel's two: on its fast path they are all issued before any of them is used, with no
    # scalar load. LLVM may keep more copies of the loops (a first iteration peeled, a copy
    # unswitched on the input's alignment, which is tested once, the tail loop unrolled):
    # every loop's fast path reads nothing scalar.
    blocks = control_flow(ptx)
    v4, scalar = r"ld\.global\.v4", r"ld\.global\.(?!v\d)"
    held = [loop for loop in loops(blocks) if count(blocks, loop, v4)]
    paths = [fast_path(blocks, loop, v4) for loop in held]
    assert all(count(blocks, path, scalar) == 0 for path in paths)
    per_step = 4 if kernel == "sum_f32" else 2
    flights = [loads_in_flight(blocks, path, v4) for path in paths]
    assert per_step in flights and max(flights) == per_step, flights
    assert "ld.local" not in body and "st.local" not in body


def test_one_grid_sync_and_no_atomics() -> None:
    body = example("sum_vec").sum_f32.ptx(cc=CC).split(".entry", 1)[1]
    # Deterministic: no atomics at all (a float atomic adds in arrival order).
    assert not re.search(r"^\s*(?:@!?%p\d+\s+)?(?:atom|red)\.", body, re.MULTILINE)
    assert "cudaCGGetIntrinsicHandle" in body or "cudaCGSynchronize" in body
