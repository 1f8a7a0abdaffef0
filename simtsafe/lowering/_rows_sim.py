"""Simulator twins of the row walks (``lowering/_rows``): the same start, step and witness.

``for w in thread.block_row(s)`` / ``thread.warp_row(s)`` expand to ``for k in
range(start(), extent(s), step()): w = mint(k)``, and the chunked walks
(``thread.block_row_chunks(s)`` / ``warp_row_chunks``) to ``for k in
range(chunks(s)): c = mint_chunk(k, s)``; these make the same values the device
intrinsics make, read from the simulated thread's geometry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, final

import numpy as np

from ._sim import (
    _TOKEN,
    SENTINEL,
    SimDisjointSlice,
    SimWitness,
    _geometry,
    _mint,
    _reject,
    _shape_of,
)

__all__ = ["SimRowChunk", "builtins"]


@final
class SimRowChunk(SimWitness):
    """A chunked walk's witness on the simulator: a row witness, its chunk and ``.valid``."""

    __slots__ = ("_chunk", "_valid")

    def __init__(self, space: str, idx: tuple[int, int], chunk: int, valid: bool) -> None:
        super().__init__(space, idx, _TOKEN)
        self._chunk = chunk
        self._valid = valid

    @property
    def valid(self) -> Any:
        # numpy's bool, as the device's: `~c.valid` is "not valid" (a Python bool's ~ is -2
        # or -1, both true: attack round 25)
        return np.bool_(self._valid)

    @property
    def chunk(self) -> int:
        return self._chunk

    def __repr__(self) -> str:
        return f"RowChunk[{self._space}]{self._idx}"


def _one_d(checked: bool) -> bool:
    """Is the launch 1D? Raises when the host proved it and it is not (a simtsafe bug)."""
    _, _, (_, ny, nz), (_, gy, gz) = _geometry()
    if (ny, nz, gy, gz) == (1, 1, 1, 1):
        return True
    if checked:
        return False
    raise AssertionError("simtsafe: 1D domain was proven on the host but the launch is not 1D")


def _tx_nx_bx() -> tuple[int, int, int]:
    (bx, _, _), (tx, _, _), (nx, _, _), _ = _geometry()
    return tx, nx, bx


def _block_row() -> int:
    return _tx_nx_bx()[2]


def _warp_row() -> int:
    tx, nx, bx = _tx_nx_bx()
    return bx * ((nx + 31) // 32) + tx // 32


def _extent(space: str, what: str, row: Callable[[], int]) -> Any:
    """The walked array's ``shape[1]``, 0 when this row is not one of its rows (as on the device)."""

    def extent(s: Any) -> int:
        rows, cols = _walked_shape(space, what, s)
        return cols if row() < rows else 0

    return extent


def _walked_shape(space: str, what: str, s: Any) -> tuple[int, int]:
    """The walked array's (rows, cols); refuses what the device's typing refuses."""
    if isinstance(s, SimDisjointSlice) and s._space != space:
        _reject(
            f"thread.{what}() walks a DisjointSlice of space {space} (or a 2D input); "
            f"got one of space {s._space}: its rows are not owned per "
            f"{'block' if space == 'BlockRow' else 'warp'}. Annotate the output "
            f"DisjointSlice[..., {space}]"
        )
    shape = _shape_of(s)
    if len(shape) != 2:
        _reject(f"thread.{what}() walks the row of a 2D array; got a {len(shape)}D one")
    return shape[0], shape[1]


def _chunks(space: str, what: str, step: Callable[[], int]) -> Any:
    """``ceil(s.shape[1] / step)``: the same in every thread of the block (the warp)."""

    def chunks(s: Any) -> int:
        cols = _walked_shape(space, what, s)[1]
        return -(-cols // step())

    return chunks


def _mint_chunk(
    space: str,
    what: str,
    row: Callable[[], int],
    start: Callable[[], int],
    step: Callable[[], int],
    checked: bool,
) -> Any:
    def mint(k: int, s: Any) -> SimRowChunk:
        rows, cols = _walked_shape(space, what, s)
        r = row() if _one_d(checked) else SENTINEL
        c = start() + k * step()
        return SimRowChunk(space, (r, c), k, r < rows and c < cols)

    return mint


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_*`` names of the row walks on the simulator."""
    checked = proven_domain != 1

    def mint_br(k: int) -> SimWitness:
        return _mint("BlockRow", (_block_row() if _one_d(checked) else SENTINEL, k))

    def mint_wr(k: int) -> SimWitness:
        return _mint("WarpRow", (_warp_row() if _one_d(checked) else SENTINEL, k))

    return {
        "__ss_br_start": lambda: _tx_nx_bx()[0],
        "__ss_br_step": lambda: _tx_nx_bx()[1],
        "__ss_br_extent": _extent("BlockRow", "block_row", _block_row),
        "__ss_mint_br": mint_br,
        "__ss_wr_start": lambda: _tx_nx_bx()[0] & 31,
        "__ss_wr_step": lambda: 32,
        "__ss_wr_extent": _extent("WarpRow", "warp_row", _warp_row),
        "__ss_mint_wr": mint_wr,
        "__ss_brc_chunks": _chunks("BlockRow", "block_row_chunks", lambda: _tx_nx_bx()[1]),
        "__ss_mint_brc": _mint_chunk(
            "BlockRow",
            "block_row_chunks",
            _block_row,
            lambda: _tx_nx_bx()[0],
            lambda: _tx_nx_bx()[1],
            checked,
        ),
        "__ss_wrc_chunks": _chunks("WarpRow", "warp_row_chunks", lambda: 32),
        "__ss_mint_wrc": _mint_chunk(
            "WarpRow",
            "warp_row_chunks",
            _warp_row,
            lambda: _tx_nx_bx()[0] & 31,
            lambda: 32,
            checked,
        ),
    }
