"""Simulator twins of append buffers (``NUMBA_ENABLE_CUDASIM=1`` and ``simtsafe.sim.check``).

``buf.claim()`` is an atomic fetch-add on the counter through the runtime
seam (``_simrt.atomic``: a lock on Numba's simulator, a recorded atomic under
``simtsafe.sim.check``), so two claims never get the same slot, as on the
GPU. The twin claims one slot per call (the device aggregates a warp's
claims into one atomic; the slots handed out are the same set either way).
Every other use is refused with the device's ``simtsafe:`` text.
"""

from __future__ import annotations

from typing import Any, NoReturn, final

import numpy as np

from .._spaces import other_buffer_advice
from . import _simrt
from ._coop_sim import _argument, _exchange_block, _once, _site
from ._sim import _BF16, SENTINEL, SimWitness, _mint, _plain_record, _reject, _SimView, _witness_for

__all__ = ["SimAppendBuffer", "SimCounter", "builtins"]

_WHAT_BUFFER_OFFERS = (
    "an AppendBuffer offers w = buf.claim(), buf[w] = v and buf[w] with that witness, "
    "and buf.size, buf.shape, len(buf)"
)
_WHAT_COUNTER_OFFERS = (
    "a Counter is not used by kernel code: its append buffer's claim() or its hash table's "
    "failed inserts add to it, and the host reads it after the launch (simtsafe.appended, "
    "simtsafe.inserted)"
)


@final
class SimCounter:
    """A ``Counter`` parameter on the simulator: nothing but claims touch it."""

    __slots__ = ("_arr",)

    def __init__(self, arr: Any) -> None:
        self._arr = arr

    def __getitem__(self, i: Any) -> NoReturn:
        _reject(
            f"a Counter is not read during the launch (other threads are adding to it); "
            f"{_WHAT_COUNTER_OFFERS}"
        )

    def __setitem__(self, i: Any, v: Any) -> NoReturn:
        _reject(f"a Counter is not written by kernel code; {_WHAT_COUNTER_OFFERS}")

    def __len__(self) -> NoReturn:
        _reject(_WHAT_COUNTER_OFFERS)

    def __getattr__(self, name: str) -> NoReturn:
        _reject(f"a Counter has no .{name}: {_WHAT_COUNTER_OFFERS}")


@final
class SimAppendBuffer(_SimView):
    """An ``AppendBuffer`` on the simulator: slots won by the counter's fetch-add."""

    __slots__ = ("_counter", "_param", "_witness_space")

    def __init__(self, arr: Any, counter: Any, param: str) -> None:
        super().__init__(arr)
        self._counter = counter
        self._param = param
        self._witness_space = f"Appended[{param}]"

    def claim(self) -> SimWitness:
        counter = self._counter
        if counter.shape[0] < 1:  # an unchecked launch with an empty counter: no claim
            return _mint(self._witness_space, (SENTINEL,))
        with np.errstate(over="ignore"):  # as the device: the counter wraps, then is marked
            old = int(_simrt.atomic(counter, 0, "add", lambda v: v + np.uint64(1)))
        if old >= 2**63:  # a start value there: mark the counter (as the device does)
            _simrt.atomic(counter, 0, "or", lambda v: v | np.uint64(1 << 63))
        slot = old if old < self._arr.shape[0] else SENTINEL
        return _mint(self._witness_space, (slot,))

    def block_claim(self, keep: Any) -> SimWitness:
        """The block collective: every thread's ``keep`` exchanged at a barrier, one
        fetch-add of the block's total (by the first thread past it), each keeping thread
        the slot ``old + its rank`` in linear thread order (as the device)."""
        keep = _argument(keep, f"{self._param}.block_claim(keep)")
        if not isinstance(keep, bool | np.bool_):
            _reject(
                f"{self._param}.block_claim(keep) takes one bool, whether this thread appends "
                f"an item (e.g. v > t); got ({type(keep).__name__}). Every thread of the block "
                f"calls it"
            )
        place, slots, vals = _exchange_block(bool(keep), _site())
        counter = self._counter

        def base() -> int:
            total = sum(1 for v in vals if v)
            if total == 0 or counter.shape[0] < 1:
                return 0
            with np.errstate(over="ignore"):
                old = int(_simrt.atomic(counter, 0, "add", lambda v: v + np.uint64(total)))
            if old >= 2**63:
                _simrt.atomic(counter, 0, "or", lambda v: v | np.uint64(1 << 63))
            return old

        old = _once(slots, 0, place.parties, base)
        if not keep or counter.shape[0] < 1:
            return _mint(self._witness_space, (SENTINEL,))
        slot = (old + sum(1 for v in vals[: place.ltid] if v)) % 2**64
        return _mint(self._witness_space, (slot if slot < self._arr.shape[0] else SENTINEL,))

    def _check(self, w: Any, verb: str) -> None:
        if not isinstance(w, SimWitness):
            _reject(
                f"an AppendBuffer is {verb} only at a slot this thread claimed: w = "
                f"{self._param}.claim(), then {self._param}[w]; got an index of type "
                f"{type(w).__name__}"
            )
        if w._space != self._witness_space:
            _reject(
                f"a ThreadIndex[{w._space}] witness cannot "
                f"{'write' if verb == 'written' else 'read'} the AppendBuffer {self._param!r}: "
                f"only a slot won by {self._param}.claim() is this thread's there (its counter "
                f"gave it out once). " + other_buffer_advice(str(w._space), self._param)
            )

    def __setitem__(self, w: Any, value: Any) -> None:
        self._check(w, "written")
        idx = _witness_for(self._arr.shape, w)
        if idx is None:
            return
        if self._arr.dtype == _BF16:  # as on the device: to float32, then RNE
            with np.errstate(all="ignore"):
                self._arr[idx[0]] = np.float32(value)
            return
        self._arr[idx[0]] = _plain_record(value)

    def __getitem__(self, w: Any) -> Any:
        self._check(w, "read")
        return self._read(w)

    def __getattr__(self, name: str) -> NoReturn:
        _reject(f"an AppendBuffer has no .{name}: {_WHAT_BUFFER_OFFERS}")


def builtins() -> dict[str, Any]:
    """``__ss_view_Append`` and ``__ss_view_Counter`` on the simulator."""

    def view_append(arr: Any, counter: Any, param: str) -> SimAppendBuffer:
        if isinstance(counter, SimCounter):
            counter = counter._arr
        if getattr(arr, "ndim", 1) != 1:
            _reject(f"an AppendBuffer parameter is a 1D device array; got {arr.ndim}D")
        return SimAppendBuffer(arr, counter, param)

    def view_counter(arr: Any) -> SimCounter:
        return SimCounter(arr)

    return {"__ss_view_Append": view_append, "__ss_view_Counter": view_counter}
