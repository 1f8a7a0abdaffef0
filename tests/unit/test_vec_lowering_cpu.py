"""lowering/_vec.py's ``vec.load`` / ``vec.load_runs`` codegen, run on the CPU through llvmlite.

The GPU and the host are both little-endian, so the IR's values are the device's: a run read
whole and aligned (one vector load of 32-bit words, unpacked after the paths meet) and a run
read element by element (packed into the same words on the checked path) must both give the
array's elements, 0 outside it. Rows of odd length (13 bf16: a 26-byte stride) put every
other row off 16-byte alignment and end each row in a partial run; indices past every extent
(negative, huge) must read nothing.
"""

from __future__ import annotations

import ctypes
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir
from numba.cuda import types
from numba.cuda.descriptor import cuda_target
from numba.cuda.np.arrayobj import make_array
from numba.cuda.np.numpy_support import from_dtype

from simtsafe.lowering._vec import _vec_load, _vec_load_runs

I64 = ir.IntType(64)
BF16 = np.dtype(ml_dtypes.bfloat16)
RUNS = 3  # vec.load_runs reads runs (r, j), (r + 1, j), (r, j + 1)


def _jit(dtype: np.dtype, n: int, runs: bool) -> Any:
    """``f(data, rows, cols, stride0, r, j, out)``: the values of ``vec.load(a, (r, j), n)``
    (or of the three runs of ``vec.load_runs``) into ``out`` (float32 for bf16)."""
    ctx = cuda_target.target_context
    nty = from_dtype(dtype)
    aty = types.Array(nty, 2, "C")
    idx = types.UniTuple(types.int64, 2)
    if runs:
        sig, codegen = _vec_load_runs._defn(
            None, aty, types.UniTuple(idx, RUNS), types.IntegerLiteral(n)
        )
    else:
        sig, codegen = _vec_load._defn(None, aty, idx, types.IntegerLiteral(n))
    value = types.float32 if dtype == BF16 else nty
    vty = ctx.get_value_type(value)
    mod = ir.Module(name="vec")
    fnty = ir.FunctionType(
        ir.VoidType(), [ir.IntType(8).as_pointer(), I64, I64, I64, I64, I64, vty.as_pointer()]
    )
    fn = ir.Function(mod, fnty, "f")
    data, rows, cols, stride0, r, j, out = fn.args
    b = ir.IRBuilder(fn.append_basic_block())
    ary = make_array(aty)(ctx, b)
    ctx.populate_array(
        ary,
        data=b.bitcast(data, ary.data.type),
        shape=[rows, cols],
        strides=[stride0, ir.Constant(I64, dtype.itemsize)],
        itemsize=ir.Constant(I64, dtype.itemsize),
        meminfo=None,
    )
    one = ir.Constant(I64, 1)
    pairs = [(r, j), (b.add(r, one), j), (r, b.add(j, one))] if runs else [(r, j)]
    packed = [ctx.make_tuple(b, idx, list(p)) for p in pairs]
    got = codegen(
        ctx,
        b,
        sig,
        [ary._getvalue(), ctx.make_tuple(b, sig.args[1], packed) if runs else packed[0]],
    )
    tuples = [b.extract_value(got, t) for t in range(RUNS)] if runs else [got]
    for t, run in enumerate(tuples):
        for k in range(n):
            b.store(b.extract_value(run, k), b.gep(out, [ir.Constant(I64, t * n + k)]))
    b.ret_void()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), target)
    engine.finalize_object()
    _jit.keep = [*getattr(_jit, "keep", []), engine]  # type: ignore[attr-defined]
    i64 = ctypes.c_int64
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, i64, i64, i64, i64, i64, ctypes.c_void_p)
    return proto(engine.get_function_address("f"))


def _want(a: np.ndarray, n: int, r: int, j: int) -> np.ndarray:
    """Run j of row r of ``a``, 0 outside ``a`` (as float32 for bf16)."""
    out = np.zeros(n, np.float32 if a.dtype == BF16 else a.dtype)
    for k in range(n):
        at = j * n + k
        if 0 <= r < a.shape[0] and j >= 0 and at < a.shape[1]:
            out[k] = a[r, at]
    return out


CASES = [("bfloat16", 8), ("float16", 8), ("float16", 4), ("int8", 8), ("uint8", 4), ("int16", 4)]
CASES += [("float32", 4), ("float64", 2)]


@pytest.mark.parametrize("runs", [False, True], ids=["load", "load_runs"])
@pytest.mark.parametrize(("dt", "n"), CASES)
@pytest.mark.parametrize(("cols", "offset"), [(13, 0), (16, 0), (16, 2), (5, 0)])
def test_runs_read_the_array_and_zero_outside(
    dt: str, n: int, cols: int, offset: int, runs: bool
) -> None:
    dtype = BF16 if dt == "bfloat16" else np.dtype(dt)
    rows = 5
    values = (np.arange(rows * cols) * 37 % 251 + 1).reshape(rows, cols)
    if dtype.kind == "i":
        values = values % 127 - 63  # negative elements: a sign-extending unpack shows
    a = values.astype(dtype)
    # the rows at `offset` bytes past a 16-byte boundary (2: every run misaligned), amid
    # bytes that are no element's (a read outside the array shows as 0x5A5A...)
    buf = np.full(a.nbytes + 32 + 2 * cols * dtype.itemsize, 0x5A, np.uint8)
    start = (-buf.ctypes.data) % 16 + offset
    buf[start : start + a.nbytes] = a.view(np.uint8).ravel()
    fn = _jit(dtype, n, runs)
    vdt = np.float32 if dtype == BF16 else dtype
    last = (cols + n - 1) // n
    for r in (-1, 0, 1, rows - 1, rows, 1 << 62):
        for j in (-(1 << 62), -1, 0, 1, last - 1, last, last + 1, 1 << 61):
            out = np.full(RUNS * n, 99, vdt)
            fn(buf.ctypes.data + start, rows, cols, cols * dtype.itemsize, r, j, out.ctypes.data)
            picks = [(r, j), (r + 1, j), (r, j + 1)] if runs else [(r, j)]
            want = np.concatenate([_want(a, n, rr, jj) for rr, jj in picks])
            np.testing.assert_array_equal(out[: len(want)], want, err_msg=f"r={r} j={j}")
