"""False refusals of attack rounds 23-27 and porting rounds 18 and 20, fixed: each natural, safe kernel
in ``ACCEPTED`` (compiled for sm_90 by tests/ptx/test_fixed_refusals_ptx.py, run on the
simulator against numpy by tests/sim/test_fixed_refusals_sim.py), each beside the rejected
twin in ``REFUSED`` that the relaxation must still refuse, with a fragment of its message.

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). A case's
``args`` builds the host arguments (outputs first) and ``expect`` the expected outputs from
them, as numpy computes them.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ACCEPTED", "HELPER_MODULES", "REFUSED", "Case", "helper_modules_on_path"]


@dataclass(frozen=True)
class Case:
    source: str
    grid: int = 1
    block: int = 64
    #: host arguments, outputs first
    args: Callable[[], tuple[Any, ...]] = field(default=lambda: ())
    #: the expected outputs (the first len(...) arguments) from the host arguments
    expect: Callable[..., tuple[np.ndarray, ...]] = field(default=lambda *a: ())


#: second user modules some cases import (module name -> source)
HELPER_MODULES: dict[str, str] = {
    "fr15ops": """
import numpy as np
from numba import cuda
import simtsafe as ss


@ss.device
def op(x, y):
    return x + y


@ss.device
def lane_op(x, y):
    return x + y + np.float64(cuda.laneid)


def plain(x, y):
    return x + y
""",
    # a module named `cuda` that is not numba.cuda: its `const.array_like` is a plain function
    "fr15fake": """
import types

import numpy as np


def _array_like(a):
    return a


const = types.SimpleNamespace(array_like=_array_like)
""",
    # a user module holding a constant table (and re-exporting numba.cuda)
    "fr27tables": """
import types

import numpy as np
from numba import cuda

TABLE = np.arange(8, dtype=np.float32) * 3
NS = types.SimpleNamespace(TABLE=TABLE)


def table():
    return TABLE
""",
}

_A = np.arange(8, dtype=np.float32) * 3


def _vec(n: int, dtype: Any = np.float32, seed: int = 15) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 9, n).astype(dtype)


def _bf16_matrix() -> np.ndarray:
    """5 x 7 bf16 values (multiples of 1/4 below 3: exact in bf16, their sums in float32)."""
    import ml_dtypes

    return (_vec(35, np.float32).reshape(5, 7) / 4).astype(ml_dtypes.bfloat16)


ACCEPTED: dict[str, Case] = {
    # attacks23 alias-module-const: numba.cuda under another name (identity, not spelling)
    "alias-module-const": Case(
        """
from numba import cuda as nc
import numba

A = np.arange(8, dtype=np.float32) * 3


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], j: In[np.int64]) -> None:
    i = thread.index_1d()
    t = nc.const.array_like(A)
    u = numba.cuda.const.array_like(A)
    if i.in_bounds(j):
        out[i] = t[j[i] & 7] + u[(j[i] + 1) & 7]
""",
        args=lambda: (np.zeros(100, np.float32), _vec(100, np.int64)),
        expect=lambda out, j: (_A[j & 7] + _A[(j + 1) & 7],),
        grid=2,
    ),
    # attacks27 const-table-through-user-module: the table an attribute of a module, by
    # identity at the freeze; the same snapshot as `cuda.const.array_like(TABLE)`
    "const-table-through-user-module": Case(
        """
import fr27tables as hm


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], j: In[np.int64]) -> None:
    i = thread.index_1d()
    t = hm.cuda.const.array_like(hm.TABLE)
    u = cuda.const.array_like(hm.TABLE)
    if i.in_bounds(j):
        out[i] = t[j[i] & 7] + u[(j[i] + 1) & 7]
""",
        args=lambda: (np.zeros(100, np.float32), _vec(100, np.int64)),
        expect=lambda out, j: (_A[j & 7] + _A[(j + 1) & 7],),
        grid=2,
    ),
    # attacks23 in-bounds-of-table: in_bounds against a constant table's own shape
    "in-bounds-of-table": Case(
        """
A = np.arange(40, dtype=np.int32) * 2


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.int32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(A)
    if i.in_bounds(t):
        out[i] = t[i.index]
    elif i.in_bounds(out):
        out[i] = -1
""",
        args=lambda: (np.zeros(100, np.int32),),
        expect=lambda out: (np.where(np.arange(100) < 40, np.arange(100) * 2, -1),),
        grid=2,
    ),
    # attacks24 state-keyword: the documented name of a tuple value
    "state-keyword": Case(
        """
@ss.device
def add2(a, b):
    return (a[0] + b[0], max(a[1], b[1]))


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i]
    s, m = ss.block.reduce(state=(v, v), op=add2)
    q, r = ss.warp.reduce(op=add2, state=(v, v))
    out[i] = s + m + q * 1000 + r * 100000
""",
        args=lambda: (np.zeros(64, np.float32), _vec(64)),
        expect=lambda out, a: (
            np.float32(a.sum() + a.max())
            + np.repeat(
                a.reshape(2, 32).sum(1) * 1000 + a.reshape(2, 32).max(1) * 100000, 32
            ).astype(np.float32),
        ),
    ),
    # attacks26 op-by-module-attribute: a helper op reached through a user module
    "op-by-module-attribute": Case(
        """
import fr15ops


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    s = ss.block.reduce(a[i], fr15ops.op)
    out[i] = s + ss.warp.reduce(a[i], fr15ops.op)
""",
        args=lambda: (np.zeros(64), _vec(64, np.float64)),
        expect=lambda out, a: (a.sum() + np.repeat(a.reshape(2, 32).sum(1), 32),),
    ),
    # attacks26 helper-string-annotation-record-defined-later (and port18's
    # helper_field_read_named_like_array_method, unannotated): a helper reads a record field
    # named like an array method; the type Numba infers decides that it is a field
    "helper-record-field-named-mean": Case(
        """
@ss.device
def h(r: "In[REC]", w: Index1D):
    return r[w].mean * np.float32(r[w].n)


@ss.device
def var_of(s):
    return s.var + s.mean


REC = np.dtype([("mean", np.float32), ("n", np.int32), ("var", np.float32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], r: In[REC]) -> None:
    w = thread.index_1d()
    if w.in_bounds(out):
        out[w] = h(r, w) + var_of(r[0])
""",
        args=lambda: (np.zeros(50, np.float32), _records(50)),
        expect=lambda out, r: (r["mean"] * r["n"] + r["var"][0] + r["mean"][0],),
    ),
    # attacks26 op-dynamic-tuple-index: the masked index reaches every position, so the
    # IndexError default of Numba's switch is never taken (verify._feasible)
    "op-dynamic-tuple-index": Case(
        """
TT = (1.0, 2.0, 3.0, 4.0)


@ss.device
def op(x, y):
    return x + y + TT[int(x) & 3]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], o2: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    out[i] = ss.block.reduce(a[i], op)
    o2[i] = ss.warp.reduce(a[i], op)
""",
        args=lambda: (np.zeros(64), np.zeros(64), _vec(64, np.float64)),
        expect=lambda out, o2, a: (_fold_block(a, _tuple_op), _fold_warps(a, _tuple_op)),
    ),
    # attacks27 tuple-op-masked-other-shapes: each index bounded inside the tuple by the
    # value range of the switch condition (verify._feasible): a mask in i32 or i8, `|` and
    # `+` of masked values, `%` of an unsigned or a masked value
    "op-tuple-index-bounded-shapes": Case(
        """
TT = (1.0, 2.0, 3.0, 4.0)


@ss.device
def op(x, y):
    s = TT[np.int32(x) & np.int32(3)] + TT[(int(x) & 1) | (int(y) & 2)]
    s += TT[(int(x) & 1) + (int(y) & 1)] + TT[np.int8(x) & np.int8(3)]
    s += TT[np.uint32(y) % np.uint32(4)] + TT[(int(y) & 255) % 4]
    return (x + y + s) % 100.0


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], o2: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    out[i] = ss.block.reduce(a[i], op)
    o2[i] = ss.warp.reduce(a[i], op)
""",
        args=lambda: (np.zeros(64), np.zeros(64), _vec(64, np.float64)),
        expect=lambda out, o2, a: (_fold_block(a, _bounded_op), _fold_warps(a, _bounded_op)),
    ),
    # attacks26 op-local-array: a thread-private scratch array, every element stored from the
    # op's arguments (verify._private)
    "op-local-array": Case(
        """
@ss.device
def op(x, y):
    t = cuda.local.array(4, np.float64)
    t[0] = x
    t[1] = y
    t[2] = x
    t[3] = y
    return t[int(x) & 3] + t[int(y) & 3]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    s = ss.block.reduce(a[i], op)
    if s > 3:
        ss.block.sync()
    out[i] = s
""",
        args=lambda: (np.zeros(64), _vec(64, np.float64)),
        expect=lambda out, a: (_fold_block(a, _local_op),),
    ),
    # a kernel's local array filled with uniform values steers a barrier
    "uniform-local-array-steers-a-barrier": Case(
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    t = cuda.local.array(4, np.int64)
    for q in range(4):
        t[q] = n * q
    s = np.float32(0)
    if t[n & 3] > 2:
        s = ss.block.sum(a[i])
    out[i] = s
""",
        args=lambda: (np.zeros(64, np.float32), _vec(64), 3),
        expect=lambda out, a, n: (np.full(64, a.sum(), np.float32),),
    ),
    # port18 accumulator_block_stride_flush: block_stride over a 1D shared accumulator gives
    # the Local1D witnesses it is read with, in its read phase (after block.sync)
    "accumulator-block-stride-flush": Case(
        """
from simtsafe import Accumulate


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(h: Accumulate[np.uint32], a: In[np.uint8]) -> None:
    bins = ss.shared.accumulator(256, np.uint32)
    for w in thread.grid_stride(a):
        bins.add(a[w], 1)
    ss.block.sync()
    for w in thread.block_stride(bins):
        h.add(w.index, bins[w])
""",
        grid=2,
        args=lambda: (np.zeros(256, np.uint32), _vec(500, np.uint8) * 28),
        expect=lambda h, a: (np.bincount(a, minlength=256).astype(np.uint32),),
    ),
    # port20 fp16-arith-before-collective: float16 arithmetic is a call of a C++ shim of
    # numba-cuda (cuda_fp16.h), whose status is 0 by its source (lowering._shims)
    "fp16-square-before-block-sum": Case(
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    v = x[w]
    sq = v * v + v
    out[w] = ss.block.sum(np.float32(sq))
""",
        args=lambda: (np.zeros(64, np.float32), (_vec(64, np.float16) * 0.5).astype(np.float16)),
        expect=lambda out, x: (np.full(64, (x * x + x).astype(np.float32).sum(), np.float32),),
    ),
    # port20 bf16-widen-before-collective: np.float32 of a bf16 int-index read, the widening
    # docs/porting.md prescribes, is a call of cuda_bf16.h's conversion shim
    "bf16-widen-before-block-sum": Case(
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], m: In2D[ss.bfloat16]) -> None:
    w = thread.index_1d()
    acc = np.float32(0)
    r = cuda.threadIdx.x % m.shape[0]
    for j in range(m.shape[1]):
        acc += np.float32(m[r, j])
    out[w] = ss.block.sum(acc) + np.float32(m[0, 0])
""",
        args=lambda: (np.zeros(64, np.float32), _bf16_matrix()),
        expect=lambda out, m: (
            np.full(
                64,
                m.astype(np.float32).sum(1)[np.arange(64) % m.shape[0]].sum() + np.float32(m[0, 0]),
                np.float32,
            ),
        ),
    ),
}


def _tuple_op(x: float, y: float) -> float:
    return x + y + (1.0, 2.0, 3.0, 4.0)[int(x) & 3]


def _bounded_op(x: float, y: float) -> float:
    tt = (1.0, 2.0, 3.0, 4.0)
    ix, iy = int(x), int(y)  # both non-negative: the masks and % read them as numpy does
    s = tt[ix & 3] + tt[(ix & 1) | (iy & 2)] + tt[(ix & 1) + (iy & 1)] + tt[ix & 3]
    s += tt[iy % 4] + tt[(iy & 255) % 4]
    return (x + y + s) % 100.0


def _local_op(x: float, y: float) -> float:
    t = (x, y, x, y)
    return t[int(x) & 3] + t[int(y) & 3]


def _fold_warps(a: np.ndarray, op: Callable[[float, float], float]) -> np.ndarray:
    """warp.reduce's tree (lowering._coop._warp_reduce): offsets 16, 8, 4, 2, 1 down, lane 0's
    value to every lane; lanes past the end do not take part (none here)."""
    out = []
    for w in range(0, len(a), 32):
        v = [float(x) for x in a[w : w + 32]]
        for off in (16, 8, 4, 2, 1):
            v = [op(v[t], v[t + off]) if t + off < 32 else v[t] for t in range(32)]
        out += [v[0]] * 32
    return np.array(out)


def _fold_block(a: np.ndarray, op: Callable[[float, float], float]) -> np.ndarray:
    """block.reduce: each warp's tree, then warp 0's value folded with the next warps' in
    order (lowering._coop._block_reduce)."""
    warps = _fold_warps(a, op)[::32]
    acc = warps[0]
    for v in warps[1:]:
        acc = op(acc, v)
    return np.full(len(a), acc)


def _records(n: int) -> np.ndarray:
    rec = np.dtype([("mean", np.float32), ("n", np.int32), ("var", np.float32)])
    r = np.zeros(n, rec)
    r["mean"] = np.arange(n) * 0.5
    r["n"] = np.arange(n) % 7
    r["var"] = 3.0
    return r


_FIELD_HELPER = """
REC = np.dtype([("mean", np.float32), ("n", np.int32)])


@ss.device
def h(v):
    return v.{attr}


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], r: In[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(out):
        out[w] = h({arg})
"""

_TUPLE_OP = """
TT = (1.0, 2.0, 3.0, 4.0)


@ss.device
def op(x, y):
    return x + y + TT[int(x) & MASK]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    out[i] = ss.warp.reduce(a[i], op)
"""

_TUPLE_INDEX = _TUPLE_OP.replace("int(x) & MASK", "INDEX")

_CONST_TABLE = """
import fr27tables as hm


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], j: In[np.int64]) -> None:
    i = thread.index_1d()
    t = hm.cuda.const.array_like(ARG)
    if i.in_bounds(j):
        out[i] = t[j[i] & 7]
"""

_LOCAL_STEER = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    t = cuda.local.array(4, np.int64)
    for q in range(4):
        t[q] = n * q
    FILL
    s = np.float32(0)
    if t[n & 3] > 2:
        s = ss.block.sum(a[i])
    out[i] = s
"""

_ACC_WALK = """
from simtsafe import Accumulate


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(h: Accumulate[np.uint32], a: In[np.uint8]) -> None:
    bins = ss.shared.accumulator(SHAPE, np.uint32)
    for w in thread.grid_stride(a):
        bins.add(INDEX, 1)
    SYNC
    for w in thread.block_stride(bins):
        READ
"""


def _acc_walk(
    sync: str = "ss.block.sync()",
    read: str = "h.add(w.index, bins[w])",
    shape: str = "256",
    index: str = "a[w]",
) -> str:
    return (
        _ACC_WALK.replace("SYNC", sync)
        .replace("READ", read)
        .replace("SHAPE", shape)
        .replace("INDEX", index)
    )


REFUSED: dict[str, tuple[str, str]] = {
    # attacks25 break-when-not-valid-after-the-collectives: LEFT REFUSED. The break is sound
    # (.valid fails only in the last chunk, or in every chunk of a block past the last row),
    # but the compiled-form analysis does not relate the thread's column to the trip count;
    # the refusal now says the loop needs no exit of its own
    "break-when-not-valid-after-the-collectives": (
        """
from simtsafe import BlockRow


@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    carry = np.float32(0)
    for c in thread.block_row_chunks(out):
        v = x[c]
        out[c] = ss.block.scan(v) + carry
        carry += ss.block.sum(v)
        if not c.valid:
            break
""",
        "drop the exit on `c.valid` and guard only the work that needs it with `if c.valid:`",
    ),
    # the walk's reads are phase-checked as acc[j] reads: none while threads still update
    "accumulator-walk-in-the-update-phase": (
        _acc_walk(sync="pass"),
        "accumulator `bins` is read by index at line 18 and updated (atomically) at line 15 with "
        "no block barrier between them",
    ),
    "accumulator-int-read-in-the-update-phase": (
        _acc_walk(sync="pass", read="h.add(w.index, bins[w.index])"),
        "accumulator `bins` is read by index at line 18 and updated (atomically) at line 15 with "
        "no block barrier between them",
    ),
    # no write through the walk's witness
    "accumulator-walk-writes": (
        _acc_walk(read="bins[w] = 0"),
        "an accumulator is not written with `acc[i] = v`",
    ),
    # a 2D accumulator is read at pairs: its walk is refused with the range form
    "accumulator-2d-walk": (
        _acc_walk(shape="(4, 64)", index="(a[w] % 4, a[w] % 64)", read="h.add(0, 1)"),
        "thread.block_stride() walks a 1D shared accumulator; a 2D accumulator is read at a "
        "pair of ints",
    ),
    # a mask that reaches past the tuple: threads with int(x) & 7 >= 4 raise IndexError
    "op-tuple-index-past-the-end": (
        _TUPLE_OP.replace("MASK", "7"),
        "`warp.reduce` needs every thread of the warp to reach it",
    ),
    # the value range of a switch condition (verify._feasible) against an index that
    # leaves the tuple: a mask that can be negative (-4 is 0xff..fc)
    "op-tuple-index-negative-mask": (
        _TUPLE_INDEX.replace("INDEX", "int(x) & -4"),
        "`warp.reduce` needs every thread of the warp to reach it",
    ),
    # an i8 mask 0x83 that keeps the sign bit: -128..-125 for some x
    "op-tuple-index-i8-mask-keeps-the-sign": (
        _TUPLE_INDEX.replace("INDEX", "np.int8(x) & np.int8(-125)"),
        "`warp.reduce` needs every thread of the warp to reach it",
    ),
    # 124..127 + 4 wraps in i8 to -128..-125
    "op-tuple-index-i8-add-wraps": (
        _TUPLE_INDEX.replace("INDEX", "(np.int8(x) | np.int8(124)) + np.int8(4)"),
        "`warp.reduce` needs every thread of the warp to reach it",
    ),
    # one past the tuple: 0..4
    "op-tuple-index-sum-one-past": (
        _TUPLE_INDEX.replace("INDEX", "(int(x) & 3) + (int(y) & 1)"),
        "`warp.reduce` needs every thread of the warp to reach it",
    ),
    "op-tuple-index-urem-one-past": (
        _TUPLE_INDEX.replace("INDEX", "np.uint32(x) % np.uint32(5)"),
        "`warp.reduce` needs every thread of the warp to reach it",
    ),
    # LEFT REFUSED (sound, conservative): `%` of a signed value is Numba's srem (-3..3 for a
    # negative x) then `+ 4` on the negative path, joined by a phi; the range rule does not
    # follow which path adds, so the union reaches -3 and the default stays
    "op-tuple-index-signed-mod": (
        _TUPLE_INDEX.replace("INDEX", "int(x) % 4"),
        "`warp.reduce` needs every thread of the warp to reach it",
    ),
    # the local array holds what differs between threads: a value, an index, a branch
    "local-array-thread-value": (
        _LOCAL_STEER.replace("FILL", "t[1] = np.int64(a[i])"),
        "`block.sum` needs every thread of the block to reach it",
    ),
    "local-array-thread-index": (
        _LOCAL_STEER.replace("FILL", "t[cuda.threadIdx.x & 3] = 7"),
        "`block.sum` needs every thread of the block to reach it",
    ),
    "local-array-store-under-thread-branch": (
        _LOCAL_STEER.replace("FILL", "if cuda.threadIdx.x == 0:\n        t[3] = 0"),
        "`block.sum` needs every thread of the block to reach it",
    ),
    # an unsafe region that stores (it may land in this thread's local memory): no trust
    "local-array-beside-unsafe-store": (
        _LOCAL_STEER.replace(
            "FILL",
            'with ss.unsafe("SAFETY: i is this thread\'s own element"):\n'
            "        out.unchecked[i.index] = 0",
        ),
        "`block.sum` needs every thread of the block to reach it",
    ),
    # the name of a field opens no array attribute: an array's `.mean`, `.T`, `.flat`
    "helper-mean-of-an-input": (
        _FIELD_HELPER.format(attr="mean", arg="a"),
        "attribute `.mean` is not allowed in kernels on a value of type readonly array(float32",
    ),
    "helper-transpose-of-an-output": (
        _FIELD_HELPER.format(attr="T", arg="out"),
        "attribute `.T` is not allowed in kernels on a value of type DisjointSlice",
    ),
    "helper-flat-of-records": (
        _FIELD_HELPER.format(attr="flat", arg="r"),
        "attribute `.flat` is not allowed in kernels on a value of type unaligned readonly array(",
    ),
    # a record without that field
    "helper-missing-field": (
        _FIELD_HELPER.format(attr="var", arg="r[w]"),
        "`.var` is read only as a field of a record that has one",
    ),
    # a method call stays refused where it is written
    "helper-array-method-call": (
        _FIELD_HELPER.format(attr="mean()", arg="a"),
        "attribute `.mean` is not allowed in kernels (array methods",
    ),
    # the module op is analysed as a from-imported one: an impure op stays refused
    "impure-op-by-module-attribute": (
        """
import fr15ops


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    s = ss.block.reduce(a[i], fr15ops.lane_op)
    if s > 3:
        ss.block.sync()
    out[i] = s
""",
        "must combine its two values from them alone",
    ),
    # a plain function of a user module is no op
    "plain-function-op-by-module-attribute": (
        """
import fr15ops


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    out[i] = ss.block.reduce(a[i], fr15ops.plain)
""",
        "is a plain Python function",
    ),
    # a module spelled `cuda` that is not numba.cuda: not constant memory
    "fake-cuda-module": (
        """
import fr15fake as cuda

A = np.arange(8, dtype=np.float32)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(A)
    out[i] = t[0]
""",
        "reads attribute `.array_like` of a global value",
    ),
    # a constant table through anything but modules: a local, a namespace, a call
    "const-table-local-name": (
        _CONST_TABLE.replace("ARG", "j"),
        "`hm.cuda.const.array_like(j)`: `j` is a local name; cuda.const.array_like takes a "
        "module-level numpy array",
    ),
    "const-table-through-a-namespace": (
        _CONST_TABLE.replace("ARG", "hm.NS.TABLE"),
        "`hm.NS` is a types.SimpleNamespace, not a module; cuda.const.array_like takes a "
        "module-level numpy array, by name or as an attribute of a module",
    ),
    "const-table-from-a-call": (
        _CONST_TABLE.replace("ARG", "hm.table()"),
        "cuda.const.array_like takes one argument, the name of a module-level numpy array",
    ),
    "const-table-missing-attribute": (
        _CONST_TABLE.replace("ARG", "hm.TABEL"),
        "module `hm` has no attribute `TABEL`",
    ),
    "const-table-not-an-array": (
        _CONST_TABLE.replace("ARG", "hm.np.pi"),
        "cuda.const.array_like takes a module-level numpy array, got builtins.float",
    ),
    # the alias still gates numba.cuda's barriers
    "alias-barrier-outside-unsafe": (
        """
from numba import cuda as nc


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    nc.syncthreads()
    out[i] = 1.0
""",
        "is allowed only inside `with simtsafe.unsafe(",
    ),
    # in_bounds of a table compares ranks as for an input
    "in-bounds-of-2d-table-by-1d-witness": (
        """
A = np.arange(40, dtype=np.int32).reshape(5, 8)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.int32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(A)
    if i.in_bounds(t):
        out[i] = t[0, 0]
""",
        "in_bounds() of a 2D array: the witness holds its index",
    ),
    # the value given twice: by position and as the state
    "state-and-value": (
        """
@ss.device
def add2(a, b):
    return (a[0] + b[0], a[1] + b[1])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i]
    s, t = ss.block.reduce((v, v), add2, state=(v, v))
    out[i] = s + t
""",
        "it has no parameter 'state'",
    ),
    # the shim's status is 0, not its value: a float16 result steering an exit stays refused
    "fp16-result-steers-an-exit": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], x: In[np.float16]) -> None:
    w = thread.index_1d()
    v = x[w]
    if v * v > np.float16(2):
        return
    out[w] = ss.block.sum(np.float32(v))
""",
        "needs every thread of the block to reach it",
    ),
    # ... and a bf16 value widened by the shim steering a collective
    "bf16-widened-value-steers-a-collective": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], m: In2D[ss.bfloat16]) -> None:
    w = thread.index_1d()
    acc = np.float32(m[cuda.threadIdx.x % m.shape[0], 0])
    if acc > np.float32(1):
        acc = ss.block.sum(acc)
    out[w] = acc
""",
        "needs every thread of the block to reach it",
    ),
}


@contextlib.contextmanager
def helper_modules_on_path(tmp_path: Path) -> Iterator[None]:
    """``HELPER_MODULES`` written under ``tmp_path`` and importable while inside; removed
    from ``sys.path`` and ``sys.modules`` after."""
    where = tmp_path / "helpers"
    where.mkdir()
    for name, source in HELPER_MODULES.items():
        (where / f"{name}.py").write_text(source)
    sys.path.insert(0, str(where))
    try:
        yield
    finally:
        sys.path.remove(str(where))
        for name in HELPER_MODULES:
            sys.modules.pop(name, None)
