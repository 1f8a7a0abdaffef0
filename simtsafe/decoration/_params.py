"""Kernel parameters as declared by their annotations.

``parse_params(fn)`` reads a kernel's annotations once, at decoration, into
``Param`` records that every later stage uses: the rewrite (which parameters
get a view), the contract binding (names and ranks for ``requires``), the
Numba signature, and the per-launch argument checks.
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._atomicviews import AppendBuffer, Counter, HashTable, HashValues
from .._coopviews import Accumulate
from .._errors import SafetyError
from .._records import array_field, misaligned_record, misaligned_refusal
from .._spaces import SPACE_NDIM, IndexSpace
from .._views import DisjointSlice, In, In2D, In3D
from ..lowering._scalars import scalar_kind

__all__ = ["Param", "admits", "allowed_types", "parse_params", "typevars"]

#: The key types of a HashTable (the sizes CUDA compare-and-swap takes).
_KEY_DTYPES = tuple(np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))

#: Read-only input annotations and the rank of the array each takes.
_INPUT_NDIM: dict[Any, int] = {In: 1, In2D: 2, In3D: 3}

_SCALAR_BUILTINS: dict[Any, np.dtype[Any]] = {
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
    bool: np.dtype(np.bool_),
    complex: np.dtype(np.complex128),
}


@dataclass(frozen=True)
class Param:
    """One kernel parameter.

    Attributes:
        name: the parameter's name.
        kind: ``"out"`` (DisjointSlice; also ``AppendBuffer`` and its ``Counter``,
            written by the kernel), ``"in"`` (read-only input), ``"acc"``
            (``Accumulate``: atomic updates only) or ``"scalar"``.
        dtype: element dtype of an array, or the scalar's dtype.
        ndim: array rank (0 for scalars).
        space: index space of an output (``"Append"`` for an ``AppendBuffer``,
            ``"Counter"`` for its counter, ``"Table"`` for a ``HashTable``'s keys,
            ``"Values"`` for its ``HashValues``), else None.
        annotation: the annotation as written, for messages.
        typevar: for a dtype-generic parameter (``DisjointSlice[T]``, ``alpha: T``),
            the ``TypeVar``; one dtype is bound to it per launch.
    """

    name: str
    kind: Literal["out", "in", "acc", "scalar"]
    dtype: np.dtype[Any]
    ndim: int
    space: str | None
    annotation: str
    typevar: Any = None  # the TypeVar of a dtype-generic parameter (dtype is then a placeholder)

    @property
    def is_array(self) -> bool:
        return self.kind != "scalar"


def _describe(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) or repr(annotation)
    return str(text).replace("simtsafe._views.", "").replace("numpy.", "np.")


def _element_dtype(arg: Any, kernel: str, name: str, annotation: Any) -> np.dtype[Any]:
    if isinstance(arg, type) and issubclass(arg, np.generic) and arg not in (np.generic, np.number):
        if arg is np.void:
            raise SafetyError(
                f"kernel {kernel!r}: parameter {name!r} is annotated {_describe(annotation)}; "
                "name the record dtype itself, e.g. Rec = np.dtype([('x', np.float32), ('n', "
                "np.int32)], align=True) and In[Rec]",
                kernel=kernel,
                rule="annotation",
            )
        return np.dtype(arg)
    if isinstance(arg, np.dtype) and arg.names is not None:
        # A record (structured) dtype: fields by name, each a scalar or a nested record.
        sub = array_field(arg)
        if sub is not None:
            raise SafetyError(
                f"kernel {kernel!r}: parameter {name!r} is annotated {_describe(annotation)}, "
                f"whose record field {sub!r} is an array; Numba gives such a field as a "
                "mutable, unchecked array (a store through it could write an input or past the "
                "thread's element). Use scalar fields (e.g. x0, x1, x2) or a separate 2D array",
                kernel=kernel,
                rule="annotation",
            )
        nested = misaligned_record(arg)
        if nested is not None:
            raise SafetyError(
                misaligned_refusal(
                    f"kernel {kernel!r}: parameter {name!r} is annotated {_describe(annotation)}",
                    nested,
                    arg,
                ),
                kernel=kernel,
                rule="annotation",
            )
        return arg
    raise SafetyError(
        f"kernel {kernel!r}: parameter {name!r} is annotated {_describe(annotation)}, whose "
        f"element type {_describe(arg)} is not a numpy scalar type or record dtype; write e.g. "
        "DisjointSlice[np.float32]",
        kernel=kernel,
        rule="annotation",
    )


#: A dtype standing in for a type variable until a launch binds it.
_PLACEHOLDER = np.dtype(np.float64)


def allowed_types(tv: Any) -> tuple[type, ...] | None:
    """The numpy scalar types a TypeVar admits (its constraints), None for any of its bound."""
    return tuple(tv.__constraints__) or None


def admits(tv: Any, dtype: np.dtype[Any]) -> bool:
    """Can ``dtype`` be bound to the TypeVar ``tv`` (constraints, or bound, or anything)?"""
    constraints = allowed_types(tv)
    if constraints is not None:
        return any(np.dtype(c) == dtype for c in constraints if _is_scalar_type(c))
    bound = tv.__bound__
    if bound is None or bound is object:
        return True
    try:
        return issubclass(dtype.type, bound)
    except TypeError:
        return False


def _is_scalar_type(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, np.generic)


def _substitute(annotation: Any, binding: dict[Any, Any]) -> tuple[Any, Any]:
    """(annotation with bound TypeVars replaced, the unbound TypeVar it uses or None)."""
    if isinstance(annotation, typing.TypeVar):
        return binding.get(annotation, annotation), None if annotation in binding else annotation
    args = typing.get_args(annotation)
    if args and isinstance(args[0], typing.TypeVar):
        tv = args[0]
        if tv in binding:
            origin = typing.get_origin(annotation)
            return origin[(binding[tv], *args[1:])], None
        return annotation, tv
    return annotation, None


def _parse_one(name: str, annotation: Any, kernel: str, binding: dict[Any, Any]) -> Param:
    annotation, typevar = _substitute(annotation, binding)
    if typevar is not None:
        return _generic(name, annotation, typevar, kernel)
    text = _describe(annotation)
    if annotation is inspect.Parameter.empty:
        raise SafetyError(
            f"kernel {kernel!r}: parameter {name!r} has no annotation; annotate outputs as "
            "DisjointSlice[np.float32] (or DisjointSlice2D/DisjointSlice3D[...]), inputs as "
            "In[np.float32] (or In2D/In3D[...]), and scalars as int, float or a numpy scalar type",
            kernel=kernel,
            rule="annotation",
        )
    if annotation is Counter:
        return Param(name, "out", np.dtype(np.uint64), 1, "Counter", text)
    if annotation in _SCALAR_BUILTINS:
        return Param(name, "scalar", _SCALAR_BUILTINS[annotation], 0, None, text)
    if isinstance(annotation, type) and issubclass(annotation, np.generic):
        dtype = _element_dtype(annotation, kernel, name, annotation)
        if scalar_kind(dtype) is None:
            raise SafetyError(
                f"kernel {kernel!r}: parameter {name!r} is annotated {text}, which cannot be "
                "passed to a kernel by value; scalar parameters may be bool, int8..int64, "
                "uint8..uint64, float16, float32, float64, complex64 or complex128 (pass other "
                "data in a 1-element In[...] array)",
                kernel=kernel,
                rule="annotation",
            )
        return Param(name, "scalar", dtype, 0, None, text)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is DisjointSlice:
        dtype = _element_dtype(args[0], kernel, name, annotation)
        space = args[1]
        if not (
            isinstance(space, type)
            and issubclass(space, IndexSpace)
            and space is not IndexSpace
            and SPACE_NDIM.get(space.__name__) is not None
            and space.__module__ == IndexSpace.__module__
        ):
            raise SafetyError(
                f"kernel {kernel!r}: parameter {name!r}: the second argument of DisjointSlice "
                f"must be one of simtsafe's index spaces ({', '.join(SPACE_NDIM)}), got "
                f"{_describe(space)}. A user-defined IndexSpace has no witness constructor that "
                "proves one writer per element, so it cannot type an output",
                kernel=kernel,
                rule="annotation",
            )
        return Param(name, "out", dtype, SPACE_NDIM[space.__name__], space.__name__, text)
    if origin is Accumulate:
        dtype = _element_dtype(args[0], kernel, name, annotation)
        if dtype.kind not in "iuf":
            raise SafetyError(
                f"kernel {kernel!r}: parameter {name!r} is annotated {text}; accumulators hold "
                "integers or floats (atomic add/min/max)",
                kernel=kernel,
                rule="annotation",
            )
        return Param(name, "acc", dtype, 1, None, text)
    if origin is AppendBuffer:
        dtype = _element_dtype(args[0], kernel, name, annotation)
        return Param(name, "out", dtype, 1, "Append", text)
    if origin is HashValues:
        dtype = _element_dtype(args[0], kernel, name, annotation)
        return Param(name, "out", dtype, 1, "Values", text)
    if origin is HashTable:
        dtype = _element_dtype(args[0], kernel, name, annotation)
        if dtype not in _KEY_DTYPES:
            raise SafetyError(
                f"kernel {kernel!r}: parameter {name!r} is annotated {text}; hash table keys "
                "are int32, uint32, int64 or uint64 (compare-and-swap sizes); got "
                f"{dtype.name}",
                kernel=kernel,
                rule="annotation",
            )
        return Param(name, "out", dtype, 1, "Table", text)
    if origin in _INPUT_NDIM:
        dtype = _element_dtype(args[0], kernel, name, annotation)
        return Param(name, "in", dtype, _INPUT_NDIM[origin], None, text)
    if (
        annotation in (DisjointSlice, Accumulate, AppendBuffer, HashTable, HashValues)
        or annotation in _INPUT_NDIM
    ):
        raise SafetyError(
            f"kernel {kernel!r}: parameter {name!r} is annotated {text} without an element "
            f"type; write {text}[np.float32] (or the dtype you launch with)",
            kernel=kernel,
            rule="annotation",
        )
    raise SafetyError(
        f"kernel {kernel!r}: parameter {name!r} has annotation {text}, which simtsafe does not "
        "know; use DisjointSlice[...] / DisjointSlice2D[...] / DisjointSlice3D[...] for outputs, "
        "In[...] / In2D[...] / In3D[...] for read-only inputs, Accumulate[...], "
        "AppendBuffer[...] with a Counter, and int, float, bool or a numpy scalar type for "
        "scalars",
        kernel=kernel,
        rule="annotation",
    )


def _generic(name: str, annotation: Any, tv: Any, kernel: str) -> Param:
    """A dtype-generic parameter: its kind and rank now, its dtype at each launch."""
    constraints = allowed_types(tv)
    if constraints is not None and not all(_is_scalar_type(c) for c in constraints):
        raise SafetyError(
            f"kernel {kernel!r}: parameter {name!r} uses the type variable {tv.__name__}, whose "
            "constraints must be numpy scalar types, e.g. TypeVar('T', np.float32, np.float64)",
            kernel=kernel,
            rule="annotation",
        )
    placeholder = np.dtype(constraints[0]) if constraints else _PLACEHOLDER
    concrete = _parse_one(name, _rebind(annotation, tv, placeholder.type), kernel, {})
    return Param(
        concrete.name,
        concrete.kind,
        concrete.dtype,
        concrete.ndim,
        concrete.space,
        _describe(annotation),
        typevar=tv,
    )


def _rebind(annotation: Any, tv: Any, scalar: Any) -> Any:
    return _substitute(annotation, {tv: scalar})[0]


def parse_params(fn: Any, kernel: str, binding: dict[Any, Any] | None = None) -> tuple[Param, ...]:
    """Read ``fn``'s annotations into ``Param`` records (TypeVars bound by ``binding``).

    Raises:
        SafetyError: a parameter is unannotated or its annotation is not a
            simtsafe view or a supported scalar type.
    """
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception as exc:  # a NameError in a string annotation, typically
        hint = ""
        if isinstance(exc, TypeError) and "Too many arguments for simtsafe._views." in str(exc):
            hint = (
                ". DisjointSlice2D[T] and DisjointSlice3D[T] take the element type only (their "
                "index space is Index2D / Index3D); an output of another space is "
                "DisjointSlice[T, Space] (Columns, PerBlock, PerWarp, BlockRow, WarpRow)"
            )
        raise SafetyError(
            f"kernel {kernel!r}: its annotations could not be evaluated ({exc}){hint}",
            kernel=kernel,
            rule="annotation",
        ) from None
    sig = inspect.signature(fn)
    params = tuple(
        _parse_one(name, annotations.get(name, inspect.Parameter.empty), kernel, binding or {})
        for name in sig.parameters
    )
    seen: dict[str, tuple[Any, str]] = {}
    for p in params:
        tv = p.typevar
        if tv is None:
            continue
        first = seen.setdefault(tv.__name__, (tv, p.name))
        if first[0] is not tv:
            raise SafetyError(
                f"kernel {kernel!r}: parameters {first[1]!r} and {p.name!r} use two different "
                f"type variables both named {tv.__name__!r}; a kernel is instantiated by "
                f"type-variable name (instantiate({tv.__name__}=...)), so each name must be "
                "one TypeVar. Use one TypeVar object for both, or give the second another name",
                kernel=kernel,
                rule="annotation",
            )
    return params


def typevars(params: tuple[Param, ...]) -> dict[str, Any]:
    """The type variables of a dtype-generic kernel, by name, in parameter order."""
    found: dict[str, Any] = {}
    for p in params:
        if p.typevar is not None:
            found.setdefault(p.typevar.__name__, p.typevar)
    return found


def annotated_record_fields(fn: Any) -> frozenset[str]:
    """Field names of the record dtypes a helper's annotated view parameters hold (a helper's
    annotations are optional: any it lacks, or cannot have evaluated, add nothing)."""
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception:  # a name a string annotation uses is not defined yet
        return frozenset()
    names: set[str] = set()
    for name, annotation in annotations.items():
        if name == "return":
            continue
        try:
            param = _parse_one(name, annotation, fn.__name__, {})
        except (SafetyError, TypeError, ValueError):  # a witness, a scalar of no record
            continue
        if param.dtype.names:
            names.update(param.dtype.names)
    return frozenset(names)


def record_fields(params: tuple[Param, ...]) -> frozenset[str]:
    """Field names of the record dtypes among the parameters (readable as attributes)."""
    names: set[str] = set()
    for p in params:
        if p.dtype.names:
            names.update(p.dtype.names)
    return frozenset(names)
