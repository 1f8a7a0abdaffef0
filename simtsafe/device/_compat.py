"""The one place that knows numba-cuda's version and internals.

Everything simtsafe imports from ``numba.cuda`` beyond its public API goes
through here, so a numba-cuda upgrade changes one module.
"""

from __future__ import annotations

import importlib.metadata

from numba import cuda

__all__ = [
    "NUMBA_CUDA_VERSION",
    "SIMULATOR",
    "SUPPORTED",
    "gated_cuda_names",
    "typing_error_classes",
]

NUMBA_CUDA_VERSION: str = importlib.metadata.version("numba-cuda")

#: numba-cuda releases whose private launch/typing internals simtsafe was checked against.
SUPPORTED = ("0.30.",)

#: True when NUMBA_ENABLE_CUDASIM=1: kernels run as Python on the CPU.
SIMULATOR: bool = bool(cuda.config.ENABLE_CUDASIM)

if not NUMBA_CUDA_VERSION.startswith(SUPPORTED):  # pragma: no cover - guarded by the pin
    raise ImportError(
        f"simtsafe supports numba-cuda {' or '.join(s + 'x' for s in SUPPORTED)}, found "
        f"{NUMBA_CUDA_VERSION}; install the version pinned in simtsafe's pyproject.toml"
    )


def gated_cuda_names() -> frozenset[str]:
    """Attributes of ``numba.cuda`` usable only inside ``simtsafe.unsafe`` regions.

    Shared/local/constant memory, barriers, warp intrinsics, fences, atomics
    and cooperative groups: each can break the disjoint-write invariant or
    deadlock when misused, so each needs a stated reason.
    """
    return frozenset(
        {
            "shared",
            "local",
            "const",
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
            "atomic",
            "cg",
            "stcg",
            "stcs",
            "stwb",
            "stwt",
        }
    )


def typing_error_classes() -> tuple[type[BaseException], ...]:
    """Numba's typing/lowering error classes (numba-cuda vendors its own copies)."""
    from numba.core import errors as core_errors

    classes: list[type[BaseException]] = [core_errors.TypingError, core_errors.LoweringError]
    if not SIMULATOR:
        from numba.cuda.core import errors as cuda_errors

        classes += [cuda_errors.TypingError, cuda_errors.LoweringError]
    return tuple(classes)
