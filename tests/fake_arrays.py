"""Stand-ins for CuPy arrays and PyTorch tensors, for tests without a GPU.

Each fake exposes the attributes simtsafe's native readers use *and* a
``__cuda_array_interface__`` written after the library's own (CuPy 13/14
``_ndarray_base.__cuda_array_interface__``; PyTorch 2.x
``Tensor.__cuda_array_interface__``, which exports version 2 without a
stream). Tests install them as ``sys.modules["cupy"]`` / ``["torch"]``
(``install``); the GPU tests run the same properties on the real libraries.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np

__all__ = ["FakeCupyArray", "FakeTensor", "install", "make_cupy", "make_torch"]


def _c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """CuPy's / PyTorch's rule: empty arrays are contiguous; size-1 axes are ignored."""
    if 0 in shape:
        return True
    expected = itemsize
    for n, st in zip(reversed(shape), reversed(strides), strict=True):
        if n == 1:
            continue
        if st != expected:
            return False
        expected *= n
    return True


# ---------------------------------------------------------------------------- CuPy


class _Memory:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


class _CupyStream:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


class FakeCupyArray:
    """A CuPy ndarray: pointer, shape, strides in bytes, numpy dtype, device 0."""

    def __init__(
        self, ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: Any
    ) -> None:
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.strides = tuple(strides)
        self.size = int(np.prod(shape)) if shape else 1
        self.data = _Memory(ptr)

    @property
    def _c_contiguous(self) -> bool:
        return _c_contiguous(self.shape, self.strides, self.dtype.itemsize)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        stream_ptr = CUPY.cuda.get_current_stream().ptr or 1
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "descr": self.dtype.descr,
            "stream": stream_ptr,
            "version": 3,
            "strides": None if self._c_contiguous else self.strides,
            "data": (self.data.ptr if self.size > 0 else 0, False),
        }


CUPY = types.ModuleType("cupy")
CUPY.ndarray = FakeCupyArray  # type: ignore[attr-defined]
_current = [_CupyStream(0)]
CUPY.cuda = types.SimpleNamespace(get_current_stream=lambda: _current[0])  # type: ignore[attr-defined]


def set_cupy_stream(ptr: int) -> None:
    """Make ``ptr`` CuPy's current stream (0: the null stream)."""
    _current[0] = _CupyStream(ptr)


def make_cupy(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: Any) -> Any:
    return FakeCupyArray(ptr, shape, strides, dtype)


# ---------------------------------------------------------------------------- PyTorch


class _Dtype:
    def __init__(self, name: str, itemsize: int) -> None:
        self.name = name
        self.itemsize = itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"


_TORCH_DTYPES = {
    "float32": ("<f4", 4),
    "float64": ("<f8", 8),
    "float16": ("<f2", 2),
    "bfloat16": ("<f2", 2),
    "int32": ("<i4", 4),
    "int16": ("<i2", 2),
    "int64": ("<i8", 8),
    "uint8": ("|u1", 1),
    "bool": ("|b1", 1),
}

TORCH = types.ModuleType("torch")
for _name, (_typestr, _size) in _TORCH_DTYPES.items():
    setattr(TORCH, _name, _Dtype(_name, _size))
TORCH.strided = object()  # type: ignore[attr-defined]
TORCH.sparse_coo = object()  # type: ignore[attr-defined]
_torch_stream = [0]
TORCH._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: _torch_stream[0])  # type: ignore[attr-defined]


class _TorchStream:
    def __init__(self, handle: int, device: int) -> None:
        self.cuda_stream = handle
        self.device_index = device


TORCH.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
    current_stream=lambda device: _TorchStream(_torch_stream[0], device)
)


def set_torch_stream(handle: int) -> None:
    """Make ``handle`` PyTorch's current stream (0: its default, the legacy stream)."""
    _torch_stream[0] = handle


class FakeTensor:
    """A PyTorch CUDA tensor: strides in elements, torch dtypes, ``requires_grad``."""

    def __init__(
        self,
        ptr: int,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        dtype: str,
        requires_grad: bool = False,
        is_cuda: bool = True,
    ) -> None:
        self.dtype = getattr(TORCH, dtype)
        self.shape = tuple(shape)
        self._strides = tuple(strides)
        self._ptr = ptr
        self.requires_grad = requires_grad
        self.is_cuda = is_cuda
        self.layout = TORCH.strided  # type: ignore[attr-defined]

    def data_ptr(self) -> int:
        return self._ptr

    def stride(self) -> tuple[int, ...]:
        return self._strides

    def numel(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    def element_size(self) -> int:
        itemsize: int = self.dtype.itemsize
        return itemsize

    def is_contiguous(self) -> bool:
        size = self.element_size()
        return _c_contiguous(self.shape, tuple(s * size for s in self._strides), size)

    def get_device(self) -> int:
        return 0 if self.is_cuda else -1

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if not self.is_cuda:
            raise AttributeError("Can't get __cuda_array_interface__ on non-CUDA tensor type")
        if self.requires_grad:
            raise RuntimeError(
                "Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                "aren't required, use var.detach() to get Variable that doesn't require grad."
            )
        typestr = _TORCH_DTYPES[self.dtype.name][0]
        itemsize = self.element_size()
        strides = None if self.is_contiguous() else tuple(s * itemsize for s in self._strides)
        data = (self.data_ptr() if self.numel() > 0 else 0, False)
        return {
            "typestr": typestr,
            "shape": self.shape,
            "strides": strides,
            "data": data,
            "version": 2,
        }


TORCH.Tensor = FakeTensor  # type: ignore[attr-defined]


def make_torch(
    ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str, **kw: Any
) -> Any:
    return FakeTensor(ptr, shape, strides, dtype, **kw)


def install(monkeypatch: Any) -> None:
    """Make the fakes *the* CuPy and PyTorch for simtsafe's readers (undone after the test)."""
    from simtsafe.host import _foreign

    monkeypatch.setitem(sys.modules, "cupy", CUPY)
    monkeypatch.setitem(sys.modules, "torch", TORCH)
    monkeypatch.setattr(_foreign, "_READERS", {})
    monkeypatch.setattr(_foreign, "_AMBIENT_READERS", {})
    set_cupy_stream(0)
    set_torch_stream(0)
