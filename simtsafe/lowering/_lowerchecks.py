"""The statement checks that run in Numba's lowering of every function simtsafe builds.

Some rules are decided on Numba's typed IR, where every spelling of a construct has become
the same statement: a name that may be unbound (``_unbound``), an exception whose message
is known only at run time (``_raises``), a view of a record's array field
(``_recordfields``), a field store on a record that is not the thread's own output
element (``_recordstores``). One hook on ``CUDALower.lower_inst`` runs each
check on each statement of a simtsafe kernel or helper before any code is emitted for it;
Numba-internal functions are left alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from . import _raises, _recordfields, _recordstores, _unbound
from ._provenance import BUILT

__all__ = ["CHECKS", "install"]

#: Each takes the lowering object and the statement, and raises a Numba TypingError whose
#: text starts with ``simtsafe:`` to refuse it.
CHECKS: tuple[Callable[[Any, Any], None], ...] = (
    _unbound.check,
    _raises.check,
    _recordfields.check,
    _recordstores.check,
)


def _checking_lower_inst(original: Any) -> Any:
    def lower_inst(self: Any, inst: Any) -> Any:
        func = getattr(getattr(self, "func_ir", None), "func_id", None)
        if getattr(getattr(func, "func", None), BUILT, False):
            for check in CHECKS:
                check(self, inst)
        return original(self, inst)

    lower_inst.__wrapped__ = original  # type: ignore[attr-defined]
    return lower_inst


_INSTALLED = False
_INSTALL_LOCK = threading.Lock()


def install() -> None:
    """Install the checks on Numba's CUDA lowering (idempotent)."""
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        from numba.cuda.lowering import CUDALower

        CUDALower.lower_inst = _checking_lower_inst(CUDALower.lower_inst)
        _INSTALLED = True
