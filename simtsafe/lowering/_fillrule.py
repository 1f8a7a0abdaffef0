"""The rules of ``shared.fill_async`` / ``shared.fill_transposed``, shared by the compiled
form (``_asyncfill``) and the simulator twin (``_asyncfill_sim``): one text for each refusal,
and the run each thread copies.

Both fills give the tile's elements to the block's threads by *runs*: the
tile (or, transposed, the source rectangle) is cut into runs of ``n``
consecutive elements along its last axis, numbered row by row, and thread
``tid`` (its linear number in the block) copies runs ``tid, tid + T, tid +
2T, ...`` for ``T`` threads per block. Distinct threads get distinct runs, so
no element has two writers within one fill.
"""

from __future__ import annotations

import re
import secrets

__all__ = [
    "MAX_WAIT",
    "SECOND_CALL",
    "dynamic_run_bytes",
    "fill_refusal",
    "run_bytes",
    "second_call",
    "wait_refusal",
]

#: ``wait_group(n)``: 0 <= n <= MAX_WAIT (the phase analysis follows ages up to it).
MAX_WAIT = 7


#: This process's mark of a refusal of the second call of a pair of fills
#: (``decoration._fillpairs``): the diagnostics (``_diagnostics``) report that call's line,
#: not the pair's, and drop the mark. Random, so no text a user writes (a record field's
#: name, say) can carry it; the typing and its diagnostics run in one process.
_MARK = secrets.token_hex(8)
SECOND_CALL = re.compile(rf"\[second call: line (\d+) {_MARK}\]")


def second_call(refusal: str, line: int) -> str:
    """``refusal`` of the second call of a pair of fills, written on source line ``line``."""
    return f"{refusal} [second call: line {int(line)} {_MARK}]"


def dynamic_run_bytes(itemsize: int) -> int | None:
    """The bytes of one copied run of a dynamic (1D) tile, whose length is known only at
    launch: 16 (the last run may be partial: its elements past the tile are not copied),
    or None for an element of more than 16 bytes."""
    return 16 if 0 < itemsize <= 16 and 16 % itemsize == 0 else None


def run_bytes(row_elems: int, storage_elems: int, itemsize: int) -> int | None:
    """The bytes of one copied run: 16, 8 or 4, the largest that divides a row of the tile
    (``row_elems`` elements) and a row of its storage (with padding) and holds whole elements,
    so that every run starts at a multiple of its size from the tile's 16-byte-aligned start
    and at an element; None if none. (A 12-byte record in a row of 48 bytes: 16 divides the
    row but not the element, and runs of 16 bytes would start inside elements -- misaligned
    copies past the row's end; attack round 14.)"""
    for size in (16, 8, 4):
        if (
            size % itemsize == 0
            and (row_elems * itemsize) % size == 0
            and (storage_elems * itemsize) % size == 0
        ):
            return size
    return None


def fill_refusal(
    what: str,
    *,
    tile_ndim: int,
    dynamic: bool,
    readonly: bool,
    source: str,
    source_ndim: int,
    contiguous: bool,
    same_dtype: bool,
    origin_ok: bool,
    run: int | None,
) -> str | None:
    """Why ``what`` (``shared.fill_async`` or ``shared.fill_transposed``) refuses these
    arguments, or None."""
    transposed = what == "shared.fill_transposed"
    if readonly:
        return (
            f"{what}: a shared tile passed to a helper is read-only there; fill tiles in the "
            "kernel that makes them"
        )
    if dynamic and transposed:
        return (
            f"{what} fills a tile of a static shape (shared.tile); a dynamic tile's length is "
            "known only at launch"
        )
    if transposed and tile_ndim != 2:
        return f"{what} fills a 2D tile (t[c, r] = a[r0 + r, c0 + c]); got a {tile_ndim}D tile"
    if source != "input":
        return f"{what} copies from an In[...] input array (read-only global memory); got {source}"
    if source_ndim != tile_ndim:
        return (
            f"{what} copies a {tile_ndim}D input into a {tile_ndim}D tile; the input is "
            f"{source_ndim}D"
        )
    if not contiguous:
        return f"{what} copies runs of consecutive elements: the input must be C-contiguous"
    if not same_dtype:
        return f"{what} copies bytes: the tile's element type must be the input's"
    if not origin_ok:
        want = "an int start" if tile_ndim == 1 else "a pair (r0, c0) of ints"
        return f"{what} takes {want} as the origin in the input"
    if run is None:
        axis = "source rows (the tile's rows)" if transposed else "tile rows"
        return (
            f"{what} copies runs of 4, 8 or 16 bytes of whole elements: its {axis} (and, "
            "padded, their storage) must be a multiple of 4 bytes long, and its elements 1, 2, "
            "4, 8 or 16 bytes"
        )
    return None


def wait_refusal(n: object) -> str | None:
    """Why ``shared.wait_group(n)`` refuses ``n``, or None."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_WAIT:
        return (
            f"shared.wait_group(n) takes an int literal n, 0 <= n <= {MAX_WAIT} (how many of "
            f"the newest groups may stay in flight); got {n!r}"
        )
    return None
