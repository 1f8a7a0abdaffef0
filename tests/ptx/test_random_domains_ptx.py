"""Random draws in 1D, 2D and 3D kernels on the real target (NVVM, no GPU): the accepted twins
compile, the refusals give their messages at their lines, and a 2D/3D draw's state index is
computed from the launch's thread extents (nctaid * ntid), not from the output's shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.random_rules import ACCEPTED, REFUSED

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], lambda mod: mod.k.ptx(cc=CC))


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_draws(tmp_path: Path, case: str) -> None:
    body = load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=CC).split(".entry", 1)[1]
    assert "st.global.f32" in body
    if case != "d1":
        assert "%nctaid.x" in body and "%nctaid.y" in body  # the launch's x and y extents
