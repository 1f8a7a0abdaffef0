"""A PreparedLaunch is bound to its device: the check, with faked device ordinals."""

from __future__ import annotations

import pytest

import simtsafe as ss
from simtsafe.host._launch import check_device


def test_same_device_passes() -> None:
    check_device("k", 0, 0, [("out", 0), ("a", 0), ("empty", None)])


def test_launch_from_another_current_device_is_refused() -> None:
    with pytest.raises(ss.ContextMismatch) as info:
        check_device("vecadd", 0, 1, [("out", 0)])
    exc = info.value
    assert (exc.kernel, exc.actual, exc.limit) == ("vecadd", 1, 0)
    message = str(exc)
    assert "prepared on device 0" in message
    assert "current device is 1" in message
    assert "numba.cuda.gpus[0]" in message


def test_array_on_another_device_is_refused() -> None:
    with pytest.raises(ss.ContextMismatch) as info:
        check_device("vecadd", 1, 1, [("out", 1), ("a", 0)])
    exc = info.value
    assert exc.argument == "a"
    assert "argument 'a' lives on device 0" in str(exc)
    assert "prepared on device 1" in str(exc)


def test_context_mismatch_is_a_launch_contract_error() -> None:
    assert issubclass(ss.ContextMismatch, ss.LaunchContractError)
    assert issubclass(ss.ContextMismatch, ValueError)
