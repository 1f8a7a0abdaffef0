"""Suite-wide fixtures: the one place that decides whether a real GPU is present."""

from __future__ import annotations

import functools

import pytest


@functools.cache
def gpu_available() -> bool:
    """A real CUDA device (never true on the simulator)."""
    from numba import cuda

    import simtsafe

    return not simtsafe.SIMULATOR and bool(cuda.is_available())


@pytest.fixture(scope="session")
def gpu() -> None:
    """Skip unless a CUDA device is present; owns the CUDA context for the session."""
    if not gpu_available():
        pytest.skip("no CUDA device: GPU tests run only where numba.cuda.is_available()")
    from numba import cuda

    cuda.current_context()
