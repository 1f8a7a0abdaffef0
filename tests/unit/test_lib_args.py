"""Library launches check their arguments before anything is enqueued (no GPU: arrays described
by ``__cuda_array_interface__`` only). Each refusal names the function, the argument, what was
seen and the fix."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.lib import _common


class Cai:
    """An array known only by its ``__cuda_array_interface__``."""

    def __init__(
        self,
        n: int | tuple[int, ...],
        typestr: str = "<i4",
        ptr: int = 0x10000,
        strides: tuple[int, ...] | None = None,
        readonly: bool = False,
        mask: Any = None,
    ) -> None:
        shape = (n,) if isinstance(n, int) else n
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": typestr,
            "data": (ptr, readonly),
            "strides": strides,
            "mask": mask,
            "stream": None,
        }


class Grad:
    """PyTorch's refusal to export a tensor that requires grad."""

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")


def _refused(out: Any, x: Any) -> ss.ArgumentError:
    with pytest.raises(ss.ArgumentError) as info:
        ss.lib.inclusive_scan(out, x)
    assert str(info.value).startswith("simtsafe.lib.inclusive_scan: "), info.value
    assert info.value.kernel == "inclusive_scan"
    return info.value


def test_a_read_only_output() -> None:
    err = _refused(Cai(8, readonly=True), Cai(8, ptr=0x20000))
    assert isinstance(err, ss.ArgumentTypeError)
    assert "output 'out' is a read-only array; pass a writable one" in str(err)


def test_a_read_only_input_is_fine_until_the_device_check() -> None:
    """x may be read-only; the arguments pass every check above the device's."""
    a = _common.array_arg("inclusive_scan", "x", Cai(8, readonly=True), [np.dtype(np.int32)])
    assert a.readonly and a.size == 8 and a.hi - a.lo == 32


def test_not_an_array() -> None:
    err = _refused(Cai(8), [1, 2, 3])
    assert (
        "argument 'x' must be a device array (anything with __cuda_array_interface__), got list"
        in str(err)
    )
    assert err.argument == "x" and err.actual == "list"


def test_a_masked_array() -> None:
    err = _refused(Cai(8), Cai(8, ptr=0x20000, mask=object()))
    assert "argument 'x' is a masked array; pass plain data" in str(err)


def test_a_tensor_that_requires_grad() -> None:
    err = _refused(Cai(8), Grad())
    assert "argument 'x' cannot be exported as a device array: Can't export tensors" in str(err)


def test_int64_says_why_it_is_not_built() -> None:
    err = _refused(Cai(8, "<i8"), Cai(8, "<i8", ptr=0x20000))
    assert "argument 'x' has dtype int64; supported: int32, uint32, float32." in str(err)
    assert "int64 and float64 are not built" in str(err)
    assert err.actual == "int64"


def test_strided_view() -> None:
    err = _refused(Cai(4), Cai(4, ptr=0x20000, strides=(8,)))
    assert "argument 'x' is not C-contiguous (strides (8,) for 4-byte elements)" in str(err)


def test_explicit_c_strides_are_contiguous() -> None:
    a = _common.array_arg("f", "x", Cai(4, strides=(4,)), [np.dtype(np.int32)])
    assert a.contiguous


@pytest.mark.parametrize(
    ("out_ptr", "overlaps"),
    [
        (0x10000 + 4 * 8, False),
        (0x10000 + 4 * 7, True),
        (0x10000 - 4 * 8, False),
        (0x10000 - 4, True),
    ],
)
def test_overlap_is_decided_on_bytes(out_ptr: int, overlaps: bool) -> None:
    x = _common.array_arg("f", "x", Cai(8), [np.dtype(np.int32)])
    out = _common.array_arg("f", "out", Cai(8, ptr=out_ptr), [np.dtype(np.int32)], output=True)
    if overlaps:
        with pytest.raises(ss.AliasingError, match="output 'out' overlaps argument 'x'"):
            _common.check_disjoint("f", out, [x])
    else:
        _common.check_disjoint("f", out, [x])


def test_empty_arrays_never_overlap() -> None:
    x = _common.array_arg("f", "x", Cai(0), [np.dtype(np.int32)])
    out = _common.array_arg("f", "out", Cai(0), [np.dtype(np.int32)], output=True)
    _common.check_disjoint("f", out, [x])


def test_launch_stream_prefers_the_given_stream() -> None:
    marker = object()
    assert _common.launch_stream(marker, [Cai(4)]) is marker
    assert _common.launch_stream(None, [Cai(4)]) == 0  # not CuPy / PyTorch: the default stream
