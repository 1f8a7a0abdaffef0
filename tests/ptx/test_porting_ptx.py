"""The porting corpora (outside helpers porting kernels a GPU programmer writes, in Tier 1:
tests/kernels/port15.py, port17.py): each ported kernel passes every compile-time check with
NVVM (``simtsafe.check_kernel``: no finding) -- a refusal here is safe code refused."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

import simtsafe as ss
from tests.kernels import port15, port17

pytestmark = pytest.mark.ptx

CASES = [(corpus, name) for corpus in (port15, port17) for name in sorted(corpus.ACCEPTED)]


@pytest.mark.parametrize(
    ("corpus", "name"), CASES, ids=[f"{c.__name__.rsplit('.', 1)[-1]}-{n}" for c, n in CASES]
)
def test_a_ported_kernel_passes_every_check(tmp_path: Path, corpus: ModuleType, name: str) -> None:
    mod = corpus.load(name, tmp_path)
    kernels = [v for v in vars(mod).values() if isinstance(v, ss.Kernel)]
    assert kernels
    for k in kernels:
        assert ss.check_kernel(k) == [], (name, k.name)
