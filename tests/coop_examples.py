"""What the block-cooperation examples need from the device side, and how tests import them.

The Tier-1 examples in examples/ (``reduce_sum``, ``scan``, ``transpose``,
``sgemm``, ``histogram``) call simtsafe's collectives, shared tiles, output
tiles, accumulators and Tier-1 local arrays. The kernel decorator rewrites
those calls to private ``__ss_*`` names that ``simtsafe.lowering`` provides.
Until the lowering of all of them is in the tree, an example that needs a
missing one is skipped by the tests that run it, naming what is missing
(the decorator itself accepts the examples either way). Once the names are
there, nothing is skipped: the tests then pass or fail on the result.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

_TILE_LOOP = (
    "__ss_bs_row_start",
    "__ss_bs_rows",
    "__ss_bs_row_step",
    "__ss_bs_col_start",
    "__ss_bs_cols",
    "__ss_bs_col_step",
    "__ss_mint_local",
)

#: example module -> the private device names its kernels are rewritten to use.
NEEDS: dict[str, tuple[str, ...]] = {
    "reduce_sum": ("__ss_block_sum", "__ss_view_acc"),
    "scan": (
        "__ss_block_sum",
        "__ss_block_scan",
        "__ss_block_sync",
        "__ss_shared_tile",
        "__ss_tile_2d_strided",
        *_TILE_LOOP,
    ),
    "transpose": ("__ss_block_sync", "__ss_shared_tile", "__ss_tile_2d_strided", *_TILE_LOOP),
    "sgemm": (
        "__ss_block_sync",
        "__ss_shared_tile",
        "__ss_tile_2d_strided",
        "__ss_local_index_2d",
        "__ss_local_array",
        *_TILE_LOOP,
    ),
    "histogram": ("__ss_shared_accumulator", "__ss_block_sync", "__ss_view_acc"),
}


def missing(example: str) -> list[str]:
    """The private names ``example`` needs that ``simtsafe.lowering`` does not provide."""
    from simtsafe import lowering

    have = lowering.builtins(proven_domain=None)
    return [name for name in NEEDS.get(example, ()) if name not in have]


def skip_if_not_lowered(example: str) -> None:
    """Skip the calling test while the device side of ``example``'s API is missing."""
    absent = missing(example)
    if absent:
        pytest.skip(
            f"examples/{example}.py needs the block-cooperation lowering "
            f"({', '.join(absent)} not in simtsafe.lowering yet)"
        )


def example(name: str) -> ModuleType:
    """Import examples/<name>.py as the module ``name`` (examples import each other by name)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    return importlib.import_module(name)
