"""docs/faq.md quotes the launch and decoration errors as the simulator raises them."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.faq_cases import KERNELS, assert_quoted
from tests.kernels.faq_cases import (
    test_decoration_errors_are_quoted as test_decoration_errors_are_quoted,
)  # noqa: F401
from tests.kernels.faq_cases import test_missing_source_is_quoted as test_missing_source_is_quoted  # noqa: F401

pytestmark = pytest.mark.sim

N = 1000


@pytest.fixture(scope="module")
def mod(tmp_path_factory):  # type: ignore[no-untyped-def]
    return load_kernel_module(tmp_path_factory.mktemp("faq"), KERNELS)


def _f32(n: int = N):  # type: ignore[no-untyped-def]
    return cuda.to_device(np.ones(n, np.float32))


@pytest.mark.parametrize(
    "case",
    [
        "host-array",
        "dtype",
        "alias",
        "requires",
        "covers",
        "block",
        "domain",
        "scalar",
        "count",
        "strided",
        "unchecked",
        "ptx-on-simulator",
    ],
)
def test_launch_errors_are_quoted(mod, case):  # type: ignore[no-untyped-def]
    out, a, b = _f32(), _f32(), _f32()
    launch = mod.vecadd.prepare(grid=ss.cover(N, 256), block=256)
    make = {
        "host-array": lambda: launch(out, np.ones(N, np.float32), b),
        "dtype": lambda: launch(out, cuda.to_device(np.ones(N)), b),
        "alias": lambda: launch(out, out, b),
        "requires": lambda: launch(out, _f32(N - 1), b),
        "covers": lambda: mod.vecadd.prepare(grid=2, block=256)(out, a, b),
        "block": lambda: mod.vecadd.prepare(grid=4, block=128),
        "domain": lambda: mod.vecadd.prepare(grid=(4, 2), block=256),
        "scalar": lambda: mod.scale.prepare(grid=4, block=256)(out, np.float64(0.5), a),
        "count": lambda: launch(out, a),
        "strided": lambda: launch(_f32(2 * N)[::2], a, b),
        "unchecked": lambda: mod.vecadd.unchecked[4, 256](out, a, b),
        "ptx-on-simulator": mod.vecadd.ptx,
    }[case]
    assert_quoted(make)
