"""The compiled-form checks: proofs about the code Numba hands to NVVM, not about its spelling.

``check_kernel_ir(texts, entry, info)`` takes the LLVM IR modules of a
compiled kernel (``lowering.kernel_ir``), normalizes them (``lowering._irform``:
everything inlined, locals in SSA form), runs the divergence analysis
(``_divergence``, over the CFG facts of ``_cfg``) and refuses the kernel
(``_verdict``) when a Tier-1 barrier or collective may be reached by only part
of its scope, (``_constmem``) when any write may reach constant memory, or
(``_sharedsize``) when its static shared memory passes 48 KiB, (``_constsize``) when its
constant arrays pass the 64 KiB constant bank. This
verdict decides; the source-level analysis at decoration only words the early
message where no compiled form can be made.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..lowering._irform import compiled_form
from ._constmem import check_const_writes
from ._constsize import check_constant_total
from ._divergence import Divergence
from ._sharedsize import check_static_shared
from ._verdict import SourceInfo, check_sites, purity, stores_in_unsafe

__all__ = ["SourceInfo", "check_kernel_ir"]


def check_kernel_ir(texts: Sequence[str], entry: str, info: SourceInfo) -> Divergence:
    """Check the compiled kernel ``entry`` of the IR modules ``texts``.

    Raises:
        SafetyError: a Tier-1 barrier or collective some threads of its scope
            may skip (``rule="uniformity"``), or a write that may reach constant
            memory (``rule="const-write"``), at the user's line; static shared memory past
            48 KiB (``rule="shared-memory"``); constant arrays past 64 KiB
            (``rule="const-array"``).
    """
    check_static_shared(texts, info.kernel, info.filename, info.first_line)
    check_constant_total(texts, info.kernel, info.filename, info.first_line)
    form = compiled_form(texts, entry)
    check_const_writes(form, info.kernel, info.filename, info.first_line)
    trust_const = not stores_in_unsafe(form, info)
    site_purity = {
        ident: max(purity(compiled_form(texts, callee), trust_const) for callee in callees)
        for ident, callees in form.site_callees.items()
    }
    return check_sites(form, info, site_purity, trust_const)
