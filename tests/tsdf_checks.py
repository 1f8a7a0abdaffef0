"""Checks shared by the TSDF example's tests (tests/examples/test_tsdf.py, tests/gpu/test_tsdf_gpu.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import simtsafe as ss

__all__ = ["assert_present_or_counted"]

EMPTY = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def assert_present_or_counted(fusion: Any, need: np.ndarray[Any, Any]) -> None:
    """Every block of ``need`` (sorted keys) is in ``fusion``'s pool or counted as lost.

    Checks the table, the block list and the pool indices against each other and
    against ``need``; the failure and drop counts against what is missing; and that the
    host is told (``Fusion.check`` raises ``CapacityExceeded``) exactly when anything was.
    """
    s = fusion.status()
    keys, slots = ss.to_host(fusion.keys), ss.to_host(fusion.slots)
    listed = ss.to_host(fusion.blocks)[: s.blocks]
    in_table = keys[keys != EMPTY]
    # Only blocks the rays touch, each once; every inserted key claimed one pool index.
    assert np.isin(in_table, need).all() and np.unique(in_table).size == in_table.size
    assert s.occupied == in_table.size == s.blocks + s.dropped
    assert s.blocks == min(s.occupied, fusion.params.pool)
    assert np.unique(listed).size == listed.size and np.isin(listed, in_table).all()
    for i, key in enumerate(listed):  # the table names each listed block's pool index
        assert slots[ss.hash_lookup(keys, int(key))] == i
    unlisted = in_table[~np.isin(in_table, listed)]  # inserted, but the pool was full
    assert unlisted.size == s.dropped
    assert all(slots[ss.hash_lookup(keys, int(k))] == -1 for k in unlisted)
    # A block is missing from the table only if an insert failed, and only then.
    missing = np.setdiff1d(need, in_table)
    assert (missing.size > 0) == (s.failed > 0)
    assert s.failed >= missing.size
    assert s.occupied == min(need.size, fusion.params.table)
    # ... and the host is told: CapacityExceeded exactly when something was lost.
    if s.lost:
        with pytest.raises(ss.CapacityExceeded) as info:
            fusion.check()
        assert info.value.dropped == (s.failed or s.dropped)
    else:
        assert fusion.check() == need.size
