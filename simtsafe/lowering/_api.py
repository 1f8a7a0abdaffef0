"""The ``numba.cuda`` kernel API that simtsafe kernels may name, and how.

An allow-list, by name: anything of ``numba.cuda`` (or ``numba``) that is not
listed here is refused in kernels and device helpers, whatever it is (the
package has submodules whose functions reach the same intrinsics as gated
names under other names). ``simtsafe.decoration._policy`` classifies every
object a kernel refers to with these tables.

Kinds: ``"ok"`` usable anywhere; ``"gated"`` only inside
``with simtsafe.unsafe("SAFETY: ...")`` (shared/local memory, barriers, warp
intrinsics, fences, atomics, cooperative groups, stores with cache hints);
``"dim3"`` a ``threadIdx``-like namespace whose ``x``/``y``/``z`` are ints. A
nested dict is a namespace whose members are classified by it. Two gated names
are Tier-1 values the decorator rewrites instead of refusing:
``cuda.local.array`` outside regions (a bounds-checked thread-private array)
and ``cuda.const.array_like(ARR)`` everywhere (a read-only, bounds-checked
constant array: ``lowering._constarrays``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ._compat import SIMULATOR

__all__ = ["CUDA_API", "NUMBA_API", "TIER1_FORMS", "cuda_object_kinds", "is_numba_scalar_type"]

_DIM3 = ("threadIdx", "blockIdx", "blockDim", "gridDim")
_OK = (
    "laneid",
    "warpsize",
    "grid",
    "gridsize",
    "fma",
    "cbrt",
    "brev",
    "clz",
    "ffs",
    "popc",
    "selp",
    "nanosleep",
    # Loads with cache hints: reads, like a plain int read of an input.
    "ldca",
    "ldcg",
    "ldcs",
    "ldcv",
    "ldlu",
    "literal_unroll",
)
_GATED = (
    "syncthreads",
    "syncthreads_count",
    "syncthreads_and",
    "syncthreads_or",
    "syncwarp",
    "shfl_sync",
    "shfl_up_sync",
    "shfl_down_sync",
    "shfl_xor_sync",
    "all_sync",
    "any_sync",
    "eq_sync",
    "ballot_sync",
    "match_any_sync",
    "match_all_sync",
    "activemask",
    "lanemask_lt",
    "threadfence",
    "threadfence_block",
    "threadfence_system",
    # Stores with cache hints: raw writes through a plain index.
    "stcg",
    "stcs",
    "stwb",
    "stwt",
)
_ATOMICS = (
    "add",
    "sub",
    "max",
    "min",
    "nanmax",
    "nanmin",
    "exch",
    "cas",
    "compare_and_swap",
    "inc",
    "dec",
    "and_",
    "or_",
    "xor",
)

#: The Tier-1 form of each gated API a refusal names (by the API's dotted name; the atomics
#: by their module): what to write instead of an unsafe region.
_ATOMIC_FORMS = (
    "an Accumulate output (acc.add(i, v): a sum or count, never read back), an AppendBuffer "
    "(w = buf.claim(): a unique slot per thread, the fetch-add idiom of stream compaction) or "
    "a HashTable (keys inserted once; docs/atomics.md)"
)
TIER1_FORMS: dict[str, str] = {
    **{f"cuda.atomic.{name}": _ATOMIC_FORMS for name in _ATOMICS},
    **dict.fromkeys(
        (
            "cuda.syncthreads",
            "cuda.syncthreads_count",
            "cuda.syncthreads_and",
            "cuda.syncthreads_or",
        ),
        "simtsafe.block.sync() (block.sum / block.max / block.min of 0/1 values for the "
        "counting and voting forms)",
    ),
    "cuda.shared.array": "simtsafe.shared.tile(shape, dtype) (docs/cooperation.md)",
    **dict.fromkeys(
        ("cuda.shfl_sync", "cuda.shfl_up_sync", "cuda.shfl_down_sync", "cuda.shfl_xor_sync"),
        "simtsafe.warp.broadcast / warp.sum / warp.reduce / warp.scan",
    ),
    **dict.fromkeys(
        ("cuda.all_sync", "cuda.any_sync"),
        "simtsafe.warp.min / warp.max of 0/1 values (all / any)",
    ),
}

CUDA_API: dict[str, Any] = {
    **dict.fromkeys(_DIM3, "dim3"),
    **dict.fromkeys(_OK, "ok"),
    **dict.fromkeys(_GATED, "gated"),
    "shared": {"array": "gated"},
    "local": {"array": "gated"},
    "const": {"array_like": "gated"},  # rewritten by the decorator (module docstring)
    "atomic": dict.fromkeys(_ATOMICS, "gated"),
    "cg": {"this_grid": "gated"},
    "libdevice": "libdevice",  # every public libdevice function: scalar math, "ok"
}

#: What kernels may name of the top-level ``numba`` package (its scalar types are constants).
NUMBA_API: dict[str, Any] = {"literal_unroll": "ok"}

#: Functions of ``numba.cuda.random`` (they write the RNG state array: gated).
_RANDOM = (
    "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64",
    "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
    "xoroshiro128p_next",
    "xoroshiro128p_jump",
    "init_xoroshiro128p_state",
)


def is_numba_scalar_type(obj: Any) -> bool:
    """A Numba scalar type object (``numba.float32``...), usable as a dtype constant."""
    from numba.core import types

    return isinstance(obj, types.Number | types.Boolean)


@cache
def libdevice_names() -> frozenset[str]:
    from numba.cuda import libdevice

    return frozenset(n for n in dir(libdevice) if not n.startswith("_"))


@cache
def cuda_object_kinds() -> dict[int, tuple[str, str]]:
    """id(object) -> (dotted name, kind) for the API objects themselves.

    Lets a kernel use names imported from ``numba.cuda`` directly
    (``from numba.cuda import syncthreads``). On the simulator, where the
    kernel API exists only inside a running kernel, only the
    ``numba.cuda.random`` functions (ordinary objects there too).
    """
    import numba.cuda.random as random

    if SIMULATOR:
        return _random_kinds(random)
    from numba import cuda
    from numba.cuda import libdevice

    kinds: dict[int, tuple[str, str]] = {}
    for name, kind in CUDA_API.items():
        obj = getattr(cuda, name, None)
        if obj is None:
            continue
        if isinstance(kind, dict):
            for member, sub in kind.items():
                if hasattr(obj, member):
                    kinds[id(getattr(obj, member))] = (f"cuda.{name}.{member}", sub)
        elif kind == "libdevice":
            for member in libdevice_names():
                kinds[id(getattr(libdevice, member))] = (f"cuda.libdevice.{member}", "ok")
        else:
            kinds[id(obj)] = (f"cuda.{name}", kind)
    import numba

    kinds.update(_random_kinds(random))
    kinds[id(numba.literal_unroll)] = ("numba.literal_unroll", "ok")
    return kinds


def _random_kinds(random: Any) -> dict[int, tuple[str, str]]:
    """The ``numba.cuda.random`` device functions: gated (they advance a raw state array).

    They exist as objects on both targets (CPU-jitted functions on the simulator,
    which runs their Python bodies), so a kernel names them alike on both.
    """
    return {
        id(getattr(random, name)): (f"numba.cuda.random.{name}", "gated")
        for name in _RANDOM
        if hasattr(random, name)
    }
