"""The fusion volume on the device: its arrays, the prepared launches, what the host reads back.

``Fusion(params, cam)`` holds the hash table (``uint64`` block keys, ``int32`` pool
indices as values, a failure counter), the block list (an append buffer of keys whose
counter numbers the pool) and the two voxel pools (TSDF, weight). ``fuse(depth, pose)``
runs one frame: ``allocate`` (safe or raw twin), a read of the block counter (the
integration launch covers exactly the allocated blocks), ``integrate``. ``status()``
says what was stored and what was lost -- never silently: ``check()`` raises
``simtsafe.CapacityExceeded`` when an insert failed or a pool index was dropped.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import numpy as np
from numba import cuda

import simtsafe as ss

from . import kernels as K
from . import raw as R
from .scene import Intrinsics
from .volume import COLS, Params, check_key_range

__all__ = ["Fusion", "Status", "pose_arrays"]

Backend = Literal["safe", "raw"]


def pose_arrays(pose: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The 3x4 camera-to-world and world-to-camera matrices of a 4x4 pose, float32, row-major."""
    pose = np.asarray(pose, np.float64)
    inv = np.linalg.inv(pose)
    return pose[:3].astype(np.float32).ravel(), inv[:3].astype(np.float32).ravel()


class Status(NamedTuple):
    """What the volume holds and what it lost.

    Attributes:
        blocks: blocks with a pool index (allocated and integrated).
        occupied: hash table slots holding a key (``blocks + dropped``).
        failed: insert calls that found no slot (a full table) or a key out of range.
        dropped: blocks inserted into the table whose pool index was past the pool's end.
    """

    blocks: int
    occupied: int
    failed: int
    dropped: int

    @property
    def lost(self) -> int:
        """Calls and blocks counted as lost (0: every block the rays touched is in the pool)."""
        return self.failed + self.dropped


class Fusion:
    """A hash-blocked TSDF volume on the device (``backend``: the Tier-1 kernels or raw twins)."""

    def __init__(self, params: Params, cam: Intrinsics, backend: Backend = "safe") -> None:
        if backend not in ("safe", "raw"):
            raise ValueError(f"Fusion(backend={backend!r}): expected 'safe' or 'raw'")
        self.params, self.cam, self.backend = params, cam, backend
        corner = np.hypot(max(cam.cx, cam.width - 1 - cam.cx) / cam.fx,
                          max(cam.cy, cam.height - 1 - cam.cy) / cam.fy)  # fmt: skip
        self.ray_length = float(np.hypot(corner, 1.0))  # longest ray per unit camera z
        self.max_cells = np.int32(params.max_cells(self.ray_length))
        self.keys = ss.empty_keys(params.table, np.uint64)
        self.slots = cuda.to_device(np.full(params.table, -1, np.int32))
        self.nfail = ss.counter()
        self.blocks = cuda.to_device(np.zeros(params.pool, np.uint64))
        self.nblocks = ss.counter()
        self.tsdf = cuda.to_device(np.zeros((8, params.pool * COLS), np.float32))
        self.weight = cuda.to_device(np.zeros((8, params.pool * COLS), np.float32))
        self.alloc_grid = (
            ss.cover(cam.width, K.ALLOC_BLOCK[0]),
            ss.cover(cam.height, K.ALLOC_BLOCK[1]),
        )
        self.ray_grid = (ss.cover(cam.width, K.RAY_BLOCK[0]), ss.cover(cam.height, K.RAY_BLOCK[1]))
        self._integrate: dict[int, Any] = {}
        if backend == "safe":
            self._allocate = K.allocate.prepare(grid=self.alloc_grid, block=K.ALLOC_BLOCK)
        self._intr = tuple(np.float32(x) for x in (cam.fx, cam.fy, cam.cx, cam.cy))

    # ------------------------------------------------------------------------- one frame

    def check_pose(self, pose: np.ndarray[Any, Any]) -> None:
        """Refuse (``KeyRangeError``) a camera whose rays could reach blocks without a key."""
        check_key_range(self.params, np.asarray(pose, np.float64)[:3, 3], self.ray_length)

    def allocate(self, d_depth: Any, d_c2w: Any) -> None:
        """Insert the blocks of this frame's truncation segments (no host sync)."""
        p = self.params
        args = (
            self.keys, self.slots, self.nfail, self.blocks, self.nblocks, d_depth, d_c2w,
            *self._intr, p.f32("mu"), p.inv_block, p.f32("near"), p.f32("max_depth"),
            self.max_cells,
        )  # fmt: skip
        if self.backend == "safe":
            self._allocate(*args)
        else:
            R.allocate_raw[self.alloc_grid, K.ALLOC_BLOCK](*args)

    def stored(self) -> int:
        """Blocks with a pool index now (reads the block counter: waits for the allocation)."""
        return ss.append_result(self.blocks, self.nblocks).stored

    def integrate(self, d_depth: Any, d_w2c: Any, nblocks: int) -> None:
        """Update every voxel of the first ``nblocks`` pool blocks with this frame."""
        if nblocks == 0:
            return
        p = self.params
        grid = ss.cover(nblocks * COLS, K.INTEGRATE_BLOCK[0])
        args = (
            self.tsdf, self.weight, self.blocks, np.int64(nblocks), d_depth, d_w2c,
            *self._intr, p.f32("voxel"), p.f32("mu"), p.f32("near"), p.f32("max_depth"),
            p.f32("max_weight"),
        )  # fmt: skip
        if self.backend == "safe":
            launch = self._integrate.get(grid)
            if launch is None:
                launch = self._integrate[grid] = K.integrate.prepare(
                    grid=grid, block=K.INTEGRATE_BLOCK
                )
            launch(*args)
        else:
            R.integrate_raw[grid, K.INTEGRATE_BLOCK](*args)

    def fuse(self, depth: np.ndarray[Any, Any], pose: np.ndarray[Any, Any]) -> int:
        """Allocate and integrate one frame (host arrays); the blocks in the pool after it."""
        if depth.shape != (self.cam.height, self.cam.width) or depth.dtype != np.float32:
            raise ValueError(
                f"depth frame: expected float32 ({self.cam.height}, {self.cam.width}), got "
                f"{depth.dtype} {depth.shape}"
            )
        self.check_pose(pose)
        c2w, w2c = pose_arrays(pose)
        d_depth = cuda.to_device(depth)
        self.allocate(d_depth, cuda.to_device(c2w))
        n = self.stored()
        self.integrate(d_depth, cuda.to_device(w2c), n)
        return n

    # ------------------------------------------------------------------------- results

    def status(self) -> Status:
        """Blocks stored, table slots occupied, failed inserts and dropped pool indices."""
        appended = ss.append_result(self.blocks, self.nblocks)
        table = ss.insert_result(self.keys, self.nfail)
        return Status(appended.stored, table.occupied, table.failed, appended.dropped)

    def check(self) -> int:
        """The blocks in the pool; ``simtsafe.CapacityExceeded`` if any insert or block was lost."""
        ss.inserted(self.keys, self.nfail)
        return ss.appended(self.blocks, self.nblocks)

    def block_keys(self) -> set[int]:
        """The keys of the blocks in the pool (host)."""
        return set(ss.to_host(self.blocks)[: self.stored()].tolist())

    def volume(self) -> dict[int, tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
        """Block key -> its (8, 64) TSDF and weight (rows z, columns y * 8 + x), on the host."""
        n = self.stored()
        keys = ss.to_host(self.blocks)[:n]
        tsdf = ss.to_host(self.tsdf)[:, : n * COLS].reshape(8, n, COLS)
        weight = ss.to_host(self.weight)[:, : n * COLS].reshape(8, n, COLS)
        return {int(k): (tsdf[:, i], weight[:, i]) for i, k in enumerate(keys)}

    def raycast(
        self, pose: np.ndarray[Any, Any], backend: Backend | None = None
    ) -> np.ndarray[Any, Any]:
        """The depth image of the fused surface seen from ``pose`` (0 where none is found)."""
        p = self.params
        self.check_pose(pose)
        c2w, _ = pose_arrays(pose)
        out = cuda.to_device(np.zeros((self.cam.height, self.cam.width), np.float32))
        args = (
            out, self.keys, self.slots, self.tsdf, self.weight, np.int64(self.stored()),
            cuda.to_device(c2w), *self._intr, p.f32("voxel"), p.f32("mu"), p.f32("near"),
            p.f32("max_depth"),
        )  # fmt: skip
        if (backend or self.backend) == "safe":
            K.raycast.prepare(grid=self.ray_grid, block=K.RAY_BLOCK)(*args)
        else:
            R.raycast_raw[self.ray_grid, K.RAY_BLOCK](*args)
        return np.asarray(ss.to_host(out))
