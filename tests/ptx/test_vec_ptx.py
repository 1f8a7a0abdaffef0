"""simtsafe.vec.load in PTX (NVVM, no GPU): one ld.global.v2/v4 per run.

The safe kernel has the vector load (taken when the run is whole and aligned)
and one guarded scalar read per element on the other path (misaligned or
edge runs), nothing else: no call, no local memory, no trap. Runs of 1- and
2-byte elements are read as 32-bit words (NVPTX would split ``<8 x half>``
into two 8-byte loads). (No raw Numba twin: numba.cuda has no way to spell a
vector load of an array's elements.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.vec_cases import LOAD_RUNS_REFUSED, LOAD_RUNS_SOURCE, RUNS_SOURCE, gemv_source
from tests.ptx.ptx_text import (
    control_flow,
    count,
    fast_path,
    loads_in_flight,
    loads_per_block,
    loops,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _count(ptx: str, pattern: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{pattern}", ptx, flags=re.MULTILINE))


@pytest.mark.parametrize(
    ("dt", "n", "vector"),
    [
        ("float32", 4, r"ld\.global\.v4\.f32"),
        ("float32", 2, r"ld\.global\.v2\.f32"),
        ("float64", 2, r"ld\.global\.v2\.f64"),
        ("int32", 4, r"ld\.global\.v4\.u32"),
        ("uint64", 2, r"ld\.global\.v2\.u64"),
        ("float16", 8, r"ld\.global\.v4\.u32"),
        ("float16", 4, r"ld\.global\.v2\.u32"),
        ("int8", 8, r"ld\.global\.v2\.u32"),
    ],
)
def test_one_vector_load_per_run(tmp_path: Path, dt: str, n: int, vector: str) -> None:
    mod = load_kernel_module(tmp_path, RUNS_SOURCE.format(dt=dt, n=n))
    ptx: str = mod.runs.ptx(cc=CC)
    assert _count(ptx, r"ld\.global\.v\d") == 1, ptx
    assert _count(ptx, vector) == 1, ptx
    # the other path: one guarded scalar read per element, and one store
    assert _count(ptx, r"ld\.global\.(?!v\d)") == n
    assert _count(ptx, r"st\.global") == 1
    assert _count(ptx, "call") == 0 and ".local" not in ptx
    assert not re.search(r"\btrap\b", ptx)


@pytest.mark.parametrize(
    ("dt", "n", "vector", "store"),
    [
        ("float32", 4, r"ld\.global\.v4\.f32", r"st\.global\.f32"),
        ("float16", 8, r"ld\.global\.v4\.u32", r"st\.global\.u16"),
        ("float64", 2, r"ld\.global\.v2\.f64", r"st\.global\.f64"),
    ],
)
def test_gemv_reads_two_vectors_per_step(
    tmp_path: Path, dt: str, n: int, vector: str, store: str
) -> None:
    mod = load_kernel_module(tmp_path, gemv_source(dt, n))
    ptx: str = mod.gemv.ptx(cc=CC)
    blocks = control_flow(ptx)
    everywhere = range(len(blocks))
    assert count(blocks, everywhere, r"ld\.global\.v\d") == count(blocks, everywhere, vector)
    # One run of W and one of x per step, each one vector load, nothing scalar, both in flight
    # before either is used: on the fast path of the loop for aligned runs. (LLVM may keep
    # other copies of the loop: unswitched on x's alignment, which is tested once, and
    # unrolled; a copy for a misaligned x reads x element by element.)
    shapes = []
    for loop in loops(blocks):
        path = fast_path(blocks, loop, vector)
        steps = count(blocks, path, r"add\.f32")  # acc += ..., once a step
        shapes.append(
            (
                count(blocks, path, vector) - 2 * steps,
                count(blocks, path, r"ld\.global\.(?!v\d)"),
                loads_in_flight(blocks, path, vector),
                steps,
            )
        )
    assert any(
        extra == 0 and scalar == 0 and flight >= 2 and steps >= 1
        for extra, scalar, flight, steps in shapes
    ), shapes
    assert _count(ptx, store) == 1
    assert _count(ptx, "call") == 0 and ".local" not in ptx


STEER = """
@ss.kernel
def steer(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = ss.vec.load(a, {idx}, 4)
    if {cond} > 0:
        ss.block.sync()
    out[i] = v[0]
"""


@pytest.mark.parametrize(
    ("idx", "message"),
    [
        ("cuda.threadIdx.x", "the branch at line 12 depends on the thread's index"),
        # a run at a uniform index: the compiled-form analysis does not prove vector runs
        # in range (verify/_ranges proves scalar reads only), so the value is thread-dependent
        ("0", "the branch at line 12 depends on a read of input 'a' at line 11"),
    ],
)
def test_barrier_steered_by_a_vector_load_is_refused(
    tmp_path: Path, idx: str, message: str
) -> None:
    mod = load_kernel_module(tmp_path, STEER.format(idx=idx, cond="v[1]"))
    with pytest.raises(ss.SafetyError, match=re.escape(message)) as info:
        mod.steer.ptx(cc=CC)
    assert "`block.sync` needs every thread of the block to reach it" in str(info.value)


def test_barrier_steered_by_a_broadcast_vector_value_is_accepted(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, STEER.format(idx="0", cond="ss.block.broadcast(v[1])"))
    ptx: str = mod.steer.ptx(cc=CC)
    assert _count(ptx, r"ld\.global\.v4\.f32") == 1


@pytest.mark.parametrize(
    ("params", "expr", "message"),
    [
        (
            "a: In[np.float32]",
            "ss.vec.load(out, 0, 4)",
            "vec.load reads an In[...] input array or a shared tile; got",
        ),
        ("a: In3D[np.float32]", "ss.vec.load(a, 0, 4)", "vec.load reads 1D or 2D inputs; got a 3D"),
        ("a: In[np.float32]", "ss.vec.load(a, (0, 1), 4)", "of a 1D input takes an int j"),
        ("a: In2D[np.float32]", "ss.vec.load(a, 0, 4)", "of a 2D input takes a pair (row, j)"),
        ("a: In[np.bool_]", "ss.vec.load(a, 0, 4)", "reads float, int and uint elements"),
        ("a: In[np.float32]", "ss.vec.load(a, 0, 8)", "8 elements of 4 bytes are 32. Use n = 2"),
    ],
)
def test_refused_reads(tmp_path: Path, params: str, expr: str, message: str) -> None:
    src = f"""
@ss.kernel
def k(out: DisjointSlice[np.float32], {params}) -> None:
    i = thread.index_1d()
    v = {expr}
    out[i] = v[0]
"""
    mod = load_kernel_module(tmp_path, src)
    with pytest.raises(ss.SafetyError, match=re.escape(message)):
        mod.k.ptx(cc=CC)


def test_accepted_twin_of_the_refused_reads(tmp_path: Path) -> None:
    src = """
@ss.kernel
def k(out: DisjointSlice[np.float32], a: In2D[np.float32]) -> None:
    i = thread.index_1d()
    v = ss.vec.load(a, (0, 1), 4)
    out[i] = v[0]
"""
    ptx: str = load_kernel_module(tmp_path, src).k.ptx(cc=CC)
    assert _count(ptx, r"ld\.global\.v4\.f32") == 1


BF16_RUNS = """
@ss.kernel
def runs(out: DisjointSlice2D[np.float32], a: In[ss.bfloat16], shift: np.int64) -> None:
    i = thread.index_2d()
    j = cuda.threadIdx.y - shift
    v = ss.vec.load(a, j, 8)
    out[i] = v[cuda.threadIdx.x]
"""


def test_bf16_runs_are_one_16_byte_load_widened_to_float32(tmp_path: Path) -> None:
    ptx: str = load_kernel_module(tmp_path, BF16_RUNS).runs.ptx(cc=CC)
    assert _count(ptx, r"ld\.global\.v4\.u32") == 1, ptx
    assert _count(ptx, r"ld\.global\.(?!v\d)") == 8  # the guarded element path
    # the value is a float32: the bf16 bits shifted into the high half, stored as 32 bits
    assert _count(ptx, r"shl\.b32\s+%r\d+, %r\d+, 16;") >= 1
    assert _count(ptx, r"st\.global\.(?:f32|u32|b32)") == 1
    assert _count(ptx, "call") == 0 and ".local" not in ptx


def test_load_runs_issues_its_vector_loads_in_one_block(tmp_path: Path) -> None:
    """The three runs' loads sit in one straight-line block (ptxas may issue them back to
    back: all in flight together), the only vector loads of the kernel; the path taken when
    some run is not whole and aligned reads every run element by element (a vector path per
    run there would be the fast path's own code, which LLVM merges with it)."""
    ptx: str = load_kernel_module(tmp_path, LOAD_RUNS_SOURCE.format(n=4)).runs3.ptx(cc=CC)
    loads = loads_per_block(ptx, r"ld\.global\.v4\.f32")
    assert max(loads) == 3 and sum(loads) == 3, loads
    assert _count(ptx, r"ld\.global\.v\d") == 3
    assert _count(ptx, r"ld\.global\.f32") == 12  # 3 runs x 4 guarded elements
    assert _count(ptx, "call") == 0 and ".local" not in ptx


def test_single_vec_loads_keep_a_check_between_their_accesses(tmp_path: Path) -> None:
    """The twin that load_runs exists for: three vec.loads put each access in its own block."""
    src = LOAD_RUNS_SOURCE.format(n=4).replace(
        "r0, r1, r2 = ss.vec.load_runs(a, ((0, j), (1, j + step), (2, j)), 4)",
        "r0 = ss.vec.load(a, (0, j), 4)\n    r1 = ss.vec.load(a, (1, j + step), 4)\n"
        "    r2 = ss.vec.load(a, (2, j), 4)",
    )
    ptx: str = load_kernel_module(tmp_path, src).runs3.ptx(cc=CC)
    loads = loads_per_block(ptx, r"ld\.global\.v4\.f32")
    assert max(loads) == 1 and sum(loads) == 3, loads


@pytest.mark.parametrize("case", sorted(LOAD_RUNS_REFUSED))
def test_load_runs_refusals(tmp_path: Path, case: str) -> None:
    source, message = LOAD_RUNS_REFUSED[case]
    with pytest.raises(ss.SafetyError, match=re.escape(message)):
        load_kernel_module(tmp_path, source).runs3.ptx(cc=CC)
