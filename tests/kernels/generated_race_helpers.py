"""The @simtsafe.device helpers the race-differential kernels call (generated_races.py).

Shared by every generated kernel, so each helper is compiled once per process
for each argument type. Between them they hold the helper routes a tile phase
must see through: a tile read inside a helper (a read of the tile at the
call), a barrier inside a helper, a block collective inside a helper (its
barriers), and the ops of ``reduce``.
"""

from __future__ import annotations

import simtsafe as ss


@ss.device
def h_read(t, k):  # type: ignore[no-untyped-def]
    return t[k]


@ss.device
def h_sync(p):  # type: ignore[no-untyped-def]
    ss.block.sync()
    return p


@ss.device
def h_bsum(p):  # type: ignore[no-untyped-def]
    return ss.block.sum(p) % 997


@ss.device
def h_max(p, q):  # type: ignore[no-untyped-def]
    return max(p, q)


@ss.device
def h_pair(p, q):  # type: ignore[no-untyped-def]
    return ((p[0] + q[0]) % 997, min(p[1], q[1]))


HELPERS = ("h_read", "h_sync", "h_bsum", "h_max", "h_pair")
