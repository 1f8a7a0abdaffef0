"""The rules of swizzled tiles and ``wgmma``, shared by the compiled form (``_swizzle``,
``_wgmma``) and the simulator twins (``_tiles_sim``, ``_wgmma_sim``): one text for each
refusal, and the element each thread of a warpgroup holds."""

from __future__ import annotations

__all__ = [
    "GROUP_ROWS",
    "GROUP_THREADS",
    "WIDTHS",
    "acc_position",
    "groups_refusal",
    "helper_refusal",
    "only_fill_and_wgmma",
    "swizzle_refusal",
]

#: The N a warpgroup's accumulator may have (column blocks of 64: the swizzled layout).
WIDTHS = (64, 128, 192, 256)
#: Rows of ``ta`` one warpgroup multiplies.
GROUP_ROWS = 64
#: Threads of a warpgroup.
GROUP_THREADS = 128


def only_fill_and_wgmma(tile: object, what: str) -> str:
    """The refusal of any other operation ``what`` on the swizzled ``tile``."""
    return (
        f"{what} on a swizzled shared tile ({tile}): its elements are not stored as rows, so "
        "only shared.fill_async (writes) and wgmma.mma / mma_async (reads) use it. Use a tile "
        "without swizzle= for element access"
    )


def helper_refusal(tile: object) -> str:
    """The refusal of a swizzled ``tile`` passed to a helper."""
    return (
        f"a swizzled shared tile ({tile}) reaches a @simtsafe.device helper; it is read only by "
        "wgmma.mma and filled only by shared.fill_async, in the kernel that makes it"
    )


def swizzle_refusal(
    shape: tuple[int, ...], dtype: object, sixteen_bit: bool, pad: int
) -> str | None:
    """Why ``shared.tile(shape, dtype, pad=pad, swizzle=128)`` is refused, or None."""
    if len(shape) == 2 and sixteen_bit and not pad and shape[0] % 8 == 0 and shape[1] % 64 == 0:
        return None
    return (
        "shared.tile(shape, dtype, swizzle=128): a swizzled tile is 2D, of ss.bfloat16 or "
        "np.float16, with rows a multiple of 8 and columns a multiple of 64 (128-byte rows), "
        f"unpadded; got shape {shape}, dtype {dtype}, pad {pad}"
    )


def groups_refusal(api: str, block: tuple[int, int, int], rows: int) -> str | None:
    """Why a block of shape ``block`` may not run ``api`` on a ``rows``-row ``ta``, or None:
    it must be whole warpgroups, at most one per 64 rows."""
    threads = block[0] * block[1] * block[2]
    if threads % GROUP_THREADS == 0 and (threads // GROUP_THREADS) * GROUP_ROWS <= rows:
        return None
    return (
        f"{api}: the block ({threads} threads, {block}) must be whole warpgroups of 128 "
        f"threads, at most {rows // GROUP_ROWS} of them (one per 64 rows of the "
        f"{rows}-row tile); got {threads / GROUP_THREADS:g} warpgroups"
    )


def acc_position(tid: int, i: int) -> tuple[int, int]:
    """(row, column) in its warpgroup's 64 x N rectangle of element ``i`` of thread ``tid``
    (the linear thread number) of an accumulator."""
    w, lane = (tid >> 5) & 3, tid & 31
    return 16 * w + (lane >> 2) + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * (lane & 3) + (i & 1)
