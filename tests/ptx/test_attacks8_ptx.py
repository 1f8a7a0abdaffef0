"""Attack round 8 on the real target (NVVM, no GPU): tensor cores and asynchronous tile fills.

Tests marked "Failed on f92dfcc" failed before this round's fixes: each names a hole.
The twins pin what holds (the safe spelling of the same work compiles).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import attacks8 as K
from tests.kernels import line_of, load_kernel_module

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _refused(tmp_path: Path, source: str, fragment: str, rule: str) -> ss.SafetyError:
    """Refused at decoration or compile, at the line marked ``# BAD``."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert info.value.rule == rule, info.value
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD"), info.value
    return info.value


def _compiles(tmp_path: Path, source: str) -> str:
    ptx = load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert ".entry" in ptx
    return ptx


# --------------------------------------------------------------------------- finding 1


def test_a_barrier_in_a_later_operand_of_a_chained_comparison_is_a_branch(tmp_path: Path) -> None:
    # Failed on f92dfcc: compiled. `n < 0 < block.sum(x)` runs the barrier only when n < 0;
    # the phase analysis counted it on every path, and the PTX branches around the bar.sync
    # before the read of another thread's element (sim.check: a race on shared[1]).
    _refused(tmp_path, K.CHAINED_BARRIER, "shared tile `t` is read by index at line", "tile-phase")


def test_twin_the_barrier_taken_out_of_the_comparison_compiles(tmp_path: Path) -> None:
    assert "bar.sync" in _compiles(tmp_path, K.CHAINED_BARRIER_TWIN)


def test_a_wait_in_a_later_operand_of_a_chained_comparison_is_a_branch(tmp_path: Path) -> None:
    # Failed on f92dfcc: compiled. The wait_all runs only when n < 0: the read after the
    # barrier may see the tile before its cp.async landed.
    err = _refused(tmp_path, K.CHAINED_ASYNC, "filled asynchronously at line", "tile-phase")
    assert "after the wait for it" in str(err)


def test_twin_the_wait_in_the_first_operand_compiles(tmp_path: Path) -> None:
    ptx = _compiles(tmp_path, K.CHAINED_ASYNC_TWIN)
    assert "cp.async.wait_all" in ptx


def test_source_uniformity_reads_a_chained_comparison_as_a_branch(tmp_path: Path) -> None:
    # Failed on f92dfcc: the source-level analysis (the simulator's fallback verdict) found
    # nothing; the compiled form refused it all along.
    mod = load_kernel_module(tmp_path, K.CHAINED_THREAD_DEPENDENT)
    finding = mod.k.source_uniformity().finding
    assert finding is not None and "`block.sum` needs every thread of the block" in str(finding)
    assert finding.lineno == line_of(tmp_path, "# BAD")
    with pytest.raises(ss.SafetyError, match="`block.sum` needs every thread of the block"):
        mod.k.ptx(cc=CC)


# --------------------------------------------------------------------------- finding 2


@pytest.mark.parametrize("name", ["DEAD_AFTER_RETURN", "DEAD_AFTER_RAISE", "DEAD_AFTER_IF_ELSE"])
def test_a_barrier_after_return_or_raise_is_no_barrier(tmp_path: Path, name: str) -> None:
    # Failed on f92dfcc: compiled. Python drops the statements after `return`/`raise`, but the
    # phase analysis walked them: the dead barrier closed thread 0's fill, and the other
    # threads read t[0] while thread 0 writes it (sim.check: a race on shared[0]).
    _refused(tmp_path, getattr(K, name), "shared tile `t` is read by index at line", "tile-phase")


def test_twin_a_barrier_every_thread_reaches_compiles(tmp_path: Path) -> None:
    assert "bar.sync" in _compiles(tmp_path, K.DEAD_TWIN)


# --------------------------------------------------------------------------- finding 3


@pytest.mark.parametrize(
    ("name", "what"),
    [("AUG_ASYNC", "filled asynchronously at line"), ("AUG_TRANSPOSED", "filled (transposed)")],
)
def test_an_augmented_store_reads_before_its_value(tmp_path: Path, name: str, what: str) -> None:
    # Failed on f92dfcc: compiled. `t[lw] += block.sum(x)` reads t[lw] before the barrier in
    # its value; the element belongs to another thread under a whole-tile fill.
    err = _refused(tmp_path, getattr(K, name), "read through a witness at line", "tile-phase")
    assert what in str(err)


def test_twin_a_barrier_before_the_augmented_store_compiles(tmp_path: Path) -> None:
    assert "cp.async.wait_all" in _compiles(tmp_path, K.AUG_ASYNC_TWIN)


# --------------------------------------------------------------------------- finding 4


def test_a_for_target_that_is_a_tile_element_is_a_write(tmp_path: Path) -> None:
    # Failed on f92dfcc: compiled; `for t[lw] in range(3)` wrote t in its read phase.
    _refused(tmp_path, K.FOR_TARGET, "shared tile `t` is read by index at line", "tile-phase")


def test_twin_a_for_target_write_in_the_fill_phase_compiles(tmp_path: Path) -> None:
    assert "bar.sync" in _compiles(tmp_path, K.FOR_TARGET_TWIN)


# --------------------------------------------------------------------------- finding 5


def test_a_parameter_named_like_a_witness_reads_by_index(tmp_path: Path) -> None:
    # Failed on f92dfcc: compiled; `t[n]` with the int parameter n counted as an own read.
    _refused(tmp_path, K.PARAM_WITNESS, "shared tile `t` is read by index at line", "tile-phase")


def test_twin_the_parameter_read_in_the_read_phase_compiles(tmp_path: Path) -> None:
    assert "bar.sync" in _compiles(tmp_path, K.PARAM_WITNESS_TWIN)
