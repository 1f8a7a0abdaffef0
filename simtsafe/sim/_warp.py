"""Results of warp collectives (shuffles, votes, match, syncwarp) with CUDA semantics.

The scheduler decides *when* a group of lanes has met at a collective; this
module computes what each lane gets back. Each waiting lane holds a
``WarpWait`` (its operation, mask, value and argument).

Shuffles (CUDA Programming Guide, warp shuffle functions): lanes are split
into segments of ``width`` (a power of two up to 32); ``shfl_sync`` reads lane
``srcLane % width`` of the caller's segment; ``shfl_up_sync`` lane
``lane - delta`` and ``shfl_down_sync`` lane ``lane + delta``, the caller's
own value when that leaves the segment; ``shfl_xor_sync`` lane
``lane ^ laneMask``, own value when that lies in a later segment. Reading a
lane that does not take part in the call is undefined on the GPU; here it
gives the caller's own value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ._threads import SimThread

__all__ = ["FULL_MASK", "SHUFFLES", "VOTES", "WarpWait", "compute", "is_exchange"]

FULL_MASK = 0xFFFFFFFF
SHUFFLES = frozenset({"shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"})
VOTES = frozenset(
    {"all_sync", "any_sync", "eq_sync", "ballot_sync", "match_any_sync", "match_all_sync"}
)


class WarpWait(NamedTuple):
    """A lane waiting at a warp collective."""

    op: str
    mask: int
    value: Any
    arg: int
    width: int
    site: tuple[str, int]


def is_exchange(op: str) -> bool:
    """Whether ``op`` is a simtsafe warp collective's meeting (``_simrt.warp_exchange``:
    named by its API, ``warp.sum``, ``mma.load_a``, ``mma.mma``), which orders no memory and
    meets only its own call; the CUDA intrinsics' ops are named as Numba names them
    (``shfl_sync``)."""
    return op.startswith(("warp.", "mma."))


def _source_lane(op: str, lane: int, arg: int, width: int) -> int | None:
    base = lane - lane % width
    if op == "shfl_sync":
        return base + arg % width
    if op == "shfl_up_sync":
        src = lane - arg
        return src if src >= base else None
    if op == "shfl_down_sync":
        src = lane + arg
        return src if src < base + width else None
    src = lane ^ arg  # shfl_xor_sync
    return src if src < base + width else None


def compute(group: list[SimThread]) -> None:
    """Set ``result`` of every lane of a group that met at a warp collective."""
    by_lane = {th.lane: th for th in group}
    present = 0
    for lane in by_lane:
        present |= 1 << lane
    for th in group:
        w: WarpWait = th.wait
        part = [by_lane[i] for i in sorted(by_lane) if (w.mask & present) >> i & 1]
        if w.op in SHUFFLES:
            src = _source_lane(w.op, th.lane, int(w.arg), w.width)
            other = by_lane.get(src) if src is not None else None
            th.result = (
                other.wait.value if other is not None and other.wait.op in SHUFFLES else w.value
            )
        elif w.op == "syncwarp" or is_exchange(w.op):
            th.result = None  # an exchange's values are in its slots (lowering/_coop_sim)
        elif w.op == "ballot_sync":
            bits = 0
            for o in part:
                if o.wait.op == w.op and o.wait.value:
                    bits |= 1 << o.lane
            th.result = bits
        elif w.op in ("all_sync", "any_sync", "eq_sync"):
            preds = [bool(o.wait.value) for o in part if o.wait.op == w.op]
            if w.op == "all_sync":
                th.result = int(all(preds))
            elif w.op == "any_sync":
                th.result = int(any(preds))
            else:
                th.result = int(len(set(preds)) <= 1)
        elif w.op == "match_any_sync":
            bits = 0
            for o in part:
                if o.wait.op == w.op and o.wait.value == w.value:
                    bits |= 1 << o.lane
            th.result = bits
        elif w.op == "match_all_sync":
            values = [o.wait.value for o in part if o.wait.op == w.op]
            same = all(v == values[0] for v in values)
            bits = 0
            for o in part:
                bits |= 1 << o.lane
            th.result = (bits if same else 0, same)
        else:  # pragma: no cover - the fake module only creates the ops above
            raise AssertionError(f"unknown warp operation {w.op}")
