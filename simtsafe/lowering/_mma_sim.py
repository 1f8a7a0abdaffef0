"""Simulator twins of ``simtsafe.mma`` (``NUMBA_ENABLE_CUDASIM=1``).

The warp's lanes meet at ``_simrt.warp_exchange`` (one exchange per execution of
the call, as the warp collectives do: ``_coop_sim``; it orders no memory) and each computes
its part with the PTX ISA's fragment layouts (``lowering._mma``):

* ``load_a``/``load_b``/``load_b2`` -- every lane posts its origin; lane ``lane`` takes the
  halves that ``ldmatrix`` gives it from the run *the supplying lane*
  addressed (the tile's first 8 elements where that run is not valid), and
  zeroes the halves whose run is not valid by its own origin: the device's
  exact behaviour, also when lanes pass different origins;
* ``mma`` -- every lane posts its fragments and accumulator; the warp's
  16 x 16, 16 x 8 and 16 x 8 matrices are rebuilt, ``A @ B + C`` computed in
  float64 and rounded once to float32 (the tensor core's internal order is
  not specified: the device may differ in the last bits);
* a block whose thread count is not a multiple of 32: loads give zeros and
  ``mma`` returns its accumulator, as on the device.

The same refusals as the compiled form, with the same texts.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import numpy as np

from .._errors import SafetyError
from . import _simrt

__all__ = ["builtins"]

_F16 = np.dtype(np.float16)


def _reject(message: str) -> NoReturn:
    raise SafetyError("simtsafe: " + message, rule="typing")


class SimFragment:
    """A lane's A (8 elements) or B (4 elements) operand, as exact float32 values."""

    __slots__ = ("elem", "operand", "values")
    _helpers_cannot_return = False

    def __init__(self, operand: str, elem: str, values: list[Any]) -> None:
        self.operand = operand
        self.elem = elem
        self.values = values

    def __repr__(self) -> str:
        return f"MmaFragment[{self.operand.upper()}, {self.elem}]"


class SimMmaOutTile:
    """The rectangle of a 2D output one warp owns; ``store`` writes a lane's elements."""

    __slots__ = ("_arr", "_origin", "_tile")
    _helpers_cannot_return = True

    def __init__(self, arr: Any, origin: tuple[int, int], tile: tuple[int, int]) -> None:
        self._arr = arr
        self._origin = origin
        self._tile = tile

    def __repr__(self) -> str:
        return f"MmaOutTile[{self._arr.dtype}, warp {self._tile[0]}x{self._tile[1]}]"


def _exchange(value: Any, api: str) -> tuple[Any, Any, list[Any]]:
    """(place, exchange, every present lane's ``value``): the lanes of the call at the
    user's instruction meet (two calls on one line are two sites, as on the GPU), and, as
    for the warp collectives, the meeting orders no memory: ``ldmatrix`` and ``mma.sync``
    exchange registers, only a ``syncwarp`` or a barrier orders the lanes' accesses."""
    from ._coop_sim import _exchange_warp  # imports the simulator runtime: bound late

    frame = sys._getframe(2)
    site = (f"<simtsafe mma> {frame.f_code.co_filename} @{frame.f_lasti}", frame.f_lineno)
    return _exchange_warp(value, f"mma.{api}", site)


def _elem_of(tile: Any, api: str) -> str:
    from ._sim import _BF16
    from ._swizzlerule import only_fill_and_wgmma
    from ._tiles_sim import SimSharedTile, SimSwizzledTile

    if isinstance(tile, SimSwizzledTile):
        _reject(only_fill_and_wgmma(tile, f"mma.{api}"))
    if not isinstance(tile, SimSharedTile):
        _reject(f"mma.{api} reads a fragment from a 2D shared tile; got {type(tile).__name__}")
    dtype = tile._arr.dtype
    elem = "bf16" if dtype == _BF16 else "f16" if dtype == _F16 else None
    if elem is None or len(tile._shape) != 2:
        _reject(
            f"mma.{api} reads a 2D shared tile of ss.bfloat16 or np.float16 with a static "
            f"shape; got {tile!r}"
        )
    cols, pitch = tile._shape[1], tile._arr.shape[1]
    if cols < 8 or (2 * pitch) % 16:
        _reject(
            f"mma.{api} reads rows of 8 elements (16 bytes, 16-byte aligned): the tile needs at "
            f"least 8 columns and a row pitch (columns + pad) that is a multiple of 8 elements; "
            f"got {tile!r} (pitch {pitch}). Pad the rows, e.g. pad=8"
        )
    return elem


def _origin(idx: Any, api: str, what: str) -> tuple[int, int]:
    ok = isinstance(idx, tuple) and len(idx) == 2
    if not ok or not all(isinstance(v, int | np.integer) for v in idx):
        _reject(f"mma.{api} takes the fragment's origin {what} as a pair of ints; got {idx!r}")
    return int(idx[0]), int(idx[1])


def _valid(tile: Any, row: int, col: int) -> bool:
    """The device's run check (lowering._mma._Runs.run); tiles are 16-byte aligned."""
    rows, cols = tile._shape
    pitch = tile._arr.shape[1]
    inside = 0 <= row < rows and 0 <= col < cols - 7
    return bool(inside and col % 8 == 0 and (row * pitch + col) % 8 == 0)


def _run(tile: Any, row: int, col: int) -> list[Any]:
    """The 8 elements ldmatrix reads for a lane's address (the tile's first 8 if not valid)."""
    if not _valid(tile, row, col):
        row, col = 0, 0
    return [np.float32(tile._arr[row, col + k]) for k in range(8)]


def _whole_warps(place: Any) -> bool:
    return bool(place.nthreads % 32 == 0)


def load_a(tile: Any, idx: Any) -> SimFragment:
    elem = _elem_of(tile, "load_a")
    r0, k0 = _origin(idx, "load_a", "(row0, k0)")
    place, _, lanes = _exchange((r0, k0), "load_a")
    zero = np.float32(0)
    if not _whole_warps(place):
        return SimFragment("a", elem, [zero] * 8)
    g, q = divmod(place.lane, 4)
    out: list[Any] = []
    for j in range(4):
        # a[j]: matrix j, row g, supplied by lane 8j + g (row r0' + g + 8(j & 1), col k0' + 8(j >> 1))
        sr, sk = lanes[8 * j + g]
        run = _run(tile, sr + g + 8 * (j & 1), sk + 8 * (j >> 1))
        mine = _valid(tile, r0 + g + 8 * (j & 1), k0 + 8 * (j >> 1))
        out += [run[2 * q], run[2 * q + 1]] if mine else [zero, zero]
    return SimFragment("a", elem, out)


def load_b(tile: Any, idx: Any) -> SimFragment:
    elem = _elem_of(tile, "load_b")
    k0, n0 = _origin(idx, "load_b", "(k0, col0)")
    place, _, lanes = _exchange((k0, n0), "load_b")
    zero = np.float32(0)
    if not _whole_warps(place):
        return SimFragment("b", elem, [zero] * 4)
    g, q = divmod(place.lane, 4)
    out: list[Any] = []
    for j in range(2):
        for h in range(2):
            # .trans: element (row 2q + h, col g) of matrix j; row 2q + h is lane 8j + 2q + h's
            s = 8 * j + 2 * q + h
            sk, sn = lanes[s]
            run = _run(tile, sk + s, sn)
            mine = _valid(tile, k0 + s, n0)
            out.append(run[g] if mine else zero)
    return SimFragment("b", elem, out)


def load_b2(tile: Any, idx: Any) -> tuple[SimFragment, SimFragment]:
    elem = _elem_of(tile, "load_b2")
    k0, n0 = _origin(idx, "load_b2", "(k0, col0)")
    place, _, lanes = _exchange((k0, n0), "load_b2")
    zero = np.float32(0)
    if not _whole_warps(place):
        return SimFragment("b", elem, [zero] * 4), SimFragment("b", elem, [zero] * 4)
    g, q = divmod(place.lane, 4)
    frags = []
    for f in range(2):
        out: list[Any] = []
        for j in range(2):
            for h in range(2):
                # .x4.trans: matrix m = 2f + j, element (row 2q + h, col g); that row is
                # supplied by lane 8m + 2q + h, whose address is (k0' + (lane & 15),
                # n0' + 8 * (lane >> 4)) of its own origin.
                s = 8 * (2 * f + j) + 2 * q + h
                sk, sn = lanes[s]
                run = _run(tile, sk + (s & 15), sn + 8 * (s >> 4))
                mine = _valid(tile, k0 + 8 * j + 2 * q + h, n0 + 8 * f)
                out.append(run[g] if mine else zero)
        frags.append(SimFragment("b", elem, out))
    return frags[0], frags[1]


def zeros() -> tuple[Any, ...]:
    return (np.float32(0),) * 4


def _is_acc(acc: Any) -> bool:
    return isinstance(acc, tuple) and len(acc) == 4


def mma(a: Any, b: Any, acc: Any) -> tuple[Any, ...]:
    from ._coop_sim import _once

    if not (isinstance(a, SimFragment) and a.operand == "a"):
        _reject(f"mma.mma(a, b, acc): a is an A fragment (mma.load_a); got {a!r}")
    if not (isinstance(b, SimFragment) and b.operand == "b"):
        _reject(f"mma.mma(a, b, acc): b is a B fragment (mma.load_b); got {b!r}")
    if a.elem != b.elem:
        _reject(f"mma.mma(a, b, acc): a and b have different element types ({a!r}, {b!r})")
    if not _is_acc(acc):
        _reject(
            "mma.mma(a, b, acc): acc is a tuple of 4 float32 (mma.zeros(), or mma's result); "
            f"got {type(acc).__name__}"
        )
    c = tuple(np.float32(v) for v in acc)
    place, slots, lanes = _exchange((a.values, b.values, c), "mma")
    if not _whole_warps(place):
        return c

    def compute() -> Any:
        am = np.zeros((16, 16))
        bm = np.zeros((16, 8))
        cm = np.zeros((16, 8))
        for lane, (av, bv, cv) in enumerate(lanes):
            g, q = divmod(lane, 4)
            for j in range(4):
                for h in range(2):
                    am[g + 8 * (j & 1), 2 * q + 8 * (j >> 1) + h] = av[2 * j + h]
                cm[g + 8 * (j >> 1), 2 * q + (j & 1)] = cv[j]
            for j in range(2):
                for h in range(2):
                    bm[2 * q + 8 * j + h, g] = bv[2 * j + h]
        return (am @ bm + cm).astype(np.float32)

    d = _once(slots, place.warp, place.parties, compute)
    g, q = divmod(place.lane, 4)
    return tuple(d[g + 8 * (j >> 1), 2 * q + (j & 1)] for j in range(4))


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_mma_*`` names on the simulator."""
    from ._sim import SimDisjointSlice, store_element

    def out_tile(out: Any, bm: Any, bn: Any, wm: Any, wn: Any) -> SimMmaOutTile:
        if not isinstance(out, SimDisjointSlice) or out._space != "Index2D":
            _reject(
                "mma.out_tile() takes a DisjointSlice2D output (of a 2D launch); got "
                f"{type(out).__name__}"
            )
        if not all(isinstance(v, int | np.integer) for v in (bm, bn, wm, wn)):
            _reject(
                "mma.out_tile(out, BM, BN, WM, WN): the sizes must be compile-time ints (a "
                f"literal or a module constant); got {(bm, bn, wm, wn)!r}"
            )
        BM, BN, WM, WN = (int(v) for v in (bm, bn, wm, wn))  # noqa: N806
        if not (
            0 < WM <= BM <= 4096
            and 0 < WN <= BN <= 4096
            and WM % 16 == 0
            and WN % 8 == 0
            and BM % WM == 0
            and BN % WN == 0
        ):
            _reject(
                f"mma.out_tile(out, BM, BN, WM, WN): a warp's WM x WN tile is made of 16 x 8 "
                f"accumulators (WM a multiple of 16, WN of 8) and divides the block's BM x BN "
                f"tile (at most 4096 a side); got BM={BM}, BN={BN}, WM={WM}, WN={WN}"
            )
        (bx, by, _), (tx, ty, tz), (nx, ny, _), (_, _, gz) = _simrt.geometry()
        w = (tx + nx * (ty + ny * tz)) // 32
        across = BN // WN
        origin = (by * BM + (w // across) * WM, bx * BN + (w % across) * WN)
        if w >= (BM // WM) * across or gz != 1:
            if gz != 1 and proven_domain == 2:
                raise AssertionError("simtsafe: a 2D launch was proven but the launch breaks it")
            from ._sim import SENTINEL

            origin = (SENTINEL, SENTINEL)
        return SimMmaOutTile(out._arr, origin, (WM, WN))

    def store(o: Any, mi: Any, ni: Any, acc: Any) -> None:
        if not isinstance(o, SimMmaOutTile):
            _reject(
                f"mma.store(o, mi, ni, acc) writes through o = mma.out_tile(...); got "
                f"{type(o).__name__}"
            )
        if not (isinstance(mi, int | np.integer) and isinstance(ni, int | np.integer)):
            _reject(f"mma.store(o, mi, ni, acc): mi, ni are ints; got {mi!r}, {ni!r}")
        if not _is_acc(acc):
            _reject(f"mma.store(o, mi, ni, acc): acc is a tuple of 4 float32; got {acc!r}")
        _, (tx, ty, tz), (nx, ny, _), _ = _simrt.geometry()
        lane = (tx + nx * (ty + ny * tz)) % 32
        g, q = divmod(lane, 4)
        rows, cols = o._arr.shape
        for j in range(4):
            r = 16 * int(mi) + g + 8 * (j >> 1)
            c = 8 * int(ni) + 2 * q + (j & 1)
            if not (0 <= r < o._tile[0] and 0 <= c < o._tile[1]):
                continue
            gr, gc = o._origin[0] + r, o._origin[1] + c
            if 0 <= gr < rows and 0 <= gc < cols:
                store_element(o._arr, (gr, gc), np.float32(acc[j]))

    return {
        "__ss_mma_load_a": load_a,
        "__ss_mma_load_b": load_b,
        "__ss_mma_load_b2": load_b2,
        "__ss_mma_zeros": zeros,
        "__ss_mma_mma": mma,
        "__ss_mma_out_tile": out_tile,
        "__ss_mma_store": store,
    }
