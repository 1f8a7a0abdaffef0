"""``shared.fill_async`` / ``fill_transposed`` on the simulator: the device's values (zeros
past the input's edges), copies that land at the wait (a kernel without one reads the tile
as it was), and the refusals of tests/kernels/async_fill_rules.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.async_fill_rules import (
    DOUBLE_BUFFER,
    DYNAMIC,
    ONE_STAGE,
    PAIR,
    PAIR_REFUSAL,
    PAIR_REFUSED,
    RECORD_DTYPES,
    RECORD_TILES,
    RECORD_WRITTEN_DURING_THE_FILL,
    REFUSED,
    TRANSPOSED,
    UNPAIRED,
)

pytestmark = pytest.mark.sim

A = np.arange(1, 7 * 21 + 1, dtype=np.float32).reshape(7, 21)


def _window(r0: int, c0: int, rows: int, cols: int) -> np.ndarray:
    """``A[r0:r0+rows, c0:c0+cols]`` with zeros outside ``A``."""
    out = np.zeros((rows, cols), np.float32)
    for i in range(rows):
        for j in range(cols):
            if 0 <= r0 + i < A.shape[0] and 0 <= c0 + j < A.shape[1]:
                out[i, j] = A[r0 + i, c0 + j]
    return out


def _run2(mod: Any, threads: int, r0: int, c0: int) -> np.ndarray:
    out = cuda.to_device(np.full(threads, -1, np.float32))
    mod.k.prepare(grid=1, block=threads)(out, cuda.to_device(A), np.int64(r0), np.int64(c0))
    return out.copy_to_host()


def run_dynamic(
    mod: Any, length: int, start: Any, dtype: Any = np.float32, shared_mem: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """DYNAMIC (its element type ``dtype``, see ``dynamic_source``) with a dynamic tile of
    ``length`` elements (``shared_mem`` bytes: by default ``length`` whole elements) filled
    from ``A`` (flat) at ``start``: what the 64 threads read, and what they should (``A``
    inside, 0 outside ``A`` or the tile)."""
    flat = A.ravel().astype(dtype)
    size = np.dtype(dtype).itemsize
    out = cuda.to_device(np.full(64, -1, dtype))
    nbytes = size * length if shared_mem is None else shared_mem
    mod.k.prepare(grid=1, block=64, shared_mem=nbytes)(out, cuda.to_device(flat), start)
    want = np.zeros(64, dtype)
    for j in range(min(nbytes // size, 64)):
        if 0 <= int(start) + j < flat.size:
            want[j] = flat[int(start) + j]
    return out.copy_to_host(), want


def dynamic_source(dtype: str, start_type: str = "np.int64") -> str:
    """DYNAMIC with elements of ``np.<dtype>`` and a start of ``start_type``."""
    return DYNAMIC.replace("np.float32", f"np.{dtype}").replace("np.int64", start_type)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    def act(mod: Any) -> object:
        if "start: np.int64" in REFUSED[case][0]:
            return run_dynamic(mod, 37, np.int64(0))
        if "n: np.int64" in REFUSED[case][0]:
            out = cuda.to_device(np.zeros(64, np.float32))
            return mod.k.prepare(grid=1, block=64)(out, cuda.to_device(A.ravel()), np.int64(2))
        a = A if "np.float32]" in REFUSED[case][0].split("a: In2D")[-1][:14] else None
        if a is None:
            dtype = np.float64 if "np.float64" in REFUSED[case][0] else np.int16
            a = A.astype(dtype)
        threads = 128 if "(8, 16)" in REFUSED[case][0] else 64
        out = cuda.to_device(np.zeros(threads, np.float32))
        return mod.k.prepare(grid=1, block=threads)(
            out, cuda.to_device(a), np.int64(0), np.int64(0)
        )

    assert_refused(tmp_path, *REFUSED[case], act)


@pytest.mark.parametrize(("r0", "c0"), [(0, 0), (1, 3), (5, 9), (-2, -1)])
def test_one_stage_copies_the_window_and_zeros_outside(tmp_path: Path, r0: int, c0: int) -> None:
    got = _run2(load_kernel_module(tmp_path, ONE_STAGE), 64, r0, c0)
    np.testing.assert_array_equal(got, _window(r0, c0, 4, 16).ravel())


def test_a_copy_lands_at_the_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wait that waits for nothing (as a kernel without its wait: Tier 2, the phase
    analysis refuses it in Tier 1) leaves the tile as it was: the copies are still held by
    their threads, and the tile reads the zeros the simulator allocates it with."""
    from simtsafe import lowering
    from simtsafe.lowering import _asyncfill_sim

    real = _asyncfill_sim.builtins

    def no_wait() -> dict[str, Any]:
        names = real()
        names["__ss_shared_wait_group"] = lambda n: None
        return names

    monkeypatch.setattr(_asyncfill_sim, "builtins", no_wait)
    lowering._builtins.cache_clear()  # type: ignore[attr-defined]
    monkeypatch.setattr(lowering, "_builtins", lowering._builtins.__wrapped__)  # type: ignore[attr-defined]
    got = _run2(load_kernel_module(tmp_path, ONE_STAGE), 64, 0, 0)
    assert not got.any()


def test_double_buffer_sums_every_stage(tmp_path: Path) -> None:
    n = 6
    a = np.random.default_rng(7).integers(0, 50, 64 * n).astype(np.float32)
    out = cuda.to_device(np.zeros(64, np.float32))
    load_kernel_module(tmp_path, DOUBLE_BUFFER).k.prepare(grid=1, block=64)(
        out, cuda.to_device(a), np.int64(n)
    )
    t = np.arange(64)
    want = sum(a[64 * s + (t + s) % 64] for s in range(n))
    np.testing.assert_array_equal(out.copy_to_host(), want)


@pytest.mark.parametrize(("r0", "c0"), [(0, 0), (2, 13), (-3, 5)])
def test_transposed_fill(tmp_path: Path, r0: int, c0: int) -> None:
    got = _run2(load_kernel_module(tmp_path, TRANSPOSED), 128, r0, c0)
    np.testing.assert_array_equal(got, _window(r0, c0, 16, 8).T.ravel())


def _records(rec: str) -> np.ndarray:
    """A 5 x 11 input of ``rec`` (tests/kernels/async_fill_rules.RECORD_DTYPES), each field of
    each element a different value."""
    dtype = RECORD_DTYPES[rec]
    a = np.zeros((5, 11), dtype)
    for f, name in enumerate(dtype.names):
        a[name] = np.arange(55).reshape(5, 11) + 100 * f + 1
    return a


# Origins inside, across the edges and outside (records of zeros there).
@pytest.mark.parametrize(("r0", "c0"), [(0, 0), (2, 5), (-1, -3), (4, 9), (9, 0)])
@pytest.mark.parametrize("case", sorted(RECORD_TILES))
def test_a_tile_of_records_holds_numpys_records(
    tmp_path: Path, case: str, r0: int, c0: int
) -> None:
    a = _records(case.split("-")[0])
    out = cuda.to_device(np.zeros(32, a.dtype))
    mod = load_kernel_module(tmp_path, RECORD_TILES[case])
    mod.k.prepare(grid=1, block=32)(out, cuda.to_device(a), np.int64(r0), np.int64(c0))
    rows, cols = (8, 4) if "transposed" in case else (4, 8)
    tile = np.zeros((rows, cols), a.dtype)
    for i in range(rows):
        for j in range(cols):
            gr, gc = (r0 + j, c0 + i) if "transposed" in case else (r0 + i, c0 + j)
            if 0 <= gr < a.shape[0] and 0 <= gc < a.shape[1]:
                tile[i, j] = a[gr, gc]
    got = out.copy_to_host()
    assert got.tobytes() == tile.ravel().tobytes(), (got, tile.ravel())


@pytest.mark.parametrize("case", sorted(RECORD_WRITTEN_DURING_THE_FILL))
def test_a_record_written_into_the_tile_during_its_fill_is_refused(
    tmp_path: Path, case: str
) -> None:
    a = _records(case.split("-")[0])

    def act(mod: Any) -> object:
        out = cuda.to_device(np.zeros(32, a.dtype))
        return mod.k.prepare(grid=1, block=32)(out, cuda.to_device(a), np.int64(0), np.int64(0))

    assert_refused(tmp_path, *RECORD_WRITTEN_DURING_THE_FILL[case], act)


# Lengths that are no multiple of 4 floats (the last run is partial: copied element by
# element, nothing past the tile), starts misaligned and near the input's end (zeros).
@pytest.mark.parametrize(("length", "start"), [(37, 0), (37, 3), (64, 8), (10, 140), (130, 1)])
def test_dynamic_tile_copies_its_launch_length(tmp_path: Path, length: int, start: int) -> None:
    got, want = run_dynamic(load_kernel_module(tmp_path, DYNAMIC), length, np.int64(start))
    np.testing.assert_array_equal(got, want)


# Tiles of 1-, 2- and 8-byte elements whose bytes are no multiple of 4 or 16 (the last run
# partial; shared_mem past a whole element ignored), as the compiled form copies them.
@pytest.mark.parametrize(
    ("dtype", "shared_mem", "start"),
    [("int8", 5, 0), ("int8", 37, 3), ("float16", 7, 1), ("float16", 10, 140), ("float64", 12, 2)],
)
def test_dynamic_tile_of_small_or_large_elements(
    tmp_path: Path, dtype: str, shared_mem: int, start: int
) -> None:
    mod = load_kernel_module(tmp_path, dynamic_source(dtype))
    got, want = run_dynamic(mod, 0, np.int64(start), getattr(np, dtype), shared_mem)
    np.testing.assert_array_equal(got, want)


# An unsigned start past 2**63 is far outside the input: every element 0 (the compiled form
# once cast it to a negative start and read the input's first elements).
@pytest.mark.parametrize("start", [2**64 - 4, 2**63, 2**62])
def test_dynamic_tile_from_a_huge_unsigned_start_is_zero(tmp_path: Path, start: int) -> None:
    mod = load_kernel_module(tmp_path, dynamic_source("float32", "np.uint64"))
    got, want = run_dynamic(mod, 16, np.uint64(start))
    assert not want.any()
    np.testing.assert_array_equal(got, want)


# Two fills joined into a pair: inputs whose rows are 100 floats (400 bytes, 16-aligned).
# Each case puts each tile wholly inside (its copies), past an edge, misaligned or wholly
# outside (its per-run path): both tiles' values, as two separate calls give them.
PAIR_A = np.arange(1, 20 * 100 + 1, dtype=np.float32).reshape(20, 100)
PAIR_B = -np.arange(1, 16 * 100 + 1, dtype=np.float32).reshape(16, 100)
PAIR_CASES = [
    ((0, 0), (8, 32)),  # both inside
    ((4, 36), (12, 0)),  # inside; u's rows 12..19 pass b's last row (15)
    ((15, 8), (0, 4)),  # t's last rows past a's end; inside
    ((2, 1), (-3, 40)),  # t misaligned; u starts above b
    ((40, 0), (0, 100)),  # both wholly outside (past an end)
    ((0, -(2**62)), (2**62, 0)),  # origins at the limit
]


def pair_window(src: np.ndarray, r0: int, c0: int) -> np.ndarray:
    """``src[r0:r0+8, c0:c0+64]`` with zeros outside ``src``, flat."""
    out = np.zeros((8, 64), np.float32)
    for i in range(8):
        for j in range(64):
            if 0 <= r0 + i < src.shape[0] and 0 <= c0 + j < src.shape[1]:
                out[i, j] = src[r0 + i, c0 + j]
    return out.ravel()


def run_pair(mod: Any, first: tuple[int, int], second: tuple[int, int]) -> np.ndarray:
    out = cuda.to_device(np.full(1024, np.nan, np.float32))
    mod.k.prepare(grid=8, block=128)(
        out,
        cuda.to_device(PAIR_A),
        cuda.to_device(PAIR_B),
        *(np.int64(v) for v in (*first, *second)),
    )
    return out.copy_to_host()


@pytest.mark.parametrize("source", [PAIR, UNPAIRED], ids=["pair", "unpaired"])
@pytest.mark.parametrize(("first", "second"), PAIR_CASES)
def test_a_pair_of_fills_copies_both_tiles(
    tmp_path: Path, source: str, first: tuple[int, int], second: tuple[int, int]
) -> None:
    got = run_pair(load_kernel_module(tmp_path, source), first, second)
    want = np.concatenate([pair_window(PAIR_A, *first), pair_window(PAIR_B, *second)])
    np.testing.assert_array_equal(got, want)


def test_a_pairs_second_call_is_refused_at_its_own_line(tmp_path: Path) -> None:
    def act(mod: Any) -> object:
        out = cuda.to_device(np.zeros(1024, np.float32))
        b = cuda.to_device(PAIR_B.astype(np.float64))
        zeros = (np.int64(0),) * 4
        return mod.k.prepare(grid=8, block=128)(out, cuda.to_device(PAIR_A), b, *zeros)

    error = assert_refused(tmp_path, PAIR_REFUSED, PAIR_REFUSAL, act)
    assert "second call" not in str(error)
