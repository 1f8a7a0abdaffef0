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
