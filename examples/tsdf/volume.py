"""Voxel hashing: blocks, their 64-bit keys, the pool's layout, the fusion parameters.

The volume is cut into blocks of 8 x 8 x 8 voxels. A block is named by its
integer block coordinate ``(bx, by, bz)`` (the voxel ``(vx, vy, vz)`` lies in
block ``(vx >> 3, vy >> 3, vz >> 3)``; the world point ``p`` in voxel
``floor(p / voxel)``), and stored only where a depth ray passed near a surface.

**Keys.** A block coordinate is packed into one ``uint64``: each axis is
offset by ``2**20`` and takes 21 bits,

    key = (bx + 2**20) << 42 | (by + 2**20) << 21 | (bz + 2**20)

so every coordinate in ``[-2**20, 2**20)`` has its own key, every key is
below ``2**63`` and none is the hash table's ``EMPTY`` (all ones). With 1 cm
voxels that range is +-83.9 km around the origin. ``check_key_range`` refuses
(``KeyRangeError``) a camera path whose rays, up to ``max_depth + mu``, could
leave it; on the device a block outside the range is inserted as the
``EMPTY`` key, which the table refuses and counts as a failed insert, so even
a depth frame that breaks the promise loses no block silently.

**The pool.** Block ``i`` of the pool (its index, won by the inserting call
from the block list's counter) keeps its 512 voxels in two ``(8, P * 64)``
arrays (TSDF and weight, ``P`` the pool's capacity): voxel ``(x, y, z)`` of
block ``i`` is at row ``z``, column ``i * 64 + y * 8 + x``. One thread owns a
column (``thread.column()``: the 8 voxels along z of one (x, y) of one block),
and neighbouring threads write neighbouring columns of each row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "BLOCK",
    "COLS",
    "KEY_BITS",
    "KEY_OFFSET",
    "KeyRangeError",
    "Params",
    "check_key_range",
    "pack",
    "unpack",
]

#: Voxels per block side, voxels per z layer of a block (the pool's columns per block).
BLOCK, COLS = 8, 64
#: Bits per axis in a key and the offset that makes a coordinate non-negative.
KEY_BITS, KEY_OFFSET = 21, 1 << 20
KEY_MASK = (1 << KEY_BITS) - 1
EMPTY = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


class KeyRangeError(ValueError):
    """A scene or camera path reaches block coordinates that a 64-bit key cannot hold."""


@dataclass(frozen=True)
class Params:
    """Fusion parameters (metres), float32 where the kernels use them.

    Attributes:
        voxel: voxel edge; a block is ``8 * voxel``.
        mu: the truncation distance: depth rays allocate and integrate within +-mu
            of the measured surface; TSDF values are signed distances / mu, in [-1, 1].
        max_depth: depths above it (and <= 0, NaN) are invalid pixels.
        near: the nearest camera z a ray starts at.
        max_weight: the cap of a voxel's weight (running average over at most this many).
        table: hash table slots; pool: voxel blocks in the pool.
    """

    voxel: float = 0.01
    mu: float = 0.04
    max_depth: float = 5.0
    near: float = 0.1
    max_weight: float = 100.0
    table: int = 1 << 16
    pool: int = 1 << 15

    def __post_init__(self) -> None:
        if not (self.voxel > 0 and self.mu > 0 and self.max_depth > self.near > 0):
            raise ValueError(
                f"fusion parameters: need voxel > 0, mu > 0 and max_depth > near > 0; got "
                f"voxel={self.voxel}, mu={self.mu}, near={self.near}, max_depth={self.max_depth}"
            )
        if self.table < 1 or self.pool < 1 or self.pool * COLS >= 2**31:
            raise ValueError(
                f"fusion parameters: table={self.table} and pool={self.pool} must be >= 1, and "
                f"pool * 64 below 2**31 (pool indices are int32)"
            )

    @property
    def block_size(self) -> float:
        return BLOCK * self.voxel

    def f32(self, name: str) -> np.float32:
        return np.float32(getattr(self, name))

    @property
    def inv_block(self) -> np.float32:
        """1 / block size in float32: world point -> block units (the kernels multiply by it)."""
        return np.float32(1.0) / np.float32(self.block_size)

    def max_cells(self, ray_length: float) -> int:
        """An upper bound on the blocks one allocation segment visits (the DDA's loop bound).

        The segment spans camera z in [d - mu, d + mu] along a ray whose length per unit z
        is at most ``ray_length``: ``L = 2 mu ray_length / block`` block units. Along each
        axis it crosses at most ``ceil(L_a) + 1`` block faces; two more per axis allow for
        the float32 rounding of the crossing parameters. The loop runs at most this many times
        (the reference asserts that every segment ends before it).
        """
        span = 2.0 * self.mu * ray_length / self.block_size
        return 1 + 3 * (math.ceil(span) + 3)


def pack(b: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.uint64]]:
    """Keys of block coordinates ``b`` (..., 3) int64; KeyRangeError outside [-2**20, 2**20)."""
    b = np.asarray(b, np.int64)
    if b.size and (b.min() < -KEY_OFFSET or b.max() >= KEY_OFFSET):
        raise KeyRangeError(
            f"block coordinates {b.min()}..{b.max()} do not fit a key: each axis must lie in "
            f"[-2**20, 2**20). Use larger voxels or keep the scene nearer the origin"
        )
    u = (b + KEY_OFFSET).astype(np.uint64)
    return (u[..., 0] << np.uint64(42)) | (u[..., 1] << np.uint64(21)) | u[..., 2]


def unpack(keys: np.ndarray[Any, Any]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Block coordinates (..., 3) of ``keys`` (the inverse of ``pack``)."""
    k = np.asarray(keys, np.uint64)
    m = np.uint64(KEY_MASK)
    parts = [(k >> np.uint64(s)) & m for s in (42, 21, 0)]
    return np.stack(parts, axis=-1).astype(np.int64) - KEY_OFFSET


def check_key_range(params: Params, eyes: np.ndarray[Any, Any], ray_length: float) -> None:
    """Refuse camera positions from which a ray could reach a block without a key.

    A point the allocation or the raycast visits lies within ``(max_depth + mu) *
    ray_length`` of a camera position (``ray_length``: the longest ray per unit of camera
    z, at the image's corners). Every block coordinate of that ball must fit 21 bits.
    """
    reach = (params.max_depth + params.mu) * ray_length + params.block_size
    eyes = np.asarray(eyes, np.float64).reshape(-1, 3)
    lo = np.floor((eyes.min(axis=0) - reach) / params.block_size)
    hi = np.floor((eyes.max(axis=0) + reach) / params.block_size)
    if lo.min() < -KEY_OFFSET or hi.max() >= KEY_OFFSET:
        raise KeyRangeError(
            f"the camera path reaches block coordinates {int(lo.min())}..{int(hi.max())} "
            f"(cameras within {np.abs(eyes).max():.4g} m of the origin, rays up to "
            f"{reach:.4g} m, blocks of {params.block_size:.4g} m); keys hold [-2**20, 2**20) "
            "per axis. Use larger voxels, a smaller max_depth, or move the scene to the origin"
        )
