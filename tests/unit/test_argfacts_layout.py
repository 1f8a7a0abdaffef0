"""The layout code a launch gives an input (``host._argfacts.input_layout``): "C16" only for a
kernel that fills shared tiles from it, only where the data pointer, the row pitch and the
row length in bytes are multiples of 16 -- what the compiled code of that specialization
assumes (lowering._runaligned)."""

from __future__ import annotations

import pytest

from simtsafe.host._argfacts import Facts, input_layout


def _facts(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], c: bool = True) -> Facts:
    return Facts(ptr, shape, strides, "<u2", False, c, 1, ptr, ptr + 1, True, None, (), None)


@pytest.mark.parametrize(
    ("facts", "runs", "layout"),
    [
        (_facts(256, (64, 64), (128, 2)), True, "C16"),
        (_facts(256, (64, 64), (128, 2)), False, "C"),  # the kernel fills no tile
        (_facts(258, (64, 64), (128, 2)), True, "C"),  # data pointer off by 2 bytes
        (_facts(256, (64, 60), (120, 2)), True, "C"),  # rows of 120 bytes
        (_facts(256, (1, 64), (8, 2)), True, "C"),  # a row pitch not a multiple of 16
        (_facts(256, (64, 64), (256, 4), c=False), True, "A"),  # strided
        (_facts(256, (24,), (2,)), True, "C16"),  # 1D: 48 bytes
        (_facts(256, (20,), (2,)), True, "C"),  # 1D: 40 bytes, the last run cut
    ],
)
def test_input_layout(facts: Facts, runs: bool, layout: str) -> None:
    assert input_layout(facts, 2, runs) == layout
