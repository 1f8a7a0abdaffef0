"""A simtsafe value that may be unbound where it is used (compiled form, NVVM, no GPU).

Numba gives a name used on a path that never bound it the value 0 (an ``Expr.null`` in
the typed IR) where Python raises ``UnboundLocalError``; for a witness that is the witness
of element 0, another thread's. Every spelling -- a loop that may run no iteration, an
``if``, a ``break``, a witness in a tuple, a claim -- is refused at the use, and the same
kernels with the value bound on every path (or numbers left unbound) compile.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.unbound_rules import ACCEPTED, FRAGMENT, REFUSED

pytestmark = pytest.mark.ptx


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_at_the_use(tmp_path: Path, case: str) -> None:
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, REFUSED[case]).k.ptx(cc=(9, 0))
    assert FRAGMENT in str(info.value)
    assert "element 0" in str(info.value) or "simtsafe value" in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_twin_compiles(tmp_path: Path, case: str) -> None:
    assert ".entry" in load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=(9, 0))
