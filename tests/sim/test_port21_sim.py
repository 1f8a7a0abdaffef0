"""Porting round 21 (tests/kernels/port21.py): each ported Tier-1 kernel gives numpy's values on
the simulator (several also replay clean under ``simtsafe.sim.check``); the round's fixes are
checked where they run: the compile worker accepts a complex tile's read-modify-write (and the
values match numpy), a pair index into an ``Accumulate`` is refused with its flat spelling when
the line runs; the doc gap's simulator side (a uint32 hash wraps in uint32 here, written either
way) is pinned."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module, port21
from tests.kernels.porting import to_device, to_host

pytestmark = pytest.mark.sim


def _load_src(tmp_path: Path, src: str) -> object:
    return load_kernel_module(tmp_path, port21.EXTRA_HEADER + src)


@pytest.mark.parametrize("name", sorted(port21.ACCEPTED))
def test_a_ported_kernel_matches_numpy(tmp_path: Path, name: str) -> None:
    port21.UNCLEAN.clear()
    mod = port21.load(name, tmp_path)
    assert port21.CHECKS[name](mod, np.random.default_rng(21))
    assert not port21.UNCLEAN


def test_a_complex_tiles_read_modify_write_runs_and_matches_numpy(tmp_path: Path) -> None:
    # FALSE_REFUSALS complex_tile_own_read, fixed: the compile worker's verdict accepts it
    mod = _load_src(tmp_path, port21.COMPLEX_TILE_OWN_READ)
    rng = np.random.default_rng(21)
    x = (rng.standard_normal((3, 64)) + 1j * rng.standard_normal((3, 64))).astype(np.complex64)
    out = to_device(np.zeros((3, 64), np.complex64))
    mod.twiddle.prepare(grid=3, block=64)(out, to_device(x))  # type: ignore[attr-defined]
    k = np.arange(64)
    want = (x * np.exp(-2j * np.pi * k / 64))[:, ::-1]
    assert np.allclose(to_host(out), want, atol=1e-5)


def test_a_pair_index_into_an_accumulate_is_refused_with_the_flat_view_when_it_runs(
    tmp_path: Path,
) -> None:
    # BAD_ERRORS accumulate_pair_index, fixed on the simulator's accumulator too
    mod = _load_src(tmp_path, port21.COO_PAIR)
    idx = to_device(np.zeros(3, np.int32))
    with pytest.raises(ss.SafetyError) as info:
        mod.coo_to_dense.prepare(grid=1, block=128)(  # type: ignore[attr-defined]
            to_device(np.zeros(9, np.float32)), idx, idx, to_device(np.ones(3, np.float32)), 3
        )
    msg = str(info.value)
    assert "the index must be an int" in msg
    assert "pass its C-order flat view (`dense.reshape(-1)`)" in msg


def test_the_uint32_hash_wraps_in_uint32_on_the_simulator_written_either_way(
    tmp_path: Path,
) -> None:
    # DOC_GAPS uint32_hash_widens: here both spellings give the intended (uint32) hash; on the
    # GPU only the one with np.uint32(...) around each product does (tests/ptx/test_port21_ptx)
    (tmp_path / "wide").mkdir()
    wide = _load_src(tmp_path / "wide", port21.GELU_HASH_WIDE)
    fixed = port21.load("bias_gelu_dropout", tmp_path)
    x = np.random.default_rng(21).standard_normal((4, 40)).astype(np.float32)
    bias = np.zeros(40, np.float32)
    outs = []
    for mod in (wide, fixed):
        y = to_device(np.zeros((4, 40), np.float32))
        launch = mod.bias_gelu_dropout.prepare(grid=(2, 1), block=(32, 4))  # type: ignore[attr-defined]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            launch(y, to_device(x), to_device(bias), np.float32(0.5), np.uint32(7))
        outs.append(to_host(y))
    assert np.array_equal(outs[0], outs[1])
    assert 0.25 < (outs[1] == 0).mean() < 0.75


def test_the_bfs_with_a_visited_set_appends_each_vertex_once_at_its_level(tmp_path: Path) -> None:
    # BAD_ERRORS hash_insert_won_test: the workaround (a value array holding each level)
    mod = _load_src(tmp_path, port21.BFS_VISITED)
    assert port21._check_bfs_visited(mod, np.random.default_rng(21))  # type: ignore[arg-type]


def test_an_inserts_witness_tested_against_the_keys_is_refused_on_the_simulator(
    tmp_path: Path,
) -> None:
    # BAD_ERRORS hash_insert_won_test, fixed: the compile worker's refusal names the fix
    mod = _load_src(tmp_path, port21.BFS_VISITED_KEYS)
    with pytest.raises(ss.SafetyError) as info:
        mod.bfs_visit.prepare(grid=1, block=64)  # type: ignore[attr-defined]
    assert "`f.in_bounds(vals)` for a value array of the table" in str(info.value)


def test_the_flat_paged_gather_matches_numpy(tmp_path: Path) -> None:
    # BAD_ERRORS vec_store_row_tile: the workaround the new message names
    mod = _load_src(tmp_path, port21.PAGED_VEC_FLAT)
    assert port21._check_paged_flat(mod, np.random.default_rng(21))  # type: ignore[arg-type]


def test_a_complex_block_sum_is_refused_and_its_parts_match_numpy(tmp_path: Path) -> None:
    # BAD_ERRORS complex_collective, fixed: the refusal on the simulator, and its spelling
    rng = np.random.default_rng(21)
    x = (rng.standard_normal((3, 150)) + 1j * rng.standard_normal((3, 150))).astype(np.complex64)
    (tmp_path / "sum").mkdir()
    mod = _load_src(tmp_path / "sum", port21.ROW_DC)
    with pytest.raises(ss.SafetyError) as info:
        mod.row_dc.prepare(grid=3, block=64)  # type: ignore[attr-defined]
    assert "A complex value goes as its two parts" in str(info.value)
    mod = _load_src(tmp_path, port21.ROW_DC_PARTS)
    dc = to_device(np.zeros(3, np.complex64))
    mod.row_dc.prepare(grid=3, block=64)(dc, to_device(x))  # type: ignore[attr-defined]
    assert np.allclose(to_host(dc), x.astype(np.complex128).sum(1), atol=1e-4)


@pytest.mark.filterwarnings("ignore:simtsafe. the compiled-form checks could not run")
def test_a_complex_block_sum_is_refused_when_the_line_runs_without_the_compile_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the simulator's collective took a complex64 as a number; now it refuses it as the GPU's
    # typing does
    from simtsafe.lowering import _compileworker

    def unavailable(*args: object, **kwargs: object) -> None:
        raise _compileworker.Unavailable("no CUDA target in this test")

    monkeypatch.setattr(_compileworker, "verdict", unavailable)
    mod = _load_src(tmp_path, port21.ROW_DC)
    x = np.ones((2, 10), np.complex64)
    with pytest.raises(ss.SafetyError) as info:
        mod.row_dc.prepare(grid=2, block=64)(  # type: ignore[attr-defined]
            to_device(np.zeros(2, np.complex64)), to_device(x)
        )
    assert "got complex64. A complex value goes as its two parts" in str(info.value)
    # the refusal ends the launch inside the collective: its memo is freed, not left behind
    # for the threads that never come (a leak that later tests saw in _coop_sim._MEMO)
    from simtsafe.lowering import _coop_sim

    assert not _coop_sim._MEMO
