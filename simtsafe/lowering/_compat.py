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
from typing import Any

from numba import cuda

__all__ = [
    "NUMBA_CUDA_VERSION",
    "SIMULATOR",
    "SIMULATOR_NOISE",
    "SUPPORTED",
    "assume_compute_capability",
    "check_version",
    "compile_kernel_ir",
    "compile_kernel_ptx",
    "compiled_function_types",
    "current_compute_capability",
    "dumps_kernel",
    "kernel_ir",
    "loads_kernel",
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

    # NotDefinedError: the bytecode reads a name no scope binds (a global read before the
    # function's own binding of that name, which makes it local throughout).
    # NumbaRuntimeError: lowering an object that needs Numba's runtime (a list, a dict).
    names = ("TypingError", "LoweringError", "NotDefinedError", "NumbaRuntimeError")
    classes: list[type[BaseException]] = [getattr(core_errors, n) for n in names]
    if not SIMULATOR:
        from numba.cuda.core import errors as cuda_errors

        classes += [getattr(cuda_errors, n) for n in names]
    return tuple(classes)


def kernel_ir(numba_kernel: Any) -> tuple[list[str], str]:
    """The LLVM IR modules a compiled ``_Kernel`` hands to NVVM, and its entry's name."""
    library = numba_kernel._codelibrary
    return list(library.llvm_strs), str(library._entry_name)


def _compile_kernel(
    function: Any, argtypes: tuple[Any, ...], cc: tuple[int, int], options: dict[str, Any]
) -> Any:
    from numba.cuda import types
    from numba.cuda.compiler import _compile_pyfunc_with_fixup

    library, _ = _compile_pyfunc_with_fixup(
        function, types.void(*argtypes), device=False, cc=cc, abi="numba", **options
    )
    return library


def compile_kernel_ir(
    function: Any, argtypes: tuple[Any, ...], cc: tuple[int, int], **options: Any
) -> tuple[list[str], str]:
    """Type and lower a kernel for the CUDA target (no NVVM): its IR modules and entry.

    ``options``: ``fastmath``, ``lineinfo``, ``debug``, ``opt``, ``launch_bounds``.
    """
    library = _compile_kernel(function, argtypes, cc, options)
    return list(library.llvm_strs), str(library._entry_name)


def compile_kernel_ptx(
    function: Any, argtypes: tuple[Any, ...], cc: tuple[int, int], **options: Any
) -> tuple[str, list[str], str]:
    """``numba.cuda.compile_ptx`` for a kernel, also returning its IR modules and entry.

    The same steps as numba-cuda's own (compile, kernel fix-up, launch bounds,
    NVVM), so the PTX is the one ``compile_ptx`` gives for the same options.
    """
    library = _compile_kernel(function, argtypes, cc, options)
    texts = list(library.llvm_strs)
    entry = str(library._entry_name)
    # One PTX module, except in a debug build: NVVM then compiles each module of the
    # library apart (the kernel's, each helper's), and they follow one another here.
    codes = library.get_asm_strs(cc=cc)
    return "\n".join(str(c) for c in codes), texts, entry


def current_compute_capability() -> tuple[int, int]:
    """The current device's compute capability (needs a GPU)."""
    from numba.cuda.cudadrv import devices

    cc = devices.get_context().device.compute_capability
    return (int(cc[0]), int(cc[1]))


def dumps_kernel(numba_kernel: Any) -> bytes | None:
    """A compiled ``_Kernel`` as bytes, with its PTX and the cubin for the current device
    (numba-cuda's own serialization); None if it cannot be serialized (linked files)."""
    import pickle

    try:
        numba_kernel._codelibrary.get_cubin()
        return pickle.dumps(numba_kernel, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, RuntimeError, TypeError, AttributeError):
        return None


def loads_kernel(data: bytes) -> Any:
    """The other end of ``dumps_kernel``: a ``_Kernel`` that loads its cubin, compiles nothing."""
    import pickle

    return pickle.loads(data)


# --------------------------------------------------------------- Numba-level inlining speed
# ``@ss.device(inline=True)`` helpers (and ``cuda.jit(device=True, inline=True)`` ones) are
# inlined by numba-cuda's untyped ``InlineInlinables`` pass, which for every call site
# (1) runs the untyped pipeline over the callee again, and (2) deep-copies the callee's IR
# block by block with a fresh memo each, so that every block copies the function's whole
# scope (every variable): quadratic in the callee's size, and the callee has its own inlined
# callees in it. The bf16 GEMM (32 inlined calls of a helper in a 4-stage loop) spent ~50 s
# of a ~100 s compile there. Two changes, same code out (a kernel compiled first in its
# process gets numba-cuda's PTX byte for byte, tests/ptx/test_inlining_speed_ptx.py; after
# other compiles, as with numba-cuda alone, the process-wide block-label counter may order
# blocks differently, docs/compiling.md):
# * within one ``InlineWorker.inline_ir`` call, the blocks' copies share one copy of the
#   callee's scope (numba-cuda asserts they are one scope anyway, and replaces it with the
#   caller's after the merge);
# * one ``InlineWorker`` (one pass over one function) runs the untyped pipeline over a
#   callee once and inlines a copy of that IR at each call site (``inline_ir`` copies the
#   callee IR before it changes anything), each copy under a function identity of its own
#   (the inlined locals get names of their own per site, as numba-cuda's do: a debug build
#   keeps them apart). No user code runs between two call sites except an ``inline=`` cost
#   model (which may change what the callee reads: a global, a closure cell); once one has
#   run since the callee was translated, the callee is translated again, as numba-cuda does.

_SCOPE_FIELDS = frozenset({"parent", "localvars", "loc", "redefined", "var_redefinitions"})


def _install_linear_inlining() -> bool:
    """Install the two changes above; False (nothing changed) where numba-cuda's classes are
    not the shape they were checked against."""
    import copy
    import threading
    from collections import defaultdict

    try:
        from numba.cuda.core import bytecode, inline_closurecall, ir, options
    except ImportError:  # pragma: no cover - the simulator-only installs
        return False
    worker = inline_closurecall.InlineWorker
    if getattr(worker, "_simtsafe_linear", False):
        return True
    if not all(hasattr(worker, n) for n in ("inline_ir", "inline_function", "run_untyped_passes")):
        return False  # pragma: no cover - another numba-cuda
    if "__deepcopy__" in vars(ir.Scope):
        return False  # pragma: no cover - numba-cuda copies scopes its own way now
    cost_model = vars(options.InlineOptions).get("has_cost_model")
    if not isinstance(cost_model, property) or cost_model.fget is None:
        return False  # pragma: no cover - another numba-cuda
    local = threading.local()
    models_run = [0]  # cost models asked for so far: each may run user code
    generic = copy._reconstruct  # type: ignore[attr-defined]

    def scope_deepcopy(self: Any, memo: dict[int, Any]) -> Any:
        shared = getattr(local, "scopes", None)
        if shared is not None:
            source, copied = shared.get(id(self), (None, None))
            if source is self:  # (the source is held: its id cannot be another's meanwhile)
                memo[id(self)] = copied
                return copied
        if set(vars(self)) != _SCOPE_FIELDS:  # pragma: no cover - another numba-cuda
            new = generic(self, memo, *self.__reduce_ex__(4))
        else:
            new = ir.Scope.__new__(ir.Scope)
            memo[id(self)] = new
            new.parent = copy.deepcopy(self.parent, memo)
            new.loc = copy.deepcopy(self.loc, memo)
            new.redefined = defaultdict(int, self.redefined)
            new.var_redefinitions = defaultdict(
                set, {k: set(v) for k, v in self.var_redefinitions.items()}
            )
            new.localvars = ir.VarMap()
            con = new.localvars._con
            for name, var in self.localvars._con.items():
                got = memo.get(id(var))
                if got is None:
                    got = memo[id(var)] = ir.Var(new, var.name, var.loc)
                con[name] = got
        if shared is not None:
            shared[id(self)] = (self, new)
        return new

    inline_ir = worker.inline_ir
    inline_function = worker.inline_function

    @functools.wraps(inline_ir)
    def shared_scope_inline_ir(self: Any, *args: Any, **kwargs: Any) -> Any:
        outer = getattr(local, "scopes", None)
        local.scopes = {}
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            local.scopes = outer

    @functools.wraps(inline_function)
    def once_per_callee(
        self: Any, caller_ir: Any, block: Any, i: int, function: Any, arg_typs: Any = None
    ) -> Any:
        cache = self.__dict__.setdefault("_simtsafe_callees", {})
        translated, when = cache.get(function, (None, -1))
        if translated is None or when != models_run[0]:
            translated = self.run_untyped_passes(function)
            cache[function] = (translated, models_run[0])
        callee = translated.copy()  # shallow: inline_ir deep-copies the blocks it changes
        callee.func_id = bytecode.FunctionIdentity.from_function(function)
        freevars = function.__code__.co_freevars
        return self.inline_ir(caller_ir, block, i, callee, freevars, arg_typs=arg_typs)

    def counted_cost_model(self: Any) -> bool:
        asked = bool(cost_model.fget(self))  # type: ignore[misc]
        if asked:
            models_run[0] += 1
        return asked

    ir.Scope.__deepcopy__ = scope_deepcopy
    worker.inline_ir = shared_scope_inline_ir
    worker.inline_function = once_per_callee
    options.InlineOptions.has_cost_model = property(counted_cost_model)
    worker._simtsafe_linear = (inline_ir, inline_function, cost_model)
    return True


def _uninstall_linear_inlining() -> None:
    """numba-cuda's own inlining again (the test that compares the two compiles)."""
    from numba.cuda.core import inline_closurecall, ir, options

    worker = inline_closurecall.InlineWorker
    saved = vars(worker).get("_simtsafe_linear")
    if saved:
        worker.inline_ir, worker.inline_function, options.InlineOptions.has_cost_model = saved
        del worker._simtsafe_linear
        del ir.Scope.__deepcopy__


if not SIMULATOR:
    _install_linear_inlining()
