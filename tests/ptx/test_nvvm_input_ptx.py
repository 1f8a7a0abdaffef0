"""NVVM compiles, for a simtsafe kernel, the text the compiled-form analysis reads
(lowering/_nvvminput): the wrapping form, without poison flags; raw Numba code compiled outside
a simtsafe compile keeps Numba's own text. Attack round 34's findings (tests/ptx/
test_attacks34_ptx.py) show what this closes: NVVM folding one half of an identity that holds
only in wrapping arithmetic."""

from __future__ import annotations

import pytest

from simtsafe.lowering import simtsafe_typing
from simtsafe.lowering._compat import compile_kernel_ptx
from simtsafe.lowering._irform import WRAPPING_MARK

pytestmark = pytest.mark.ptx


def _kernel(out, a, n):  # type: ignore[no-untyped-def]
    i = 0
    while i < n:  # i + 1: Numba's `add nsw`
        out[i] = a[i] + 1
        i += 1


def _argtypes():  # type: ignore[no-untyped-def]
    from numba.cuda import types

    return (types.int64[::1], types.int64[::1], types.int64)


def test_a_simtsafe_compile_hands_nvvm_the_wrapping_form() -> None:
    with simtsafe_typing():
        ptx, texts, _ = compile_kernel_ptx(_kernel, _argtypes(), (9, 0))
    assert texts and all(t.startswith(WRAPPING_MARK) for t in texts)
    assert not any(" nsw " in t for t in texts)
    assert ".entry" in ptx


def test_a_raw_numba_compile_keeps_numbas_text() -> None:
    _, texts, _ = compile_kernel_ptx(_kernel, _argtypes(), (9, 0))
    assert not any(t.startswith(WRAPPING_MARK) for t in texts)
    assert any(" nsw " in t for t in texts)  # Numba's flags, as Numba wrote them


_CONVERSION = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.{to}], a: In[np.{src}]) -> None:
    i = thread.index_1d()
    if i.in_bounds(a):
        out[i] = np.{to}(a[i])
"""


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize(
    "to", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
)
def test_a_float_to_integer_conversion_is_ptxs_own(tmp_path, src: str, to: str) -> None:  # type: ignore[no-untyped-def]
    """The wrapping form writes a float-to-integer conversion with NVVM's round-toward-zero
    intrinsics (PTX ``cvt.rzi``, saturating as the GPU does): one instruction, no call of a
    function NVVM does not define (``llvm.fptosi.sat`` was an undefined ``.extern .func``)."""
    from tests.kernels import load_kernel_module

    ptx = load_kernel_module(tmp_path, _CONVERSION.format(src=src, to=to)).k.ptx(cc=(9, 0))
    assert ".extern" not in ptx and "call" not in ptx, ptx
    signed = "s" if not to.startswith("u") else "u"
    wide = 64 if to.endswith("64") else 32
    assert f"cvt.rzi.{signed}{wide}.f{src[-2:]}" in ptx, ptx
