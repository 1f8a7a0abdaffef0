"""The checker corpus as data: each case is a buggy kernel, its fixed twin, a launch and arguments.

Used by tests/checker (CPU), tests/sim (the same under ``NUMBA_ENABLE_CUDASIM=1``)
and benchmarks/sanitizer_corpus.py (the raw cases on a GPU, under
compute-sanitizer).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import corpus_raw as R
from . import corpus_ss as S

f32 = np.float32


def _x(n: int, seed: int = 0) -> np.ndarray:
    """Small integers as float32: sums are exact in any order."""
    return (np.random.default_rng(seed).integers(0, 8, n)).astype(f32)


@dataclass(frozen=True)
class Case:
    """A buggy kernel, its fixed twin, how to launch them, and what the checker must say."""

    name: str
    tier: str  # "raw" (numba.cuda.jit) or "simtsafe" (Tier 2)
    bug: Any
    ok: Any
    grid: Any
    block: Any
    args: Callable[[], tuple[Any, ...]]
    kind: str
    #: other finding kinds the bug legitimately causes too (consequences of it)
    also: tuple[str, ...] = ()
    #: outputs of the fixed twin -> True when they match numpy
    expect: Callable[[dict[str, np.ndarray], tuple[Any, ...]], bool] | None = None
    shared_mem: int = 0
    cooperative: bool = False
    tags: tuple[str, ...] = field(default=())

    def bug_lines(self) -> set[int]:
        """Line numbers of the buggy kernel marked ``# BUG``."""
        fn = getattr(self.bug, "py_func", None) or getattr(self.bug, "fn", None) or self.bug
        lines, first = inspect.getsourcelines(fn)
        return {first + k for k, text in enumerate(lines) if "# BUG" in text}


def _sums(block: int) -> Callable[[dict[str, np.ndarray], tuple[Any, ...]], bool]:
    def check(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
        x = args[-1]
        name = next(iter(out))
        got = out[name]
        return bool(np.array_equal(got, x.reshape(-1, block).sum(axis=1).astype(got.dtype)))

    return check


def _stencil(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    x = args[1]
    pad = np.concatenate([[0], x, [0]]).astype(f32)
    return bool(np.array_equal(out["out"], pad[:-2] + pad[1:-1] + pad[2:]))


def _scan(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    x = args[1]
    return bool(np.array_equal(out["out"], np.cumsum(x.reshape(-1, 64), axis=1).reshape(-1)))


def _hist(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    return bool(np.array_equal(out["hist"], np.bincount(args[1], minlength=16)))


def _transpose(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    return bool(np.array_equal(out["out"], args[1].T))


def _matmul(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    return bool(np.allclose(out["c"], args[1] @ args[2]))


def _shfl_branch(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    x = args[1]
    want = x.copy()
    want[:16] = x[0]
    return bool(np.array_equal(out["out"], want))


def _ballot(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    x = args[1]
    return int(out["out"][0]) == sum(1 << i for i in range(32) if x[i] > 1)


def _last_block(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    return bool(out["result"][0] == args[3].sum()) and int(out["count"][0]) == 0


def _warps_partial(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    x = args[1]
    return bool(np.array_equal(out["out"], np.array([x[:32].sum(), x[32:48].sum()], f32)))


def _count(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    return bool(np.all(out["out"] == int((args[1] > 0).sum())))


def _halo_oob(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    x = args[1]
    want = np.zeros_like(x)
    want[1:-1] = x[:-2] + x[1:-1] + x[2:]
    return bool(np.array_equal(out["out"], want))


def _grid_neighbor(out: dict[str, np.ndarray], args: tuple[Any, ...]) -> bool:
    x = args[1]
    return bool(np.array_equal(out["x"], np.roll(2 * x, -32)))


RAW: list[Case] = [
    Case("reduce_nobarrier", "raw", R.reduce_nobarrier_bug, R.reduce_nobarrier_ok, 2, 64,
         lambda: (np.zeros(2, f32), _x(128)), "race", expect=_sums(64)),
    Case("reduce_branch_barrier", "raw", R.reduce_branch_barrier_bug, R.reduce_branch_barrier_ok,
         2, 64, lambda: (np.zeros(2, f32), _x(128)), "barrier_divergence", expect=_sums(64)),
    Case("reduce_oob_shared", "raw", R.reduce_oob_shared_bug, R.reduce_oob_shared_ok, 2, 64,
         lambda: (np.zeros(2, f32), _x(128)), "out_of_bounds", expect=_sums(64)),
    Case("warp_wrong_mask", "raw", R.warp_wrong_mask_bug, R.warp_wrong_mask_ok, 1, 64,
         lambda: (np.zeros(2, f32), _x(64)), "warp_mask", expect=_sums(32)),
    Case("warp_partial", "raw", R.warp_partial_bug, R.warp_partial_ok, 1, 48,
         lambda: (np.zeros(2, f32), _x(48)), "warp_mask", expect=_warps_partial),
    Case("shfl_in_branch", "raw", R.shfl_in_branch_bug, R.shfl_in_branch_ok, 1, 32,
         lambda: (np.zeros(32, f32), _x(32)), "warp_mask", expect=_shfl_branch),
    Case("ballot_after_exit", "raw", R.ballot_after_exit_bug, R.ballot_after_exit_ok, 1, 32,
         lambda: (np.zeros(1, np.int64), _x(32) - 1), "warp_mask", expect=_ballot),
    Case("warp_smem_nosyncwarp", "raw", R.warp_smem_nosyncwarp_bug, R.warp_smem_nosyncwarp_ok,
         2, 64, lambda: (np.zeros(2, f32), _x(128)), "race", expect=_sums(64)),
    Case("syncwarp_mask", "raw", R.syncwarp_mask_bug, R.syncwarp_mask_ok, 1, 32,
         lambda: (np.zeros(32, f32), _x(32)), "warp_mask", also=("race",),
         expect=lambda out, a: bool(np.array_equal(out["out"], a[1][::-1]))),
    Case("scan", "raw", R.scan_bug, R.scan_ok, 2, 64,
         lambda: (np.zeros(128, f32), _x(128)), "race", expect=_scan),
    Case("stencil_halo", "raw", R.stencil_halo_bug, R.stencil_halo_ok, 2, 64,
         lambda: (np.zeros(128, f32), _x(128)), "race", expect=_stencil),
    Case("halo_uninit", "raw", R.halo_uninit_bug, R.halo_uninit_ok, 2, 64,
         lambda: (np.zeros(128, f32), _x(128)), "uninitialized", expect=_stencil),
    Case("halo_oob", "raw", R.halo_oob_bug, R.halo_oob_ok, 2, 64,
         lambda: (np.zeros(128, f32), _x(128)), "out_of_bounds", expect=_halo_oob),
    Case("stencil2d_oob", "raw", R.stencil2d_oob_bug, R.stencil2d_oob_ok, (2, 2), (8, 8),
         lambda: (np.zeros((16, 16), f32), _x(256).reshape(16, 16)), "out_of_bounds"),
    Case("hist_global", "raw", R.hist_global_bug, R.hist_global_ok, 2, 64,
         lambda: (np.zeros(16, np.int32), _x(128).astype(np.int32) * 2), "race", expect=_hist),
    Case("hist_shared_uninit", "raw", R.hist_shared_uninit_bug, R.hist_shared_uninit_ok, 2, 64,
         lambda: (np.zeros(16, np.int32), _x(128).astype(np.int32) * 2), "uninitialized",
         expect=_hist),
    Case("atomic_plain_read", "raw", R.atomic_plain_read_bug, R.atomic_plain_read_ok, 2, 64,
         lambda: (np.zeros(2, np.int32), np.zeros(1, np.int32), _x(128)), "race"),
    Case("transpose", "raw", R.transpose_bug, R.transpose_ok, (2, 2), (8, 8),
         lambda: (np.zeros((16, 16), f32), _x(256).reshape(16, 16)), "race", expect=_transpose),
    Case("matmul_tiled", "raw", R.matmul_tiled_bug, R.matmul_tiled_ok, (2, 2), (8, 8),
         lambda: (np.zeros((16, 16), f32), _x(256, 1).reshape(16, 16),
                  _x(256, 2).reshape(16, 16)), "race", expect=_matmul),
    Case("neighbor_write", "raw", R.neighbor_write_bug, R.neighbor_write_ok, 2, 64,
         lambda: (np.zeros(128, f32), _x(128)), "race",
         expect=lambda out, a: bool(np.array_equal(out["out"], a[1]))),
    Case("last_block", "raw", R.last_block_bug, R.last_block_ok, 4, 64,
         lambda: (np.zeros(4, f32), np.zeros(1, np.uint32), np.zeros(1, f32), _x(256)), "race",
         expect=_last_block),
    Case("grid_neighbor", "raw", R.grid_neighbor_bug, R.grid_neighbor_ok, 2, 32,
         lambda: (np.zeros(64, f32), _x(64)), "race", cooperative=True, expect=_grid_neighbor),
    Case("grid_sync_divergent", "raw", R.grid_sync_divergent_bug, R.grid_sync_divergent_ok, 2, 32,
         lambda: (np.zeros(64, f32), _x(64)), "barrier_divergence", cooperative=True),
    Case("early_return", "raw", R.early_return_bug, R.early_return_ok, 2, 64,
         lambda: (np.zeros(100, f32), _x(100)), "barrier_divergence", also=("uninitialized",)),
    Case("count_in_branch", "raw", R.count_in_branch_bug, R.count_in_branch_ok, 1, 64,
         lambda: (np.zeros(64, np.int32), _x(64) - 3), "barrier_divergence", expect=_count),
    Case("local_uninit", "raw", R.local_uninit_bug, R.local_uninit_ok, 1, 32,
         lambda: (np.zeros(32, f32), _x(256)), "uninitialized"),
]  # fmt: skip

SIMTSAFE: list[Case] = [
    Case("ss_reduce", "simtsafe", S.ss_reduce_bug, S.ss_reduce_ok, 2, 64,
         lambda: (np.zeros(2, f32), _x(128)), "race", expect=_sums(64)),
    Case("ss_branch_barrier", "simtsafe", S.ss_branch_barrier_bug, S.ss_branch_barrier_ok, 2, 64,
         lambda: (np.zeros(2, f32), _x(128)), "barrier_divergence", also=("race",),
         expect=_sums(64)),
    Case("ss_hist", "simtsafe", S.ss_hist_bug, S.ss_hist_ok, 2, 64,
         lambda: (np.zeros(16, np.int32), _x(128).astype(np.int32) * 2), "race", expect=_hist),
    Case("ss_last_thread_total", "simtsafe", S.ss_last_thread_total_bug,
         S.ss_last_thread_total_ok, 2, 64, lambda: (np.zeros(2, f32), _x(128)), "dropped_write",
         expect=_sums(64)),
    Case("ss_warp_mask", "simtsafe", S.ss_warp_mask_bug, S.ss_warp_mask_ok, 1, 64,
         lambda: (np.zeros(2, f32), _x(64)), "warp_mask", expect=_sums(32)),
    Case("ss_neighbor", "simtsafe", S.ss_neighbor_bug, S.ss_neighbor_ok, 2, 64,
         lambda: (np.zeros(128, f32), _x(128)), "race",
         expect=lambda out, a: bool(np.array_equal(out["out"], a[1]))),
    Case("ss_scan", "simtsafe", S.ss_scan_bug, S.ss_scan_ok, 2, 64,
         lambda: (np.zeros(128, f32), _x(128)), "race", expect=_scan),
    Case("ss_transpose", "simtsafe", S.ss_transpose_bug, S.ss_transpose_ok, (2, 2), (8, 8),
         lambda: (np.zeros((16, 16), f32), _x(256).reshape(16, 16)), "race", expect=_transpose),
    Case("ss_oob", "simtsafe", S.ss_oob_bug, S.ss_oob_ok, 2, 64,
         lambda: (np.zeros(100, f32), _x(100)), "out_of_bounds",
         expect=lambda out, a: bool(np.array_equal(out["out"], 2 * a[1]))),
    Case("ss_uninit", "simtsafe", S.ss_uninit_bug, S.ss_uninit_ok, 2, 64,
         lambda: (np.zeros(2, f32), _x(128)), "uninitialized", expect=_sums(64)),
    Case("ss_matmul", "simtsafe", S.ss_matmul_bug, S.ss_matmul_ok, (2, 2), (8, 8),
         lambda: (np.zeros((16, 16), f32), _x(256, 1).reshape(16, 16),
                  _x(256, 2).reshape(16, 16)), "race", expect=_matmul),
]  # fmt: skip

CASES: list[Case] = RAW + SIMTSAFE
BY_NAME: dict[str, Case] = {c.name: c for c in CASES}
