"""Which stream a launch prepared without one goes to: the arrays' library's current stream.

On fakes of CuPy and PyTorch (tests/fake_arrays.py); tests/sim checks the
PreparedLaunch's choice of plan, tests/gpu the real libraries.
"""

from __future__ import annotations

import pytest

from simtsafe.host._foreign import ambient_reader, ambient_stream, guard, producer_reader
from tests import fake_arrays as fa

BASE = 0x7F0000000000


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    fa.install(monkeypatch)


def _cupy(n: int = 4):  # type: ignore[no-untyped-def]
    return fa.make_cupy(BASE, (n,), (4,), "float32")


def _torch(n: int = 4, device_cuda: bool = True):  # type: ignore[no-untyped-def]
    return fa.make_torch(BASE, (n,), (1,), "float32", is_cuda=device_cuda)


def test_all_cupy_arrays_take_cupys_current_stream() -> None:
    fa.set_cupy_stream(0x55)
    found = ambient_stream([_cupy(), _cupy()])
    assert found is not None
    library, handle, device, make = found
    assert (library, handle, device) == ("CuPy", 0x55, None)
    assert make().ptr == 0x55  # the stream object itself, kept alive by the plan


def test_cupy_null_stream_is_the_legacy_default(monkeypatch: pytest.MonkeyPatch) -> None:
    fa.set_cupy_stream(0)
    found = ambient_stream([_cupy()])
    assert found is not None and found[1] == 1
    monkeypatch.setenv("CUPY_CUDA_PER_THREAD_DEFAULT_STREAM", "1")
    found = ambient_stream([_cupy()])
    assert found is not None and found[1] == 2


def test_all_torch_tensors_take_torchs_current_stream_of_their_device() -> None:
    fa.set_torch_stream(0x77)
    found = ambient_stream([_torch(), _torch()])
    assert found is not None
    library, handle, device, make = found
    assert (library, handle, device) == ("PyTorch", 0x77, 0)
    assert make().cuda_stream == 0x77
    fa.set_torch_stream(0)  # PyTorch's default stream: the legacy one
    found = ambient_stream([_torch()])
    assert found is not None and found[1] == 1


@pytest.mark.parametrize(
    "arrays",
    [
        pytest.param(lambda: [], id="no-arrays"),
        pytest.param(lambda: [_cupy(), _torch()], id="cupy-and-torch"),
        pytest.param(lambda: [_torch(), _cupy()], id="torch-and-cupy"),
        pytest.param(lambda: [_cupy(), object()], id="cupy-and-other"),
        pytest.param(lambda: [_torch(), _torch(device_cuda=False)], id="torch-host-tensor"),
    ],
)
def test_mixed_or_no_arrays_keep_the_default(arrays) -> None:  # type: ignore[no-untyped-def]
    fa.set_cupy_stream(0x55)
    fa.set_torch_stream(0x77)
    assert ambient_stream(arrays()) is None


def test_nothing_without_the_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "cupy")
    monkeypatch.delitem(sys.modules, "torch")
    assert ambient_stream([object()]) is None


def test_per_launch_readers_give_the_current_stream_handle() -> None:
    """One read per launch: the memo's own producer-stream reader, and what it gives now."""
    cupy_read = ambient_reader(fa.FakeCupyArray)
    torch_read = ambient_reader(fa.FakeTensor)
    assert cupy_read is not None and torch_read is not None
    fa.set_cupy_stream(0x55)
    fa.set_torch_stream(0x77)
    assert cupy_read(_cupy()) == (producer_reader("CuPy", None), 0x55)
    assert torch_read(_torch()) == (producer_reader("PyTorch", 0), 0x77)
    fa.set_cupy_stream(0)
    fa.set_torch_stream(0)
    assert cupy_read(_cupy())[1] == 1 and torch_read(_torch())[1] == 1  # the legacy default
    assert torch_read(_torch(device_cuda=False)) == (None, 0)  # a host tensor: refused later
    assert ambient_reader(object) is None


def test_an_ambient_plan_knows_the_memo_reader_of_its_own_stream() -> None:
    """A plan on CuPy's (PyTorch's) current stream drops exactly the reader the memo would call."""
    cupy_guard, torch_guard = guard(_cupy()), guard(_torch())
    assert cupy_guard is not None and torch_guard is not None
    assert producer_reader("CuPy", None) is cupy_guard[2]
    assert producer_reader("PyTorch", 0) is torch_guard[2]
    assert producer_reader("PyTorch", None) is None
