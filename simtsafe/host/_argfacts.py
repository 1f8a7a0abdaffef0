"""What the launch checks need to know about one array argument ("facts").

Read from ``__cuda_array_interface__`` (Numba, CuPy, PyTorch...) or, on the
simulator, from the fake device array's host buffer. Facts about Numba
device arrays are cached per live object: their pointer, shape and strides
cannot change while the object exists. Arrays of other libraries can change
their metadata in place, so their facts are read again at every launch --
CuPy arrays and PyTorch tensors through their own attributes
(``native_facts``, see ``_foreign``), which give the same facts as the
CAI path (``array_facts``, the reference) without building its dict.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._errors import ArgumentTypeError
from ..lowering._compat import SIMULATOR
from ..lowering._launching import (
    current_device,
    device_array_type,
    pack_array,
    pointer_device,
    simulator_array_interface,
)
from ._foreign import BF16_TYPESTR, is_torch_tensor, native_reader, torch_stream

if TYPE_CHECKING:
    from ..decoration._params import Param

__all__ = [
    "FACTS_CACHE",
    "Facts",
    "array_facts",
    "current_device",
    "input_layout",
    "make_facts",
    "native_facts",
    "pointer_device",
    "record_dtype",
    "several_devices",
    "unaligned",
]


class Facts(NamedTuple):
    """What the checks need from one array argument."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    typestr: str
    readonly: bool
    c_contiguous: bool
    size: int
    lo: int  # first byte touched
    hi: int  # one past the last byte touched
    stable: bool  # metadata cannot change while the object lives (Numba device arrays)
    device: int | None  # ordinal of the owning device (None: empty, simulator, or one GPU)
    packed: tuple[int, ...]  # the array's kernel parameters in Numba's ABI
    stream: int | None  # producer stream (CAI v3 "stream"; PyTorch: its current stream)


#: Facts about live Numba device arrays, whose pointer/shape/strides never change:
#: id -> (weak reference, facts). Entries go when the array is collected.
FACTS_CACHE: dict[int, tuple[weakref.ref[Any], Facts]] = {}


def _forget(key: int) -> Callable[[Any], None]:
    def drop(_ref: Any) -> None:
        FACTS_CACHE.pop(key, None)

    return drop


def array_facts(obj: Any, param: Param, kernel: str, itemsize: int) -> Facts:
    """The facts of one array argument, from ``__cuda_array_interface__`` (the reference path).

    Raises:
        ArgumentTypeError: not a device array, a masked one, or one whose
            exporter refuses to describe it (e.g. a tensor that requires grad).
    """
    key = id(obj)
    hit = FACTS_CACHE.get(key)
    if hit is not None and hit[0]() is obj:
        return hit[1]
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except RuntimeError as exc:  # PyTorch: a tensor that requires grad
        raise ArgumentTypeError(
            f"kernel {kernel!r}: argument {param.name!r} cannot be exported as a device array: "
            f"{exc}",
            kernel=kernel,
            argument=param.name,
            actual=type(obj).__name__,
        ) from None
    if cai is None:
        cai = _fallback_interface(obj, param, kernel)
    if cai.get("mask") is not None:
        raise ArgumentTypeError(
            f"kernel {kernel!r}: argument {param.name!r} is a masked array; pass plain data",
            kernel=kernel,
            argument=param.name,
        )
    stream = cai.get("stream")
    if is_torch_tensor(obj):
        if str(obj.dtype) == "torch.bfloat16":
            # PyTorch exports bfloat16 with float16's typestr "<f2": the tensor's own
            # dtype decides (pointer, shape and byte strides are right for 2-byte elements).
            cai = dict(cai, typestr=BF16_TYPESTR)
        stream = torch_stream(obj.get_device())  # PyTorch exports CAI v2: no stream entry
    ptr, readonly = cai["data"]
    stable = type(obj) is device_array_type()
    facts = make_facts(
        ptr, tuple(cai["shape"]), cai.get("strides"), cai["typestr"], bool(readonly), itemsize,
        stable, stream,
    )  # fmt: skip
    if stable:
        FACTS_CACHE[key] = (weakref.ref(obj, _forget(key)), facts)
    return facts


def native_facts(obj: Any, itemsize: int) -> Facts | None:
    """The facts of a CuPy array or PyTorch tensor from its own attributes; None otherwise.

    Equal to ``array_facts`` for the same object (the fast path's soundness
    rests on it); None where the reader cannot be exact, and the caller
    takes ``array_facts``.
    """
    reader = native_reader(type(obj))
    if reader is None:
        return None
    raw = reader(obj)
    if raw is None:
        return None
    ptr, shape, strides, typestr, readonly, stream = raw
    return make_facts(ptr, shape, strides, typestr, readonly, itemsize, False, stream)


def make_facts(
    ptr: int,
    shape: tuple[int, ...],
    raw_strides: tuple[int, ...] | None,
    typestr: str,
    readonly: bool,
    itemsize: int,
    stable: bool,
    stream: int | None,
) -> Facts:
    """Facts from the raw values of an array interface (strides None: C-contiguous)."""
    if raw_strides is None and len(shape) == 1:  # the common case, without the loops
        n = shape[0]
        return Facts(
            ptr,
            shape,
            (itemsize,),
            typestr,
            readonly,
            True,
            n,
            ptr,
            ptr + n * itemsize,
            stable,
            pointer_device(ptr) if n and several_devices() else None,
            (0, 0, n, itemsize, ptr, n, itemsize),
            stream,
        )
    if raw_strides is None:
        strides = _c_strides(shape, itemsize)
        c_contiguous = True
    else:
        strides = tuple(raw_strides)
        c_contiguous = _is_c_contiguous(shape, strides, itemsize)
    size = 1
    for n in shape:
        size *= n
    lo = hi = ptr
    for n, st in zip(shape, strides, strict=True):
        if st < 0:
            lo += (n - 1) * st
        else:
            hi += (n - 1) * st
    return Facts(
        ptr,
        shape,
        strides,
        typestr,
        readonly,
        c_contiguous,
        size,
        lo,
        hi + itemsize,
        stable,
        pointer_device(ptr) if size and several_devices() else None,
        pack_array(ptr, shape, strides, size, itemsize),
        stream,
    )


@cache
def several_devices() -> bool:
    """More than one visible GPU: only then can memory live on another device."""
    if SIMULATOR:
        return False
    from numba import cuda

    return len(cuda.gpus) > 1


def record_dtype(obj: Any) -> np.dtype[Any] | None:
    """The record dtype of an array argument: its ``.dtype``, else the CAI's ``descr``."""
    dtype = getattr(obj, "dtype", None)
    if isinstance(dtype, np.dtype):
        return dtype
    descr = (getattr(obj, "__cuda_array_interface__", None) or {}).get("descr")
    try:
        # numpy's reading of a descr: fields named '' are padding (an align=True record's),
        # not fields (attack round 21: np.dtype(descr) named them 'f2' and the record of
        # exactly the declared dtype was refused)
        return np.lib.format.descr_to_dtype(descr) if descr else None
    except (TypeError, ValueError):
        return None


def _fallback_interface(obj: Any, param: Param, kernel: str) -> dict[str, Any]:
    """The array interface of an argument without ``__cuda_array_interface__``, or a clear error."""
    fake = simulator_array_interface(obj)
    if fake is not None:
        return fake
    if isinstance(obj, np.ndarray):
        raise ArgumentTypeError(
            f"kernel {kernel!r}: argument {param.name!r} is a host numpy array; simtsafe launches "
            "take device arrays only (no hidden copies). Pass numba.cuda.to_device(x) (or a "
            "CuPy/PyTorch CUDA array) and copy results back with .copy_to_host()",
            kernel=kernel,
            argument=param.name,
            actual=type(obj).__name__,
        )
    raise ArgumentTypeError(
        f"kernel {kernel!r}: argument {param.name!r} ({param.annotation}) must be a device array "
        f"(anything with __cuda_array_interface__), got {type(obj).__name__}",
        kernel=kernel,
        argument=param.name,
        actual=type(obj).__name__,
    )


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _is_c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    expected = _c_strides(shape, itemsize)
    return all(n == 1 or s == e for n, s, e in zip(shape, strides, expected, strict=True))


#: The run (bytes) of ``input_layout``'s ``"C16"``: lowering._runaligned.RUN.
_RUN = 16


def input_layout(f: Facts, itemsize: int, runs: bool) -> str:
    """The layout code an input is compiled for: ``"A"`` (strided), ``"C"`` (C-contiguous),
    or, for a kernel that copies its inputs in 16-byte runs (``runs``: it calls
    ``shared.fill_async``), ``"C16"`` where the data pointer, the row pitch (2D) and the row
    length in bytes are multiples of 16 -- what the compiled code of that specialization
    assumes (lowering._runaligned)."""
    if not f.c_contiguous:
        return "A"
    if (
        runs
        and f.ptr % _RUN == 0
        and (f.shape[-1] * itemsize) % _RUN == 0
        and (len(f.shape) < 2 or f.strides[0] % _RUN == 0)
    ):
        return "C16"
    return "C"


def unaligned(f: Facts, align: int) -> tuple[str, int] | None:
    """("data pointer" | "stride", its value) when it is not a multiple of ``align``, the
    alignment an element's accesses assume; None for an empty array."""
    if not f.size:
        return None
    if f.ptr % align:
        return "data pointer", f.ptr
    for stride, n in zip(f.strides, f.shape, strict=True):
        if n > 1 and stride % align:
            return "stride", stride
    return None
