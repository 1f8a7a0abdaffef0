"""``simtsafe.lib.inclusive_scan``: the checked host side of the single-pass scan.

The kernels (``_scan_kernels``) are made on the first call: decorating them
takes most of a second, which ``import simtsafe`` should not pay.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from .._errors import ArgumentTypeError
from ..host._contract import cover
from ..host._limits import device_limits
from ._common import ScratchCache, array_arg, check_device, check_disjoint, check_same_size, retire
from ._common import launch_stream as _launch_stream

__all__ = ["inclusive_scan"]

_FN = "inclusive_scan"
_DTYPES = (np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.float32))
_HINT = (
    "int64 and float64 are not built (a tile's sum and its flag must fit one 64-bit status "
    "word). Convert it, e.g. x.astype(np.float32), or scan the int32 values"
)
_SCRATCH = ScratchCache()
_MIN_TILES = 64  # the smallest status array: 64 tiles


def _kernels() -> ModuleType:
    from . import _scan_kernels  # decorated once, on first use

    return _scan_kernels


def inclusive_scan(out: Any, x: Any, *, stream: Any = None) -> None:
    """Inclusive prefix sum: ``out[i] = x[0] + x[1] + ... + x[i]``, in one pass over ``x``.

    A single-pass scan with decoupled look-back (Merrill & Garland): each
    block of 256 threads copies a tile of 8192 elements into shared memory
    (``cp.async``), scans it and finds the sum of the tiles before it from
    the status words its predecessors publish, so ``x`` is read once and
    ``out`` written once. (On a GPU older than compute capability 8.0, which
    has no ``cp.async``, blocks scan tiles of 4096 elements held in registers.) Integer sums wrap like
    ``numpy.cumsum(x, dtype=x.dtype)``, exactly. float32 sums are added in
    tile and warp order, not left to right, so they differ from
    ``numpy.cumsum`` in rounding; and a tile adds whatever its predecessors
    have published when it looks back (one inclusive prefix, or several
    tiles' sums down to one), so the rounding can also differ between runs.

    Args:
        out: 1-D C-contiguous device array of ``x``'s dtype and size, written.
        x: 1-D C-contiguous device array of int32, uint32 or float32
            (Numba, CuPy, PyTorch or any ``__cuda_array_interface__`` array).
        stream: the stream to run on (anything ``kernel.prepare`` takes). Default:
            what a kernel launch on these arrays picks -- CuPy's or PyTorch's
            current stream when both arrays are theirs, else the default stream.

    Raises:
        ArgumentTypeError: a host array, another dtype, rank or layout, or
            ``out`` read-only or of another dtype than ``x``.
        RequiresViolation: ``out`` and ``x`` differ in size.
        AliasingError: ``out`` overlaps ``x`` (the scan is not in place).
        ContextMismatch: an array lives on another device than the current one.

    Nothing is enqueued when a check fails. The launch is asynchronous like
    any kernel launch: read ``out`` with ``simtsafe.to_host(out)`` or after
    ``simtsafe.synchronize()``. The scratch (a status word per tile and a
    counter) belongs to the library, one per device and stream, reset on the
    stream before each scan.
    """
    xa = array_arg(_FN, "x", x, _DTYPES, hint=_HINT)
    oa = array_arg(_FN, "out", out, _DTYPES, output=True, hint=_HINT)
    if oa.dtype != xa.dtype:
        raise ArgumentTypeError(
            f"simtsafe.lib.{_FN}: output 'out' has dtype {oa.dtype}, but x has {xa.dtype}; the "
            f"scan writes x's dtype: allocate out as {xa.dtype}",
            kernel=_FN,
            argument="out",
            actual=str(oa.dtype),
            limit=str(xa.dtype),
        )
    check_same_size(_FN, oa, xa)
    check_disjoint(_FN, oa, [xa])
    device = check_device(_FN, [oa, xa])
    n = xa.size
    if n == 0:
        return
    sk = _kernels()
    if device_limits().compute_capability >= (8, 0):
        kernel, block, tile, shared = sk.SCAN[xa.dtype], sk.BLOCK, sk.TILE, sk.SLOT_BYTES
    else:  # no cp.async: the schedule that keeps the tile in registers
        kernel, block, tile, shared = sk.scan_before_sm80(xa.dtype)
    tiles = -(-n // tile)
    s = _launch_stream(stream, [out, x])
    scratch = _SCRATCH.get(device, s)
    with scratch.lock:  # reset and scan enqueued together (see Scratch)
        status = scratch.arrays.get("status")
        if status is None or status.size < tiles:
            from numba import cuda

            if status is not None:
                retire(s)  # the outgrown array may still be read by a scan in flight
            status = scratch.arrays["status"] = cuda.device_array(
                max(_MIN_TILES, 1 << (tiles - 1).bit_length()), np.uint64
            )
            scratch.arrays.setdefault("ctl", cuda.device_array(1, np.int32))
        ctl = scratch.arrays["ctl"]
        reset_grid = cover(tiles, sk.BLOCK)
        reset = scratch.launch(
            ("reset", reset_grid),
            lambda: sk.reset_scratch.prepare(grid=reset_grid, block=sk.BLOCK, stream=s),
        )
        scan = scratch.launch(
            ("scan", xa.dtype, tiles),
            lambda: kernel.prepare(grid=tiles, block=block, shared_mem=shared, stream=s),
        )
        reset(status, ctl, np.int64(tiles))
        scan(out, x, status, ctl)
