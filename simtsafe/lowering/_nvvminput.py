"""What NVVM compiles for a simtsafe kernel: the text the compiled-form analysis reads.

Numba's LLVM IR carries flags (``nsw`` on every signed ``+ - *``, ``inbounds``, fast-math)
under which LLVM may take a wrapping add as poison, and it shifts by amounts and converts
floats to integers in ways LLVM calls poison past their range, where PTX computes a value.
The analysis reads the wrapping form (``_irform.wrapping_form``: no such flag, the shifts
and conversions as PTX computes them). Were NVVM to compile the original, it could fold one
half of an identity that holds only in wrapping arithmetic and keep the other --
``(v + 1) > v`` against ``v != INT64_MAX`` -- so that a thread leaves before a barrier the
analysis proved every thread reaches (attack round 34). So while a simtsafe kernel is
compiled (``_cuda.simtsafe_typing``), a code library's IR is its wrapping form, for NVVM
and for the analysis alike: one text, one meaning. The wrapping form is a refinement of
the original (it replaces poison by the value the GPU computes), so it is code NVVM could
have produced from the original; raw ``numba.cuda.jit`` code compiled outside keeps
Numba's text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._irform import wrapping_form

__all__ = ["install"]


def install(compiling: Callable[[], bool]) -> None:
    """Make ``CUDACodeLibrary.llvm_strs`` the wrapping form while ``compiling()`` (once)."""
    from numba.cuda.codegen import CUDACodeLibrary

    original: property = vars(CUDACodeLibrary)["llvm_strs"]
    if getattr(original.fget, "_simtsafe_wrapping", False):
        return
    made = original.fget
    assert made is not None

    def llvm_strs(self: Any) -> list[str]:
        # numba-cuda keeps the texts once made (NVVM, the PTX cache, pickling read them)
        if self._llvm_strs is None and compiling():
            self._llvm_strs = [wrapping_form(str(mod)) for mod in self.modules]
        return list(made(self))

    llvm_strs._simtsafe_wrapping = True  # type: ignore[attr-defined]
    CUDACodeLibrary.llvm_strs = property(llvm_strs)  # type: ignore[method-assign,assignment]
