"""tests/ptx/test_call_errors_ptx.py on the simulator: the same SafetyErrors at launch (the
compile worker types the kernel for the CUDA target; an API call's arguments are checked at
decoration), and the accepted twins compute what they say."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.call_errors import ACCEPTED, REFUSED

X = np.arange(1, 33, dtype=np.float32)

EXPECTED = {
    "warp.broadcast": np.full(32, X[0]),
    "block.sum-keyword": np.full(32, X.sum()),
    "warp.scan-keyword": np.cumsum(X),
    "assert-constant": X,
    "assert-global-message": X,
    "assert-name-of-a-constant": X,
    "global-read": 2 * X,
}


def _launch(mod: object) -> np.ndarray:
    a = cuda.to_device(np.zeros(32, np.float32))
    mod.k.prepare(grid=1, block=32)(a, cuda.to_device(X))  # type: ignore[attr-defined]
    return a.copy_to_host()  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_the_kernel_the_line_and_the_fix(tmp_path: Path, case: str) -> None:
    source, fragments = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        _launch(load_kernel_module(tmp_path, source))
    err = info.value
    for fragment in fragments:
        assert fragment in str(err), (fragment, str(err))
    assert err.kernel == "k"
    assert err.lineno == line_of(tmp_path, "# BAD"), err
    assert "does not compile for the CUDA target" not in str(err)


def test_every_accepted_twin_has_an_expected_result() -> None:
    assert set(EXPECTED) == set(ACCEPTED)


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_runs(tmp_path: Path, case: str) -> None:
    out = _launch(load_kernel_module(tmp_path, ACCEPTED[case]))
    np.testing.assert_allclose(out, EXPECTED[case], rtol=1e-6)
