"""The @simtsafe.device helpers the generated kernels call (tests/kernels/generated.py).

Shared by every generated kernel, so each helper is compiled once per process
for each argument type (not once per kernel). Between them they hold the
helper routes the differential must see: a barrier under a parameter, an
implicit exit (a tuple index that may be out of range), a loop bounded by a
parameter, a call through a second helper, and nothing at all.
"""

from __future__ import annotations

import simtsafe as ss


@ss.device
def h_pure(p, q):  # type: ignore[no-untyped-def]
    return p + q


@ss.device
def h_barrier_if(p, q):  # type: ignore[no-untyped-def]
    if p > 2:
        ss.block.sync()
    return p - q


@ss.device
def h_exit(p, q):  # type: ignore[no-untyped-def]
    r = (1, 2, 3)[q % 4]
    return p + r


@ss.device
def h_loop(p, q):  # type: ignore[no-untyped-def]
    r = p
    for j in range(q % 3):
        r = r + j
    return r


@ss.device
def h_nested(p, q):  # type: ignore[no-untyped-def]
    return h_barrier_if(q, p) + 1


HELPERS = ("h_pure", "h_barrier_if", "h_exit", "h_loop", "h_nested")
