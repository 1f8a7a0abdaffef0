"""The fusion kernels, every one Tier 1 (no ``simtsafe.unsafe``): allocate, integrate, raycast.

* ``allocate`` -- one thread per depth pixel (a 2D launch). The pixel's ray, between
  camera z ``d - mu`` and ``d + mu`` around its measured depth ``d``, is walked block by
  block (a 3D DDA in block units: every block the segment passes through, in order). Each
  block's key is inserted into the hash table (``keys.insert``); the call that inserted it
  -- one per key, by the compare-and-swap -- claims the next pool index from the block
  list's counter (``blocks.claim()``), writes the key at that index of the block list and
  the index into the key's value slot (``slots``). A full table counts the insert as
  failed (``nfail``), a full pool counts the claim as dropped (``nblocks`` past the
  list's end; the key's slot then holds -1): the host reads both after the launch.
* ``integrate`` -- one thread per column of 8 voxels (x, y fixed, z = 0..7) of each
  allocated block (``thread.column()``: the thread owns that column of the TSDF and
  weight pools in every row). Each voxel centre is projected into the frame, the depth at
  the nearest pixel read, and the TSDF updated by the weighted running average of
  ``min(1, (depth - z) / mu)`` where ``depth - z >= -mu``.
* ``raycast`` -- one thread per output pixel: march the ray through the hash
  (``simtsafe.hashing.find`` on the now read-only table): across a block that has no pool
  index in one step (to its far face), through an allocated block in steps of the TSDF
  value, until the sign changes from + to -; then place the surface between the two
  samples from trilinear TSDF values (one secant step). Writes the camera z of the
  surface, 0 if none.

Float arithmetic is float32 throughout, in the order ``reference.py`` repeats in numpy
(constants are float32 scalars: a Python float would make Numba compute in float64).
"""

from __future__ import annotations

import math

import numpy as np

import simtsafe as ss
from simtsafe import Columns, DisjointSlice, DisjointSlice2D, In, In2D, thread

from .volume import KEY_MASK, KEY_OFFSET

__all__ = ["ALLOC_BLOCK", "INTEGRATE_BLOCK", "RAY_BLOCK", "allocate", "integrate", "raycast"]

ALLOC_BLOCK = (32, 8, 1)
INTEGRATE_BLOCK = (128, 1, 1)
RAY_BLOCK = (32, 8, 1)

ZERO = np.float32(0.0)
HALF = np.float32(0.5)
ONE = np.float32(1.0)
STEP = np.float32(0.8)  # raycast: fraction of the TSDF distance stepped
BIG = np.float32(3.0e38)  # "never": the crossing parameter of an axis the segment does not move on
EMPTY = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
NOWHERE = -(1 << 40)  # a block coordinate no key has: "no block looked up yet"
MASK = np.uint64(KEY_MASK)
SHIFT_X, SHIFT_Y = np.uint64(42), np.uint64(21)


@ss.device
def block_key(bx: int, by: int, bz: int) -> np.uint64:
    """The key of block (bx, by, bz) (volume.pack); EMPTY -- refused and counted -- outside."""
    lo, hi = -KEY_OFFSET, KEY_OFFSET
    if lo <= bx < hi and lo <= by < hi and lo <= bz < hi:
        return (
            (np.uint64(bx + KEY_OFFSET) << SHIFT_X)
            | (np.uint64(by + KEY_OFFSET) << SHIFT_Y)
            | np.uint64(bz + KEY_OFFSET)
        )
    return EMPTY


@ss.device
def block_coords(key: np.uint64) -> tuple[np.int64, np.int64, np.int64]:
    """The block coordinate of a key (volume.unpack)."""
    bx = np.int64((key >> SHIFT_X) & MASK) - KEY_OFFSET
    by = np.int64((key >> SHIFT_Y) & MASK) - KEY_OFFSET
    bz = np.int64(key & MASK) - KEY_OFFSET
    return bx, by, bz


@ss.device
def dda_axis(q0: np.float32, q1: np.float32) -> tuple[int, int, np.float32, np.float32]:
    """One axis of the block walk from q0 to q1 (block units): cell, step, next crossing, delta.

    The crossings are parameters in [0, 1] of the segment; an axis the segment does not
    move along never crosses (BIG).
    """
    cell = int(math.floor(q0))
    dq = q1 - q0
    if dq > ZERO:
        return cell, 1, (np.float32(cell + 1) - q0) / dq, ONE / dq
    if dq < ZERO:
        return cell, -1, (np.float32(cell) - q0) / dq, -ONE / dq
    return cell, 0, BIG, ZERO


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=ALLOC_BLOCK,
        appends={"blocks": "nblocks"},
        tables={"keys": {"values": ["slots"], "failed": "nfail"}},
        requires=["c2w.size == 12"],
    )
)
def allocate(
    keys: ss.HashTable[np.uint64],
    slots: ss.HashValues[np.int32],
    nfail: ss.Counter,
    blocks: ss.AppendBuffer[np.uint64],
    nblocks: ss.Counter,
    depth: In2D[np.float32],
    c2w: In[np.float32],
    fx: np.float32,
    fy: np.float32,
    cx: np.float32,
    cy: np.float32,
    mu: np.float32,
    inv_block: np.float32,
    near: np.float32,
    max_depth: np.float32,
    max_cells: np.int32,
) -> None:
    px = thread.index_2d()
    v, u = px.row, px.col
    if v < depth.shape[0] and u < depth.shape[1]:
        d = depth[v, u]
        if d > ZERO and d <= max_depth:
            xn = (np.float32(u) - cx) / fx
            yn = (np.float32(v) - cy) / fy
            # The ray's world direction per unit of camera z (c2w is 3x4, row-major).
            dx = c2w[0] * xn + c2w[1] * yn + c2w[2]
            dy = c2w[4] * xn + c2w[5] * yn + c2w[6]
            dz = c2w[8] * xn + c2w[9] * yn + c2w[10]
            z0 = max(d - mu, near)
            z1 = d + mu
            bx, sx, tx, ex = dda_axis(
                (c2w[3] + dx * z0) * inv_block, (c2w[3] + dx * z1) * inv_block
            )
            by, sy, ty, ey = dda_axis(
                (c2w[7] + dy * z0) * inv_block, (c2w[7] + dy * z1) * inv_block
            )
            bz, sz, tz, ez = dda_axis(
                (c2w[11] + dz * z0) * inv_block, (c2w[11] + dz * z1) * inv_block
            )
            ended = False
            for _ in range(max_cells):
                key = block_key(bx, by, bz)
                s = keys.insert(key)  # valid only for the call that inserted the key
                if s.in_bounds(slots):
                    c = blocks.claim()  # the block's pool index: one fetch-add, unique
                    blocks[c] = key
                    slots[s] = np.int32(c.index) if c.in_bounds(blocks) else np.int32(-1)
                if min(tx, ty, tz) > ONE:  # the segment ends in this block
                    ended = True
                    break
                # The next block: across the nearest face (ties: x, then y, then z).
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
                # Params.max_cells bounds every segment, so this never runs; if it did, the
                # blocks past the bound would be counted as a failed insert, not lost.
                keys.insert(EMPTY)


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1,
        block=INTEGRATE_BLOCK,
        requires=[
            "w2c.size == 12",
            "blocks.size >= nblocks",
            "tsdf.shape[0] == 8",
            "weight.shape[0] == 8",
            "weight.shape[1] == tsdf.shape[1]",
            "tsdf.shape[1] >= nblocks * 64",
        ],
    )
)
def integrate(
    tsdf: DisjointSlice[np.float32, Columns],
    weight: DisjointSlice[np.float32, Columns],
    blocks: In[np.uint64],
    nblocks: np.int64,
    depth: In2D[np.float32],
    w2c: In[np.float32],
    fx: np.float32,
    fy: np.float32,
    cx: np.float32,
    cy: np.float32,
    voxel: np.float32,
    mu: np.float32,
    near: np.float32,
    max_depth: np.float32,
    max_weight: np.float32,
) -> None:
    col = thread.column()  # column b * 64 + y * 8 + x: voxels (x, y, 0..7) of pool block b
    b = col.index >> 6
    if b < nblocks:
        bx, by, bz = block_coords(blocks[b])
        xy = col.index & 63
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
                            w0 = weight[z, col]
                            w1 = w0 + ONE
                            tsdf[z, col] = (tsdf[z, col] * w0 + t) / w1
                            weight[z, col] = min(w1, max_weight)


@ss.device
def block_index(
    keys: In[np.uint64], slots: In[np.int32], nblocks: np.int64, bx: int, by: int, bz: int
) -> int:
    """The pool index of block (bx, by, bz) (a read-only table), -1 if it has none."""
    f = ss.hashing.find(keys, block_key(bx, by, bz))
    if f.in_bounds(slots):
        i = int(slots[f])
        if 0 <= i < nblocks:
            return i
    return -1


@ss.device
def trilinear(
    keys: In[np.uint64],
    slots: In[np.int32],
    tsdf: In2D[np.float32],
    weight: In2D[np.float32],
    nblocks: np.int64,
    gx: np.float32,
    gy: np.float32,
    gz: np.float32,
) -> tuple[np.float32, bool]:
    """The TSDF at (gx, gy, gz) in voxel-centre units, from its 8 voxels; valid if all seen."""
    x0, y0, z0 = int(math.floor(gx)), int(math.floor(gy)), int(math.floor(gz))
    fx, fy, fz = gx - np.float32(x0), gy - np.float32(y0), gz - np.float32(z0)
    acc = ZERO
    ok = True
    lbx, lby, lbz, i = NOWHERE, NOWHERE, NOWHERE, -1  # the block looked up last
    for corner in range(8):
        vx, vy, vz = x0 + (corner & 1), y0 + ((corner >> 1) & 1), z0 + (corner >> 2)
        if vx >> 3 != lbx or vy >> 3 != lby or vz >> 3 != lbz:
            lbx, lby, lbz = vx >> 3, vy >> 3, vz >> 3
            i = block_index(keys, slots, nblocks, lbx, lby, lbz)
        if i < 0:
            ok = False
        else:
            c = i * 64 + (vy & 7) * 8 + (vx & 7)
            ok = ok and bool(weight[vz & 7, c] > ZERO)
            wx = fx if corner & 1 else ONE - fx
            wy = fy if (corner >> 1) & 1 else ONE - fy
            wz = fz if corner >> 2 else ONE - fz
            acc += wx * wy * wz * tsdf[vz & 7, c]
    return acc, ok


@ss.device
def surface(
    keys: In[np.uint64],
    slots: In[np.int32],
    tsdf: In2D[np.float32],
    weight: In2D[np.float32],
    nblocks: np.int64,
    c2w: In[np.float32],
    dx: np.float32,
    dy: np.float32,
    dz: np.float32,
    inv_voxel: np.float32,
    za: np.float32,
    zb: np.float32,
    fa: np.float32,
    fb: np.float32,
) -> np.float32:
    """The camera z of the zero crossing between za (TSDF fa > 0) and zb (fb <= 0).

    With trilinear TSDF values at both ends (all their voxels observed): linear
    interpolation, then one secant step on the trilinear value there; else linear
    interpolation of the nearest-voxel values fa, fb.
    """
    ga, oka = trilinear(
        keys, slots, tsdf, weight, nblocks,
        (c2w[3] + dx * za) * inv_voxel - HALF,
        (c2w[7] + dy * za) * inv_voxel - HALF,
        (c2w[11] + dz * za) * inv_voxel - HALF,
    )  # fmt: skip
    gb, okb = trilinear(
        keys, slots, tsdf, weight, nblocks,
        (c2w[3] + dx * zb) * inv_voxel - HALF,
        (c2w[7] + dy * zb) * inv_voxel - HALF,
        (c2w[11] + dz * zb) * inv_voxel - HALF,
    )  # fmt: skip
    if not (oka and okb and ga > ZERO and gb <= ZERO):
        return za + (zb - za) * (fa / (fa - fb))
    zm = za + (zb - za) * (ga / (ga - gb))
    gm, okm = trilinear(
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


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=RAY_BLOCK,
        requires=[
            "c2w.size == 12",
            "slots.size == keys.size",
            "tsdf.shape[0] == 8",
            "weight.shape[0] == 8",
            "weight.shape[1] == tsdf.shape[1]",
            "tsdf.shape[1] >= nblocks * 64",
        ],
    )
)
def raycast(
    out: DisjointSlice2D[np.float32],
    keys: In[np.uint64],
    slots: In[np.int32],
    tsdf: In2D[np.float32],
    weight: In2D[np.float32],
    nblocks: np.int64,
    c2w: In[np.float32],
    fx: np.float32,
    fy: np.float32,
    cx: np.float32,
    cy: np.float32,
    voxel: np.float32,
    mu: np.float32,
    near: np.float32,
    max_depth: np.float32,
) -> None:
    px = thread.index_2d()
    if px.row >= out.shape[0] or px.col >= out.shape[1]:
        return
    xn = (np.float32(px.col) - cx) / fx
    yn = (np.float32(px.row) - cy) / fy
    dx = c2w[0] * xn + c2w[1] * yn + c2w[2]
    dy = c2w[4] * xn + c2w[5] * yn + c2w[6]
    dz = c2w[8] * xn + c2w[9] * yn + c2w[10]
    inv_voxel = ONE / voxel
    block = voxel * np.float32(8)
    ox, oy, oz = c2w[3], c2w[7], c2w[11]
    nudge = np.float32(0.01) * voxel  # past a block's exit face, into the next block
    min_step = HALF * voxel
    free_step = HALF * mu  # past unobserved voxels: never across the + half of a band
    result = ZERO
    z = near
    prev_z = near
    prev_f = ZERO
    prev_seen = False
    lbx, lby, lbz, i = NOWHERE, NOWHERE, NOWHERE, -1  # the block looked up last
    lo, hi = -KEY_OFFSET, KEY_OFFSET
    while z < max_depth:
        vx = int(math.floor((ox + dx * z) * inv_voxel))
        vy = int(math.floor((oy + dy * z) * inv_voxel))
        vz = int(math.floor((oz + dz * z) * inv_voxel))
        if vx >> 3 != lbx or vy >> 3 != lby or vz >> 3 != lbz:
            # A new block: its pool index (block_index, inlined: on Numba's simulator every
            # helper call takes a lock that all threads of a block contend for, and this
            # loop runs most; on the GPU NVVM inlines the helper anyway).
            lbx, lby, lbz = vx >> 3, vy >> 3, vz >> 3
            key = EMPTY
            if lo <= lbx < hi and lo <= lby < hi and lo <= lbz < hi:
                key = (
                    (np.uint64(lbx + KEY_OFFSET) << SHIFT_X)
                    | (np.uint64(lby + KEY_OFFSET) << SHIFT_Y)
                    | np.uint64(lbz + KEY_OFFSET)
                )
            i = -1
            found = ss.hashing.find(keys, key)
            if found.in_bounds(slots):
                i = int(slots[found])
                if not 0 <= i < nblocks:
                    i = -1
        if i < 0:  # no block here: nothing was observed in it; go on from its far face
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
        seen = bool(weight[vz & 7, c] > ZERO)
        if seen and f <= ZERO:
            if prev_seen and prev_f > ZERO:  # a zero crossing from the front: place it
                result = surface(
                    keys, slots, tsdf, weight, nblocks, c2w, dx, dy, dz, inv_voxel,
                    prev_z, z, prev_f, f,
                )  # fmt: skip
            break  # a surface, or the back of one (no crossing from the front): stop
        step = free_step
        if seen:
            step = max(STEP * f * mu, min_step)
        prev_z, prev_f, prev_seen = z, f, seen
        z += step
    out[px] = result
