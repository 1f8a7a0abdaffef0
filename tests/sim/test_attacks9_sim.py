"""Attack round 9 on block claims, on the simulator: each attack of tests/kernels/attacks9.py
is refused by the source-level check with its message at its line; each twin stores what
it keeps exactly once, and a slot claimed but not written keeps its fill value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.append_rules import N
from tests.kernels.attacks9 import ACCEPTED, REFUSED
from tests.sim.test_append_sim import _launch, _x

pytestmark = pytest.mark.sim


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_attack_refused_on_the_simulator(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        _launch(load_kernel_module(tmp_path, source), _x())
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def _stored(tmp_path: Path, case: str, x: np.ndarray) -> tuple[int, np.ndarray]:
    d = _launch(load_kernel_module(tmp_path, ACCEPTED[case]), x)
    n = ss.appended(d["out"], d["n"])
    return n, d["out"].copy_to_host()


def test_break_on_a_block_maximum_stores_every_positive_once(tmp_path: Path) -> None:
    x = _x()
    n, got = _stored(tmp_path, "break-on-a-block-maximum", x)
    assert n == int((x > 0).sum())
    np.testing.assert_array_equal(np.sort(got[:n]), np.sort(x[x > 0]))


def test_a_chosen_witness_writes_its_own_slot_only(tmp_path: Path) -> None:
    """Two claims a keeping thread (2 slots each), one written: every positive element
    once, the other claimed slots untouched (NaN), nothing written past the claims."""
    x = _x()
    n, got = _stored(tmp_path, "select-between-two-witnesses", x)
    keep = x[x > 0]
    assert n == 2 * keep.size
    written = got[:n][~np.isnan(got[:n])]
    np.testing.assert_array_equal(np.sort(written), np.sort(keep))
    assert np.isnan(got[n:]).all()


def test_keep_of_nan_is_true(tmp_path: Path) -> None:
    x = _x()
    x[::7] = np.nan
    x[1::7] = 0.0
    n, got = _stored(tmp_path, "keep-is-bool-of-a-float", x)
    kept = x[x != 0]  # NaN != 0: kept, as bool(NaN)
    assert n == kept.size <= N
    assert int(np.isnan(got[:n]).sum()) == int(np.isnan(kept).sum())
    np.testing.assert_array_equal(
        np.sort(got[:n][~np.isnan(got[:n])]), np.sort(kept[~np.isnan(kept)])
    )
