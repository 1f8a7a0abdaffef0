"""The rules of the block and warp collectives shared by the compiled form (``_coop``) and the
simulator twin (``_coop_sim``): one text for each refusal."""

from __future__ import annotations

__all__ = ["COLLECTIVE_SCALARS"]

#: What follows the refusal of a collective's non-scalar value: the forms that work.
COLLECTIVE_SCALARS = (
    "Collectives exchange one scalar per thread: reduce an array element by element, and a "
    "state of several fields whose combine mixes them (Welford's count, mean and M2; an "
    "argmax's value and index) as one collective per field of a form that adds up: block.sum "
    "of n, of n * mean and of M2 + n * mean**2 (the variance follows from the three sums), "
    "block.max of the value, then block.min of the index of the threads holding the maximum"
)
