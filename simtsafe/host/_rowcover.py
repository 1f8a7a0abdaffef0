"""``covers`` for the row spaces (``BlockRow``, ``WarpRow``): how many rows a launch owns.

A block (warp) of a 1D launch owns one row and its threads (lanes) stride over
every column, so only the rows can be left unwritten: the launch owns
``grid.x`` rows (``BlockRow``) or ``grid.x * block.x / 32`` (``WarpRow``), and
none when the launch is not 1D (the witnesses are invalid there) or, for
``WarpRow``, when ``block.x`` is not a multiple of 32 (a block's last, partial
warp walks only the columns of its lanes).
"""

from __future__ import annotations

__all__ = ["ROW_SPACES", "UNBOUNDED", "row_capacity", "row_coverage_message"]

#: The output spaces whose rows belong to blocks or warps.
ROW_SPACES = frozenset({"BlockRow", "WarpRow"})

#: A capacity with no limit: the columns of a row space (the stride walks any width),
#: the rows of a Columns output (the kernel picks them).
UNBOUNDED = 2**63 - 1


def row_capacity(space: str, grid: tuple[int, ...], block: tuple[int, ...]) -> tuple[int, int]:
    """(rows, columns) a launch of ``grid`` x ``block`` owns of a ``space`` output."""
    if (grid[1], grid[2], block[1], block[2]) != (1, 1, 1, 1):
        return (0, UNBOUNDED)
    if space == "WarpRow" and block[0] % 32:
        return (0, UNBOUNDED)
    return (grid[0] * (1 if space == "BlockRow" else block[0] // 32), UNBOUNDED)


def row_coverage_message(
    name: str, covers: str, space: str, grid: tuple[int, ...], block: tuple[int, ...], rows: int
) -> str:
    """The CoverageError text: ``rows`` rows of ``covers`` but fewer owners in the launch."""
    head = f"kernel {name!r} must cover every row of {covers!r} by its launch contract, but "
    if (grid[1], grid[2], block[1], block[2]) != (1, 1, 1, 1):
        return (
            head + f"the launch (grid {grid}, block {block}) is not 1D, so no block or warp owns "
            f"a row of a {space} output ({covers!r} has {rows} rows). Launch a 1D grid of 1D "
            "blocks"
        )
    if space == "BlockRow":
        return (
            head + f"the launch has {grid[0]} blocks (one row each: {covers!r} is a BlockRow "
            f"output) and {covers!r} has {rows} rows. Prepare with grid={rows} (one block per "
            "row)"
        )
    if block[0] % 32:
        return (
            head + f"its blocks have {block[0]} threads, not a multiple of 32: the last warp "
            f"of each block has {block[0] % 32} lanes and walks only their columns of its row "
            f"of the WarpRow output ({covers!r} has {rows} rows). Use a block of a multiple "
            "of 32 threads"
        )
    per_block = block[0] // 32
    owned = grid[0] * per_block
    return (
        head + f"the launch has {owned} warps ({grid[0]} blocks of {per_block}; one row each: "
        f"{covers!r} is a WarpRow output) and {covers!r} has {rows} rows. Prepare with "
        f"grid=simtsafe.cover({rows}, {per_block}) (= {-(-rows // per_block)}) blocks of "
        f"{block[0]} threads"
    )
