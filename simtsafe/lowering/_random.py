"""``simtsafe.random``: numba-cuda's xoroshiro128+ draws through the thread's own state.

Each draw advances ``states[k]``; the state array is a 1D ``DisjointSlice`` of
``xoroshiro128p_dtype`` and ``k`` is this thread's witness made linear: a 1D
witness's index; a 2D witness ``(row, col)`` gives ``row * X + col`` and a 3D
one ``(z * Y + y) * X + x``, where ``X`` and ``Y`` are the launch's thread
extents along x and y (``gridDim * blockDim``). A witness's coordinates are
unique per thread and each is below its launch extent (``col < X``, ``row <
Y``), so the linear index is unique per thread too: no two threads advance
the same state (the Tier-1 guarantee of any output write). An invalid
witness (the sentinel row of a 2D witness in a 3D launch) stays out of range.
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


#: The witnesses a draw takes: a thread's element of a 1D, 2D or 3D launch.
_DRAW_SPACES = ("Index1D", "Index2D", "Index3D")


def _message(name: str, what: str) -> str:
    return (
        f"simtsafe.random.{name}(states, w) takes the xoroshiro128p states as a 1D "
        "DisjointSlice[xoroshiro128p_dtype] and this thread's witness (thread.index_1d(), "
        f"grid_stride, thread.index_2d() or thread.index_3d()); got {what}"
    )


def _cuda_draws() -> dict[str, Any]:
    from numba.cuda.np.numpy_support import from_dtype

    from ._cuda import DisjointSliceType, ThreadIndexType
    from ._cuda import _unchecked as unchecked

    state_type = from_dtype(_state_dtype())
    made: dict[str, Any] = {}
    for name in _DRAWS:
        made[f"__ss_random_{name}"] = _cuda_draw(
            name, state_type, DisjointSliceType, ThreadIndexType, unchecked, _linear_index()
        )
    return made


def _linear_index() -> Any:
    """Intrinsic: a draw's state index for a 1D, 2D or 3D witness (the module docstring)."""
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic

    from ._cuda import _sreg, _witness_indices

    def extent(builder: Any, axis: str) -> Any:
        return builder.mul(_sreg(builder, f"nctaid.{axis}"), _sreg(builder, f"ntid.{axis}"))

    def typer(typingctx: Any, w: Any) -> Any:
        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            idx = _witness_indices(context, builder, w, args[0])
            if len(idx) == 1:
                return idx[0]
            i64, i128 = ir.IntType(64), ir.IntType(128)
            sentinel = ir.Constant(i64, 2**63 - 1)
            # Out of its launch extent, a coordinate is the invalid witness's: keep it out.
            # In 128 bits, no launch shape wraps the linear index onto another thread's.
            ok = cgutils.true_bit
            lin = ir.Constant(i128, 0)
            for coord, axis in zip(idx, "zyx"[3 - len(idx) :], strict=True):
                n = extent(builder, axis)
                ok = builder.and_(ok, builder.icmp_unsigned("<", coord, n))
                lin = builder.add(
                    builder.mul(lin, builder.zext(n, i128)), builder.zext(coord, i128)
                )
            ok = builder.and_(ok, builder.icmp_unsigned("<", lin, ir.Constant(i128, 2**63 - 1)))
            return builder.select(ok, builder.trunc(lin, i64), sentinel)

        return types.intp(w), codegen

    return intrinsic(typer)


def _cuda_draw(
    name: str, state_type: Any, slice_type: Any, index_type: Any, unchecked: Any, linear: Any
) -> Any:
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
        if not (isinstance(w, index_type) and w.space in _DRAW_SPACES):
            raise _reject(_message(name, f"an index of type {w}"))
        if w.space == "Index1D":

            def impl(states: Any, w: Any) -> Any:
                # A thread out of range draws nothing and gets 0. The same unsigned compare
                # as w.in_bounds(states): a kernel that checks in_bounds once around its
                # loop of draws lets the compiler fold this check and keep the state in
                # registers across the loop, as in the raw kernel.
                if w.in_bounds(states):
                    return draw(unchecked(states), w.index)
                return zero

            return impl

        def impl_nd(states: Any, w: Any) -> Any:
            k = linear(w)
            if k < states.shape[0]:  # unsigned: the sentinel is out of range
                return draw(unchecked(states), k)
            return zero

        return impl_nd

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
            if not (isinstance(w, SimWitness) and w._space in _DRAW_SPACES):
                raise _reject(_message(_name, f"an index of type {type(w).__name__}"))
            zero = np.float32(0) if _name.endswith("32") else np.float64(0)
            i = _sim_linear(w._idx)
            arr = states._arr
            if not 0 <= i < arr.shape[0]:
                return zero
            # xoroshiro128+ wraps uint64 on purpose; the GPU does so silently, as here.
            with np.errstate(over="ignore"):
                return _numba_draw(_name)(arr, i)

        made[f"__ss_random_{name}"] = draw
    return made


def _sim_linear(idx: tuple[int, ...]) -> int:
    """A draw's state index on the simulator: as the device computes it (_linear_index)."""
    if len(idx) == 1:
        return idx[0]
    from . import _simrt

    _, _, block, grid = _simrt.geometry()
    extents = [g * b for g, b in zip(grid, block, strict=True)][: len(idx)][::-1]
    lin = 0
    for coord, n in zip(idx, extents, strict=True):
        if not 0 <= coord < n:
            return 2**63 - 1
        lin = lin * n + coord
    return lin


_MADE: dict[str, Any] | None = None


def builtins() -> dict[str, Any]:
    """The ``__ss_random_*`` names (built once: overload registration is global)."""
    global _MADE
    if _MADE is None:
        _MADE = _sim_draws() if SIMULATOR else _cuda_draws()
    return dict(_MADE)
