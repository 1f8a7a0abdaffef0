"""Device side: Numba types and lowering (GPU/PTX) or their simulator twins.

``builtins(proven_domain=...)`` gives the private ``__ss_*`` names that the
kernel decorator's rewrite of a user function refers to; the backend is
picked once, at import, from ``NUMBA_ENABLE_CUDASIM``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import cache
from typing import Any

from ._compat import SIMULATOR
from ._provenance import mark_built

__all__ = ["SIMULATOR", "builtins", "mark_built", "numba_type", "simtsafe_typing"]

if SIMULATOR:  # every simulated launch, simtsafe's or a raw twin's: no busy loop (_simsched)
    from ._simsched import install as _install_scheduler

    _install_scheduler()


@cache
def _builtins(proven_domain: int | None) -> tuple[tuple[str, Any], ...]:
    if SIMULATOR:
        from . import _sim as backend
    else:
        from . import _cuda as backend  # type: ignore[no-redef]
    return tuple(backend.builtins(proven_domain=proven_domain).items())


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """Fresh dict of the ``__ss_*`` implementations for a kernel's proven domain."""
    return dict(_builtins(proven_domain))


def numba_type(dtype: Any, ndim: int = 0, layout: str = "C") -> Any:
    """The Numba type of a kernel parameter: a scalar of ``dtype``, or an array of it."""
    from numba.cuda import types
    from numba.cuda.np.numpy_support import from_dtype

    scalar = from_dtype(dtype)
    if ndim and layout == "C16":  # an input the launch found aligned for 16-byte runs
        from ._runaligned import RunAlignedArray

        return RunAlignedArray(scalar, ndim)
    return types.Array(scalar, ndim, layout) if ndim else scalar


def simtsafe_typing() -> contextlib.AbstractContextManager[None]:
    """Numba compiles inside this are simtsafe's (record subscript stores refused, _cuda)."""
    return _typing_rules()()


@cache
def _typing_rules() -> Callable[[], contextlib.AbstractContextManager[None]]:
    """The context manager, found once: an unchecked launch enters it at every call."""
    if SIMULATOR:  # no Numba typing on the simulator
        return contextlib.nullcontext
    from ._cuda import simtsafe_typing as typing_rules

    return typing_rules
