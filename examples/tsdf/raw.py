"""Raw ``numba.cuda.jit`` twins of the fusion kernels (Tier 3: nothing checked).

The same arithmetic, in the same order, as ``kernels.py``, written as a Numba user
writes it: ``cuda.atomic.cas`` on the keys (the same hash and linear probe, so the
tables they build are the tables ``simtsafe.hash_lookup`` and the safe raycast read),
``cuda.atomic.add`` on the counters, hand-written bounds checks. They are the speed
reference of ``benchmarks/irregular.py`` and agree with the safe kernels in the tests.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import cuda

from .kernels import BIG, EMPTY, HALF, MASK, NOWHERE, ONE, SHIFT_X, SHIFT_Y, STEP, ZERO
from .volume import KEY_OFFSET

__all__ = ["allocate_raw", "integrate_raw", "raycast_raw"]

U1 = np.uint64(1)


@cuda.jit(device=True)
def _home(key: Any, cap: Any) -> Any:
    """MurmurHash3's 64-bit finalizer of the key, modulo the capacity (docs/atomics.md)."""
    h = key
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h % cap


@cuda.jit(device=True)
def _block_key(bx: Any, by: Any, bz: Any) -> Any:
    lo, hi = -KEY_OFFSET, KEY_OFFSET
    if lo <= bx < hi and lo <= by < hi and lo <= bz < hi:
        return (
            (np.uint64(bx + KEY_OFFSET) << SHIFT_X)
            | (np.uint64(by + KEY_OFFSET) << SHIFT_Y)
            | np.uint64(bz + KEY_OFFSET)
        )
    return EMPTY


@cuda.jit(device=True)
def _dda_axis(q0: Any, q1: Any) -> Any:
    cell = int(math.floor(q0))
    dq = q1 - q0
    if dq > ZERO:
        return cell, 1, (np.float32(cell + 1) - q0) / dq, ONE / dq
    if dq < ZERO:
        return cell, -1, (np.float32(cell) - q0) / dq, -ONE / dq
    return cell, 0, BIG, ZERO


@cuda.jit(device=True)
def _insert_block(keys: Any, slots: Any, nfail: Any, blocks: Any, nblocks: Any, key: Any) -> None:
    """Insert ``key``; the inserting call takes the next pool index (counted past the end)."""
    cap = np.uint64(keys.size)
    if key == EMPTY or cap == 0:
        cuda.atomic.add(nfail, 0, U1)
        return
    s = _home(key, cap)
    for _ in range(cap):
        cur = keys[s]
        if cur == key:
            return
        if cur == EMPTY:
            old = cuda.atomic.cas(keys, s, EMPTY, key)
            if old == EMPTY:
                i = cuda.atomic.add(nblocks, 0, U1)
                if i < np.uint64(blocks.size):
                    blocks[i] = key
                    slots[s] = np.int32(i)
                else:
                    slots[s] = np.int32(-1)
                return
            if old == key:
                return
        s += U1
        if s == cap:
            s = np.uint64(0)
    cuda.atomic.add(nfail, 0, U1)


@cuda.jit
def allocate_raw(  # type: ignore[no-untyped-def]
    keys, slots, nfail, blocks, nblocks, depth, c2w,
    fx, fy, cx, cy, mu, inv_block, near, max_depth, max_cells,
):  # fmt: skip
    u, v = cuda.grid(2)
    if v < depth.shape[0] and u < depth.shape[1]:
        d = depth[v, u]
        if d > ZERO and d <= max_depth:
            xn = (np.float32(u) - cx) / fx
            yn = (np.float32(v) - cy) / fy
            dx = c2w[0] * xn + c2w[1] * yn + c2w[2]
            dy = c2w[4] * xn + c2w[5] * yn + c2w[6]
            dz = c2w[8] * xn + c2w[9] * yn + c2w[10]
            z0 = max(d - mu, near)
            z1 = d + mu
            bx, sx, tx, ex = _dda_axis(
                (c2w[3] + dx * z0) * inv_block, (c2w[3] + dx * z1) * inv_block
            )
            by, sy, ty, ey = _dda_axis(
                (c2w[7] + dy * z0) * inv_block, (c2w[7] + dy * z1) * inv_block
            )
            bz, sz, tz, ez = _dda_axis(
                (c2w[11] + dz * z0) * inv_block, (c2w[11] + dz * z1) * inv_block
            )
            ended = False
            for _ in range(max_cells):
                _insert_block(keys, slots, nfail, blocks, nblocks, _block_key(bx, by, bz))
                if min(tx, ty, tz) > ONE:
                    ended = True
                    break
                if tx <= ty and tx <= tz:
                    bx += sx
                    tx += ex
                elif ty <= tz:
                    by += sy
                    ty += ey
                else:
                    bz += sz
                    tz += ez
            if not ended:
                cuda.atomic.add(nfail, 0, U1)


@cuda.jit
def integrate_raw(  # type: ignore[no-untyped-def]
    tsdf, weight, blocks, nblocks, depth, w2c,
    fx, fy, cx, cy, voxel, mu, near, max_depth, max_weight,
):  # fmt: skip
    c = cuda.grid(1)
    b = c >> 6
    if b < nblocks and c < tsdf.shape[1]:
        key = blocks[b]
        bx = np.int64((key >> SHIFT_X) & MASK) - KEY_OFFSET
        by = np.int64((key >> SHIFT_Y) & MASK) - KEY_OFFSET
        bz = np.int64(key & MASK) - KEY_OFFSET
        xy = c & 63
        px = (np.float32(bx * 8 + (xy & 7)) + HALF) * voxel
        py = (np.float32(by * 8 + (xy >> 3)) + HALF) * voxel
        xc0 = w2c[0] * px + w2c[1] * py
        yc0 = w2c[4] * px + w2c[5] * py
        zc0 = w2c[8] * px + w2c[9] * py
        r2, r6, r10, t0, t1, t2 = w2c[2], w2c[6], w2c[10], w2c[3], w2c[7], w2c[11]
        height, width = depth.shape[0], depth.shape[1]
        for z in range(8):
            pz = (np.float32(bz * 8 + z) + HALF) * voxel
            xc = xc0 + r2 * pz + t0
            yc = yc0 + r6 * pz + t1
            zc = zc0 + r10 * pz + t2
            if zc > near:
                u = int(math.floor(fx * xc / zc + cx + HALF))
                v = int(math.floor(fy * yc / zc + cy + HALF))
                if 0 <= u < width and 0 <= v < height:
                    d = depth[v, u]
                    if d > ZERO and d <= max_depth:
                        sdf = d - zc
                        if sdf >= -mu:
                            t = min(ONE, sdf / mu)
                            w0 = weight[z, c]
                            w1 = w0 + ONE
                            tsdf[z, c] = (tsdf[z, c] * w0 + t) / w1
                            weight[z, c] = min(w1, max_weight)


@cuda.jit(device=True)
def _pool_index(keys: Any, slots: Any, nblocks: Any, key: Any) -> Any:
    cap = np.uint64(keys.size)
    if key == EMPTY or cap == 0:
        return -1
    s = _home(key, cap)
    for _ in range(cap):
        cur = keys[s]
        if cur == key:
            i = slots[s]
            if 0 <= i < nblocks:
                return i
            return -1
        if cur == EMPTY:
            return -1
        s += U1
        if s == cap:
            s = np.uint64(0)
    return -1


@cuda.jit(device=True)
def _trilinear(keys, slots, tsdf, weight, nblocks, gx, gy, gz):  # type: ignore[no-untyped-def]
    x0, y0, z0 = int(math.floor(gx)), int(math.floor(gy)), int(math.floor(gz))
    fx, fy, fz = gx - np.float32(x0), gy - np.float32(y0), gz - np.float32(z0)
    acc = ZERO
    ok = True
    lbx, lby, lbz, i = NOWHERE, NOWHERE, NOWHERE, -1
    for corner in range(8):
        vx, vy, vz = x0 + (corner & 1), y0 + ((corner >> 1) & 1), z0 + (corner >> 2)
        if vx >> 3 != lbx or vy >> 3 != lby or vz >> 3 != lbz:
            lbx, lby, lbz = vx >> 3, vy >> 3, vz >> 3
            i = _pool_index(keys, slots, nblocks, _block_key(lbx, lby, lbz))
        if i < 0:
            ok = False
        else:
            c = i * 64 + (vy & 7) * 8 + (vx & 7)
            ok = ok and weight[vz & 7, c] > ZERO
            wx = fx if corner & 1 else ONE - fx
            wy = fy if (corner >> 1) & 1 else ONE - fy
            wz = fz if corner >> 2 else ONE - fz
            acc += wx * wy * wz * tsdf[vz & 7, c]
    return acc, ok


@cuda.jit(device=True)
def _surface(  # type: ignore[no-untyped-def]
    keys, slots, tsdf, weight, nblocks, c2w, dx, dy, dz, inv_voxel, za, zb, fa, fb
):
    ga, oka = _trilinear(
        keys, slots, tsdf, weight, nblocks,
        (c2w[3] + dx * za) * inv_voxel - HALF,
        (c2w[7] + dy * za) * inv_voxel - HALF,
        (c2w[11] + dz * za) * inv_voxel - HALF,
    )  # fmt: skip
    gb, okb = _trilinear(
        keys, slots, tsdf, weight, nblocks,
        (c2w[3] + dx * zb) * inv_voxel - HALF,
        (c2w[7] + dy * zb) * inv_voxel - HALF,
        (c2w[11] + dz * zb) * inv_voxel - HALF,
    )  # fmt: skip
    if not (oka and okb and ga > ZERO and gb <= ZERO):
        return za + (zb - za) * (fa / (fa - fb))
    zm = za + (zb - za) * (ga / (ga - gb))
    gm, okm = _trilinear(
        keys, slots, tsdf, weight, nblocks,
        (c2w[3] + dx * zm) * inv_voxel - HALF,
        (c2w[7] + dy * zm) * inv_voxel - HALF,
        (c2w[11] + dz * zm) * inv_voxel - HALF,
    )  # fmt: skip
    if not okm:
        return zm
    if gm > ZERO:
        return zm + (zb - zm) * (gm / (gm - gb))
    return za + (zm - za) * (ga / (ga - gm))


@cuda.jit
def raycast_raw(  # type: ignore[no-untyped-def]
    out, keys, slots, tsdf, weight, nblocks, c2w,
    fx, fy, cx, cy, voxel, mu, near, max_depth,
):  # fmt: skip
    col, row = cuda.grid(2)
    if row >= out.shape[0] or col >= out.shape[1]:
        return
    xn = (np.float32(col) - cx) / fx
    yn = (np.float32(row) - cy) / fy
    dx = c2w[0] * xn + c2w[1] * yn + c2w[2]
    dy = c2w[4] * xn + c2w[5] * yn + c2w[6]
    dz = c2w[8] * xn + c2w[9] * yn + c2w[10]
    inv_voxel = ONE / voxel
    block = voxel * np.float32(8)
    ox, oy, oz = c2w[3], c2w[7], c2w[11]
    nudge = np.float32(0.01) * voxel
    min_step = HALF * voxel
    free_step = HALF * mu
    result = ZERO
    z = near
    prev_z = near
    prev_f = ZERO
    prev_seen = False
    lbx, lby, lbz, i = NOWHERE, NOWHERE, NOWHERE, -1
    while z < max_depth:
        vx = int(math.floor((ox + dx * z) * inv_voxel))
        vy = int(math.floor((oy + dy * z) * inv_voxel))
        vz = int(math.floor((oz + dz * z) * inv_voxel))
        if vx >> 3 != lbx or vy >> 3 != lby or vz >> 3 != lbz:
            lbx, lby, lbz = vx >> 3, vy >> 3, vz >> 3
            i = _pool_index(keys, slots, nblocks, _block_key(lbx, lby, lbz))
        if i < 0:
            ex, ey, ez = BIG, BIG, BIG
            if dx != ZERO:
                ex = (np.float32(lbx + (1 if dx > ZERO else 0)) * block - ox) / dx
            if dy != ZERO:
                ey = (np.float32(lby + (1 if dy > ZERO else 0)) * block - oy) / dy
            if dz != ZERO:
                ez = (np.float32(lbz + (1 if dz > ZERO else 0)) * block - oz) / dz
            prev_seen = False
            z = max(min(ex, ey, ez), z) + nudge
            continue
        c = i * 64 + (vy & 7) * 8 + (vx & 7)
        f = tsdf[vz & 7, c]
        seen = weight[vz & 7, c] > ZERO
        if seen and f <= ZERO:
            if prev_seen and prev_f > ZERO:
                result = _surface(
                    keys, slots, tsdf, weight, nblocks, c2w, dx, dy, dz, inv_voxel,
                    prev_z, z, prev_f, f,
                )  # fmt: skip
            break
        step = free_step
        if seen:
            step = max(STEP * f * mu, min_step)
        prev_z, prev_f, prev_seen = z, f, seen
        z += step
    out[row, col] = result
