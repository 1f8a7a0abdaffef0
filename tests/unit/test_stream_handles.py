"""What `prepare(stream=...)` accepts, read without a GPU: every library's stream object."""

from __future__ import annotations

import types

import pytest

from simtsafe.lowering._launching import stream_device, stream_handle


class Protocol:
    def __init__(self, handle: int, *, attribute: bool = False) -> None:
        if attribute:
            self.__cuda_stream__ = (0, handle)  # type: ignore[assignment]
        self._handle = handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self._handle)


def test_every_kind_of_stream_gives_its_handle() -> None:
    assert stream_handle(None) == 0
    assert stream_handle(0) == 0
    assert stream_handle(0x7F00) == 0x7F00
    assert stream_handle(Protocol(0x10)) == 0x10  # cuda.core, Numba: the protocol method
    assert stream_handle(Protocol(0x11, attribute=True)) == 0x11  # a protocol attribute
    assert stream_handle(types.SimpleNamespace(ptr=0x12, device_id=0)) == 0x12  # CuPy
    assert stream_handle(types.SimpleNamespace(cuda_stream=0x13)) == 0x13  # PyTorch
    assert stream_handle(types.SimpleNamespace(handle=0x14)) == 0x14


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        (True, "a stream cannot be a bool"),
        (-1, "non-negative int"),
        ("s1", "cannot use a str as a CUDA stream"),
        (types.SimpleNamespace(ptr="x"), "cannot use a SimpleNamespace as a CUDA stream"),
    ],
)
def test_what_is_not_a_stream_is_refused(stream: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        stream_handle(stream)


def test_stream_device_asks_the_object_first() -> None:
    numba_like = types.SimpleNamespace(
        context=types.SimpleNamespace(device=types.SimpleNamespace(id=1))
    )
    assert stream_device(numba_like) == 1
    assert stream_device(types.SimpleNamespace(device_id=2, ptr=5)) == 2  # CuPy
    torch_like = types.SimpleNamespace(device=types.SimpleNamespace(index=3), cuda_stream=5)
    assert stream_device(torch_like) == 3
    core_like = types.SimpleNamespace(device=types.SimpleNamespace(device_id=4))
    assert stream_device(core_like) == 4
    assert stream_device(None) is None
    assert stream_device(0) is None  # the default streams: the current context's
    assert stream_device(2) is None
