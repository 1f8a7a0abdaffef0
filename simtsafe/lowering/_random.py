"""``simtsafe.random``: numba-cuda's xoroshiro128+ draws through the thread's own state.

Each draw advances ``states[w]``; the state array is a ``DisjointSlice`` of
``xoroshiro128p_dtype`` and the index is this thread's witness, so no two
threads advance the same state (the Tier-1 guarantee of any output write).
Out of range, nothing is drawn and the result is 0. On the CUDA target the
draw calls numba-cuda's own device function (the same code a raw kernel
runs); on the simulator, its Python body.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import SafetyError
from ._compat import SIMULATOR

__all__ = ["builtins"]

_DRAWS = ("uniform_float32", "uniform_float64", "normal_float32", "normal_float64")


def _numba_draw(name: str) -> Any:
    import numba.cuda.random as rng

    return getattr(rng, f"xoroshiro128p_{name}")


def _state_dtype() -> np.dtype[Any]:
    from numba.cuda.random import xoroshiro128p_dtype

    return np.dtype(xoroshiro128p_dtype)


def _reject(message: str) -> Exception:
    if SIMULATOR:
        return SafetyError("simtsafe: " + message, rule="typing")
    from numba.cuda.core import errors

    error: Exception = errors.TypingError("simtsafe: " + message)
    return error


def _message(name: str, what: str) -> str:
    return (
        f"simtsafe.random.{name}(states, w) takes the xoroshiro128p states as a "
        "DisjointSlice[xoroshiro128p_dtype] and this thread's 1D witness "
        f"(thread.index_1d() or grid_stride); got {what}"
    )


def _cuda_draws() -> dict[str, Any]:
    from numba.cuda.np.numpy_support import from_dtype

    from ._cuda import DisjointSliceType, ThreadIndexType
    from ._cuda import _unchecked as unchecked

    state_type = from_dtype(_state_dtype())
    made: dict[str, Any] = {}
    for name in _DRAWS:
        made[f"__ss_random_{name}"] = _cuda_draw(
            name, state_type, DisjointSliceType, ThreadIndexType, unchecked
        )
    return made


def _cuda_draw(name: str, state_type: Any, slice_type: Any, index_type: Any, unchecked: Any) -> Any:
    from numba.cuda.extending import overload

    draw = _numba_draw(name)
    zero = np.float32(0) if name.endswith("32") else np.float64(0)

    def stub(states: Any, w: Any) -> Any:  # typed and lowered by the overload below
        raise NotImplementedError

    stub.__name__ = f"__ss_random_{name}"

    def typer(states: Any, w: Any) -> Any:
        if not (
            isinstance(states, slice_type)
            and states.space == "Index1D"
            and states.dtype == state_type
        ):
            raise _reject(_message(name, f"states of type {states}"))
        if not (isinstance(w, index_type) and w.space == "Index1D"):
            raise _reject(_message(name, f"an index of type {w}"))

        def impl(states: Any, w: Any) -> Any:
            # A thread out of range draws nothing and gets 0. The same unsigned compare as
            # w.in_bounds(states): a kernel that checks in_bounds once around its loop of
            # draws lets the compiler fold this check and keep the state in registers
            # across the loop, as in the raw kernel.
            if w.in_bounds(states):
                return draw(unchecked(states), w.index)
            return zero

        return impl

    overload(stub, target="cuda")(typer)
    return stub


def _sim_draws() -> dict[str, Any]:
    from ._sim import SimDisjointSlice, SimWitness

    made: dict[str, Any] = {}
    for name in _DRAWS:

        def draw(states: Any, w: Any, _name: str = name) -> Any:
            if not (isinstance(states, SimDisjointSlice) and states._space == "Index1D"):
                raise _reject(_message(_name, f"{type(states).__name__}"))
            if not (isinstance(w, SimWitness) and w._space == "Index1D"):
                raise _reject(_message(_name, f"an index of type {type(w).__name__}"))
            zero = np.float32(0) if _name.endswith("32") else np.float64(0)
            (i,) = w._idx
            arr = states._arr
            if not 0 <= i < arr.shape[0]:
                return zero
            # xoroshiro128+ wraps uint64 on purpose; the GPU does so silently, as here.
            with np.errstate(over="ignore"):
                return _numba_draw(_name)(arr, i)

        made[f"__ss_random_{name}"] = draw
    return made


_MADE: dict[str, Any] | None = None


def builtins() -> dict[str, Any]:
    """The ``__ss_random_*`` names (built once: overload registration is global)."""
    global _MADE
    if _MADE is None:
        _MADE = _sim_draws() if SIMULATOR else _cuda_draws()
    return dict(_MADE)
