"""Tensor cores at warpgroup scale (sm_90): ``wgmma`` from swizzled shared tiles.

A *warpgroup* is four consecutive warps (128 threads, the linear thread
number // 128). One ``wgmma.mma(ta, tb, acc)`` has each warpgroup ``g``
multiply rows ``64g .. 64g + 63`` of the shared tile ``ta`` (M x K) by the
shared tile ``tb`` (K x N) and add the product to its 64 x N fp32
accumulator, of which each thread holds ``N / 2`` elements -- by
``wgmma.mma_async.m64n{N}k16`` on the tensor cores, one per 16 columns of K,
bf16 or fp16 inputs (docs/tensor_cores.md):

* ``ta = shared.tile((M, K), ss.bfloat16, swizzle=128)``,
  ``tb = shared.tile((K, N), ss.bfloat16, swizzle=128)`` -- tiles in the
  128-byte swizzled layout the tensor cores read (K and N multiples of 64,
  M of 64; N at most 256), filled by ``shared.fill_async`` only;
* ``acc = wgmma.zeros(N)`` -- a zero accumulator (a tuple of ``N / 2`` float32);
* ``acc = wgmma.mma(ta, tb, acc)`` -- ``acc + ta[64g : 64g + 64, :] @ tb``,
  finished (the tiles' reads too) when the call returns;
* ``acc = wgmma.mma_async(ta, tb, acc)`` -- the same product, issued as one
  *group* and left in flight: ``acc`` is then a ``PendingAcc`` that only
  ``mma_async``, ``mma`` and ``wait`` take, and the tiles count as read until
  the thread waits for the group;
* ``acc = wgmma.wait(acc, n)`` -- wait until at most ``n`` of the newest
  groups are in flight (``n`` a compile-time int, 0 .. 7); ``wait(acc, 0)``
  gives the accumulator back;
* ``o = wgmma.out_tile(out, BM, BN)`` -- the 64 x BN rectangle of the 2D
  output that this thread's warpgroup owns: block ``(bx, by)`` owns
  ``out[by*BM : +BM, bx*BN : +BN]``, warpgroup ``g`` its rows ``64g ..``;
* ``wgmma.store(o, acc)`` -- write the thread's ``BN / 2`` elements (element
  ``i`` at row ``16 (w % 4) + lane // 4 + 8 ((i // 2) % 2)``, column
  ``8 (i // 4) + 2 (lane % 4) + i % 2`` of the rectangle, ``w`` the thread's
  warp), each bounds-checked against ``out``.

``mma`` and ``mma_async`` read the tiles in their read phase (after the wait
and the barrier that end their fill); ``mma`` has finished reading when it
returns, ``mma_async``'s group is reading until the ``wait`` that covers it: a
tile refilled before that wait and a barrier is refused (the compiled-form
phase check). They need every thread of the block
(block-uniform control flow: the compiled-form check refuses it under a
thread-dependent branch) and the contract's exact block, a whole number of
warpgroups, at most ``M / 64``. It compiles for sm_90 only (``wgmma`` is an
sm_90a instruction).
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar, final, overload

import numpy as np

from ._collective import host_call, kernel_api
from ._coopviews import SharedTile
from ._views import DisjointSlice2D, _KernelOnly

#: The kernel API (``Acc``, ``PendingAcc``, ``AnyAcc`` and ``OutTile`` are annotations only).
__all__ = ["mma", "mma_async", "out_tile", "store", "wait", "zeros"]

T = TypeVar("T", bound=np.generic)

#: A thread's part of a 64 x N fp32 accumulator (N / 2 float32).
Acc = tuple[np.float32, ...]


@final
class PendingAcc(_KernelOnly):
    """An accumulator whose groups may be in flight (``mma_async``): ``wait`` gives it back."""

    __slots__ = ()


#: What a variable that holds first a zero accumulator, then ``mma_async`` results is:
#: ``acc: ss.wgmma.AnyAcc = ss.wgmma.zeros(N)`` (the compiler joins the two as pending).
AnyAcc = Acc | PendingAcc


@final
class OutTile(_KernelOnly, Generic[T]):
    """The rows of a 2D output one warpgroup owns (``wgmma.out_tile``); written by ``store``."""

    __slots__ = ()


@kernel_api("wgmma.zeros")
def zeros(n: int) -> Acc:
    """A zero accumulator of a 64 x ``n`` product (``n`` 64, 128, 192 or 256)."""
    host_call("wgmma.zeros")


@kernel_api("wgmma.mma")
def mma(ta: SharedTile[T, Any], tb: SharedTile[T, Any], acc: AnyAcc) -> Acc:
    """``acc + ta[64g : 64g + 64, :] @ tb`` for the calling thread's warpgroup ``g``."""
    host_call("wgmma.mma")


@kernel_api("wgmma.mma_async")
def mma_async(ta: SharedTile[T, Any], tb: SharedTile[T, Any], acc: AnyAcc) -> PendingAcc:
    """Issue ``acc + ta[64g : 64g + 64, :] @ tb`` as one group, left in flight."""
    host_call("wgmma.mma_async")


@overload
def wait(acc: AnyAcc, n: Literal[0]) -> Acc: ...
@overload
def wait(acc: AnyAcc, n: int) -> AnyAcc: ...
@kernel_api("wgmma.wait")
def wait(acc: AnyAcc, n: int) -> AnyAcc:
    """Wait until at most ``n`` of the newest groups are in flight (``n == 0``: the tuple)."""
    host_call("wgmma.wait")


@kernel_api("wgmma.out_tile")
def out_tile(out: DisjointSlice2D[T], bm: int, bn: int) -> OutTile[T]:
    """This warpgroup's 64 x ``bn`` rectangle of the block's ``bm x bn`` tile of ``out``."""
    host_call("wgmma.out_tile")


@kernel_api("wgmma.store")
def store(o: OutTile[T], acc: Acc) -> None:
    """Write the thread's elements of its warpgroup's accumulator."""
    host_call("wgmma.store")
