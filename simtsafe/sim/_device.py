"""The ``numba.cuda`` kernel API, as the replay's simulated threads see it.

``FakeCuda`` stands in for the ``numba.cuda`` module inside a replayed
kernel (the kernel's globals are rebuilt to point at it, see ``_source``):
thread coordinates come from the running simulated thread; shared, local
and constant arrays are recorded arrays; barriers, warp collectives, grid
sync and fences go to the scheduler; atomics are recorded read-modify-write
operations returning the old value. Everything follows CUDA semantics,
including what Numba's own simulator lacks (warp shuffles and votes,
``syncwarp``, ``activemask``, ``match_*``, cooperative grid sync).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ._memory import ATOMIC, CONST, Buffer, RecArray
from ._poison import Poison
from ._threads import Dim3
from ._warp import FULL_MASK

if TYPE_CHECKING:
    from ._sched import Replay

__all__ = ["FakeCuda", "FakeNumba", "member_map"]


def _width(x: Any) -> int:
    if isinstance(x, np.integer):
        return int(x.dtype.itemsize) * 8
    return 64  # a Python int is an int64 in Numba


def _unsigned(x: Any) -> tuple[int, int]:
    bits = _width(x)
    return int(x) & ((1 << bits) - 1), bits


class _Dim3Proxy:
    """``threadIdx`` / ``blockIdx`` bound by name (``from numba.cuda import threadIdx``)."""

    __slots__ = ("_get",)

    def __init__(self, get: Callable[[], Dim3]) -> None:
        self._get = get

    @property
    def x(self) -> int:
        return self._get().x

    @property
    def y(self) -> int:
        return self._get().y

    @property
    def z(self) -> int:
        return self._get().z


class _Shared:
    __slots__ = ("_r",)

    def __init__(self, replay: Replay) -> None:
        self._r = replay

    def array(self, shape: Any, dtype: Any) -> RecArray:
        """A block's shared array; shape 0 is the launch's dynamic shared memory."""
        f = self._r.user_frame()
        # (the code object by identity: two functions of one body in two modules compare
        # equal, and each has its own array on the GPU; the key lives for one replay, in
        # which the functions it runs, and their code, stay alive)
        return self._r.shared_array(shape, dtype, (id(f.f_code), f.f_lasti))


class _Local:
    __slots__ = ("_r",)

    def __init__(self, replay: Replay) -> None:
        self._r = replay

    def array(self, shape: Any, dtype: Any) -> RecArray:
        """A thread's local array (one per call site and function call, zero-filled once
        where the call starts, like on the GPU)."""
        f = self._r.user_frame()
        return self._r.local_array(shape, dtype, (f.f_code, f.f_lasti), f)


class _Const:
    __slots__ = ("_r",)

    def __init__(self, replay: Replay) -> None:
        self._r = replay

    def array_like(self, ary: Any) -> RecArray:
        """A read-only copy of a host array (constant memory)."""
        f = self._r.user_frame()
        key = (id(f.f_code), f.f_lasti)  # by identity, as a shared array's
        arr = self._r.const_arrays.get(key)
        if arr is None:
            data = _snapshot(ary) if isinstance(ary, RecArray) else np.asarray(ary)
            arr = const_array(self._r, data, "const")
            self._r.const_arrays[key] = arr
        return arr


def _snapshot(ary: RecArray) -> np.ndarray[Any, Any]:
    out = np.empty(ary.shape, ary.dtype)
    for pos in np.ndindex(*ary.shape):
        e = ary._off + sum(i * s for i, s in zip(pos, ary._strides, strict=True))
        out[pos] = ary._data[e]
    return out


def const_array(replay: Replay, data: Any, label: str) -> RecArray:
    """A recorded read-only array over a copy of ``data`` (bounds-checked, not raced)."""
    raw = np.array(data, copy=True, order="C")
    return RecArray.over(replay, Buffer(label, CONST, raw))


#: Atomics whose new value depends on comparing the old one (an undefined operand is a use).
_COMPARING = frozenset({"inc", "dec", "cas", "compare_and_swap"})
_COMPARED = "compared by cuda.atomic.{}"


def recorded_atomic(
    replay: Replay, ary: RecArray, idx: Any, op: str, fn: Callable[[Any], Any]
) -> Any:
    """A Tier-1 atomic of a simulator twin (``_simrt.atomic``), recorded like ``cuda.atomic``."""
    return _Atomic(replay)._rmw(ary, idx, op, fn)


class _Atomic:
    """``cuda.atomic``: recorded read-modify-write operations that return the old value.

    The old value of an undefined element is a poison; so is the new one (an add on
    garbage stays garbage), except where the atomic compares (``_COMPARING``: a use).
    """

    __slots__ = ("_r",)

    def __init__(self, replay: Replay) -> None:
        self._r = replay

    def _rmw(self, ary: Any, idx: Any, op: str, fn: Callable[[Any], Any]) -> Any:
        r = self._r
        if not isinstance(ary, RecArray):
            raise TypeError(
                f"cuda.atomic.{op} needs a device array (a kernel argument, a shared array or "
                f"an `out.unchecked` view); got {type(ary).__name__}"
            )
        e = ary.locate(idx)
        if e is None:
            return r.out_of_bounds(ary, idx if isinstance(idx, tuple) else (idx,), ATOMIC)
        if op == "exch":
            r.initialize(ary, e)  # the old value may be garbage: exch does not depend on it
        origin = r.access(ary, e, ATOMIC)
        r.atomic_sync(ary, e)
        old = ary._data[e] if origin is None else Poison(ary._data[e], origin)
        if op in _COMPARING:  # the new value depends on a comparison: a use
            old = r.defined(old, _COMPARED.format(op))
        # An undefined old value or operand makes the new value undefined (see _uninit).
        ary._store(e, fn(old))
        return old

    def add(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "add", lambda old: old + val)

    def sub(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "sub", lambda old: old - val)

    def and_(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "and_", lambda old: old & val)

    def or_(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "or_", lambda old: old | val)

    def xor(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "xor", lambda old: old ^ val)

    def max(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "max", lambda old: np.maximum(old, val))

    def min(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "min", lambda old: np.minimum(old, val))

    def nanmax(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "nanmax", lambda old: np.fmax(old, val))

    def nanmin(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "nanmin", lambda old: np.fmin(old, val))

    def exch(self, ary: Any, idx: Any, val: Any) -> Any:
        return self._rmw(ary, idx, "exch", lambda old: val)

    def inc(self, ary: Any, idx: Any, val: Any) -> Any:
        val = self._r.defined(val, _COMPARED.format("inc"))
        return self._rmw(ary, idx, "inc", lambda old: 0 if old >= val else old + 1)

    def dec(self, ary: Any, idx: Any, val: Any) -> Any:
        val = self._r.defined(val, _COMPARED.format("dec"))
        return self._rmw(ary, idx, "dec", lambda old: val if old == 0 or old > val else old - 1)

    def cas(self, ary: Any, idx: Any, old: Any, val: Any) -> Any:
        old = self._r.defined(old, _COMPARED.format("cas"))
        return self._rmw(ary, idx, "cas", lambda cur: val if cur == old else cur)

    def compare_and_swap(self, ary: Any, old: Any, val: Any) -> Any:
        old = self._r.defined(old, _COMPARED.format("compare_and_swap"))
        return self._rmw(ary, 0, "compare_and_swap", lambda cur: val if cur == old else cur)


class _GridGroup:
    __slots__ = ("_r",)

    def __init__(self, replay: Replay) -> None:
        self._r = replay

    def sync(self) -> None:
        """Barrier across every thread of a cooperative launch."""
        self._r.grid_sync(self._r.site())


class _CG:
    __slots__ = ("_r",)

    def __init__(self, replay: Replay) -> None:
        self._r = replay

    def this_grid(self) -> _GridGroup:
        return _GridGroup(self._r)


class _Libdevice:
    """``cuda.libdevice``: the math functions, by their Python equivalents."""

    def __getattr__(self, name: str) -> Any:
        base = name.removeprefix("fast_")
        for candidate in (base, base[:-1] if base.endswith("f") else base):
            for module in (math, np):
                fn = getattr(module, candidate, None)
                if callable(fn):
                    return fn
        raise AttributeError(f"cuda.libdevice.{name} is not supported by simtsafe.sim.check")


class FakeCuda:
    """Stands in for the ``numba.cuda`` module inside a replayed kernel."""

    warpsize = 32

    def __init__(self, replay: Replay) -> None:
        import numba.cuda

        self._r = replay
        self._real = numba.cuda
        self.shared = _Shared(replay)
        self.local = _Local(replay)
        self.const = _Const(replay)
        self.atomic = _Atomic(replay)
        self.cg = _CG(replay)
        self.libdevice = _Libdevice()

    # ------------------------------------------------------------------ geometry

    @property
    def threadIdx(self) -> Dim3:  # noqa: N802 - Numba's name
        return self._r.cur.tidx

    @property
    def blockIdx(self) -> Dim3:  # noqa: N802
        return self._r.cur.blk.bidx

    @property
    def blockDim(self) -> Dim3:  # noqa: N802
        return self._r.block

    @property
    def gridDim(self) -> Dim3:  # noqa: N802
        return self._r.grid

    @property
    def laneid(self) -> int:
        return self._r.cur.lane

    def grid(self, ndim: int) -> Any:
        t = self._r.cur
        b, d, i = t.blk.bidx, self._r.block, t.tidx
        x = b.x * d.x + i.x
        if ndim == 1:
            return x
        y = b.y * d.y + i.y
        if ndim == 2:
            return (x, y)
        return (x, y, b.z * d.z + i.z)

    def gridsize(self, ndim: int) -> Any:
        g, d = self._r.grid, self._r.block
        if ndim == 1:
            return g.x * d.x
        if ndim == 2:
            return (g.x * d.x, g.y * d.y)
        return (g.x * d.x, g.y * d.y, g.z * d.z)

    # ------------------------------------------------------------------ barriers and fences

    def syncthreads(self) -> None:
        self._r.barrier("syncthreads", None, self._r.site())

    def syncthreads_count(self, predicate: Any) -> int:
        return int(self._r.barrier("syncthreads_count", predicate, self._r.site()))

    def syncthreads_and(self, predicate: Any) -> int:
        return int(self._r.barrier("syncthreads_and", predicate, self._r.site()))

    def syncthreads_or(self, predicate: Any) -> int:
        return int(self._r.barrier("syncthreads_or", predicate, self._r.site()))

    def threadfence(self) -> None:
        self._r.fence()

    def threadfence_block(self) -> None:
        self._r.fence()

    def threadfence_system(self) -> None:
        self._r.fence()

    def nanosleep(self, ns: int) -> None:
        return None

    # ------------------------------------------------------------------ warp collectives

    def syncwarp(self, mask: int = FULL_MASK) -> None:
        self._r.warp_op("syncwarp", mask, None, 0, 32, self._r.site())

    def shfl_sync(self, mask: int, value: Any, src_lane: int, width: int = 32) -> Any:
        return self._r.warp_op("shfl_sync", mask, value, src_lane, width, self._r.site())

    def shfl_up_sync(self, mask: int, value: Any, delta: int, width: int = 32) -> Any:
        return self._r.warp_op("shfl_up_sync", mask, value, delta, width, self._r.site())

    def shfl_down_sync(self, mask: int, value: Any, delta: int, width: int = 32) -> Any:
        return self._r.warp_op("shfl_down_sync", mask, value, delta, width, self._r.site())

    def shfl_xor_sync(self, mask: int, value: Any, lane_mask: int, width: int = 32) -> Any:
        return self._r.warp_op("shfl_xor_sync", mask, value, lane_mask, width, self._r.site())

    def all_sync(self, mask: int, predicate: Any) -> int:
        return int(self._r.warp_op("all_sync", mask, predicate, 0, 32, self._r.site()))

    def any_sync(self, mask: int, predicate: Any) -> int:
        return int(self._r.warp_op("any_sync", mask, predicate, 0, 32, self._r.site()))

    def eq_sync(self, mask: int, predicate: Any) -> int:
        return int(self._r.warp_op("eq_sync", mask, predicate, 0, 32, self._r.site()))

    def ballot_sync(self, mask: int, predicate: Any) -> int:
        return int(self._r.warp_op("ballot_sync", mask, predicate, 0, 32, self._r.site()))

    def match_any_sync(self, mask: int, value: Any) -> int:
        return int(self._r.warp_op("match_any_sync", mask, value, 0, 32, self._r.site()))

    def match_all_sync(self, mask: int, value: Any) -> tuple[int, bool]:
        bits, same = self._r.warp_op("match_all_sync", mask, value, 0, 32, self._r.site())
        return int(bits), bool(same)

    def activemask(self) -> int:
        return self._r.activemask(self._r.site())

    def lanemask_lt(self) -> int:
        return (1 << self._r.cur.lane) - 1

    # ------------------------------------------------------------------ cache-hinted memory

    def _load(self, array: Any, i: Any) -> Any:
        return array[i]

    def _store(self, array: Any, i: Any, value: Any) -> None:
        array[i] = value

    ldca = ldcg = ldcs = ldlu = ldcv = _load
    stcg = stcs = stwb = stwt = _store

    # ------------------------------------------------------------------ arithmetic intrinsics

    def selp(self, predicate: Any, a: Any, b: Any) -> Any:
        return a if self._r.defined(predicate, "passed as the predicate of cuda.selp") else b

    @staticmethod
    def fma(a: Any, b: Any, c: Any) -> Any:
        return a * b + c

    @staticmethod
    def cbrt(a: Any) -> Any:
        return np.cbrt(a)

    def popc(self, x: Any) -> int:
        v, _ = _unsigned(self._r.defined(x, "passed to cuda.popc"))
        return v.bit_count()

    def clz(self, x: Any) -> int:
        v, bits = _unsigned(self._r.defined(x, "passed to cuda.clz"))
        return bits - v.bit_length()

    def ffs(self, x: Any) -> int:
        v, _ = _unsigned(self._r.defined(x, "passed to cuda.ffs"))
        return (v & -v).bit_length()

    def brev(self, x: Any) -> Any:
        x = self._r.defined(x, "passed to cuda.brev")
        v, bits = _unsigned(x)
        out = int(format(v, f"0{bits}b")[::-1], 2)
        if isinstance(x, np.integer):
            return np.array(out, dtype=f"u{bits // 8}").view(x.dtype)[()]
        return out

    # ------------------------------------------------------------------ everything else

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name, None)
        if value is not None and _is_type(value):
            return value  # numba scalar types (cuda.float32...) used as dtypes or casts
        raise AttributeError(
            f"numba.cuda.{name} is not supported inside kernels checked by simtsafe.sim.check"
        )


def _is_type(value: Any) -> bool:
    import numba

    return isinstance(value, numba.types.Type)


class FakeNumba:
    """Stands in for the ``numba`` module: ``numba.cuda`` is the fake, the rest is numba."""

    def __init__(self, cuda: FakeCuda) -> None:
        import numba

        self.cuda = cuda
        self._real = numba

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def member_map(fake: FakeCuda) -> dict[int, Any]:
    """id(numba.cuda member) -> its stand-in, for globals bound by ``from numba.cuda import``."""
    import numba.cuda as real

    out: dict[int, Any] = {}
    for name in (
        "shared local const atomic cg libdevice syncthreads syncthreads_count syncthreads_and "
        "syncthreads_or threadfence threadfence_block threadfence_system nanosleep syncwarp "
        "shfl_sync shfl_up_sync shfl_down_sync shfl_xor_sync all_sync any_sync eq_sync "
        "ballot_sync match_any_sync match_all_sync activemask lanemask_lt ldca ldcg ldcs ldlu "
        "ldcv stcg stcs stwb stwt selp fma cbrt popc clz ffs brev grid gridsize"
    ).split():
        member = getattr(real, name, None)
        if member is not None:
            out[id(member)] = getattr(fake, name)
    for name, attr in (("threadIdx", "tidx"), ("blockIdx", "bidx")):
        member = getattr(real, name, None)
        if member is not None:
            out[id(member)] = _Dim3Proxy(_getter(fake, attr))
    for name in ("blockDim", "gridDim"):
        member = getattr(real, name, None)
        if member is not None:
            out[id(member)] = getattr(fake, name)
    return out


def _getter(fake: FakeCuda, attr: str) -> Callable[[], Dim3]:
    r = fake._r
    if attr == "tidx":
        return lambda: r.cur.tidx
    return lambda: r.cur.blk.bidx
