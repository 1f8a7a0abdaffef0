# pyright: basic
"""A raw probe (no checks): bf16 GEMM on sm_90's warpgroup MMA (``wgmma.mma_async``).

Not Tier 1 and not an example: it measures whether the ``wgmma`` schedule is worth a Tier-1
form before one is designed (issue 20: bf16 GEMM >= 60% of cuBLAS, the ``mma.sync``
schedule of examples/gemm_bf16.py reaching 36%). ``benchmarks/gemm_bf16.py --wgmma`` times
it beside the example.

Schedule: a block of 256 threads (two warpgroups) computes a 128 x 256 tile of ``c``; each
warpgroup owns 64 rows and issues one ``wgmma.mma_async.m64n256k16`` per 16 columns of K
(A and B read from shared memory through descriptors; 128 fp32 accumulators a thread).
K is walked 64 columns a stage through ``STAGES`` stages of shared tiles in the 128-byte
swizzled layout the descriptors name: A (128 x 64, K-major) rows of 128 bytes; B
(64 x 256, N-major) four blocks of 64 columns, each 64 rows of 128 bytes; the 16-byte
chunk ``c`` of row ``r`` stored at chunk ``c ^ (r % 8)``. Every thread fills with 16-byte
``cp.async.cg`` (4 runs of A, 8 of B a stage). Per stage: ``cp.async.wait_group``,
``fence.proxy.async`` (the copies become visible to the tensor cores' reads), a block
barrier, the refill of the stage read ``LAG + 1`` stages ago, ``wgmma.fence``, four
``wgmma``, ``wgmma.commit_group``, ``wgmma.wait_group LAG`` (``LAG`` groups stay in
flight). Sizes must be multiples of the tile (128, 256, 64): a probe, no edges.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from numba import cuda

# The raw intrinsics are the example's raw twin's (one copy of the inline PTX).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from gemm_bf16_wgmma import (  # noqa: E402
    A_BYTES,
    BK,
    BLOCK,
    BM,
    BN,
    STAGE_BYTES,
    _commit,
    _fence_proxy,
    _fill,
    _plain,
    _smem_base,
    _store,
    _wait_all_copies,
    _wait_mma_all,
    _wait_typer,
    _wgmma,
    _zeros,
)


class Probe:
    """The probe with ``stages`` shared stages, ``lag`` wgmma groups left in flight a stage
    (``stages - 1 - lag`` stages of copies in flight ahead of the one read)."""

    BLOCK = BLOCK

    def __init__(self, stages: int = 4, lag: int = 1) -> None:
        ahead = stages - 1 - lag
        assert ahead >= 1
        self.shared = stages * STAGE_BYTES + 1024  # + room to align the first stage
        wait_copies = _plain(f"cp.async.wait_group {ahead - 1};")
        wait_mma = _wait_typer(lag)

        @cuda.jit
        def gemm_bf16_raw(c, a, b):  # type: ignore[no-untyped-def]
            """c = a @ b (a, b: the bf16 bits as uint16), ``self.shared`` bytes of dynamic
            shared memory."""
            sm = cuda.shared.array(0, np.uint16, alignment=16)
            base = _smem_base(sm)
            ty = cuda.threadIdx.y
            lane = cuda.threadIdx.x
            group = ty // 4
            row0 = cuda.blockIdx.y * BM
            col0 = cuda.blockIdx.x * BN
            steps = a.shape[1] // BK
            acc = _zeros()
            for s in range(ahead):
                if s < steps:
                    _fill(base + s * STAGE_BYTES, a, b, row0, col0, s * BK)
                _commit()
            for s in range(steps):
                wait_copies()
                _fence_proxy()
                cuda.syncthreads()
                nxt = s + ahead  # into the tiles stage s - 1 - lag read (its group is done)
                if nxt < steps:
                    _fill(base + (nxt % stages) * STAGE_BYTES, a, b, row0, col0, nxt * BK)
                _commit()
                at = base + (s % stages) * STAGE_BYTES
                acc = _wgmma(acc, at + group * (64 * 128), at + A_BYTES)
                acc = wait_mma(acc)
            acc = _wait_mma_all(acc)
            _wait_all_copies()
            _store(c, acc, row0 + group * 64 + (ty % 4) * 16 + lane // 4, col0 + (lane % 4) * 2)

        self.gemm_bf16_raw = gemm_bf16_raw

    @staticmethod
    def grid_for(m: int, n: int) -> tuple[int, int]:
        return (math.ceil(n / BN), math.ceil(m / BM))

    def raw_launcher(self, m: int, n: int, sig: Any) -> Any:
        """The kernel compiled for ``sig``, opted in to its shared memory."""
        from simtsafe.lowering._launching import compiled_function, set_max_dynamic_shared

        kernel = self.gemm_bf16_raw.compile(sig)
        error = set_max_dynamic_shared(
            compiled_function(kernel), self.shared, cuda.get_current_device().id
        )
        if error is not None:
            raise RuntimeError(f"wgmma probe: {self.shared} B of shared memory refused: {error}")
        return self.gemm_bf16_raw[self.grid_for(m, n), BLOCK, 0, self.shared]
