"""Writes through a leader witness that no leader ran (mixed into ``Replay``).

``out[thread.block_leader()] = v`` runs in every thread that reaches it and writes in the
block's leader (thread 0) only: the other threads' witnesses are invalid, their writes do
nothing, by design. A write that some thread of a block (of a warp, for
``thread.warp_leader()``) ran but its leader never did wrote nothing for that block -- the
CUDA habit ``if threadIdx.x == B - 1: totals[block_leader()] = s`` is accepted and silently
drops every total. Reported as ``dropped_write`` at the write's line, once per line, after
the launch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._findings import Collector
    from ._report import Location
    from ._threads import SimThread

__all__ = ["LeaderWrites"]

_LEADER = {"PerBlock": "thread.block_leader()", "PerWarp": "thread.warp_leader()"}


class LeaderWrites:
    """Per (line, block, warp): whether a leader ran the write; a thread that did not."""

    findings: Collector
    #: (site, block, warp or -1) -> (a leader ran it, a thread that ran it, the space)
    _leaders: dict[tuple[Location, int, int], tuple[bool, SimThread, str]]

    def leader_write(self, t: SimThread, space: str, valid: bool, site: Location) -> None:
        """Thread ``t`` ran a write through a ``space`` leader witness at ``site``."""
        key = (site, t.blk.index, t.wid if space == "PerWarp" else -1)
        seen = self._leaders.get(key)
        if seen is None or (valid and not seen[0]):
            self._leaders[key] = (valid, t, space)

    def flush_leader_writes(self) -> None:
        """Report each line whose write ran in some block (warp) but not in its leader."""
        for (site, _, _), (led, t, space) in self._leaders.items():
            if led or self.findings.seen("dropped_write", site, site):
                continue
            group = "warp" if space == "PerWarp" else "block"
            self.findings.add(
                "dropped_write",
                array=None,
                index=None,
                threads=(t.ref, t.ref),
                accesses=("write", "write"),
                locations=(site, site),
                message=(
                    f"the write at line {site[1]} goes through {_LEADER[space]}, which is valid "
                    f"only in the {group}'s leader, but in this {group} ({t.ref} ran it) the "
                    "leader never did: it wrote nothing. Let the leader run the write (every "
                    "thread may: only the leader's lands)"
                ),
            )
        self._leaders.clear()
