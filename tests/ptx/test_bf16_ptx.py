"""bf16/fp16 kernels compile: 16-bit global loads and stores, inline RNE rounding, no calls."""

from __future__ import annotations

import re

import pytest

from simtsafe.lowering._compat import assume_compute_capability
from tests.kernels import load_kernel_module
from tests.kernels.bf16_kernels import SOURCE

pytestmark = pytest.mark.ptx


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(tmp_path_factory.mktemp("bf16"), SOURCE)


def _body(kernel) -> str:  # type: ignore[no-untyped-def]
    with assume_compute_capability((9, 0)):
        ptx = kernel.ptx()
    return ptx.split(".entry", 1)[1]


def _ops(body: str, op: str) -> list[str]:
    return re.findall(rf"^\s*(?:@!?%p\d+\s+)?({re.escape(op)}[\w.]*)", body, flags=re.MULTILINE)


def test_bf16_store_is_16_bit_with_inline_rounding(mod):  # type: ignore[no-untyped-def]
    body = _body(mod.narrow)
    assert _ops(body, "ld.global") == ["ld.global.f32"]
    assert _ops(body, "st.global") in (["st.global.u16"], ["st.global.b16"])
    assert "32767" in body  # the 0x7FFF rounding bias of f32_to_bf16
    assert "call" not in body and "trap" not in body


def test_bf16_read_is_16_bit_and_widens_by_shift(mod):  # type: ignore[no-untyped-def]
    body = _body(mod.widen)
    assert _ops(body, "ld.global") in (["ld.global.u16"], ["ld.global.b16"])
    assert _ops(body, "st.global") == ["st.global.f32"]
    assert re.search(r"shl\.b32\s+%r\d+, %r\d+, 16;", body)
    assert "call" not in body and "trap" not in body


def test_bf16_axpy_and_fp16_compile_without_calls(mod):  # type: ignore[no-untyped-def]
    body = _body(mod.axpy)
    assert len(_ops(body, "ld.global")) == 2 and len(_ops(body, "st.global")) == 1
    assert "call" not in body
    half = _body(mod.half)
    assert _ops(half, "ld.global") in (["ld.global.u16"], ["ld.global.b16"])
    assert "cvt.f32.f16" in half and "cvt.rn.f16.f32" in half


def test_bf16_output_refuses_a_complex_value_and_an_int_index(tmp_path):  # type: ignore[no-untyped-def]
    src = """
import ml_dtypes

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[ml_dtypes.bfloat16]) -> None:
    w = thread.index_1d()
    out[w] = {value}
"""
    bad = load_kernel_module(tmp_path, src.format(value="1j"))
    with pytest.raises(ss_error()) as e:
        _body(bad.k)
    assert "cannot store a value of type complex128 into a DisjointSlice of bfloat16" in str(
        e.value
    )
    src_int = src.replace("out[w] = {value}", "out[0] = 1.5")
    bad_int = load_kernel_module(tmp_path, src_int)
    with pytest.raises(ss_error()) as e:
        _body(bad_int.k)
    assert "written only through a ThreadIndex witness" in str(e.value)
    good = load_kernel_module(tmp_path, src.format(value="1.5"))
    assert _ops(_body(good.k), "st.global") in (["st.global.u16"], ["st.global.b16"])


def ss_error() -> type[Exception]:
    from simtsafe import SafetyError

    return SafetyError


def test_accumulating_kernels_compile(mod):  # type: ignore[no-untyped-def]
    total = _body(mod.block_total)
    assert "trap" not in total and "st.global" in total
    rows = _body(mod.rowsum)
    assert "32767" in rows and "ld.global.u16" in rows


def test_2d_helper_read_widens_without_calls(mod):  # type: ignore[no-untyped-def]
    body = _body(mod.scale2d)
    assert "call" not in body and "trap" not in body
    assert sorted(_ops(body, "ld.global")) == ["ld.global.u16", "ld.global.u16"]
    assert _ops(body, "st.global") == ["st.global.u16"]
