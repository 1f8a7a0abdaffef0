"""The allow-list: what every name and attribute chain in kernel code may denote.

Kernel and ``@simtsafe.device`` code can reach the outside world only
through the names it refers to. Each is classified once, by the object it
denotes (never by its spelling), into a :class:`Ref`; anything not on the
list is refused with a reason and a fix:

* compile-time constants: ``int``, ``float``, ``bool``, ``complex``, ``str``,
  ``None``, numpy scalars, dtypes and scalar types, Numba scalar types, and
  tuples of these;
* the ``numba.cuda`` kernel API listed in ``simtsafe.lowering._api``
  (ungated, or gated: only inside ``simtsafe.unsafe``), ``numba``'s scalar
  types and ``literal_unroll``;
* functions of ``math``, ``cmath``, an explicit list of ``operator`` and of
  Python builtins, numpy ufuncs (called with their inputs only: an ``out``
  argument would write an array) and numpy scalar types;
* simtsafe's public kernel API (witness constructors, ``unsafe``) and
  ``@simtsafe.device`` helpers;
* modules, but only as the head of an attribute chain that ends in one of
  the above.

Everything else -- modules as values, arrays of any library held in globals,
plain or Numba-compiled functions, simtsafe internals, classes, objects -- is
refused. Trust in a module is by identity of the module object, never by a
name prefix.
"""

from __future__ import annotations

import builtins as _py_builtins
import cmath
import math
import operator
import sys
import types as pytypes
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import numpy as np

from ..lowering._api import (
    CUDA_API,
    NUMBA_API,
    cuda_object_kinds,
    is_numba_scalar_type,
    libdevice_names,
)
from ..lowering._compat import compiled_function_types
from ..lowering._ufuncs import numpy_function_refusal

__all__ = [
    "ALLOWED_BUILTINS",
    "LOCAL_ATTRIBUTES",
    "Ref",
    "Refusal",
    "classify",
    "resolve_chain",
]

Kind = Literal[
    "const",  # a compile-time constant (or a scalar type: usable as a dtype and a constructor)
    "module",  # only as the head of a chain
    "dim3",  # cuda.threadIdx & co: .x/.y/.z are ints
    "ok",  # ungated numba.cuda kernel API (geometry, math intrinsics, cache-hinted loads)
    "api",  # math / cmath / operator / builtin function or value
    "gated",  # numba.cuda operation allowed only inside simtsafe.unsafe, called directly
    "ufunc",  # numpy ufunc: called directly with exactly `nin` positional arguments
    "simtsafe",  # simtsafe's public kernel API (witness constructors, unsafe)
    "device",  # a @simtsafe.device helper
]


@dataclass(frozen=True)
class Ref:
    """What a name or attribute chain denotes, and how kernel code may use it.

    Attributes:
        kind: the class of object (see ``Kind``).
        obj: the object itself (None for ``numba.cuda`` API members, which
            exist only inside kernels on the simulator).
        name: a readable name for messages (``cuda.syncthreads``).
        nin: a ufunc's number of inputs.
        substitute: the chain passes through a module Numba would not
            resolve the same way (a user module): the rewrite binds the object
            to a private name instead.
    """

    kind: Kind
    obj: Any
    name: str
    nin: int | None = None
    substitute: bool = False


class Refusal(Exception):
    """A reference kernel code may not make: (rule, reason with the fix)."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(reason)
        self.rule = rule
        self.reason = reason


#: Attributes kernel code may read off its own values (views, witnesses, dims,
#: complex numbers, a grid group). Record field names of the kernel's
#: parameter dtypes are added per kernel. Everything else (``.flat``,
#: ``.view``, ``.T``, ``.fill``...) is refused: array methods can alias or
#: write their array.
LOCAL_ATTRIBUTES = frozenset(
    {
        "shape",
        "size",
        "ndim",
        "dtype",
        "index",
        "row",
        "col",
        "in_bounds",
        "x",
        "y",
        "z",
        "real",
        "imag",
        "conjugate",
        "sync",
        # accumulators (Accumulate, shared.accumulator): atomic updates only
        "add",
        "min",
        "max",
        # append buffers: a slot won by the buffer's atomic counter; hash tables' inserts
        "claim",
        "block_claim",
        "insert",
        "insert_or_find",
    }
)

ALLOWED_BUILTINS = frozenset(
    {
        "range",
        "len",
        "min",
        "max",
        "abs",
        "int",
        "float",
        "bool",
        "complex",
        "round",
        "print",
        "divmod",
        "pow",
        "enumerate",
        "zip",
        "slice",
    }
)

_OPERATOR_NAMES = (
    "abs add and_ contains eq floordiv ge getitem gt index inv invert is_ is_not le lshift lt "
    "matmul mod mul ne neg not_ or_ pos pow rshift setitem sub truediv truth xor"
).split()

_DYNAMIC = frozenset(
    {
        "getattr",
        "setattr",
        "delattr",
        "globals",
        "locals",
        "vars",
        "eval",
        "exec",
        "compile",
        "__import__",
        "open",
        "breakpoint",
        "input",
        "memoryview",
        "object",
        "type",
        "super",
    }
)


@cache
def _identity_table() -> dict[int, Ref]:
    """id(object) -> Ref for every allowed object reachable by identity."""
    table: dict[int, Ref] = {}
    for name in ALLOWED_BUILTINS:
        obj = getattr(_py_builtins, name)
        table[id(obj)] = Ref("api", obj, name)
    for module in (math, cmath):
        for name, obj in vars(module).items():
            if not name.startswith("_") and callable(obj):
                table[id(obj)] = Ref("api", obj, f"{module.__name__}.{name}")
    for name in _OPERATOR_NAMES:
        obj = getattr(operator, name)
        table[id(obj)] = Ref("api", obj, f"operator.{name}")
    for oid, (name, kind) in cuda_object_kinds().items():
        table[oid] = Ref(kind, None, name)  # type: ignore[arg-type]  # a Kind of the table
    for name, obj in _public_kernel_api().items():
        table[id(obj)] = Ref("simtsafe", obj, name)
    return table


@cache
def _public_kernel_api() -> dict[str, Any]:
    """simtsafe's public objects that kernel code may name: witness constructors,
    ``unsafe``, block/warp collectives, shared tiles and accumulators."""
    from .. import block, grid, hashing, mma, random, shared, thread, vec, warp, wgmma
    from .._unsafe import unsafe

    api: dict[str, Any] = {"unsafe": unsafe}
    for module in (thread, block, warp, grid, shared, random, vec, hashing, mma, wgmma):
        prefix = module.__name__.removeprefix("simtsafe.")
        for name in module.__all__:
            api[f"{prefix}.{name}"] = getattr(module, name)
    return api


#: The public kernel-API modules (the rest of the simtsafe package is internals or host API).
PUBLIC_MODULES = frozenset(
    {
        "simtsafe.thread",
        "simtsafe.block",
        "simtsafe.warp",
        "simtsafe.grid",
        "simtsafe.shared",
        "simtsafe.random",
        "simtsafe.vec",
        "simtsafe.hashing",
        "simtsafe.mma",
        "simtsafe.wgmma",
    }
)


def _trusted_modules() -> dict[int, str]:
    """Modules Numba resolves attributes of itself: chains through them need no substitution."""
    import numba
    from numba import cuda

    simtsafe = sys.modules["simtsafe"]
    mods = [numba, cuda, np, math, cmath, operator, simtsafe]
    mods += [sys.modules[name] for name in PUBLIC_MODULES]
    return {id(m): m.__name__ for m in mods}


def _is_simtsafe_internal_module(module: pytypes.ModuleType) -> bool:
    name = module.__name__
    return name.startswith("simtsafe.") and name not in PUBLIC_MODULES


def _is_array_like(obj: Any) -> bool:
    return (
        isinstance(obj, np.ndarray)
        or hasattr(obj, "__cuda_array_interface__")
        or hasattr(obj, "__array_interface__")
        or hasattr(obj, "__array__")
        or isinstance(obj, bytearray | memoryview)
    )


def _is_constant(obj: Any) -> bool:
    if obj is None or isinstance(obj, bool | int | float | complex | str):
        return True
    if isinstance(obj, np.generic | np.dtype):
        return True
    if isinstance(obj, type) and issubclass(obj, np.generic):
        return True
    if is_numba_scalar_type(obj):
        return True
    if type(obj) is tuple:
        return all(_is_constant(v) for v in obj)
    return False


def _describe(obj: Any) -> str:
    kind = type(obj).__name__
    module = getattr(type(obj), "__module__", "")
    return f"{module}.{kind}" if module and module != "builtins" else kind


def classify(obj: Any, name: str) -> Ref:
    """Classify the object a (resolved) name denotes.

    Raises:
        Refusal: the object is not on the allow-list; the reason says what to do.
    """
    if _is_constant(obj):
        return Ref("const", obj, name)
    known = _identity_table().get(id(obj))
    if known is not None:
        return known
    if isinstance(obj, pytypes.ModuleType):
        if _is_simtsafe_internal_module(obj):
            raise Refusal(
                "private-name", "is simtsafe internals; kernels use only simtsafe's public API"
            )
        return Ref("module", obj, name)
    if isinstance(obj, np.ufunc):
        return Ref("ufunc", obj, name, nin=obj.nin)
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return Ref("api", obj, name)
    from ._declaration import HelperDeclaration, KernelDeclaration

    if isinstance(obj, HelperDeclaration):
        return Ref("device", obj, name)
    if isinstance(obj, KernelDeclaration):
        raise Refusal(
            "nested-kernel",
            "is a kernel: a kernel cannot launch or call another kernel; move the shared code "
            "into a @simtsafe.device helper",
        )
    if (
        getattr(obj, "__name__", None) in _DYNAMIC
        and getattr(_py_builtins, obj.__name__, None) is obj
    ):
        raise Refusal(
            "dynamic-access",
            "is not allowed in kernels: name attributes and values directly, so that every "
            "access can be checked",
        )
    if _is_array_like(obj):
        raise Refusal(
            "global-array",
            f"is a global array ({_describe(obj)}): Numba would compile it into the kernel as a "
            "mutable constant that no witness, bounds or aliasing check covers. Pass it as an "
            "argument (In[...] to read it, DisjointSlice[...] to write it), or read a small "
            "numpy table of numbers through `cuda.const.array_like(NAME)` (constant memory)",
        )
    module = getattr(obj, "__module__", None) or ""
    if module == "simtsafe" or module.startswith("simtsafe."):
        raise Refusal(
            "private-name",
            "is simtsafe internals or host API; kernels use only simtsafe's public kernel API "
            "(simtsafe.thread, simtsafe.block, simtsafe.warp, simtsafe.shared, simtsafe.unsafe)",
        )
    if isinstance(obj, compiled_function_types()):
        definition = getattr(obj, "_defn", None)
        what = (
            "a raw numba.cuda.jit function"
            if type(obj).__name__ in ("CUDADispatcher", "FakeCUDAKernel")
            else "a Numba-compiled function (njit or @intrinsic)"
            if definition is None or not callable(definition)
            else "a Numba-compiled function (njit or @intrinsic)"
        )
        raise Refusal(
            "raw-device-function",
            f"is {what}, whose body simtsafe does not check; decorate a plain function with "
            "@simtsafe.device instead",
        )
    numpy_function = numpy_function_refusal(obj)
    if numpy_function is not None:
        raise Refusal("numpy-function", numpy_function)
    if isinstance(obj, pytypes.FunctionType | pytypes.BuiltinFunctionType | pytypes.MethodType):
        raise Refusal(
            "raw-device-function",
            "is a plain Python function, whose body simtsafe does not check (Numba would "
            "compile it through register_jitable or @overload); decorate it with "
            "@simtsafe.device, or use a function of math, cmath or numpy",
        )
    if isinstance(obj, type):
        raise Refusal(
            "unknown-object",
            f"is a class ({obj.__qualname__}), which kernels cannot use; only numpy/Numba scalar "
            "types are usable as types in kernels",
        )
    raise Refusal(
        "unknown-object",
        f"is a {_describe(obj)} object, which is not on simtsafe's allow-list of what kernels "
        "may refer to (constants, numba.cuda's kernel API, math/cmath functions, numpy ufuncs, "
        "simtsafe.thread, @simtsafe.device helpers). Pass data as arguments",
    )


_MISSING = object()


def _cuda_member(attrs: Sequence[str], name: str) -> tuple[Ref, int]:
    """Classify ``cuda.<attrs...>`` by the table; (ref, number of attrs consumed)."""
    first = attrs[0]
    kind = CUDA_API.get(first)
    dotted = f"{name}.{first}"
    if kind is None:
        from numba import cuda

        obj = getattr(cuda, first, _MISSING)
        if obj is not _MISSING and is_numba_scalar_type(obj):
            return Ref("const", obj, dotted), 1
        raise Refusal(
            "not-allowed",
            "is not part of the numba.cuda kernel API that simtsafe allows (thread geometry, "
            "math intrinsics, and -- inside simtsafe.unsafe -- shared memory, barriers, warp "
            "intrinsics, atomics); see docs/safety.md",
        )
    if kind == "dim3":
        if len(attrs) > 1:
            if attrs[1] not in ("x", "y", "z"):
                raise Refusal("not-allowed", f"`{dotted}` has only .x, .y and .z")
            return Ref("const", None, f"{dotted}.{attrs[1]}"), 2
        return Ref("dim3", None, dotted), 1
    if kind == "libdevice":
        if len(attrs) < 2 or attrs[1] not in libdevice_names():
            raise Refusal("not-allowed", "is not a libdevice math function")
        return Ref("api", None, f"{dotted}.{attrs[1]}"), 2
    if isinstance(kind, dict):
        if len(attrs) < 2 or attrs[1] not in kind:
            raise Refusal(
                "not-allowed",
                f"is not allowed: of `{dotted}` kernels may use only "
                + ", ".join(f"{dotted}.{m}" for m in sorted(kind)),
            )
        return Ref(kind[attrs[1]], None, f"{dotted}.{attrs[1]}"), 2
    return Ref(kind, None, dotted), 1


def _identified(obj: Any) -> str | None:
    """The name the identity table gives ``obj`` (``cuda.libdevice.sqrt``), or None."""
    try:
        return classify(obj, "").name
    except Refusal:
        return None


def resolve_chain(head: Any, head_name: str, attrs: Sequence[str]) -> Ref | None:
    """Classify ``head.attrs[0].attrs[1]...`` where ``head`` is a global's value.

    Returns None when an attribute does not exist (yet): the caller decides
    whether a missing name is pending (decoration) or an error (compile).

    Raises:
        Refusal: the chain leaves the allow-list or passes through a value
            that is not a module.
    """
    import numba
    from numba import cuda

    obj = head
    name = head_name
    trusted = _trusted_modules()
    through_user_module = False
    i = 0
    # Imported by a kernel's module or not at all (the simulator's numba.cuda has it only then)
    libdevice = sys.modules.get("numba.cuda.libdevice")
    while i < len(attrs):
        if obj is cuda or (libdevice is not None and obj is libdevice):
            # Named by what it is, not by how the chain spells the module (`nc.`, `numba.cuda.`
            # for `from numba import cuda as nc`): the rules match `cuda.const.array_like`,
            # `cuda.local.array`, ... as the identity table names them. `libdevice.f` after
            # `from numba.cuda import libdevice` (numba-cuda's own spelling) is the module
            # `cuda.libdevice` names: the same table row, the same allow-list of its functions.
            inner = obj is not cuda
            ref, used = _cuda_member(["libdevice", *attrs[i:]] if inner else attrs[i:], "cuda")
            i += used - inner
            if inner and _identified(getattr(obj, attrs[i - 1], _MISSING)) != ref.name:
                # the module found by its import name holds an object the identity table does
                # not know under that name (a module swapped in sys.modules): not trusted
                raise Refusal("not-allowed", "is not numba-cuda's libdevice function")
            if i < len(attrs):
                if ref.kind == "const" and ref.obj is None:  # cuda.threadIdx.x.<more>
                    raise Refusal("not-allowed", f"`{ref.name}` is an int")
                raise Refusal(
                    "not-allowed", f"attributes of `{ref.name}` are not part of the kernel API"
                )
            return ref
        if obj is numba:
            attr = attrs[i]
            if attr == "cuda":
                obj, name, i = cuda, f"{name}.cuda", i + 1
                continue
            value = getattr(numba, attr, _MISSING)
            if attr in NUMBA_API:
                ref = classify(value, f"{name}.{attr}")
            elif value is not _MISSING and is_numba_scalar_type(value):
                ref = Ref("const", value, f"{name}.{attr}")
            else:
                raise Refusal(
                    "not-allowed",
                    "is not allowed in kernels: of the numba package, kernels may use its "
                    "scalar types, numba.literal_unroll and numba.cuda's kernel API",
                )
            if i + 1 < len(attrs):
                raise Refusal("not-allowed", f"attributes of `{ref.name}` are not allowed")
            return ref
        if not isinstance(obj, pytypes.ModuleType):
            raise Refusal(
                "not-allowed",
                f"reads attribute `.{attrs[i]}` of a global value ({_describe(obj)}); kernels "
                "may follow attributes of modules only. Bind the value to a module-level "
                "constant, or pass it as an argument",
            )
        if _is_simtsafe_internal_module(obj):
            raise Refusal(
                "private-name", "is simtsafe internals; kernels use only simtsafe's public API"
            )
        if id(obj) not in trusted:
            through_user_module = True
        attr = attrs[i]
        if attr.startswith("__"):
            raise Refusal("dynamic-access", f"reads the special attribute `{attr}` of a module")
        nxt = getattr(obj, attr, _MISSING)
        if nxt is _MISSING:
            return None
        obj, name, i = nxt, f"{name}.{attr}", i + 1
    ref = classify(obj, name)
    if ref.kind == "module":
        return ref
    if through_user_module and ref.kind in ("const", "device", "api", "ufunc"):
        return Ref(ref.kind, ref.obj, ref.name, ref.nin, substitute=True)
    if through_user_module and ref.kind not in ("simtsafe",):
        raise Refusal(
            "not-allowed",
            f"reaches {ref.name} through a user module; import it directly (e.g. "
            "`from numba import cuda`) so that Numba and simtsafe resolve it the same way",
        )
    return ref
