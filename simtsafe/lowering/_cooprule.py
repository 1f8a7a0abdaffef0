"""The rules of the block and warp collectives and shared accumulators shared by the compiled
form (``_coop``, ``_accumulate``) and the simulator twin (``_coop_sim``): one text for each
refusal."""

from __future__ import annotations

__all__ = [
    "COLLECTIVE_SCALARS",
    "FLAT_HINT",
    "MAX_STATE_FIELDS",
    "STATIC_SHAPE",
    "STATIC_SHARED_LIMIT",
    "OP_SPELLING",
    "STATE_FIELDS",
    "WALK_2D_ACCUMULATOR",
    "accumulator_too_big",
    "static_shared_advice",
    "builtin_state_op",
    "complex_refused",
    "not_a_state",
    "state_op_refused",
    "tuple_refused",
]

#: What follows the refusal of a non-int index of a 1D accumulator (``acc.add((r, c), v)``
#: on an ``Accumulate`` output, which is 1D): the flat spelling, and the 2D shared form.
FLAT_HINT = (
    ". This accumulator is 1D: an Accumulate output always is -- for a 2D array pass its "
    "C-order flat view (`dense.reshape(-1)`) and update `acc.add(r * ncols + c, v)`; a 2D "
    "shared accumulator is made with `shared.accumulator((R, C), dtype)`"
)

#: The refusal of ``thread.block_stride(acc)`` over a 2D shared accumulator (the type's text
#: follows "got"): its reads take a pair of ints, not the walk's Local2D witness.
WALK_2D_ACCUMULATOR = (
    "thread.block_stride() walks a 1D shared accumulator; a 2D accumulator is read at a "
    "pair of ints, acc[i, j]: walk it with `for j in range(cuda.threadIdx.x, acc.size, "
    "cuda.blockDim.x)` and read acc[j // C, j % C]; got {what}"
)

#: The most fields a tuple state of ``block.reduce(state, op)`` / ``warp.reduce`` may have:
#: each field is one shuffle (two for a 64-bit one) per step of the tree, and the block form
#: keeps a 32-slot shared buffer of states.
MAX_STATE_FIELDS = 8

#: The builtin operators of a reduction, as a kernel spells them (by the lowering's name).
OP_SPELLING = {
    "add": "operator.add",
    "mul": "operator.mul",
    "and": "operator.and_",
    "or": "operator.or_",
    "xor": "operator.xor",
    "max": "max",
    "min": "min",
}

#: What follows the refusal of a collective's non-scalar value: the forms that work.
COLLECTIVE_SCALARS = (
    "Collectives exchange numbers: reduce an array element by element; a state of several "
    "fields whose combine mixes them (Welford's count, mean and M2; an argmax's value and "
    "index) is a tuple of 1 to 8 numbers reduced with block.reduce(state, op) or "
    "warp.reduce(state, op), where op is a @simtsafe.device function that combines two "
    "such tuples into one"
)

#: What a tuple state of ``reduce`` may hold.
STATE_FIELDS = (
    f"A reduction's tuple state holds 1 to {MAX_STATE_FIELDS} numbers (int, float or bool "
    "scalars), one per field: unpack a nested tuple, an array or a record's fields into a "
    "flat tuple of numbers"
)


def tuple_refused(api: str, seen: str) -> str:
    """The refusal of a tuple given to a collective that exchanges one number
    (``sum``/``max``/``min``/``scan``/``broadcast``)."""
    scope = api.partition(".")[0]
    return (
        f"{api}(v) takes a number (an int, float or bool scalar); got {seen}. Reduce a tuple "
        f"with {scope}.reduce(state, op) (op: a @simtsafe.device function combining two "
        f"states into one), or call {api} once per field"
    )


def complex_refused(api: str, what: str, seen: str) -> str:
    """The refusal of a complex value given to a collective: its two parts go apart."""
    return (
        f"{api}({what}) takes a number (an int, float or bool scalar); got {seen}. A complex "
        f"value goes as its two parts, `re = {api}({what}.real)` and `im = {api}({what}.imag)`, "
        "then `complex(re, im)` (sum, scan and broadcast; complex numbers have no order for "
        "max and min)"
    )


def not_a_state(api: str, seen: str, why: str) -> str:
    """The refusal of a tuple that is not a valid state (``why``: which field, or its size)."""
    return f"{api}(state, op) got the state {seen}: {why}. {STATE_FIELDS}"


def state_op_refused(api: str, state: str, op: str, seen: str) -> str:
    """The refusal of an ``op`` that does not combine two states into one of the same type."""
    return (
        f"the op of {api} must take two {state} states and return one {state} (every field "
        f"converted to the state's field type, as a scalar reduction converts); {op} "
        f"{seen}. Return a tuple of the same fields, in the same order"
    )


def builtin_state_op(api: str, state: str, op: str) -> str:
    """The refusal of a builtin operator given with a tuple state."""
    return (
        f"the op of {api} with a tuple state must be a @simtsafe.device function that combines "
        f"two {state} states into one; got {op} (operator.add, max and min combine numbers, "
        "not tuples)"
    )


#: How a shared accumulator's shape must be given (a refusal's words).
STATIC_SHAPE = (
    "known when the kernel compiles: a literal, or a module constant of type int (a numpy "
    "integer such as np.int64(4) is not a literal to Numba: write 4, or int(...) where the "
    "constant is made)"
)

#: The most static shared memory a block may declare (CUDA's limit on every GPU; more needs
#: dynamic shared memory). An accumulator past it could never be loaded, and a 2D one's row
#: product is a 32-bit immediate (``_accumulate._pair_pointer``).
STATIC_SHARED_LIMIT = 48 * 1024


def accumulator_too_big(shape: tuple[int, ...], dtype: object, itemsize: int) -> str | None:
    """The refusal of a shared accumulator of ``shape`` past the static shared limit, or None."""
    nbytes = itemsize
    for n in shape:
        nbytes *= n
    if nbytes <= STATIC_SHARED_LIMIT:
        return None
    extents = " x ".join(map(str, shape))
    return (
        f"shared.accumulator: {extents} elements of {dtype} are {nbytes} bytes; a block's static "
        f"shared memory is at most {STATIC_SHARED_LIMIT} bytes (48 KiB) on every GPU: use fewer "
        "or smaller elements"
    )


def static_shared_advice() -> str:
    """What follows the refusal of a kernel's static shared memory past the limit."""
    return (
        f"a block may declare at most {STATIC_SHARED_LIMIT} bytes (48 KiB) on any GPU: make "
        "them smaller or fewer, or keep a tile in the launch's dynamic shared memory "
        "(shared.dynamic_tile, or the contract's tile_shared)"
    )
