"""One PreparedLaunch per device: runs on every visible GPU; cross-device use is refused.

Needs two or more GPUs for the cross-device part (skipped otherwise).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss

from .gpu_kernels import scale

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


def _devices() -> list[int]:
    return [g.id for g in cuda.gpus]


def test_prepare_and_launch_on_every_device() -> None:
    a = np.arange(1000, dtype=np.float32)
    for dev in _devices():
        with cuda.gpus[dev]:
            launch = scale.prepare(grid=8, block=128)
            assert launch.device.device_id == dev
            out = cuda.to_device(np.full(1000, -7, np.float32))
            launch(out, cuda.to_device(a), np.float32(2))
            np.testing.assert_array_equal(out.copy_to_host(), a * 2)


def test_cross_device_use_is_refused() -> None:
    devices = _devices()
    if len(devices) < 2:
        pytest.skip("needs two GPUs")
    with cuda.gpus[devices[0]]:
        launch0 = scale.prepare(grid=8, block=128)
        out0 = cuda.to_device(np.full(1000, -7, np.float32))
        a0 = cuda.to_device(np.ones(1000, np.float32))
    with cuda.gpus[devices[1]]:
        a1 = cuda.to_device(np.ones(1000, np.float32))
        with pytest.raises(ss.ContextMismatch, match="current device is"):
            launch0(out0, a0, np.float32(2))
    with cuda.gpus[devices[0]]:
        with pytest.raises(ss.ContextMismatch, match="argument 'a' lives on device"):
            launch0(out0, a1, np.float32(2))
        assert (out0.copy_to_host() == -7).all()
        launch0(out0, a0, np.float32(2))
        assert (out0.copy_to_host() == 2).all()
