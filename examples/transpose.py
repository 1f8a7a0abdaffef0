"""Matrix transpose ``out = a.T`` through a shared tile (Tier 1: no unsafe code).

The launch runs over the *output*: block ``(bx, by)`` of 32 x 8 threads owns
the 32 x 32 output tile at rows ``32 by``, columns ``32 bx``
(``thread.tile_2d_strided(out, 4, 1)``: thread ``(ty, tx)`` owns rows
``ty, ty + 8, ty + 16, ty + 24`` of column ``tx``). It fills a shared tile
from the input tile at rows ``32 bx``, columns ``32 by`` -- a warp reads 32
consecutive floats of one input row (coalesced) -- then, after
``simtsafe.block.sync()``, each thread reads its four values down a column of
the shared tile and stores them along output rows (coalesced again).

Bank conflicts: reading a column of a plain 32 x 32 float tile hits one bank
32 times. The classic fix pads each row to 33 floats, but a padding column
is an element ``thread.block_stride`` would also hand out (and fill from past
the input tile). Instead the tile's columns are XOR-swizzled: element
``(r, c)`` holds input column ``c ^ r``. A warp still fills one row with 32
distinct columns (a permutation of one 128-byte segment: coalesced), and the
transposed read ``tile[tx, i ^ tx]`` touches 32 distinct banks. Same
conflict-free traffic as the padded tile, no wasted element.
``coop_raw.transpose_padded_raw`` is the padded version, for comparison.

Edge tiles (shapes not a multiple of 32): the fill reads only inside the
input, and the output tile drops what lies past the output's edge (checked
once per tile; a full tile has no per-element check).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice2D, In2D, thread

TDIM = 32  # tile edge
TROWS = 8  # thread rows: block (32, 8)
PER_THREAD = TDIM // TROWS  # 4 elements per thread (a module constant: a static tile size)


@ss.kernel(
    contract=ss.LaunchContract(
        domain=2,
        block=(TDIM, TROWS, 1),
        requires=["out.shape[0] == a.shape[1]", "out.shape[1] == a.shape[0]"],
    )
)
def transpose(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    in_r0 = cuda.blockIdx.x * TDIM  # the input tile this block transposes
    in_c0 = cuda.blockIdx.y * TDIM
    rows = a.shape[0]
    cols = a.shape[1]
    tile = ss.shared.tile((TDIM, TDIM), np.float32)
    full = in_r0 + TDIM <= rows and in_c0 + TDIM <= cols  # block-uniform
    for w in thread.block_stride(tile):  # this thread's (r, c): r = ty + 8 k, c = tx
        gr = in_r0 + w.row
        gc = in_c0 + (w.col ^ w.row)  # swizzle: element (r, c) holds input column c ^ r
        if full or (gr < rows and gc < cols):
            tile[w] = a[gr, gc]
    ss.block.sync()
    t = thread.tile_2d_strided(out, PER_THREAD, 1)  # rows 32 by + ty + 8 k, column 32 bx + tx
    for k in range(PER_THREAD):
        i = ty + TROWS * k
        t[k, 0] = tile[tx, i ^ tx]  # input (in_r0 + tx, in_c0 + i)


def grid_for(out_shape: tuple[int, int]) -> tuple[int, int]:
    """One block per 32 x 32 output tile: (column tiles, row tiles)."""
    return (math.ceil(out_shape[1] / TDIM), math.ceil(out_shape[0] / TDIM))


def run(rows: int = 1_001, cols: int = 777) -> bool:
    """Transpose a random rows x cols matrix; compare with numpy (exact)."""
    a = np.random.default_rng(13).standard_normal((rows, cols)).astype(np.float32)
    d_out = cuda.to_device(np.full((cols, rows), np.nan, np.float32))
    launch = transpose.prepare(grid=grid_for((cols, rows)), block=(TDIM, TROWS, 1))
    launch(d_out, cuda.to_device(a))
    return bool(np.array_equal(d_out.copy_to_host(), a.T))


if __name__ == "__main__":
    print("transpose matches numpy:", run())
