"""CuPy arrays and PyTorch tensors read through their own attributes, not the CAI dict.

Building ``__cuda_array_interface__`` costs a dict per array per launch, and
the launch of a CuPy or PyTorch array has to read it every time (their
metadata can change in place: ``resize_``, ``set_``, shape assignment). The
readers here take the same raw values -- pointer, shape, strides (None when
C-contiguous), typestr, read-only flag, producer stream -- straight from
each library's attributes, exactly as that library's own
``__cuda_array_interface__`` computes them (CuPy 13/14, PyTorch 2.x). A
reader returns None when it cannot answer exactly (a tensor that requires
grad, a dtype outside the table...): the caller then takes the CAI path,
which stays the reference (``tests/unit/test_foreign_facts.py`` and
``tests/gpu/test_execution_gpu.py`` check that both agree).

Producer streams: CuPy exports its current stream as the CAI v3 ``stream``
(1 for the legacy default stream). PyTorch exports CAI v2, with no stream;
simtsafe takes PyTorch's current stream on the tensor's device as its
producer stream, the stream ``tensor.__dlpack__(stream=...)`` would
synchronize with.

Ambient streams: a launch prepared without a stream whose arrays all come
from CuPy runs on CuPy's current stream, all from PyTorch on PyTorch's current
stream of their device (``ambient_stream``) -- the stream that library's own
operations on those arrays would use.

Neither library is imported here: a type is recognised only when its
module is already loaded (``sys.modules``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

__all__ = [
    "BF16_TYPESTR",
    "Ambient",
    "Guard",
    "Raw",
    "RawReader",
    "ambient_reader",
    "ambient_stream",
    "dtype_name",
    "guard",
    "producer_reader",
    "is_torch_tensor",
    "native_reader",
    "torch_stream",
]

#: (ptr, shape, strides in bytes or None when C-contiguous, typestr, read-only, CAI stream)
Raw = tuple[int, tuple[int, ...], "tuple[int, ...] | None", str, bool, "int | None"]
RawReader = Callable[[Any], "Raw | None"]

#: type -> its reader, or None for types without one (filled on first sight).
_READERS: dict[type, RawReader | None] = {}

#: (fingerprint function, the array's fingerprint now, producer-stream reader): a memo
#: entry holding a CuPy array or PyTorch tensor is reused only while the array's
#: fingerprint -- everything its launch facts derive from, except the stream, which
#: the reader gives afresh -- is unchanged.
Guard = tuple[Callable[[Any], Any], Any, Callable[[], "int | None"]]


def native_reader(tp: type) -> RawReader | None:
    """The raw-facts reader for arrays of exactly this type, or None."""
    try:
        return _READERS[tp]
    except KeyError:
        pass
    reader: RawReader | None = None
    cupy = sys.modules.get("cupy")
    if cupy is not None and tp is getattr(cupy, "ndarray", None):
        reader = _cupy_reader()
    torch = sys.modules.get("torch")
    if torch is not None and tp is getattr(torch, "Tensor", None):
        reader = _torch_reader(torch)
    _READERS[tp] = reader
    return reader


def guard(obj: Any) -> Guard | None:
    """The memo guard of a CuPy array or PyTorch tensor (None for other objects).

    The fingerprint covers pointer, shape, contiguity (strides too when not
    C-contiguous) and dtype -- and for tensors ``requires_grad`` -- so any
    in-place change (``resize_``, ``set_``, ``.data =``, shape assignment)
    makes the memo miss and the launch is checked again. (A tensor moved to
    the host in place has another pointer: with unified addressing, host and
    device memory never share addresses.)
    """
    tp = type(obj)
    if native_reader(tp) is None:
        return None
    fingerprint: Callable[[Any], Any]
    cupy = sys.modules.get("cupy")
    if cupy is not None and tp is cupy.ndarray:
        fingerprint = _cupy_contiguous if obj._c_contiguous else _cupy_strided
        return fingerprint, fingerprint(obj), _cupy_stream_reader()
    fingerprint = _torch_contiguous if obj.is_contiguous() else _torch_strided
    return fingerprint, fingerprint(obj), _torch_stream_reader(obj.get_device())


def _cupy_contiguous(x: Any) -> Any:
    return (x.data.ptr, x.shape, x._c_contiguous, x.dtype)


def _cupy_strided(x: Any) -> Any:
    return (x.data.ptr, x.shape, x._c_contiguous, x.dtype, x.strides)


def _torch_contiguous(t: Any) -> Any:
    return (t.data_ptr(), t.shape, t.is_contiguous(), t.dtype, t.requires_grad)


def _torch_strided(t: Any) -> Any:
    return (
        t.data_ptr(),
        t.shape,
        t.is_contiguous(),
        t.dtype,
        t.requires_grad,
        t.stride(),
    )


def is_torch_tensor(obj: Any) -> bool:
    """Is ``obj`` a PyTorch tensor (any subclass)?"""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


# ---------------------------------------------------------------------------- CuPy


@cache
def _torch_stream_reader(device: int) -> Callable[[], int]:
    """One reader per device, so a launch with several tensors reads the stream once."""
    return lambda: torch_stream(device)


@cache
def _cupy_stream_reader() -> Callable[[], int | None]:
    """What CuPy's __cuda_array_interface__ exports as ``stream`` right now.

    One reader for the process (the environment it reads is fixed when CuPy
    loads), so a launch with several CuPy arrays reads the stream once.
    """
    import cupy  # type: ignore[import-not-found]

    if int(os.environ.get("CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION", "3")) != 3:
        return lambda: None
    # What CuPy exports for its null stream (get_default_stream_ptr).
    default_ptr = 2 if os.environ.get("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", "0") == "1" else 1
    current = cupy.cuda.get_current_stream
    return lambda: current().ptr or default_ptr


def _cupy_reader() -> RawReader | None:
    import cupy

    if not hasattr(cupy.ndarray, "_c_contiguous"):
        return None  # not the CuPy this mirrors: take the CAI path
    stream = _cupy_stream_reader()

    def read(x: Any) -> Raw | None:
        c_contiguous = x._c_contiguous
        return (
            x.data.ptr if x.size > 0 else 0,
            x.shape,
            None if c_contiguous else x.strides,
            x.dtype.str,
            False,  # CuPy exports every array as writable
            stream(),
        )

    return read


# ---------------------------------------------------------------------------- PyTorch

#: ml_dtypes.bfloat16's typestr (np.dtype(ml_dtypes.bfloat16).str): a bf16 parameter
#: expects it; numpy, Numba and CuPy arrays of that dtype export it.
BF16_TYPESTR = "<V2"


def dtype_name(typestr: str) -> str:
    """The dtype name of an exported typestr for messages ("<V2" is bfloat16, not void16)."""
    return "bfloat16" if typestr == BF16_TYPESTR else np.dtype(typestr).name


#: PyTorch dtype name -> the typestr of the numpy dtype it matches (what its
#: __cuda_array_interface__ exports, except bfloat16: PyTorch exports that as "<f2",
#: float16's; read natively here it is ml_dtypes.bfloat16's "<V2").
_TORCH_TYPESTR = {
    "bfloat16": BF16_TYPESTR,
    "complex64": "<c8",
    "complex128": "<c16",
    "float16": "<f2",
    "float32": "<f4",
    "float64": "<f8",
    "uint8": "|u1",
    "int8": "|i1",
    "uint16": "<u2",
    "int16": "<i2",
    "uint32": "<u4",
    "int32": "<i4",
    "uint64": "<u8",
    "int64": "<i8",
    "bool": "|b1",
}


def _torch_reader(torch: Any) -> RawReader:
    typestrs: dict[Any, str] = {}
    for name, typestr in _TORCH_TYPESTR.items():
        dtype = getattr(torch, name, None)
        if dtype is not None:
            typestrs[dtype] = typestr
    strided = torch.strided

    def read(t: Any) -> Raw | None:
        if t.requires_grad or not t.is_cuda or t.layout is not strided:
            return None  # the CAI path gives the precise refusal
        typestr = typestrs.get(t.dtype)
        if typestr is None:
            return None
        strides = None
        if not t.is_contiguous():
            size = t.element_size()
            strides = tuple([s * size for s in t.stride()])
        return (
            t.data_ptr() if t.numel() > 0 else 0,
            tuple(t.shape),
            strides,
            typestr,
            False,  # PyTorch exports every tensor as writable
            torch_stream(t.get_device()),
        )

    return read


def torch_stream(device: int) -> int:
    """PyTorch's current stream on a device, as a CAI stream value (1 = legacy default)."""
    torch = sys.modules["torch"]
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    handle = int(raw(device)) if raw is not None else torch.cuda.current_stream(device).cuda_stream
    return handle or 1


# ---------------------------------------------------------------------------- ambient streams

#: (library, CAI-style handle (1 = legacy, 2 = per-thread default), device or None,
#: a function making the library's stream object): the stream the arrays' library would use.
Ambient = tuple[str, int, "int | None", Callable[[], Any]]


def ambient_stream(arrays: Sequence[Any]) -> Ambient | None:
    """The current stream of the one library every array comes from (CuPy or PyTorch).

    None when there are no arrays, when they come from Numba, from several
    libraries, or (PyTorch) from several devices or the host: the launch
    then keeps the default stream (and the checks refuse what they refuse).
    """
    if not arrays:
        return None
    modules = sys.modules
    cupy = modules.get("cupy")
    if cupy is not None:
        nd = getattr(cupy, "ndarray", None)
        if nd is not None and all(isinstance(a, nd) for a in arrays):
            stream = cupy.cuda.get_current_stream()
            handle = stream.ptr
            if not handle:  # CuPy's null stream: the default stream it stands for
                per_thread = os.environ.get("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", "0") == "1"
                return ("CuPy", 2 if per_thread else 1, None, lambda: 2 if per_thread else 1)
            return ("CuPy", handle, None, lambda: stream)  # its device: checked by prepare
    torch = modules.get("torch")
    if torch is not None:
        tensor = torch.Tensor
        first = arrays[0]
        if isinstance(first, tensor):
            device = first.get_device()
            if device >= 0 and all(
                isinstance(a, tensor) and a.get_device() == device for a in arrays
            ):
                handle = torch_stream(device)
                if handle == 1:
                    return ("PyTorch", 1, device, lambda: 1)
                return ("PyTorch", handle, device, lambda: torch.cuda.current_stream(device))
    return None


#: array type -> (first array -> (the memo's producer-stream reader, the stream handle now)),
#: or None for other types (filled on first sight).
_AMBIENT_READERS: dict[type, Callable[[Any], tuple[Any, int]] | None] = {}


def ambient_reader(tp: type) -> Callable[[Any], tuple[Any, int]] | None:
    """The per-launch reader of the current stream for arrays of type ``tp``: one per
    library (a subclass of CuPy's ndarray or of torch.Tensor has its library's).

    A launch calls it once (with its first array) after checking that every
    array has that reader. It returns the producer-stream reader a memoized
    launch of these arrays would call and the handle it gives now, in CAI
    form (1: the legacy default stream, 2: the per-thread one; CuPy's null
    stream is one of these), so that the launch reads the library's current
    stream once, not twice. None for any type but CuPy's ndarray and
    torch.Tensor and their subclasses. :func:`ambient_stream` gives the stream object itself, on the
    first launch on a stream.
    """
    try:
        return _AMBIENT_READERS[tp]
    except KeyError:
        pass
    reader: Callable[[Any], tuple[Any, int]] | None = None
    cupy = sys.modules.get("cupy")
    torch = sys.modules.get("torch")
    for base in (getattr(cupy, "ndarray", None), getattr(torch, "Tensor", None)):
        # A subclass (torch.nn.Parameter, say) shares its library's reader: a launch of a
        # mix of the two is one library's (attack round 16: a subclass took the default
        # stream, unordered with the library's later work on its current stream).
        if isinstance(base, type) and tp is not base and issubclass(tp, base):
            reader = _AMBIENT_READERS[tp] = ambient_reader(base)
            return reader
    if cupy is not None and tp is getattr(cupy, "ndarray", None):
        memo_read = _cupy_stream_reader()
        current = cupy.cuda.get_current_stream
        null = 2 if os.environ.get("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", "0") == "1" else 1

        def read_cupy(_x: Any) -> tuple[Any, int]:
            value = memo_read()
            if value is None:  # CuPy exports no stream (CAI v2): read it directly
                return None, int(current().ptr) or null
            return memo_read, value

        reader = read_cupy
    elif torch is not None and tp is getattr(torch, "Tensor", None):

        def read_torch(t: Any) -> tuple[Any, int]:
            device = t.get_device()
            if device < 0:
                return None, 0  # a host tensor: the launch refuses it
            memo_read = _torch_stream_reader(device)
            return memo_read, memo_read()

        reader = read_torch
    _AMBIENT_READERS[tp] = reader
    return reader


def producer_reader(library: str, device: int | None) -> Callable[[], int | None] | None:
    """The memo's producer-stream reader of ``library``'s arrays (the one ``guard`` gives)."""
    if library == "CuPy":
        return _cupy_stream_reader()
    if library == "PyTorch" and device is not None:
        return _torch_stream_reader(device)
    return None
