"""The one place that knows numba-cuda's version and internals.

Everything simtsafe imports from ``numba.cuda`` beyond its public API goes
through here, so a numba-cuda upgrade changes one module.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import warnings
from collections.abc import Iterator

from numba import cuda

__all__ = [
    "NUMBA_CUDA_VERSION",
    "SIMULATOR",
    "SIMULATOR_NOISE",
    "SUPPORTED",
    "assume_compute_capability",
    "check_version",
    "compiled_function_types",
    "quiet_simulator_noise",
    "typing_error_classes",
    "typing_error_location",
]

NUMBA_CUDA_VERSION: str = importlib.metadata.version("numba-cuda")

#: numba-cuda releases whose private launch/typing internals simtsafe was checked against.
SUPPORTED = ("0.30.",)

#: True when NUMBA_ENABLE_CUDASIM=1: kernels run as Python on the CPU.
SIMULATOR: bool = bool(cuda.config.ENABLE_CUDASIM)


def check_version(version: str = NUMBA_CUDA_VERSION) -> str | None:
    """A warning text when ``version`` is outside the tested numba-cuda releases, else None."""
    if version.startswith(SUPPORTED):
        return None
    return (
        f"simtsafe was tested with numba-cuda {' or '.join(s + 'x' for s in SUPPORTED)}, found "
        f"{version}: simtsafe reaches numba-cuda internals (launch path, typing registries), "
        "which may have changed. Install numba-cuda 0.30.x (requirements/constraints.txt pins "
        "the tested set) if kernels fail to compile or launch"
    )


_WARNING = check_version()
if _WARNING is not None:  # pragma: no cover - guarded by the pin
    warnings.warn(_WARNING, RuntimeWarning, stacklevel=2)

#: Warnings numba-cuda's own simulator code raises about itself, by design, as
#: (category name, message, origin): on the simulator numba.cuda.random compiles its host-side
#: state initialisation with ``jit(forceobj=True)`` (its device functions are Python there)
#: and Numba reports the object-mode fallback at the first ``create_xoroshiro128p_states``;
#: xoroshiro128+ then wraps uint64 on purpose, which numpy scalars report as overflow.
#: Nothing a user can act on. Matched by category, message *and* numba-cuda's random.py as
#: the origin, so the same warnings from user code stay visible.
SIMULATOR_NOISE = (
    (
        "NumbaWarning",
        r"(?s)\s*Compilation is falling back to object mode",
        r".*numba[/\\.]cuda[/\\.]random",
    ),
    ("RuntimeWarning", r"overflow encountered in scalar", r"numba\.cuda\.random"),
)


def quiet_simulator_noise() -> None:
    """Ignore :data:`SIMULATOR_NOISE` (on the simulator only)."""
    if not SIMULATOR:
        return
    from numba.core.errors import NumbaWarning

    categories: dict[str, type[Warning]] = {
        "NumbaWarning": NumbaWarning,
        "RuntimeWarning": RuntimeWarning,
    }
    for category, message, module in SIMULATOR_NOISE:
        warnings.filterwarnings(
            "ignore", message=message, category=categories[category], module=module
        )


quiet_simulator_noise()


@functools.cache
def compiled_function_types() -> tuple[type, ...]:
    """Classes of Numba-compiled callables (dispatchers, intrinsics, simulator kernels)."""
    from numba.core.dispatcher import _DispatcherBase
    from numba.core.extending import _Intrinsic as CoreIntrinsic

    kinds: list[type] = [_DispatcherBase, CoreIntrinsic]
    if SIMULATOR:
        from numba.cuda.simulator.kernel import FakeCUDAKernel

        kinds.append(FakeCUDAKernel)
    else:
        from numba.cuda.dispatcher import CUDADispatcher
        from numba.cuda.extending import _Intrinsic as CudaIntrinsic

        kinds += [CUDADispatcher, CudaIntrinsic]
    return tuple(kinds)


@contextlib.contextmanager
def assume_compute_capability(cc: tuple[int, int]) -> Iterator[None]:
    """Let device functions compile to PTX for ``cc`` without a GPU.

    numba-cuda asks the current device for its compute capability when it
    compiles a device function called from a kernel; ``Kernel.ptx`` only
    needs NVVM, so answer with the requested one for the duration.
    """
    import numba.cuda.dispatcher as dispatcher

    class _Device:
        compute_capability = cc

    saved = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: _Device()
    try:
        yield
    finally:
        dispatcher.get_current_device = saved


def typing_error_location(exc: BaseException) -> tuple[str, int] | None:
    """(filename, line) of the kernel statement a Numba typing error is about.

    numba-cuda 0.30.4 attaches no location when an error is raised with
    numba core's ``TypingError`` class (its constraint loop catches only its
    own vendored class), so look for the failing constraint's ``loc`` in the
    traceback's frames instead, innermost user-code location last wins.
    """
    loc = getattr(exc, "loc", None)
    if loc is not None and getattr(loc, "line", None):
        return str(loc.filename), int(loc.line)
    found: tuple[str, int] | None = None
    tb = exc.__traceback__
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("loc")
        if (
            candidate is not None
            and getattr(candidate, "line", None)
            and hasattr(candidate, "filename")
        ):
            found = (str(candidate.filename), int(candidate.line))
        tb = tb.tb_next
    return found


def typing_error_classes() -> tuple[type[BaseException], ...]:
    """Numba's typing/lowering error classes (numba-cuda vendors its own copies)."""
    from numba.core import errors as core_errors

    classes: list[type[BaseException]] = [core_errors.TypingError, core_errors.LoweringError]
    if not SIMULATOR:
        from numba.cuda.core import errors as cuda_errors

        classes += [cuda_errors.TypingError, cuda_errors.LoweringError]
    return tuple(classes)
