"""Attack round 10 on whole-tile fills, compiled form (NVVM, no GPU): each refusal of
tests/kernels/attacks10.py at its line with its message; the fills the source analysis
refuses refused again by the compiled form alone (each write of a fill carries the map that
gives the tile's elements to threads); each twin compiles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.attacks10 import (
    ACCEPTED,
    COMPILED_ONLY,
    CONSERVATIVE,
    FLOAT_ACCUMULATORS,
    MARKERS,
    REFUSED,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.fixture
def compiled_form_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The source-level phase analysis forgotten: only the compiled form decides."""
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)
    yield


@pytest.mark.parametrize("case", sorted(REFUSED | CONSERVATIVE))
def test_refused_at_decoration(tmp_path: Path, case: str) -> None:
    source, fragment = (REFUSED | CONSERVATIVE)[case]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source)
    assert fragment in str(info.value), str(info.value)
    assert info.value.rule == "tile-phase"
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(COMPILED_ONLY))
def test_the_source_analysis_refuses_it_first(tmp_path: Path, case: str) -> None:
    source, _ = COMPILED_ONLY[case]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source)
    assert info.value.rule == "tile-phase"
    assert info.value.lineno == line_of(tmp_path, "# BAD"), str(info.value)


@pytest.mark.parametrize("case", sorted(COMPILED_ONLY))
def test_the_compiled_form_refuses_it_alone(
    tmp_path: Path, case: str, compiled_form_only: None
) -> None:
    source, fragment = COMPILED_ONLY[case]
    mod = load_kernel_module(tmp_path, source)  # the source analysis is off: no refusal here
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    exc = info.value
    assert exc.rule == "tile-phase", str(exc)
    assert fragment in str(exc), str(exc)
    assert "kernel 'k'" in str(exc) and "(made at line" in str(exc)
    marked = {line_of(tmp_path, "# BAD")} | (
        {line_of(tmp_path, "# FILL")} if "# FILL" in source else set()
    )
    assert exc.lineno in marked, (exc.lineno, marked, str(exc))
    for line in marked:
        assert f"line {line}" in str(exc), str(exc)


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_twin_compiles(tmp_path: Path, case: str) -> None:
    ptx = load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=CC)
    transposed_only = "fill_async" not in ACCEPTED[case]
    assert ("cp.async" in ptx) != transposed_only


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_twin_is_accepted_by_the_compiled_form_alone(
    tmp_path: Path, case: str, compiled_form_only: None
) -> None:
    load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=CC)


@pytest.mark.parametrize("case", sorted(MARKERS))
def test_fill_markers_write_nothing(tmp_path: Path, case: str) -> None:
    # The markers of the analysed form (__ss.fill.*, __ss.fillstart) are no writes: an input
    # read stays trusted and a grid.read does not race with a fill of a shared tile.
    ptx = load_kernel_module(tmp_path, MARKERS[case]).k.ptx(cc=CC)
    assert "ld.global" in ptx


@pytest.mark.parametrize("case", sorted(FLOAT_ACCUMULATORS))
def test_float_accumulators_compile(tmp_path: Path, case: str) -> None:
    ptx = load_kernel_module(tmp_path, FLOAT_ACCUMULATORS[case]).k.ptx(cc=CC)
    assert "atom" in ptx or "red." in ptx
