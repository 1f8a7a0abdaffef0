"""A prepared launch's plan switched to the CUDA code path on the simulator, the driver
launch recorded instead of made (as benchmarks/host_path_cpu.py does): the memoized and
bound launch paths, which the simulator itself never takes, run on the CPU."""

from __future__ import annotations

from typing import Any

import pytest
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

from tests import fake_arrays as fa


def cuda_code_path(
    plan: Any, layouts: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> list[Any]:
    """Switch ``plan`` (its inputs in ``layouts``) to the CUDA code path; the launches it
    makes from then on (the driver call's arguments), and the fake CuPy/PyTorch modules."""
    import simtsafe.host._argfacts as argfacts
    import simtsafe.host._launch as launch_module

    monkeypatch.setattr(argfacts, "device_array_type", lambda: FakeCUDAArray)
    monkeypatch.setattr(launch_module, "SIMULATOR", False)
    monkeypatch.setattr(launch_module, "device_array_type", lambda: FakeCUDAArray)
    launched: list[Any] = []
    monkeypatch.setitem(plan._cufuncs, layouts, type("F", (), {"kernel": object()}))
    monkeypatch.setattr(plan, "_core_launch", lambda *a: launched.append(a))
    monkeypatch.setattr(plan, "_direct", False)
    fa.install(monkeypatch)
    return launched
