"""The rules of the block and warp collectives and shared accumulators shared by the compiled
form (``_coop``, ``_accumulate``) and the simulator twin (``_coop_sim``): one text for each
refusal."""

from __future__ import annotations

__all__ = ["COLLECTIVE_SCALARS", "STATIC_SHARED_LIMIT", "accumulator_too_big"]

#: What follows the refusal of a collective's non-scalar value: the forms that work.
COLLECTIVE_SCALARS = (
    "Collectives exchange one scalar per thread: reduce an array element by element, and a "
    "state of several fields whose combine mixes them (Welford's count, mean and M2; an "
    "argmax's value and index) as one collective per field of a form that adds up: block.sum "
    "of n, of n * mean and of M2 + n * mean**2 (the variance follows from the three sums), "
    "block.max of the value, then block.min of the index of the threads holding the maximum"
)


#: The most static shared memory a block may declare (CUDA's limit on every GPU; more needs
#: dynamic shared memory). An accumulator past it could never be loaded, and a 2D one's row
#: product is a 32-bit immediate (``_accumulate._pair_pointer``).
STATIC_SHARED_LIMIT = 48 * 1024


def accumulator_too_big(shape: tuple[int, ...], dtype: object, itemsize: int) -> str | None:
    """The refusal of a shared accumulator of ``shape`` past the static shared limit, or None."""
    nbytes = itemsize
    for n in shape:
        nbytes *= n
    if nbytes <= STATIC_SHARED_LIMIT:
        return None
    extents = " x ".join(map(str, shape))
    return (
        f"shared.accumulator: {extents} elements of {dtype} are {nbytes} bytes; a block's static "
        f"shared memory is at most {STATIC_SHARED_LIMIT} bytes (48 KiB) on every GPU: use fewer "
        "or smaller elements"
    )
