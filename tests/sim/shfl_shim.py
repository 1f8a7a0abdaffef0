"""Warp shuffles for Numba's CUDA simulator (test-only): raw kernels with shuffles run on the CPU.

numba-cuda's simulator has no ``shfl_*_sync`` (it runs one OS thread per CUDA
thread and has no notion of a warp). :func:`installed` adds the four
shuffles to its fake ``numba.cuda`` module for the duration of a ``with``:
every lane of the calling warp deposits its value, the lanes meet at a
barrier, each reads its source lane's value, and they meet again before the
board is reused. CUDA semantics with width 32: ``shfl_up`` / ``shfl_down``
keep the lane's own value when the source lane is outside the warp;
``shfl_sync`` reads lane ``src % 32``; lanes past the end of a partial warp
are not waited for. Only full-mask shuffles in warp-uniform control flow
are supported (what the raw twins in examples/coop_raw.py use).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_LOCK = threading.Lock()
_NAMES = ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync")


class _Board:
    """One warp's exchange: a value slot per lane and a barrier of the present lanes."""

    def __init__(self, lanes: int) -> None:
        self.values: list[Any] = [None] * 32
        self.barrier = threading.Barrier(lanes)


def _exchange(value: Any, source: Callable[[int], int]) -> Any:
    t: Any = threading.current_thread()
    manager = t._manager
    bx, by, bz = manager._block_dim
    x, y, z = t.threadIdx
    linear = x + bx * (y + by * z)
    warp, lane = divmod(linear, 32)
    present = min(32, bx * by * bz - 32 * warp)
    with _LOCK:
        boards = getattr(manager, "_shfl_shim_boards", None)
        if boards is None:
            boards = {}
            manager._shfl_shim_boards = boards
        board = boards.get(warp)
        if board is None:
            board = boards[warp] = _Board(present)
    board.values[lane] = value
    board.barrier.wait()
    src = source(lane)
    result = board.values[src] if 0 <= src < present else value
    board.barrier.wait()
    return result


def _shfl_sync(self: Any, mask: int, value: Any, src: int) -> Any:
    return _exchange(value, lambda lane: int(src) % 32)


def _shfl_up_sync(self: Any, mask: int, value: Any, delta: int) -> Any:
    return _exchange(value, lambda lane: lane - int(delta))


def _shfl_down_sync(self: Any, mask: int, value: Any, delta: int) -> Any:
    return _exchange(value, lambda lane: lane + int(delta) if lane + int(delta) < 32 else -1)


def _shfl_xor_sync(self: Any, mask: int, value: Any, lanemask: int) -> Any:
    return _exchange(value, lambda lane: lane ^ int(lanemask))


@contextmanager
def installed() -> Iterator[None]:
    """Give the simulator's fake ``numba.cuda`` module the four warp shuffles."""
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    saved = {name: FakeCUDAModule.__dict__.get(name) for name in _NAMES}
    impls = dict(
        zip(_NAMES, (_shfl_sync, _shfl_up_sync, _shfl_down_sync, _shfl_xor_sync), strict=True)
    )
    for name, fn in impls.items():
        setattr(FakeCUDAModule, name, fn)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                delattr(FakeCUDAModule, name)
            else:
                setattr(FakeCUDAModule, name, old)
