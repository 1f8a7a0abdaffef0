"""The numpy reference of allocation and integration: the same float32 operations, in order.

``segment_blocks`` walks every valid pixel's truncation segment as ``kernels.allocate``
does (same float32 expressions, same tie-breaking), vectorised over the pixels; it
also proves, for the frame it is given, that no segment reaches the kernel's loop
bound. ``Reference`` keeps the fused volume as a dict of blocks and integrates
every allocated block after each frame's allocation, as the device does.

On the CUDA simulator the kernels run these very float32 operations (numpy scalars,
IEEE round to nearest), so the block set is identical and the TSDF values agree to
the last bit. On a GPU, NVVM contracts ``a * b + c`` into fused multiply-adds: a
crossing parameter or a projected pixel may then differ in its last bit, which
moves a block boundary or a pixel choice only where a value lies within one ulp of it
(tests/gpu/test_tsdf_gpu.py measures how often).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .scene import Intrinsics
from .volume import COLS, Params, pack

__all__ = ["Reference", "segment_blocks", "segment_walk"]

ZERO, HALF, ONE = np.float32(0), np.float32(0.5), np.float32(1)
BIG = np.float32(3.0e38)

A = np.ndarray[Any, Any]


def _axis(q0: A, q1: A) -> tuple[A, A, A, A]:
    """kernels.dda_axis over arrays: cell, step, next crossing, delta."""
    cell = np.floor(q0).astype(np.int64)
    dq = q1 - q0
    pos, neg = dq > ZERO, dq < ZERO
    step = np.where(pos, 1, np.where(neg, -1, 0)).astype(np.int64)
    safe = np.where(pos | neg, dq, ONE)
    with np.errstate(all="ignore"):
        t_pos = (((cell + 1).astype(np.float32) - q0) / safe).astype(np.float32)
        t_neg = ((cell.astype(np.float32) - q0) / safe).astype(np.float32)
        d = (ONE / safe).astype(np.float32)
    tmax = np.where(pos, t_pos, np.where(neg, t_neg, BIG)).astype(np.float32)
    delta = np.where(pos, d, np.where(neg, -d, ZERO)).astype(np.float32)
    return cell, step, tmax, delta


def segment_walk(
    depth: A, c2w: A, cam: Intrinsics, p: Params, max_cells: int
) -> tuple[np.ndarray[Any, np.dtype[np.uint64]], A, A]:
    """kernels.allocate's walk over every valid pixel, at most ``max_cells`` blocks each.

    Returns the keys it inserts (with repeats), the number of blocks each valid pixel's
    segment visits (row-major order of the valid pixels), and which segments did not end
    within ``max_cells`` blocks (the kernel counts each as a failed insert).
    """
    c = [np.float32(x) for x in np.asarray(c2w, np.float32).reshape(12)]
    fx, fy, cx, cy = (np.float32(x) for x in (cam.fx, cam.fy, cam.cx, cam.cy))
    mu, near, max_depth, inv_block = p.f32("mu"), p.f32("near"), p.f32("max_depth"), p.inv_block
    h, w = depth.shape
    v, u = np.mgrid[0:h, 0:w]
    d = np.asarray(depth, np.float32)
    ok = (d > ZERO) & (d <= max_depth)
    d, u32, v32 = d[ok], u[ok].astype(np.float32), v[ok].astype(np.float32)
    xn = (u32 - cx) / fx
    yn = (v32 - cy) / fy
    dx = c[0] * xn + c[1] * yn + c[2]
    dy = c[4] * xn + c[5] * yn + c[6]
    dz = c[8] * xn + c[9] * yn + c[10]
    z0 = np.maximum(d - mu, near)
    z1 = d + mu
    bx, sx, tx, ex = _axis((c[3] + dx * z0) * inv_block, (c[3] + dx * z1) * inv_block)
    by, sy, ty, ey = _axis((c[7] + dy * z0) * inv_block, (c[7] + dy * z1) * inv_block)
    bz, sz, tz, ez = _axis((c[11] + dz * z0) * inv_block, (c[11] + dz * z1) * inv_block)
    active = np.ones(d.shape, bool)
    cells = np.zeros(d.shape, np.int64)
    seen: list[A] = []
    for _ in range(max_cells):
        if not active.any():
            break
        seen.append(np.stack([bx[active], by[active], bz[active]], axis=-1))
        cells += active
        active &= ~(np.minimum(np.minimum(tx, ty), tz) > ONE)  # the segment ends here
        mx = active & (tx <= ty) & (tx <= tz)
        my = active & ~mx & (ty <= tz)
        mz = active & ~mx & ~my
        bx = bx + np.where(mx, sx, 0)
        tx = np.where(mx, tx + ex, tx)
        by = by + np.where(my, sy, 0)
        ty = np.where(my, ty + ey, ty)
        bz = bz + np.where(mz, sz, 0)
        tz = np.where(mz, tz + ez, tz)
    keys = pack(np.concatenate(seen)) if seen else np.zeros(0, np.uint64)
    return keys, cells, active


def segment_blocks(
    depth: A, c2w: A, cam: Intrinsics, p: Params, max_cells: int
) -> np.ndarray[Any, np.dtype[np.uint64]]:
    """The sorted keys of every block a valid pixel's truncation segment passes through.

    Raises:
        AssertionError: a segment did not end within ``max_cells`` blocks (the kernel
            would have stopped there: the bound in ``Params.max_cells`` would be wrong).
    """
    keys, _, unfinished = segment_walk(depth, c2w, cam, p, max_cells)
    assert not unfinished.any(), (
        f"{int(unfinished.sum())} segments did not end within {max_cells} blocks"
    )
    return np.unique(keys)


@dataclass
class Reference:
    """The fused volume in numpy: block key -> (8, 64) TSDF and weight, as the pool lays them."""

    params: Params
    cam: Intrinsics
    max_cells: int
    keys: list[int] = field(default_factory=list)
    tsdf: A = field(default_factory=lambda: np.zeros((0, 8, COLS), np.float32))
    weight: A = field(default_factory=lambda: np.zeros((0, 8, COLS), np.float32))

    def fuse(self, depth: A, c2w: A, w2c: A) -> np.ndarray[Any, np.dtype[np.uint64]]:
        """Allocate this frame's blocks, then integrate every block; the frame's new keys."""
        frame = segment_blocks(depth, c2w, self.cam, self.params, self.max_cells)
        known = np.asarray(self.keys, np.uint64)
        new = frame[~np.isin(frame, known)]
        self.keys.extend(int(k) for k in new)
        grow = np.zeros((new.size, 8, COLS), np.float32)
        self.tsdf = np.concatenate([self.tsdf, grow])
        self.weight = np.concatenate([self.weight, grow])
        self.integrate(depth, w2c)
        return new

    def integrate(self, depth: A, w2c: A) -> None:
        """kernels.integrate over every block, vectorised: the same float32 operations."""
        from .volume import unpack

        p, cam = self.params, self.cam
        w = [np.float32(x) for x in np.asarray(w2c, np.float32).reshape(12)]
        fx, fy, cx, cy = (np.float32(x) for x in (cam.fx, cam.fy, cam.cx, cam.cy))
        voxel, mu, near = p.f32("voxel"), p.f32("mu"), p.f32("near")
        max_depth, max_weight = p.f32("max_depth"), p.f32("max_weight")
        if not self.keys:
            return
        b = unpack(np.asarray(self.keys, np.uint64))  # (N, 3)
        xy = np.arange(COLS)
        px = ((b[:, :1] * 8 + (xy & 7)).astype(np.float32) + HALF) * voxel  # (N, 64)
        py = ((b[:, 1:2] * 8 + (xy >> 3)).astype(np.float32) + HALF) * voxel
        xc0 = w[0] * px + w[1] * py
        yc0 = w[4] * px + w[5] * py
        zc0 = w[8] * px + w[9] * py
        d_img = np.asarray(depth, np.float32)
        h, wd = d_img.shape
        for z in range(8):
            pz = ((b[:, 2:3] * 8 + z).astype(np.float32) + HALF) * voxel  # (N, 1)
            xc = xc0 + w[2] * pz + w[3]
            yc = yc0 + w[6] * pz + w[7]
            zc = zc0 + w[10] * pz + w[11]
            front = zc > near
            with np.errstate(all="ignore"):
                uf = np.floor(fx * xc / zc + cx + HALF)
                vf = np.floor(fy * yc / zc + cy + HALF)
            inside = front & (uf >= 0) & (uf < wd) & (vf >= 0) & (vf < h)
            u = np.where(inside, uf, 0).astype(np.int64)
            v = np.where(inside, vf, 0).astype(np.int64)
            d = np.where(inside, d_img[v, u], ZERO)
            sdf = d - zc
            upd = inside & (d > ZERO) & (d <= max_depth) & (sdf >= -mu)
            t = np.minimum(ONE, sdf / mu)
            w0 = self.weight[:, z, :]
            w1 = w0 + ONE
            self.tsdf[:, z, :] = np.where(
                upd, (self.tsdf[:, z, :] * w0 + t) / w1, self.tsdf[:, z, :]
            )
            self.weight[:, z, :] = np.where(upd, np.minimum(w1, max_weight), w0)
