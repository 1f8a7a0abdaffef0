"""Collecting findings during a replay: deduplicated per (kind, source lines), counted.

The replay reports every occurrence; the collector keeps the first
occurrence of each (kind, unordered pair of source locations) with its
details and counts the rest, so a race on every element of a tile reads as
one finding with a count, not thousands.
"""

from __future__ import annotations

from typing import Any

from ._report import Finding, Kind, Location, ThreadRef

__all__ = ["Collector"]


class _Entry:
    __slots__ = ("accesses", "array", "count", "index", "kind", "locations", "message", "threads")

    def __init__(
        self,
        kind: Kind,
        array: str | None,
        index: tuple[int, ...] | None,
        threads: tuple[ThreadRef, ThreadRef],
        accesses: tuple[str, str],
        locations: tuple[Location, Location],
        message: str,
    ) -> None:
        self.kind = kind
        self.array = array
        self.index = index
        self.threads = threads
        self.accesses = accesses
        self.locations = locations
        self.message = message
        self.count = 1


class Collector:
    """Findings of one replay, in the order first seen."""

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], _Entry] = {}

    def seen(self, kind: str, a: Location, b: Location) -> bool:
        """Count one more occurrence if (kind, a, b) is already reported; say whether it was."""
        entry = self._entries.get(_key(kind, a, b))
        if entry is None:
            return False
        entry.count += 1
        return True

    def add(
        self,
        kind: Kind,
        *,
        array: str | None,
        index: tuple[int, ...] | None,
        threads: tuple[ThreadRef, ThreadRef],
        accesses: tuple[str, str],
        locations: tuple[Location, Location],
        message: str,
    ) -> None:
        key = _key(kind, *locations)
        entry = self._entries.get(key)
        if entry is not None:
            entry.count += 1
            return
        self._entries[key] = _Entry(kind, array, index, threads, accesses, locations, message)

    def __len__(self) -> int:
        return len(self._entries)

    def findings(self) -> tuple[Finding, ...]:
        return tuple(
            Finding(
                kind=e.kind,
                array=e.array,
                index=e.index,
                threads=e.threads,
                accesses=e.accesses,
                locations=e.locations,
                count=e.count,
                message=e.message,
            )
            for e in self._entries.values()
        )


def _key(kind: str, a: Location, b: Location) -> tuple[Any, ...]:
    return (kind, a, b) if a <= b else (kind, b, a)
