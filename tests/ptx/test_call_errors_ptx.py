"""Kernel code Numba refuses with a raw error about its own internals (a typer's TypeError,
``CUDACallConv ... return_dynamic_user_exc``, ``NotDefinedError``) is a SafetyError naming the
kernel, the line, what was seen and the fix, on the CUDA target (tests/kernels/call_errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.call_errors import ACCEPTED, REFUSED

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_the_kernel_the_line_and_the_fix(tmp_path: Path, case: str) -> None:
    source, fragments = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    err = info.value
    for fragment in fragments:
        assert fragment in str(err), (fragment, str(err))
    assert err.kernel == "k"
    assert err.lineno == line_of(tmp_path, "# BAD"), err
    assert err.source_line is not None and "# BAD" in err.source_line
    assert "CUDACallConv" not in str(err) and "typer()" not in str(err)


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_compiles(tmp_path: Path, case: str) -> None:
    ptx = load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=CC)
    assert ".entry" in ptx
