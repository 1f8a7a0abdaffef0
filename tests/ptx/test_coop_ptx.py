"""Collectives and accumulators in PTX (NVVM, no GPU): the instructions each one costs.

Warp collectives are shuffles only (``shfl.sync``, no barrier, no shared
memory); block collectives are one shuffle tree, one 32-entry shared buffer
and two ``bar.sync`` (exchange + reuse), one in a kernel body with an exact
block (two buffers alternate); accumulators are one
unsigned bounds check and one ``atom``; nothing spills to local memory and
nothing is a call. A hand-written raw Numba kernel with the same schedule
has the same shuffles, barriers and global traffic.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.coop_cases import collective_source

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _count(ptx: str, op: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(op)}\b", ptx, flags=re.MULTILINE))


def _assert_clean(ptx: str) -> None:
    assert ".local" not in ptx, "collective spilled to local memory"
    assert _count(ptx, "call") == 0, "collective compiled to a call"
    assert not re.search(r"\btrap\b", ptx)


def _one(tmp_path: Path, expr: str, dtype: str = "float32") -> str:
    mod = load_kernel_module(
        tmp_path,
        f"""
import operator


@ss.device
def plus(a, b):
    return a + b


@ss.kernel
def one(out: DisjointSlice[np.{dtype}], a: In[np.{dtype}]) -> None:
    i = thread.index_1d()
    v = a[i]
    out[i] = {expr}
""",
    )
    ptx: str = mod.one.ptx(cc=CC)
    _assert_clean(ptx)
    return ptx


# (expression, shfl.sync.<mode> counts for a 32-bit type, bar.sync count)
COSTS = [
    ("ss.warp.sum(v)", {"bfly": 5, "down": 5, "idx": 1, "up": 0}, 0),
    ("ss.warp.max(v)", {"bfly": 5, "down": 5, "idx": 1, "up": 0}, 0),
    ("ss.warp.reduce(v, plus)", {"bfly": 0, "down": 5, "idx": 1, "up": 0}, 0),
    ("ss.warp.scan(v)", {"bfly": 0, "down": 0, "idx": 0, "up": 5}, 0),
    ("ss.warp.scan(v, inclusive=False)", {"bfly": 0, "down": 0, "idx": 0, "up": 6}, 0),
    ("ss.warp.broadcast(v)", {"bfly": 0, "down": 0, "idx": 1, "up": 0}, 0),
    ("ss.block.sum(v)", {"bfly": 0, "down": 5, "idx": 0, "up": 0}, 2),
    ("ss.block.min(v)", {"bfly": 0, "down": 5, "idx": 0, "up": 0}, 2),
    ("ss.block.reduce(v, plus)", {"bfly": 0, "down": 5, "idx": 0, "up": 0}, 2),
    ("ss.block.scan(v)", {"bfly": 0, "down": 0, "idx": 0, "up": 5}, 2),
    ("ss.block.scan(v, inclusive=False)", {"bfly": 0, "down": 0, "idx": 0, "up": 6}, 2),
    ("ss.block.broadcast(v)", {"bfly": 0, "down": 0, "idx": 0, "up": 0}, 2),
]


@pytest.mark.parametrize(("expr", "shuffles", "barriers"), COSTS)
def test_each_collective_costs_what_its_algorithm_says(
    tmp_path: Path, expr: str, shuffles: dict[str, int], barriers: int
) -> None:
    ptx = _one(tmp_path, expr)
    for mode, n in shuffles.items():
        assert _count(ptx, f"shfl.sync.{mode}.b32") == n, (mode, ptx.count("shfl.sync"))
    assert _count(ptx, "bar.sync") == barriers
    shared = _count(ptx, "st.shared.f32") + _count(ptx, "ld.shared.f32")
    assert (shared > 0) == (barriers > 0), "block collectives exchange through shared memory"


def test_sixty_four_bit_values_shuffle_as_two_words(tmp_path: Path) -> None:
    ptx = _one(tmp_path, "ss.block.sum(v)", "float64")
    assert _count(ptx, "shfl.sync.down.b32") == 10
    assert _count(ptx, "add.f64") >= 5


def test_block_sync_is_one_barrier(tmp_path: Path) -> None:
    ptx = _one(tmp_path, "v\n    ss.block.sync()")
    assert _count(ptx, "bar.sync") == 1


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64", "float32", "float64"])
@pytest.mark.parametrize("scope", ["block", "warp"])
def test_every_collective_compiles_for_every_type(tmp_path: Path, scope: str, dtype: str) -> None:
    mod = load_kernel_module(tmp_path, collective_source(dtype, scope))
    ptx = mod.collectives.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "bar.sync") == (16 if scope == "block" else 0)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "bool_"])
def test_small_types_compile(tmp_path: Path, dtype: str) -> None:
    expr = "ss.block.max(v) + ss.warp.min(v)" if dtype != "bool_" else "ss.block.max(v)"
    ptx = _one(tmp_path, expr, dtype)
    assert _count(ptx, "shfl.sync.down.b32") >= 5


def test_float_max_is_one_instruction_per_step(tmp_path: Path) -> None:
    ptx = _one(tmp_path, "ss.warp.max(v)")
    assert _count(ptx, "max.f32") >= 10  # 5 butterfly steps + 5 down-tree steps


# ----------------------------------------------------------------------------- raw twin

BLOCK_SUM = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1)))
def block_sum(out: DisjointSlice[np.float32, PerBlock], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[thread.block_leader()] = ss.block.sum(a[i])
"""


def raw_block_sum(out, a):  # type: ignore[no-untyped-def]
    """The same schedule by hand for a fixed 256-thread block: a down tree per warp,
    8 partials, an unrolled fold, one barrier (a single call: nothing reuses the buffer)."""
    buf = cuda.shared.array(8, np.float32)
    i = cuda.grid(1)
    v = a[i] if i < a.shape[0] else np.float32(0)
    lane = cuda.threadIdx.x & 31
    for off in (16, 8, 4, 2, 1):
        t = cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        if lane + off < 32:
            v += t
    if lane == 0:
        buf[cuda.threadIdx.x >> 5] = v
    cuda.syncthreads()
    s = buf[0]
    for j in range(1, 8):
        s += buf[j]
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x] = s


def test_block_sum_matches_its_raw_twin(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, BLOCK_SUM)
    safe = mod.block_sum.ptx(cc=CC)
    raw, _ = cuda.compile_ptx(raw_block_sum, mod.block_sum.argtypes(), cc=CC)
    for op in ("ld.global", "st.global", "bar.sync", "shfl.sync.down.b32"):
        assert _count(safe, op) == _count(raw, op), op
    assert _count(safe, "bar.sync") == 1
    _assert_clean(safe)


# ----------------------------------------------------------------------------- accumulators

HISTOGRAM = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1)))
def histogram(h: ss.Accumulate[np.uint32], values: In[np.int32]) -> None:
    bins = ss.shared.accumulator(256, np.uint32)
    for w in thread.grid_stride(values):
        bins.add(values[w], 1)
    ss.block.sync()
    t = thread.index_1d().index % 256
    h.add(t, bins[t])
"""


def raw_histogram(h, values):  # type: ignore[no-untyped-def]
    bins = cuda.shared.array(256, np.uint32)
    bins[cuda.threadIdx.x] = 0
    cuda.syncthreads()
    for k in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        v = values[k]
        if 0 <= v < 256:
            cuda.atomic.add(bins, v, 1)
    cuda.syncthreads()
    t = cuda.threadIdx.x
    cuda.atomic.add(h, t, bins[t])


def test_histogram_matches_its_raw_twin(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, HISTOGRAM)
    safe = mod.histogram.ptx(cc=CC)
    raw, _ = cuda.compile_ptx(raw_histogram, mod.histogram.argtypes(), cc=CC)
    _assert_clean(safe)
    for op in ("atom.shared.add.u32", "atom.global.add.u32", "bar.sync", "ld.global"):
        assert _count(safe, op) == _count(raw, op) > 0, op


def test_every_update_is_one_bounds_check_then_one_atomic(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel
def scatter(acc: ss.Accumulate[np.float32], idx: In[np.int64], v: In[np.float32]) -> None:
    i = thread.index_1d()
    acc.add(idx[i], v[i])
""",
    )
    ptx = mod.scatter.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "atom.global.add.f32") == 1
    # The index check is one unsigned compare against the accumulator's extent (negative
    # indices are huge unsigned ones), guarding the atomic.
    before = ptx[: ptx.index("atom.global.add.f32")]
    assert re.search(r"setp\.(ge|lt|gt|le)\.u64", before.split("ld.global.f32")[-1] + before)


def test_float_min_max_use_numbas_compare_and_swap(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel
def mm(acc: ss.Accumulate[np.float64], v: In[np.float64]) -> None:
    i = thread.index_1d()
    acc.max(0, v[i])
    acc.min(1, v[i])
""",
    )
    ptx = mod.mm.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "atom.global.cas.b64") == 2


def test_shared_accumulator_is_shared_memory_cleared_by_the_block(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel
def sh(out: DisjointSlice[np.int32], v: In[np.int32]) -> None:
    acc = ss.shared.accumulator(100, np.int32)
    i = thread.index_1d()
    acc.max(v[i], 7)
    acc.min(3, v[i])
    ss.block.sync()
    out[i] = acc[v[i]] + len(acc)
""",
    )
    ptx = mod.sh.ptx(cc=CC)
    _assert_clean(ptx)
    assert re.search(r"\.shared \.align 16 \.b8 __ss_acc_\w+\[400\]", ptx)
    assert _count(ptx, "st.shared.u32") == 1  # the zero fill
    assert _count(ptx, "atom.shared.max.s32") == 1
    assert _count(ptx, "atom.shared.min.s32") == 1
    assert _count(ptx, "bar.sync") == 2  # after the zero fill, and the user's


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("x = acc[0]", "an Accumulate is not read during the launch"),
        ("acc[0] = 1", "not written with `acc[i] = v`"),
        ("x = acc.dtype", "has no .dtype"),
        ("acc.add(1.5, 1)", "the index must be an int"),
    ],
)
def test_accumulate_misuse_is_refused(tmp_path: Path, body: str, message: str) -> None:
    mod = load_kernel_module(
        tmp_path,
        f"""
@ss.kernel
def misuse(acc: ss.Accumulate[np.int32]) -> None:
    {body}
""",
    )
    with pytest.raises(ss.SafetyError, match=re.escape(message)):
        mod.misuse.ptx(cc=CC)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("ss.block.reduce(v, operator.xor)", "needs integer or bool values"),
        ("ss.warp.sum((v, v))[0]", "warp.sum(v) takes a number"),
        ("ss.block.reduce(v, twice)", "must take two float32 values"),
        ("ss.block.sum(np.float16(v))", "does not take float16"),
    ],
)
def test_collective_misuse_is_refused(tmp_path: Path, expr: str, message: str) -> None:
    mod = load_kernel_module(
        tmp_path,
        f"""
import operator


@ss.device
def twice(a):
    return a + a


@ss.kernel
def bad(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i]
    out[i] = {expr}
""",
    )
    with pytest.raises(ss.SafetyError, match=re.escape(message)):
        mod.bad.ptx(cc=CC)


def test_shared_accumulator_needs_a_static_size_and_an_atomic_type(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel
def bad(out: DisjointSlice[np.int32], n: np.int32) -> None:
    acc = ss.shared.accumulator(8, np.int16)
    out[thread.index_1d()] = acc[0]
""",
    )
    with pytest.raises(ss.SafetyError, match="needs an element type with CUDA atomics"):
        mod.bad.ptx(cc=CC)


# ----------------------------------------------------------------------------- exact blocks

EXACT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=({x}, 1, 1)))
def exact(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = ss.warp.sum(a[i]) + ss.block.sum(a[i])
"""


def test_an_exact_block_folds_the_geometry(tmp_path: Path) -> None:
    """With .reqntid, a block of whole warps has no partial-warp path and no fold loop."""
    ptx = load_kernel_module(tmp_path, EXACT.format(x=256)).exact.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "shfl.sync.bfly.b32") == 5
    assert _count(ptx, "shfl.sync.idx.b32") == 0  # warp.sum's partial path is gone
    assert _count(ptx, "shfl.sync.down.b32") == 5  # block.sum's tree only
    assert "%ntid.y" not in ptx and "%tid.z" not in ptx
    # One barrier (two alternating buffers), and the 8 warp totals folded without a loop.
    assert _count(ptx, "bar.sync") == 1
    assert _count(ptx, "ld.shared.v2.f32") == 4, "the fold over 8 warps should be unrolled"


LOOPED = """
@ss.kernel{contract}
def looped(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i]
    for _ in range(5):
        v = ss.block.sum(v) * np.float32(0.5) + ss.block.scan(v) + ss.block.broadcast(v)
    out[i] = v
"""


@pytest.mark.parametrize(
    ("contract", "per_call"),
    [("(contract=ss.LaunchContract(domain=1, block=(128, 1, 1)))", 1), ("", 2)],
    ids=["exact-block", "no-contract"],
)
def test_barriers_per_call_in_a_loop(tmp_path: Path, contract: str, per_call: int) -> None:
    """Kernel body with .reqntid: double buffers, one barrier per call; else two."""
    ptx = load_kernel_module(tmp_path, LOOPED.format(contract=contract)).looped.ptx(cc=CC)
    _assert_clean(ptx)
    bars = _count(ptx, "bar.sync")
    loops = len(re.findall(r"^\$L__BB\d+_\d+:", ptx, flags=re.MULTILINE))
    assert bars in (3 * per_call, 5 * 3 * per_call), (bars, loops)  # rolled, or unrolled 5x


def test_a_helper_keeps_the_trailing_barrier(tmp_path: Path) -> None:
    """In a @simtsafe.device helper the parity would restart per call: two barriers."""
    ptx = load_kernel_module(
        tmp_path,
        """
@ss.device
def total(v):
    return ss.block.sum(v)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(128, 1, 1)))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = total(a[i]) + total(a[i] * np.float32(2))
""",
    ).k.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "bar.sync") == 4


def test_an_exact_block_with_a_partial_warp_keeps_its_path(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, EXACT.format(x=100)).exact.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "shfl.sync.idx.b32") == 1
    assert _count(ptx, "shfl.sync.down.b32") == 10
