"""Simulator twins of the collectives and accumulators (``NUMBA_ENABLE_CUDASIM=1``).

Each simulated thread is a Python thread; a collective is a real
rendezvous through ``_simrt`` (the simulated-thread runtime seam, so
``simtsafe.sim.check`` can install its own runtime behind it): every
participant stores its value in a per-block exchange array (a fresh one
per execution of the call site), meets the others at a barrier
(``_simrt.barrier`` for the block, ``_simrt.warp_sync`` with the mask of
the warp's present lanes for a warp), and computes the result from all the
values. (The GPU code's trailing barrier, which lets the next execution
reuse its one buffer, has no twin here: the simulator's barriers cost
time, and fresh arrays need none.)

The result is computed with the operations of the GPU code in the same
order (``_coop``: xor butterfly, down tree, sequential fold of warp totals,
Hillis-Steele scan), in the same numpy dtype, so integers are exact and
floats are bitwise what the GPU computes for the builtin operators (no fused operations are
involved; a user op's ``a * b + c`` may become one ``fma`` on the GPU). A tuple state
(``reduce(state, op)``) is reduced field-typed the same way: each field in its common dtype
over the threads, the op's result converted back field by field, by the down tree and fold.
"""

from __future__ import annotations

import math
import operator
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, final

import numpy as np

from .._errors import SafetyError
from . import _simrt
from ._cooprule import (
    COLLECTIVE_SCALARS,
    FLAT_HINT,
    MAX_STATE_FIELDS,
    OP_SPELLING,
    STATIC_SHAPE,
    accumulator_too_big,
    builtin_state_op,
    complex_refused,
    not_a_state,
    state_op_refused,
    tuple_refused,
)

__all__ = ["SimAccumulate", "SimSharedAccumulator", "builtins"]

Site = tuple[str, int]

_BUILTIN_OPS: dict[Any, str] = {
    operator.add: "add",
    operator.mul: "mul",
    operator.and_: "and",
    operator.or_: "or",
    operator.xor: "xor",
    max: "max",
    min: "min",
}

_WHAT_ACC_OFFERS = (
    "an Accumulate offers only the atomic updates acc.add(i, v), acc.min(i, v), acc.max(i, v), "
    "and acc.size, acc.shape, len(acc)"
)


def _reject(message: str) -> NoReturn:
    raise SafetyError("simtsafe: " + message, rule="typing")


def _site(depth: int = 2) -> Site:
    """The user's call site, a key of the exchange array of one collective call and the
    barrier its threads meet at: (the file and the instruction on the line, the line).

    Two collectives on one line (``block.sum(x) if c else block.max(x)``) are two call
    sites, as on the GPU, where each has its own scratch and barriers: threads that take
    one and threads that take the other wait at different barriers (a
    ``barrier_divergence``), not at one exchange that mixes their values.
    """
    frame = sys._getframe(depth)
    code = frame.f_code
    return (f"<simtsafe collective> {code.co_filename} @{frame.f_lasti}", frame.f_lineno)


# --------------------------------------------------------------------------- values and ops


def _dtype_of(x: Any, api: str, what: str = "v") -> np.dtype[Any]:
    if isinstance(x, tuple) and what == "v":
        _reject(tuple_refused(api, _type_name(x)))
    if isinstance(x, bool | np.bool_):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float64)
    if isinstance(x, np.float16):
        _reject(
            f"{api}({what}) does not take float16 (Numba's float16 arithmetic is a function call "
            "per operation); convert with np.float32(v) and back"
        )
    if isinstance(x, np.complexfloating | complex):
        _reject(complex_refused(api, what, type(x).__name__))
    if isinstance(x, np.generic) and isinstance(x, np.number):
        return x.dtype
    _reject(
        f"{api}({what}) takes a number (an int, float or bool scalar); got {type(x).__name__}. "
        + COLLECTIVE_SCALARS
    )


def _type_name(x: Any) -> str:
    """A value's type as the refusals name it (a tuple: its fields' types)."""
    if isinstance(x, tuple):
        return f"tuple({', '.join(_type_name(f) for f in x)})"
    return type(x).__name__


def _is_number(x: Any) -> bool:
    """An int, float or bool scalar (what the compiled form's state fields may be)."""
    return isinstance(x, bool | int | float | np.bool_ | np.integer | np.floating)


def _state_argument(api: str, v: Any) -> Any:
    """A reduction's argument: a number, or a tuple state of 1..8 numbers (each defined)."""
    if not isinstance(v, tuple):
        return _argument(v, api)
    if not api.endswith(".reduce"):  # sum, max, min
        _reject(tuple_refused(api, _type_name(v)))
    if hasattr(v, "_fields"):
        _reject(not_a_state(api, _type_name(v), "a named tuple is not a state; pass tuple(...)"))
    if not 1 <= len(v) <= MAX_STATE_FIELDS:
        _reject(not_a_state(api, _type_name(v), f"it has {len(v)} fields"))
    fields = tuple(_argument(f, api) for f in v)
    for k, f in enumerate(fields):
        if isinstance(f, np.float16):
            _dtype_of(f, api, "state")  # the scalar forms' float16 refusal
        if not _is_number(f):
            _reject(
                not_a_state(api, _type_name(v), f"field {k} is {type(f).__name__}, not a number")
            )
    return fields


def _cast(x: Any, dtype: np.dtype[Any]) -> Any:
    """``x`` as a ``dtype`` scalar, as the GPU converts: an integer wraps; a float into an
    integer type rounds toward zero and saturates, NaN giving 0 (``cvt.rzi``, the PTX of
    Numba's float-to-int conversion; numpy's ``astype`` gives the integer minimum instead --
    attack round 22)."""
    value = np.asarray(x)
    if dtype.kind in "iu" and value.dtype.kind == "f":
        info = np.iinfo(dtype)
        f = float(value)
        if math.isnan(f):
            return dtype.type(0)
        return dtype.type(min(max(math.trunc(f) if math.isfinite(f) else f, info.min), info.max))
    with np.errstate(all="ignore"):
        return value.astype(dtype)[()]


def _fmax(a: Any, b: Any) -> Any:
    """``max.f32``/``fmaxf`` as the GPU computes it: a NaN loses, and +0 > -0.

    The tie rule makes the result the same bits in every lane of a butterfly,
    whichever operand each lane holds (``max(+0, -0)`` and ``max(-0, +0)`` are +0).
    """
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b:
        return b if math.copysign(1.0, a) < 0 else a
    return a if a > b else b


def _fmin(a: Any, b: Any) -> Any:
    """``min.f32``/``fminf``: a NaN loses, and -0 < +0."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def _cas_max(old: Any, new: Any) -> Any:
    """numba-cuda's float atomic max (a compare-and-swap loop): it stores ``new`` only when
    neither is NaN and ``old < new``, so a tie (``-0`` and ``+0``) keeps ``old``."""
    if math.isnan(old) or math.isnan(new) or not old < new:
        return old
    return new


def _cas_min(old: Any, new: Any) -> Any:
    """numba-cuda's float atomic min: ``new`` only when neither is NaN and ``old > new``."""
    if math.isnan(old) or math.isnan(new) or not old > new:
        return old
    return new


def _combiner(api: str, op: Any, dtype: np.dtype[Any]) -> tuple[Callable[[Any, Any], Any], bool]:
    """(op on values of ``dtype``, commutative builtin?) -- as the GPU code combines."""
    name = op if isinstance(op, str) else _BUILTIN_OPS.get(op)
    is_float = dtype.kind == "f"
    if name is None:
        if not callable(op):
            _reject(f"the op of {api} must be a function of two values; got {op!r}")

        def call(a: Any, b: Any) -> Any:
            with np.errstate(all="ignore"):
                return _cast(op(a, b), dtype)

        return call, False
    if name in ("and", "or", "xor") and is_float:
        _reject(f"{api}(v, operator.{name}_) needs integer or bool values; got {dtype}")
    if name == "max":
        fn: Callable[[Any, Any], Any] = _fmax if is_float else (lambda a, b: a if a > b else b)
    elif name == "min":
        fn = _fmin if is_float else (lambda a, b: a if a < b else b)
    elif dtype.kind == "b":
        # i1 arithmetic on the GPU: add is xor, mul is and.
        fn = {
            "add": operator.xor,
            "mul": operator.and_,
            "and": operator.and_,
            "or": operator.or_,
            "xor": operator.xor,
        }[name]
    else:
        fn = {
            "add": operator.add,
            "mul": operator.mul,
            "and": operator.and_,
            "or": operator.or_,
            "xor": operator.xor,
        }[name]

    def combine(a: Any, b: Any) -> Any:
        with np.errstate(all="ignore"):
            return _cast(fn(a, b), dtype)

    return combine, True


# --------------------------------------------------------------------------- GPU orders


def _butterfly(vals: Sequence[Any], combine: Callable[[Any, Any], Any]) -> list[Any]:
    """Every lane's result of the 5-step xor butterfly over a full warp."""
    v = list(vals)
    for off in (16, 8, 4, 2, 1):
        v = [combine(v[x], v[x ^ off]) for x in range(32)]
    return v


def _down_tree(vals: Sequence[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """Lane 0's result of the down tree over the present lanes (``len(vals)``)."""
    v = list(vals)
    n = len(v)
    for off in (16, 8, 4, 2, 1):
        v = [combine(v[x], v[x + off]) if x + off < n else v[x] for x in range(n)]
    return v[0]


def _inclusive_scan(vals: Sequence[Any], combine: Callable[[Any, Any], Any]) -> list[Any]:
    """The Hillis-Steele steps of the GPU's warp scan (lane ``l`` adds lane ``l - off``)."""
    v = list(vals)
    for off in (1, 2, 4, 8, 16):
        v = [combine(v[x], v[x - off]) if x >= off else v[x] for x in range(len(v))]
    return v


def _fold(vals: Sequence[Any], combine: Callable[[Any, Any], Any]) -> Any:
    acc = vals[0]
    for item in vals[1:]:
        acc = combine(acc, item)
    return acc


# --------------------------------------------------------------------------- exchange


class _Place:
    """The calling simulated thread's place: linear id, warp, lane, present lanes."""

    def __init__(self) -> None:
        _, (tx, ty, tz), (nx, ny, nz), _ = _simrt.geometry()
        self.ltid = tx + nx * (ty + ny * tz)
        self.nthreads = nx * ny * nz
        self.warp, self.lane = divmod(self.ltid, 32)
        self.present = min(32, self.nthreads - 32 * self.warp)
        self.mask = (1 << self.present) - 1
        self.first = 32 * self.warp
        #: the threads (lanes) that wrote the exchange this place was taken for: every one
        #: of them, and no other, calls ``_once`` on it (set by the exchange)
        self.parties = 0


#: Per simulated thread: site -> how many times the thread has run it. Both runtimes run
#: each simulated thread in an OS thread of its own, started for it and never reused, so
#: this starts empty in every simulated thread. (Not a shared array: the count is this
#: thread's bookkeeping, not kernel memory; sim.check would report its first read as
#: uninitialized shared memory.)
_RUNS = threading.local()


def _slots(place: _Place, site: Site) -> Any:
    """This execution's exchange array for the collective at ``site``.

    Every execution of a call site gets a fresh array (keyed by how many
    times this thread has run the site, the same count in every thread
    since all of them run it), so one barrier suffices: nobody writes an
    array again after the barrier that publishes it.
    """
    runs: dict[Site, int] | None = getattr(_RUNS, "counts", None)
    if runs is None:
        runs = _RUNS.counts = {}
    k = runs.get(site, 0)
    runs[site] = k + 1
    return _simrt.shared_array((place.nthreads,), object, (f"{site[0]} #{k}", site[1]))


_MEMO_LOCK = threading.Lock()
#: id(exchange) -> (the exchange, part -> [lock, done, value, threads finished]). The entry
#: holds its exchange, so the id cannot be reused by another array while the entry lives;
#: a part is dropped when the last of its threads is done with it, the entry with its
#: last part. (Not a weakref.finalize on the exchange: sim.check's recorded arrays have
#: __slots__ and no weak references.)
_MEMO: dict[int, tuple[Any, dict[int, list[Any]]]] = {}


def _once(slots: Any, part: int, parties: int, compute: Callable[[], Any]) -> Any:
    """``compute()`` run once per exchange (``slots``, ``part``: block 0 or a warp).

    A collective's result is a function of the exchanged values alone, so the
    first thread past the barrier computes it for all: a block of n threads
    calls the user's op O(n) times rather than O(n^2), each call being a
    simulated device call that takes the simulator's per-module lock. An op
    that raises leaves nothing cached: every thread raises in turn.
    ``parties`` threads (every participant of the exchange's ``part``) call
    this once each; the last one frees the memo. A raise frees it at once: Numba's
    simulator aborts the block at the first exception, so the others may never come.
    """
    with _MEMO_LOCK:
        entry = _MEMO.get(id(slots))
        if entry is None or entry[0] is not slots:
            entry = _MEMO[id(slots)] = (slots, {})
        cells = entry[1]
        cell = cells.get(part)
        if cell is None:
            cell = cells[part] = [threading.Lock(), False, None, 0]
    raised = True
    try:
        with cell[0]:
            if not cell[1]:
                cell[2] = compute()
                cell[1] = True
            raised = False
            return cell[2]
    finally:
        with _MEMO_LOCK:
            cell[3] += 1
            # the last participant frees the cell; a raise frees it at once (the launch ends
            # there and the others may never come: each that does computes, and raises, anew)
            if (raised or cell[3] >= parties) and cells.get(part) is cell:
                del cells[part]
                if not cells and _MEMO.get(id(slots)) is entry:
                    del _MEMO[id(slots)]


@final
class _Arrived:
    """A value a thread put in an exchange slot (a slot holding anything else was never
    written: its thread did not arrive)."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v


def _exchange_block(v: Any, site: Site) -> tuple[_Place, Any, list[Any]]:
    """(place, exchange, every thread's ``v`` in linear order): a block-wide rendezvous.

    A thread that never arrives (it returned early, or waits at another barrier) leaves its
    slot unwritten; ``simtsafe.sim.check`` reports that as a ``barrier_divergence`` when it
    releases the others, as at a plain ``block.sync()``, and they go on. The missing
    values (undefined on the GPU) are taken as the first arrived thread's, so that the
    collective computes a value of the right type instead of failing on the unwritten slot.
    """
    place = _Place()
    slots = _slots(place, site)
    slots[place.ltid] = _Arrived(v)
    _simrt.barrier(site)
    return place, slots, _arrived(place, list(slots))


def _arrived(place: _Place, got: list[Any]) -> list[Any]:
    """The values in exchange slots ``got``, a slot no thread wrote taking the first
    written one's (the caller's own slot, at least, is written).

    ``place.parties`` becomes the number of written slots: the threads that will ask
    ``_once`` for the result, so that the last of them frees its memo (counting the block
    or warp instead left the memo of every exchange some threads skipped, and the exchange
    array with it, alive for the rest of the process).
    """
    arrived = [type(x) is _Arrived for x in got]
    place.parties = sum(arrived)
    first = got[arrived.index(True)]
    return [(x if came else first).v for x, came in zip(got, arrived, strict=True)]


def _exchange_warp(v: Any, api: str, site: Site) -> tuple[_Place, Any, list[Any]]:
    """(place, exchange, the ``v`` of every present lane of the caller's warp in lane order).

    The collective is shuffles on the GPU: the lanes of one call meet, and nothing orders
    their memory accesses (``_simrt.warp_exchange``, not a ``syncwarp``). So the exchange's
    own slots are written and read as atomics (``exch``), which never race with each other:
    the kernel's shared memory is the only memory whose order the meeting must not imply.
    """
    place = _Place()
    slots = _slots(place, site)
    _simrt.atomic(slots, place.ltid, "exch", lambda _: _Arrived(v))
    _simrt.warp_exchange(place.mask, api, site)
    got = [
        _simrt.atomic(slots, j, "exch", lambda old: old)
        for j in range(place.first, place.first + place.present)
    ]
    # A lane that did not arrive left its slot unwritten: sim.check has reported the warp
    # mask already; its value is taken as the first arrived lane's, as in a block exchange.
    return place, slots, _arrived(place, got)


def _common_dtype(api: str, vals: Sequence[Any], widen_bool: bool) -> np.dtype[Any]:
    dtype = np.result_type(*{_dtype_of(x, api) for x in vals})
    if widen_bool and dtype.kind == "b":
        return np.dtype(np.int64)
    return dtype


def _argument(v: Any, api: str) -> Any:
    """A collective's argument, which must be defined (``simtsafe.sim.check`` reports it)."""
    if isinstance(v, np.generic | int | float | complex):
        return v
    return _simrt.defined(v, f"passed to {api}")


def _op_name(op: Any) -> str:
    fn = getattr(op, "py_func", op)
    return f"`{getattr(fn, '__name__', repr(op))}`"


def _state_combiner(
    api: str, op: Any, vals: Sequence[Any]
) -> tuple[list[Any], Callable[[Any, Any], Any]]:
    """(every thread's tuple state cast to the fields' common types, the op on two states).

    Each field has one type in every thread, as Numba types one state for all of them:
    the field's values' common type (``_common_dtype``); the op's result is converted to
    it field by field, as the GPU code converts the op's return value.
    """
    n = len(vals[0]) if isinstance(vals[0], tuple) else 0
    if any(not isinstance(x, tuple) or len(x) != n for x in vals):
        shapes = sorted({_type_name(x) for x in vals})
        _reject(
            f"{api}(state, op): the threads passed states of different shapes ({shapes[0]} "
            f"and {shapes[-1]}); every thread passes a tuple of the same fields"
        )
    dtypes = [_common_dtype(api, [x[k] for x in vals], False) for k in range(n)]
    state = f"tuple({', '.join(str(d) for d in dtypes)})"
    if isinstance(op, str) or op in _BUILTIN_OPS:
        name = op if isinstance(op, str) else _BUILTIN_OPS[op]
        _reject(builtin_state_op(api, state, OP_SPELLING.get(name, repr(op))))
    if not callable(op):
        _reject(f"the op of {api} must be a function of two values; got {op!r}")

    def fields(x: Any) -> tuple[Any, ...]:
        return tuple(_cast(f, d) for f, d in zip(x, dtypes, strict=True))

    def combine(a: Any, b: Any) -> Any:
        with np.errstate(all="ignore"):
            r = op(a, b)
        if not (isinstance(r, tuple) and len(r) == n and all(_is_number(f) for f in r)):
            _reject(state_op_refused(api, state, _op_name(op), f"returns {_type_name(r)}"))
        return fields(r)

    return [fields(x) for x in vals], combine


def _prepared(
    api: str, op: Any, vals: Sequence[Any], widen_bool: bool
) -> tuple[list[Any], Callable[[Any, Any], Any], bool]:
    """(every thread's value in the type the GPU code reduces in, the op, commutative builtin?)."""
    if any(isinstance(x, tuple) for x in vals):
        cast, combine = _state_combiner(api, op, vals)
        return cast, combine, False  # a user op: the down tree and a broadcast, as on the GPU
    dtype = _common_dtype(api, vals, widen_bool)
    combine, commutative = _combiner(api, op, dtype)
    return [_cast(x, dtype) for x in vals], combine, commutative


def _warp_reduce(api: str, v: Any, op: Any, site: Site, widen_bool: bool = False) -> Any:
    place, slots, vals = _exchange_warp(_state_argument(api, v), api, site)

    def lanes() -> list[Any]:
        cast, combine, commutative = _prepared(api, op, vals, widen_bool)
        if commutative and place.present == 32:
            return _butterfly(cast, combine)
        return [_down_tree(cast, combine)] * place.present

    return _once(slots, place.warp, place.parties, lanes)[place.lane]


def _block_reduce(api: str, v: Any, op: Any, site: Site, widen_bool: bool = False) -> Any:
    place, slots, vals = _exchange_block(_state_argument(api, v), site)

    def total() -> Any:
        cast, combine, _ = _prepared(api, op, vals, widen_bool)
        totals = [_down_tree(cast[w : w + 32], combine) for w in range(0, place.nthreads, 32)]
        return _fold(totals, combine)

    return _once(slots, 0, place.parties, total)


def _warp_scan(v: Any, inclusive: bool, site: Site) -> Any:
    place, _, vals = _exchange_warp(_argument(v, "warp.scan"), "warp.scan", site)
    dtype = _common_dtype("warp.scan", vals, widen_bool=True)
    combine, _ = _combiner("warp.scan", "add", dtype)
    scanned = _inclusive_scan([_cast(x, dtype) for x in vals], combine)
    if inclusive:
        return scanned[place.lane]
    return scanned[place.lane - 1] if place.lane > 0 else dtype.type(0)


def _block_scan(v: Any, inclusive: bool, site: Site) -> Any:
    place, slots, vals = _exchange_block(_argument(v, "block.scan"), site)
    dtype = _common_dtype("block.scan", vals, widen_bool=True)
    combine, _ = _combiner("block.scan", "add", dtype)

    def scans() -> list[list[Any]]:
        cast = [_cast(x, dtype) for x in vals]
        return [_inclusive_scan(cast[w : w + 32], combine) for w in range(0, place.nthreads, 32)]

    warps = _once(slots, 0, place.parties, scans)
    mine = warps[place.warp]
    x = mine[place.lane]
    excl = mine[place.lane - 1] if place.lane > 0 else dtype.type(0)
    if place.warp == 0:
        return x if inclusive else excl
    prefix = _fold([w[-1] for w in warps[: place.warp]], combine)
    if inclusive:
        return combine(prefix, x)
    return prefix if place.lane == 0 else combine(prefix, excl)


# --------------------------------------------------------------------------- accumulators


def _int_index(i: Any, form: str) -> int:
    """The int index of ``form`` (``acc.add(i, v)``); a refusal naming ``form`` otherwise."""
    i = _argument(i, f"{form} as the index")
    if isinstance(i, bool) or not isinstance(i, int | np.integer):
        _reject(f"{form}: the index must be an int; got {type(i).__name__}{FLAT_HINT}")
    return int(i)


def _int_pair(ij: Any, form: str, refusal: str) -> tuple[int, int]:
    """The two ints of a 2D accumulator's index in ``form``; ``refusal`` (``... at a pair of
    ints ...``, the compiled form's words) otherwise."""
    if isinstance(ij, tuple):
        ij = tuple(_argument(x, f"{form} as the index") for x in ij)
    if (
        not isinstance(ij, tuple)
        or len(ij) != 2
        or any(isinstance(x, bool) or not isinstance(x, int | np.integer) for x in ij)
    ):
        _reject(f"{refusal}; got {ij!r}")
    return int(ij[0]), int(ij[1])


def _flat_index(shape: tuple[int, ...], i: Any, name: str) -> int | None:
    """The element of a 1D (``i``) or 2D (``(i, j)``) accumulator an update names, as an
    index into its flat storage; ``None`` out of range (each axis checked, as on the GPU)."""
    if len(shape) == 2:
        form = f"acc.{name}((i, j), v)"
        refusal = f"{form}: a 2D accumulator {shape} is updated at a pair of ints (i, j)"
        r, c = _int_pair(i, form, refusal)
        return r * shape[1] + c if 0 <= r < shape[0] and 0 <= c < shape[1] else None
    k = _int_index(i, f"acc.{name}(i, v)")
    return k if 0 <= k < shape[0] else None


def _atomic_update(arr: Any, shape: tuple[int, ...], i: Any, v: Any, name: str) -> None:
    k = _flat_index(shape, i, name)
    v = _argument(v, f"acc.{name}(i, v) as the value")
    if k is None:
        return  # out of range: ignored, as on the GPU
    new = _cast(v, arr.dtype)

    def update(old: Any) -> Any:
        if name == "add":
            return old + new
        if arr.dtype.kind == "f":
            return _cas_max(old, new) if name == "max" else _cas_min(old, new)
        return max(old, new) if name == "max" else min(old, new)

    # Through the runtime seam: simtsafe.sim.check records an atomic (atomics never race
    # with each other), Numba's simulator takes a lock.
    with np.errstate(all="ignore"):
        _simrt.atomic(arr, k, name, update)


class _SimAccumulator:
    """An accumulator over the flat array ``arr`` of ``shape`` (1D, or 2D row-major)."""

    __slots__ = ("_arr", "_shape")

    def __init__(self, arr: Any, shape: tuple[int, ...] | None = None) -> None:
        self._arr = arr
        self._shape = shape or (int(arr.shape[0]),)

    def add(self, i: Any, v: Any) -> None:
        _atomic_update(self._arr, self._shape, i, v, "add")

    def min(self, i: Any, v: Any) -> None:
        _atomic_update(self._arr, self._shape, i, v, "min")

    def max(self, i: Any, v: Any) -> None:
        _atomic_update(self._arr, self._shape, i, v, "max")

    def __len__(self) -> int:
        return self._shape[0]

    @property
    def size(self) -> int:
        return int(self._arr.shape[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    def __setitem__(self, i: Any, v: Any) -> NoReturn:
        _reject(
            "an accumulator is not written with `acc[i] = v` (two threads could write the "
            "same element); use acc.add(i, v), acc.min(i, v) or acc.max(i, v)"
        )

    def __getattr__(self, name: str) -> NoReturn:
        _reject(f"an accumulator has no .{name}: {_WHAT_ACC_OFFERS}")


@final
class SimAccumulate(_SimAccumulator):
    """``Accumulate[T]`` on the simulator: atomic updates, no reads."""

    __slots__ = ()

    def __getitem__(self, i: Any) -> NoReturn:
        _reject(
            f"an Accumulate is not read during the launch (another thread may be updating "
            f"it); {_WHAT_ACC_OFFERS}. Read the result after the launch, or accumulate in "
            "simtsafe.shared.accumulator(...) and read that after simtsafe.block.sync()"
        )


@final
class SimSharedAccumulator(_SimAccumulator):
    """``shared.accumulator`` on the simulator: atomic updates; bounds-checked reads."""

    __slots__ = ()

    def __getitem__(self, i: Any) -> Any:
        if len(self._shape) == 2:
            refusal = f"a 2D shared accumulator {self._shape} is read at a pair of ints acc[i, j]"
            r, c = _int_pair(i, "acc[i, j]", refusal)
            rows, cols = self._shape
            inside = 0 <= r < rows and 0 <= c < cols
            return self._arr[r * cols + c] if inside else self._arr.dtype.type(0)
        space = getattr(i, "_space", None)
        if space is None and not isinstance(i, int | np.integer):
            # an index loaded from memory no thread wrote (simtsafe.sim.check): a use,
            # reported by the runtime, as a tile's index is; the plain value indexes
            i = _simrt.defined(i, "used as an index of a shared accumulator")
        if space is not None:
            if space != "Local1D":
                _reject(
                    "a shared accumulator is read with an int or a thread.local_index() "
                    f"witness; got ThreadIndex[{space}]"
                )
            i = i._idx[0]
        elif isinstance(i, bool) or not isinstance(i, int | np.integer):
            _reject(
                "a shared accumulator is read with an int or a thread.local_index() witness; "
                f"got {type(i).__name__}"
            )
        i = int(i)
        if not 0 <= i < self._arr.shape[0]:
            return self._arr.dtype.type(0)
        return self._arr[i]


def _accumulator_shape(n: Any) -> tuple[int, ...]:
    if isinstance(n, tuple):
        if len(n) != 2 or any(
            isinstance(x, bool) or not isinstance(x, int | np.integer) or x < 1 for x in n
        ):
            _reject(
                "shared.accumulator(shape, dtype): a 2D accumulator's shape is a pair of "
                f"positive ints {STATIC_SHAPE}, such as (256, 32); got {n!r}"
            )
        return (int(n[0]), int(n[1]))
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        _reject(f"shared.accumulator(n, dtype): n must be an int of at least 1; got {n!r}")
    return (int(n),)


def _shared_accumulator(n: Any, dtype: Any, site: Site) -> SimSharedAccumulator:
    shape = _accumulator_shape(n)
    size = shape[0] * (shape[1] if len(shape) == 2 else 1)
    dt = np.dtype(dtype)
    if dt not in (np.int32, np.int64, np.uint32, np.uint64, np.float32, np.float64):
        _reject(
            "shared.accumulator(n, dtype) needs an element type with CUDA atomics (int32, "
            f"int64, uint32, uint64, float32, float64); got {dt}"
        )
    too_big = accumulator_too_big(shape, dt, dt.itemsize)
    if too_big is not None:
        _reject(too_big)
    arr = _simrt.shared_array((size,), dt, site)
    place = _Place()
    for j in range(place.ltid, size, place.nthreads):
        arr[j] = 0
    _simrt.barrier(site)
    return SimSharedAccumulator(arr, shape)


# --------------------------------------------------------------------------- names


def builtins(*, proven_domain: int | None) -> dict[str, Any]:
    """The ``__ss_block_*`` / ``__ss_warp_*`` / ``__ss_grid_sync`` / accumulator names on the
    simulator."""

    def block_sync() -> None:
        _simrt.barrier(_site())

    def grid_sync() -> None:
        # A cooperative launch (lowering/_grid_sim) waits for the whole grid; any other
        # launch refuses it there (rule "grid-sync").
        _simrt.grid_sync(_site())

    def grid_read(ds: Any, idx: Any) -> Any:
        from ._sim import SimDisjointSlice, read_element  # _sim imports this module

        if not isinstance(ds, SimDisjointSlice):
            _reject(
                "grid.read(out, i) reads an output (a DisjointSlice parameter) that other "
                f"threads wrote before a grid sync; got {type(ds).__name__}. Read inputs by "
                "index directly"
            )
        parts = idx if isinstance(idx, tuple) else (idx,)
        ndim = ds.ndim
        if len(parts) != ndim or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in parts
        ):
            want = "an int" if ndim == 1 else f"a tuple of {ndim} ints"
            _reject(f"grid.read of a {ndim}D output takes {want} as its index; got {idx!r}")
        if ds._arr.dtype.names is not None:
            _reject("grid.read reads scalar elements; this output has records")
        return read_element(ds, tuple(int(v) for v in parts))

    def view_acc(arr: Any) -> SimAccumulate:
        if getattr(arr, "ndim", 1) != 1:
            _reject(f"an Accumulate parameter is a 1D device array; got {arr.ndim}D")
        return SimAccumulate(arr)

    def shared_accumulator(n: Any, dtype: Any) -> SimSharedAccumulator:
        return _shared_accumulator(n, dtype, _site())

    names: dict[str, Any] = {
        "__ss_block_sync": block_sync,
        "__ss_grid_sync": grid_sync,
        "__ss_grid_read": grid_read,
        "__ss_view_acc": view_acc,
        "__ss_shared_accumulator": shared_accumulator,
    }
    for scope, reduce_fn in (("block", _block_reduce), ("warp", _warp_reduce)):
        names.update(_reductions(scope, reduce_fn))
    names["__ss_block_scan"] = lambda v, inclusive=True: _block_scan(v, bool(inclusive), _site())
    names["__ss_warp_scan"] = lambda v, inclusive=True: _warp_scan(v, bool(inclusive), _site())
    names["__ss_block_broadcast"] = lambda v: _broadcast_block(v, _site())
    names["__ss_warp_broadcast"] = lambda v: _broadcast_warp(v, _site())
    return names


def _reductions(scope: str, reduce_fn: Callable[..., Any]) -> dict[str, Any]:
    def sum_(v: Any) -> Any:
        return reduce_fn(f"{scope}.sum", v, "add", _site(), widen_bool=True)

    def max_(v: Any) -> Any:
        return reduce_fn(f"{scope}.max", v, "max", _site())

    def min_(v: Any) -> Any:
        return reduce_fn(f"{scope}.min", v, "min", _site())

    def reduce_(v: Any, op: Any) -> Any:
        return reduce_fn(f"{scope}.reduce", v, op, _site())

    return {
        f"__ss_{scope}_sum": sum_,
        f"__ss_{scope}_max": max_,
        f"__ss_{scope}_min": min_,
        f"__ss_{scope}_reduce": reduce_,
    }


def _broadcast_block(v: Any, site: Site) -> Any:
    v = _argument(v, "block.broadcast")
    _dtype_of(v, "block.broadcast")
    _, _, vals = _exchange_block(v, site)
    return vals[0]


def _broadcast_warp(v: Any, site: Site) -> Any:
    v = _argument(v, "warp.broadcast")
    _dtype_of(v, "warp.broadcast")
    _, _, vals = _exchange_warp(v, "warp.broadcast", site)
    return vals[0]
