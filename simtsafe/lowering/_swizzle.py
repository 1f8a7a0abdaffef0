"""The 128-byte swizzled layout of a shared tile: the layout ``wgmma`` reads.

``shared.tile((R, C), dtype, swizzle=128)`` (a 16-bit ``dtype``: ``ss.bfloat16`` or
``np.float16``; ``R`` a multiple of 8, ``C`` of 64) is stored as ``C / 64``
column blocks one after the other, each ``R`` rows of 128 bytes (64
elements). Inside a block the 16-byte chunk ``c`` of row ``i`` (elements
``8c .. 8c + 7``) lies at chunk ``c ^ (i % 8)`` of the row, so element
``(i, j)`` is at element offset

    (j // 64) * 64 R + 64 i + 8 * (((j % 64) // 8) ^ (i % 8)) + j % 8

from the tile's start, a multiple of 1024 bytes: the XOR of address bits
4..6 with bits 7..9 that the tensor cores apply (PTX ISA, "Shared Memory
Matrix Layout", 128-byte swizzling). Inside a block, row ``i``'s chunks are
permuted among themselves, so the map is a permutation of the tile's
``R * C`` elements: every ``(i, j)`` inside the logical shape lands inside
the tile.

Only two operations touch such a tile: ``shared.fill_async`` (each 16-byte run
is one chunk, placed by ``chunk_offset``) and ``wgmma.mma`` (descriptors of
its blocks). Every other tile operation refuses it at typing, so no code
addresses it as rows.
"""

from __future__ import annotations

import operator
from typing import Any

from llvmlite import ir
from numba.cuda import types
from numba.cuda.core import errors
from numba.cuda.typing.templates import AbstractTemplate, infer_global

from . import _tilebase as tb
from ._bf16 import is_bf16
from ._swizzlerule import helper_refusal, only_fill_and_wgmma
from ._swizzlerule import swizzle_refusal as _swizzle_refusal

__all__ = [
    "ALIGN",
    "BLOCK_COLS",
    "SwizzledTileType",
    "chunk_offset",
    "only_fill_and_wgmma",
    "swizzle_refusal",
]

#: Bytes a swizzled tile's start is a multiple of (the pattern repeats every 8 rows of 128 B).
ALIGN = 1024
#: Elements of one 128-byte row of a column block.
BLOCK_COLS = 64
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


@tb.register_holder
class SwizzledTileType(tb.HolderType):
    """A block's shared tile in the 128-byte swizzled layout (``shared.tile(..., swizzle=128)``)."""

    #: What fill_async's typing reads of a tile (a swizzled tile is never read-only or padded).
    readonly = False
    pad = 0

    def __init__(self, dtype: Any, shape: tuple[int, int]) -> None:
        self.dtype = dtype
        self.shape = shape
        self.storage = shape
        self.ndim = 2
        self.arr_type = types.Array(dtype, 2, "C")
        super().__init__(name=f"SharedTile[{dtype}, {shape[0]}x{shape[1]}, swizzle 128]")

    @property
    def helper_refusal(self) -> str:
        """Why this tile may not be a helper's argument (``_cuda`` asks at each helper call)."""
        return helper_refusal(self)


def _refuse_use(what: str) -> type[AbstractTemplate]:
    class _Refuse(AbstractTemplate):
        def generic(self, args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
            if args and isinstance(args[0], SwizzledTileType):
                raise errors.TypingError("simtsafe: " + only_fill_and_wgmma(args[0], what))
            return None

    return _Refuse


# Everything a tile may be given to beside the fills and wgmma: refused with the reason.
infer_global(len)(_refuse_use("len()"))
infer_global(operator.contains)(_refuse_use("`in`"))


def swizzle_refusal(shape: tuple[int, ...], dtype: Any, pad: int) -> str | None:
    """Why ``shared.tile(shape, dtype, pad=pad, swizzle=128)`` is refused, or None."""
    return _swizzle_refusal(shape, dtype, is_bf16(dtype) or dtype == types.float16, pad)


def chunk_offset(builder: ir.IRBuilder, rows: int, i: Any, c: Any) -> Any:
    """Element offset (i64) of chunk ``c`` (elements ``8c .. 8c + 7``) of row ``i`` (both i64,
    inside the tile) in a swizzled tile of ``rows`` rows. Computed in 32 bits: a tile is at
    most the 227 KiB of a block's shared memory, so every offset fits."""
    b = builder
    i32, c32 = b.trunc(i, _I32), b.trunc(c, _I32)
    block = b.lshr(c32, ir.Constant(_I32, 3))
    within = b.xor(b.and_(c32, ir.Constant(_I32, 7)), b.and_(i32, ir.Constant(_I32, 7)))
    at = b.add(b.mul(block, ir.Constant(_I32, BLOCK_COLS * rows)), b.shl(i32, ir.Constant(_I32, 6)))
    return b.zext(b.add(at, b.shl(within, ir.Constant(_I32, 3))), _I64)
