"""What kernel code may refer to: the gated ``numba.cuda`` names and the forbidden callees.

Used by the decoration-time rewrite (``simtsafe.analysis``) through the two
predicates below; the only module that knows which Numba classes are
compiled functions.
"""

from __future__ import annotations

import importlib
import types as pytypes
from functools import cache
from typing import Any

from numba import cuda

from ..lowering import builtins as device_builtins
from ..lowering._compat import SIMULATOR, compiled_function_types, gated_cuda_names

__all__ = ["forbidden", "is_gated"]


_GATED_NAMES = gated_cuda_names()
_GATED_IDS = frozenset(id(getattr(cuda, n)) for n in _GATED_NAMES if hasattr(cuda, n))


def is_gated(obj: Any, attr: str) -> bool:
    if attr:
        return obj is cuda and attr in _GATED_NAMES
    return id(obj) in _GATED_IDS


_PUBLIC_MODULES = frozenset({"simtsafe", "simtsafe.thread"})
#: Modules whose plain functions kernels may call (Numba implements them itself).
_TRUSTED_MODULES = ("numba", "numpy", "math", "cmath", "operator", "simtsafe.thread")


def forbidden(obj: Any) -> tuple[str, str] | None:
    """(rule, reason) why a kernel may not refer to ``obj``, or None when it may.

    Numba-compiled functions (raw ``numba.cuda.jit`` device functions, ``njit``
    dispatchers, user ``@intrinsic``s) would receive simtsafe values in code no
    rule checks; simtsafe's own internals would let code mint witnesses.
    """
    internals = ("private-name", "is simtsafe internals; kernels use only simtsafe's public API")
    if isinstance(obj, pytypes.ModuleType):
        name = obj.__name__
        return internals if name.startswith("simtsafe.") and name not in _PUBLIC_MODULES else None
    if id(obj) in _private_ids():
        return internals
    if isinstance(obj, pytypes.FunctionType) and not obj.__module__.startswith(_TRUSTED_MODULES):
        # A plain function called from a kernel is compiled by Numba (after
        # register_jitable / @overload) with a body no simtsafe rule has seen.
        return (
            "raw-device-function",
            "is a plain Python function, whose body simtsafe does not check; decorate it with "
            "@simtsafe.device",
        )
    if not isinstance(obj, compiled_function_types()):
        return None
    definition = getattr(obj, "_defn", None)  # an @intrinsic: Numba's own API is fine
    if definition is not None and getattr(definition, "__module__", "").startswith("numba"):
        return None
    kind = (
        "a raw numba.cuda.jit function"
        if type(obj).__name__ in ("CUDADispatcher", "FakeCUDAKernel")
        else "a Numba-compiled function (njit or @intrinsic)"
    )
    return (
        "raw-device-function",
        f"is {kind}, whose body simtsafe does not check; decorate a plain function with "
        "@simtsafe.device instead",
    )


@cache
def _private_ids() -> frozenset[int]:
    """Identities of every private device builtin (witness minting intrinsics included)."""
    ids = {id(v) for d in (None, 1, 2, 3) for v in device_builtins(proven_domain=d).values()}
    # Note: the attribute simtsafe.device is the @device decorator (public API), which
    # hides the subpackage of the same name; import the backend module by its full name.
    module = importlib.import_module(f"simtsafe.lowering.{'_sim' if SIMULATOR else '_cuda'}")
    ids.update(
        id(v)
        for v in vars(module).values()
        if getattr(v, "__module__", None) == module.__name__
        or isinstance(v, compiled_function_types())
    )
    return frozenset(ids)
