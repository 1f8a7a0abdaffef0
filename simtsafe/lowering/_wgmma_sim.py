"""Simulator twins of ``simtsafe.wgmma`` and of swizzled tiles (``NUMBA_ENABLE_CUDASIM=1``).

A swizzled tile is a ``SimSwizzledTile``: its elements are kept as rows (the
layout is the device's business), and every operation but ``fill_async`` and
the ``wgmma`` calls refuses it, with the compiled form's text. Each thread
computes its own accumulator elements (``_swizzlerule.acc_position``) from the
tiles, in float64, rounded once to float32 per call (the tensor cores' order
of additions is not specified: the device may differ in the last bits).

What the simulator does not model: ``mma_async`` computes at the call, as if
its group were done at once (the compiled-form phase check is what refuses a
tile refilled while a group still reads it); the reads are not recorded for
``simtsafe.sim.check``'s race finder (as ``mma``'s fragment loads); the
warpgroup's convergence is not checked (the compiled form's uniformity check
is); and the contract's exact block is not required (the block shape is
checked against the tile at each call instead).
"""

from __future__ import annotations

from typing import Any, NoReturn, final

import numpy as np

from .._errors import SafetyError
from . import _simrt
from ._swizzlerule import GROUP_ROWS, GROUP_THREADS, WIDTHS, acc_position, groups_refusal
from ._tiles_sim import SimSwizzledTile

__all__ = ["builtins"]


def _reject(message: str) -> NoReturn:
    raise SafetyError("simtsafe: " + message, rule="typing")


@final
class SimPendingAcc:
    """An accumulator whose groups may be in flight (here: already computed)."""

    __slots__ = ("values",)
    _helpers_cannot_return = False

    def __init__(self, values: tuple[Any, ...]) -> None:
        self.values = values

    def __repr__(self) -> str:
        return f"WgmmaPendingAcc[64x{2 * len(self.values)}]"


@final
class SimWgmmaOutTile:
    """The 64 x BN rectangle of a 2D output one warpgroup owns."""

    __slots__ = ("_arr", "_origin", "_width")
    _helpers_cannot_return = True

    def __init__(self, arr: Any, origin: tuple[int, int], width: int) -> None:
        self._arr = arr
        self._origin = origin
        self._width = width

    def __repr__(self) -> str:
        return f"WgmmaOutTile[{self._arr.dtype}, warpgroup 64x{self._width}]"


def _tid() -> tuple[int, tuple[int, int, int]]:
    _, (tx, ty, tz), (nx, ny, nz), _ = _simrt.geometry()
    return tx + nx * (ty + ny * tz), (nx, ny, nz)


def _width(acc: Any) -> int | None:
    if isinstance(acc, SimPendingAcc):
        return 2 * len(acc.values)
    if isinstance(acc, tuple) and 2 * len(acc) in WIDTHS:
        return 2 * len(acc)
    return None


def zeros(n: Any) -> tuple[Any, ...]:
    if not isinstance(n, int | np.integer) or int(n) not in WIDTHS:
        _reject(f"wgmma.zeros(n): n is the accumulator's width, one of {WIDTHS}; got {n!r}")
    return (np.float32(0),) * (int(n) // 2)


def _product(api: str, ta: Any, tb: Any, acc: Any) -> tuple[Any, ...]:
    for name, t in (("ta", ta), ("tb", tb)):
        if not isinstance(t, SimSwizzledTile):
            _reject(
                f"{api}(ta, tb, acc): {name} is a swizzled shared tile "
                f"(shared.tile(shape, ss.bfloat16, swizzle=128)); got {t!r}"
            )
    if ta._arr.dtype != tb._arr.dtype:
        _reject(
            f"{api}(ta, tb, acc): ta and tb hold the same 16-bit type (ss.bfloat16 or "
            f"np.float16); got {ta!r}, {tb!r}"
        )
    (m, k), (k2, n) = ta._shape, tb._shape
    if k != k2 or m % GROUP_ROWS or n not in WIDTHS:
        _reject(
            f"{api}(ta, tb, acc): ta is M x K (M a multiple of 64), tb is K x N with the "
            f"same K and N one of {WIDTHS}; got {ta!r} and {tb!r}"
        )
    if _width(acc) != n:
        _reject(
            f"{api}(ta, tb, acc): acc is the thread's part of a 64 x {n} accumulator, a "
            f"tuple of {n // 2} float32 (wgmma.zeros({n}), or a wgmma result); got {acc!r}"
        )
    tid, block = _tid()
    refusal = groups_refusal(api, block, m)
    if refusal is not None:
        _reject(refusal)
    values = acc.values if isinstance(acc, SimPendingAcc) else acc
    g = tid // GROUP_THREADS
    rows, cols = zip(*(acc_position(tid, i) for i in range(n // 2)), strict=True)
    a = ta._arr[[GROUP_ROWS * g + r for r in rows], :].astype(np.float64)
    b = tb._arr[:, list(cols)].astype(np.float64)
    dots = (a * b.T).sum(axis=1)
    return tuple(np.float32(np.float64(v) + d) for v, d in zip(values, dots, strict=True))


def mma(ta: Any, tb: Any, acc: Any) -> tuple[Any, ...]:
    return _product("wgmma.mma", ta, tb, acc)


def mma_async(ta: Any, tb: Any, acc: Any) -> SimPendingAcc:
    return SimPendingAcc(_product("wgmma.mma_async", ta, tb, acc))


def wait(acc: Any, n: Any) -> Any:
    if _width(acc) is None:
        _reject(
            "wgmma.wait(acc, n) waits for the groups of an accumulator in flight (the result "
            f"of wgmma.mma_async); got {acc!r}"
        )
    if not isinstance(n, int | np.integer) or not 0 <= int(n) <= 7:
        _reject(
            f"wgmma.wait(acc, n): n is how many of the newest groups may stay in flight, "
            f"0 .. 7; got {n!r}"
        )
    if isinstance(acc, SimPendingAcc):
        return acc.values if int(n) == 0 else acc
    return acc


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_wgmma_*`` names on the simulator."""
    from ._sim import SENTINEL, SimDisjointSlice, store_element

    def out_tile(out: Any, bm: Any, bn: Any) -> SimWgmmaOutTile:
        if not isinstance(out, SimDisjointSlice) or out._space != "Index2D":
            _reject(
                "wgmma.out_tile() takes a DisjointSlice2D output (of a 2D launch); got "
                f"{type(out).__name__}"
            )
        if not all(isinstance(v, int | np.integer) for v in (bm, bn)):
            _reject(
                "wgmma.out_tile(out, BM, BN): BM must be a compile-time int (a literal or a "
                f"module constant); got {(bm, bn)!r}"
            )
        BM, BN = int(bm), int(bn)  # noqa: N806 - the GEMM's names
        if not (0 < BM <= 4096 and BM % GROUP_ROWS == 0 and BN in WIDTHS):
            _reject(
                f"wgmma.out_tile(out, BM, BN): a warpgroup owns 64 rows of the block's BM x BN "
                f"tile (BM a multiple of 64, at most 4096; BN one of {WIDTHS}); got BM={BM}, "
                f"BN={BN}"
            )
        (bx, by, _), _, _, (_, _, gz) = _simrt.geometry()
        tid, _ = _tid()
        g = tid // GROUP_THREADS
        origin = (by * BM + g * GROUP_ROWS, bx * BN)
        if g >= BM // GROUP_ROWS or gz != 1:
            if gz != 1 and proven_domain == 2:
                raise AssertionError("simtsafe: a 2D launch was proven but the launch breaks it")
            origin = (SENTINEL, SENTINEL)
        return SimWgmmaOutTile(out._arr, origin, BN)

    def store(o: Any, acc: Any) -> None:
        if not isinstance(o, SimWgmmaOutTile):
            _reject(f"wgmma.store(o, acc) writes through o = wgmma.out_tile(...); got {o!r}")
        if not isinstance(acc, tuple) or 2 * len(acc) != o._width:
            _reject(
                f"wgmma.store(o, acc): acc is the thread's part of a 64 x {o._width} "
                f"accumulator (a tuple of {o._width // 2} float32); got {acc!r}"
            )
        tid, _ = _tid()
        rows, cols = o._arr.shape
        for i, v in enumerate(acc):
            r, c = acc_position(tid, i)
            gr, gc = o._origin[0] + r, o._origin[1] + c
            if 0 <= gr < rows and 0 <= gc < cols:
                store_element(o._arr, (gr, gc), np.float32(v))

    return {
        "__ss_wgmma_zeros": zeros,
        "__ss_wgmma_mma": mma,
        "__ss_wgmma_mma_async": mma_async,
        "__ss_wgmma_wait": wait,
        "__ss_wgmma_out_tile": out_tile,
        "__ss_wgmma_store": store,
    }
