"""Tensor cores in Tier 1: warp-level matrix multiply-accumulate on register fragments.

One ``mma.mma(a, b, acc)`` is one ``mma.sync.aligned.m16n8k16.row.col.f32``
(bf16 or f16 inputs, fp32 accumulation): the 32 lanes of a warp together
multiply a 16 x 16 A fragment by a 16 x 8 B fragment and add a 16 x 8 fp32
accumulator, each lane holding its part of each (the PTX ISA's fragment
layouts; docs/tensor_cores.md).

* ``a = mma.load_a(tile, (row0, k0))`` -- the 16 x 16 block of a 2D shared
  tile (A, row-major: rows m, columns k) at ``(row0, k0)``, by ``ldmatrix.x4``;
* ``b = mma.load_b(tile, (k0, col0))`` -- the 16 x 8 block of a k-major tile
  (B: rows k, columns n) at ``(k0, col0)``, by ``ldmatrix.x2.trans``;
* ``b0, b1 = mma.load_b2(tile, (k0, col0))`` -- the B fragments at ``(k0, col0)``
  and ``(k0, col0 + 8)`` by one ``ldmatrix.x4.trans`` (half the loads of two
  ``load_b``);
* ``acc = mma.zeros()`` -- a zero accumulator: a tuple of 4 float32, lane's
  ``acc[j]`` being row ``lane // 4 + 8 * (j // 2)``, column ``2 * (lane % 4) + j % 2``;
* ``acc = mma.mma(a, b, acc)`` -- ``acc + a @ b``;
* ``o = mma.out_tile(out, BM, BN, WM, WN)`` -- the ``WM x WN`` rectangle of
  the 2D output ``out`` that this thread's warp owns: block ``(bx, by)`` owns
  ``out[by*BM : +BM, bx*BN : +BN]``, warp ``w`` of the block (linear thread
  number // 32) the sub-rectangle ``(w // (BN//WN), w % (BN//WN))``;
* ``mma.store(o, mi, ni, acc)`` -- write the lane's 4 elements of the 16 x 8
  accumulator ``(mi, ni)`` of the warp's rectangle (rows ``16*mi ...``,
  columns ``8*ni ...``), each bounds-checked against ``out``.

Loads read the tile in its read phase (after the barrier that ends its fill;
the decorator's phase analysis counts them as reads); ``load_a``, ``load_b``,
``load_b2`` and ``mma`` need every lane of the warp (warp-uniform control flow: the
compiled-form uniformity check refuses them under a thread-dependent branch).
An 8-element row run outside the tile's logical extents (or not starting at
a multiple of 8 columns) reads 0; nothing outside the tile is ever read.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, final

import numpy as np

from ._collective import host_call, kernel_api
from ._coopviews import SharedTile
from ._views import DisjointSlice2D, _KernelOnly

#: The kernel API (the value types ``Fragment``, ``OutTile`` are annotations only).
__all__ = ["load_a", "load_b", "load_b2", "mma", "out_tile", "store", "zeros"]

T = TypeVar("T", bound=np.generic)

#: A lane's part of the 16 x 8 fp32 accumulator.
Acc = tuple[np.float32, np.float32, np.float32, np.float32]


@final
class Fragment(_KernelOnly, Generic[T]):
    """A lane's registers of an A or B operand of ``mma`` (made by ``load_a``/``load_b``)."""

    __slots__ = ()


@final
class OutTile(_KernelOnly, Generic[T]):
    """The rectangle of a 2D output one warp owns (``mma.out_tile``); written by ``store``."""

    __slots__ = ()


@kernel_api("mma.load_a")
def load_a(tile: SharedTile[T, Any], origin: tuple[int, int]) -> Fragment[T]:
    """The A fragment of rows ``row0 .. row0+15``, columns ``k0 .. k0+15`` of ``tile``
    (bf16 or float16, rows of A), ``origin = (row0, k0)``."""
    host_call("mma.load_a")


@kernel_api("mma.load_b")
def load_b(tile: SharedTile[T, Any], origin: tuple[int, int]) -> Fragment[T]:
    """The B fragment of rows (k) ``k0 .. k0+15``, columns ``col0 .. col0+7`` of the
    k-major ``tile``, ``origin = (k0, col0)``."""
    host_call("mma.load_b")


@kernel_api("mma.load_b2")
def load_b2(tile: SharedTile[T, Any], origin: tuple[int, int]) -> tuple[Fragment[T], Fragment[T]]:
    """The B fragments of rows (k) ``k0 .. k0+15`` and columns ``col0 .. col0+7``, then
    ``col0+8 .. col0+15``, of the k-major ``tile``, ``origin = (k0, col0)``: what
    ``(load_b(tile, (k0, col0)), load_b(tile, (k0, col0 + 8)))`` gives, by one
    ``ldmatrix.x4.trans``."""
    host_call("mma.load_b2")


@kernel_api("mma.zeros")
def zeros() -> Acc:
    """A zero accumulator (the lane's 4 fp32 elements)."""
    host_call("mma.zeros")


@kernel_api("mma.mma")
def mma(a: Fragment[T], b: Fragment[T], acc: Acc) -> Acc:
    """``acc + a @ b`` over the warp (one ``mma.sync.m16n8k16``), fp32 accumulation."""
    host_call("mma.mma")


@kernel_api("mma.out_tile")
def out_tile(out: DisjointSlice2D[T], bm: int, bn: int, wm: int, wn: int) -> OutTile[T]:
    """This warp's ``wm x wn`` rectangle of the block's ``bm x bn`` tile of ``out``."""
    host_call("mma.out_tile")


@kernel_api("mma.store")
def store(o: OutTile[T], mi: int, ni: int, acc: Acc) -> None:
    """Write the lane's 4 elements of the warp's 16 x 8 accumulator ``(mi, ni)``."""
    host_call("mma.store")
