"""lowering/_bf16.py's IR, run on the CPU through llvmlite: bit-exact against ml_dtypes."""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np
import pytest
from llvmlite import binding as llvm
from llvmlite import ir

from simtsafe.lowering._bf16 import bf16_to_f32, f32_to_bf16, is_bf16
from tests.kernels.bf16_kernels import bf16_of, rounding_cases


def _jit(narrow: bool):  # type: ignore[no-untyped-def]
    """A CPU loop ``out[i] = convert(src[i])`` for i < n, compiled with MCJIT."""
    src_t, dst_t = (ir.FloatType(), ir.IntType(16)) if narrow else (ir.IntType(16), ir.FloatType())
    i64 = ir.IntType(64)
    mod = ir.Module(name="bf16")
    fn = ir.Function(
        mod, ir.FunctionType(ir.VoidType(), [src_t.as_pointer(), dst_t.as_pointer(), i64]), "conv"
    )
    src, dst, n = fn.args
    entry, loop, done = fn.append_basic_block(), fn.append_basic_block(), fn.append_basic_block()
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", n, ir.Constant(i64, 0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(i64)
    i.add_incoming(ir.Constant(i64, 0), entry)
    v = b.load(b.gep(src, [i]))
    b.store(f32_to_bf16(b, v) if narrow else bf16_to_f32(b, v), b.gep(dst, [i]))
    nxt = b.add(i, ir.Constant(i64, 1))
    i.add_incoming(nxt, loop)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(str(mod)), target)
    engine.finalize_object()
    _jit.keep = engine  # type: ignore[attr-defined]
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return proto(engine.get_function_address("conv"))


@pytest.fixture(scope="module")
def narrow():  # type: ignore[no-untyped-def]
    return _jit(True)


def _run(fn, src: np.ndarray, dst_dtype) -> np.ndarray:  # type: ignore[no-untyped-def]
    src = np.ascontiguousarray(src)
    dst = np.zeros(src.size, dst_dtype)
    fn(src.ctypes.data, dst.ctypes.data, src.size)
    return dst


def test_f32_to_bf16_rounds_like_ml_dtypes_on_edge_cases(narrow):  # type: ignore[no-untyped-def]
    a = rounding_cases()
    np.testing.assert_array_equal(_run(narrow, a, np.uint16), bf16_of(a))


def test_f32_to_bf16_matches_ml_dtypes_on_a_sweep_of_bit_patterns(narrow):  # type: ignore[no-untyped-def]
    # Every 251st float32 bit pattern (17 million values: all exponents, NaNs, ties' neighbours).
    a = np.arange(0, 2**32, 251, dtype=np.uint64).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(_run(narrow, a, np.uint16), bf16_of(a))


def test_bf16_to_f32_is_exact_for_every_bf16():  # type: ignore[no-untyped-def]
    bits = np.arange(2**16, dtype=np.uint16)
    got = _run(_jit(False), bits, np.float32)
    want = bits.view(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_is_bf16_knows_numba_cudas_type():  # type: ignore[no-untyped-def]
    from numba.cuda import types
    from numba.cuda.np.numpy_support import from_dtype

    assert is_bf16(from_dtype(np.dtype(ml_dtypes.bfloat16)))
    assert not is_bf16(types.float16) and not is_bf16(types.uint16) and not is_bf16(types.int16)
