"""Attack round 9 on block claims, compiled form (NVVM, no GPU): each attack of
tests/kernels/attacks9.py is refused with its message at its line, each twin compiles."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.attacks9 import ACCEPTED, REFUSED

pytestmark = pytest.mark.ptx


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_attack_refused_when_compiled(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=(9, 0))
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_twin_compiles(tmp_path: Path, case: str) -> None:
    ptx = load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=(9, 0))
    assert "vote.sync.ballot.b32" in ptx
    assert "atom.global.add.u64" in ptx
