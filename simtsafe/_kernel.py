"""``@simtsafe.kernel`` and ``@simtsafe.device``: checked, rewritten Numba CUDA functions.

Decoration parses the annotations (``_params``), validates the contract
against them, and checks + rewrites the source (``analysis``); nothing is
compiled yet. The first ``prepare`` (or ``ptx``) resolves the function's
globals, binds the ``__ss_*`` device builtins for the contract's proven
domain, and compiles one specialization per input-layout combination.
"""

from __future__ import annotations

import re
import types as pytypes
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    NoReturn,
    ParamSpec,
    SupportsIndex,
    final,
    overload,
)

from numba import cuda

from ._contract import BoundContract, LaunchContract
from ._errors import SafetyError, UnsafeRegionRequired
from ._params import Param, parse_params
from ._unsafe import in_unsafe_region
from .analysis._rewrite import ParamView, Rewritten, UnsafeRegion, rewrite
from .device import builtins as device_builtins
from .device._compat import (
    SIMULATOR,
    assume_compute_capability,
    gated_cuda_names,
    typing_error_classes,
    typing_error_location,
)

if TYPE_CHECKING:
    from ._prepare import PreparedLaunch

__all__ = ["DeviceFunction", "Kernel", "device", "kernel"]

P = ParamSpec("P")

#: A grid or block: an int or 1 to 3 ints (numpy integers too), padded with 1s.
Dims = (
    SupportsIndex
    | tuple[SupportsIndex]
    | tuple[SupportsIndex, SupportsIndex]
    | tuple[SupportsIndex, SupportsIndex, SupportsIndex]
)

_GATED_NAMES = gated_cuda_names()
_GATED_IDS = frozenset(id(getattr(cuda, n)) for n in _GATED_NAMES if hasattr(cuda, n))


def _is_gated(obj: Any, attr: str) -> bool:
    if attr:
        return obj is cuda and attr in _GATED_NAMES
    return id(obj) in _GATED_IDS


_PUBLIC_MODULES = frozenset({"simtsafe", "simtsafe.thread"})
#: Modules whose plain functions kernels may call (Numba implements them itself).
_TRUSTED_MODULES = ("numba", "numpy", "math", "cmath", "operator", "simtsafe.thread")


def _forbidden(obj: Any) -> tuple[str, str] | None:
    """(rule, reason) why a kernel may not refer to ``obj``, or None when it may.

    Numba-compiled functions (raw ``numba.cuda.jit`` device functions, ``njit``
    dispatchers, user ``@intrinsic``s) would receive simtsafe values in code no
    rule checks; simtsafe's own internals would let code mint witnesses.
    """
    internals = ("private-name", "is simtsafe internals; kernels use only simtsafe's public API")
    if isinstance(obj, pytypes.ModuleType):
        name = obj.__name__
        return internals if name.startswith("simtsafe.") and name not in _PUBLIC_MODULES else None
    if id(obj) in _private_ids():
        return internals
    if isinstance(obj, pytypes.FunctionType) and not obj.__module__.startswith(_TRUSTED_MODULES):
        # A plain function called from a kernel is compiled by Numba (after
        # register_jitable / @overload) with a body no simtsafe rule has seen.
        return (
            "raw-device-function",
            "is a plain Python function, whose body simtsafe does not check; decorate it with "
            "@simtsafe.device",
        )
    if not isinstance(obj, _foreign_compiled_types()):
        return None
    definition = getattr(obj, "_defn", None)  # an @intrinsic: Numba's own API is fine
    if definition is not None and getattr(definition, "__module__", "").startswith("numba"):
        return None
    kind = (
        "a raw numba.cuda.jit function"
        if type(obj).__name__ in ("CUDADispatcher", "FakeCUDAKernel")
        else "a Numba-compiled function (njit or @intrinsic)"
    )
    return (
        "raw-device-function",
        f"is {kind}, whose body simtsafe does not check; decorate a plain function with "
        "@simtsafe.device instead",
    )


@cache
def _foreign_compiled_types() -> tuple[type, ...]:
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


@cache
def _private_ids() -> frozenset[int]:
    """Identities of every private device builtin (witness minting intrinsics included)."""
    import importlib

    ids = {id(v) for d in (None, 1, 2) for v in device_builtins(proven_domain=d).values()}
    # Note: the attribute simtsafe.device is the @device decorator (public API), which
    # hides the subpackage of the same name; import the backend module by its full name.
    module = importlib.import_module(f"simtsafe.device.{'_sim' if SIMULATOR else '_cuda'}")
    ids.update(
        id(v)
        for v in vars(module).values()
        if getattr(v, "__module__", None) == module.__name__
        or isinstance(v, _foreign_compiled_types())
    )
    return frozenset(ids)


# ------------------------------------------------------------------ Numba error translation

_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')
_SIMTSAFE_LINE = re.compile(r"simtsafe: (.*)")
_NO_IMPL = re.compile(r">>> (.*)")


def _translate_typing_error(exc: BaseException, name: str, filename: str) -> BaseException:
    """Turn a Numba typing error that involves simtsafe into a SafetyError at the user's line."""
    text = str(exc)
    lineno: int | None = None
    located = typing_error_location(exc)
    if located is not None and located[0] == filename:
        lineno = located[1]
    else:
        for match in _LOCATION.finditer(text):
            lineno = int(match.group(2))
    simtsafe = _SIMTSAFE_LINE.search(text)
    signature = _NO_IMPL.search(text)
    if simtsafe is not None:
        message = simtsafe.group(1).strip()
    elif "ThreadIndex[" in text:
        message = (
            "no arithmetic, comparison or conversion on a witness"
            + (f" ({signature.group(1).strip()})" if signature else "")
            + ": a ThreadIndex only indexes DisjointSlices and inputs. Use w.index / w.row / "
            "w.col for a plain int (which can read inputs but no longer index a DisjointSlice)"
        )
    elif "DisjointSlice[" in text:
        message = (
            "unsupported operation on a DisjointSlice"
            + (f" ({signature.group(1).strip()})" if signature else "")
            + ": a DisjointSlice supports s[w] = v and s[w] with a witness, len(s), s.size, "
            "s.shape, and s.unchecked inside simtsafe.unsafe"
        )
    elif "readonly array" in text and "setitem" in text:
        message = "cannot store into a read-only input: In[...] parameters are read-only"
    else:
        return exc
    line = None
    if lineno is not None:
        import linecache

        line = linecache.getline(filename, lineno) or None
    return SafetyError(
        f"kernel {name!r}: {message}",
        kernel=name,
        rule="typing",
        filename=filename,
        lineno=lineno,
        source_line=line,
    )


_SIM_PREFIX = re.compile(r"^(tid=\[[^\]]*\] ctaid=\[[^\]]*\]):\s*")
_PACKAGE_DIR = __file__.rsplit("/", 1)[0]


def translate_simulator_error(exc: SafetyError, name: str) -> SafetyError:
    """Re-attach kernel name and user line to a SafetyError raised inside a simulated thread.

    The simulator re-raises a thread's exception as ``type(e)(message)``,
    which drops structured fields; the traceback still holds the user's frame.
    """
    text = str(exc)
    thread = ""
    match = _SIM_PREFIX.match(text)
    if match:
        thread = match.group(1)
        text = text[match.end() :]
    text = text.removeprefix("simtsafe: ")
    filename: str | None = None
    lineno: int | None = None
    tb = exc.__traceback__
    while tb is not None:
        code_file = tb.tb_frame.f_code.co_filename
        if not code_file.startswith(_PACKAGE_DIR) and "/numba" not in code_file:
            filename, lineno = code_file, tb.tb_lineno
        tb = tb.tb_next
    import linecache

    line = linecache.getline(filename, lineno) if filename and lineno else None
    suffix = f" (simulated thread {thread})" if thread else ""
    return SafetyError(
        f"kernel {name!r}: {text}{suffix}",
        kernel=name,
        rule=exc.rule or "typing",
        filename=filename,
        lineno=lineno,
        source_line=line or None,
    )


class _Compiled:
    """Common machinery of kernels and device helpers: rewrite once, resolve lazily."""

    _kind: str = "kernel"

    def __init__(
        self,
        fn: pytypes.FunctionType,
        *,
        kind: str,
        domain: int | None,
        views: tuple[ParamView, ...],
        exact_block: tuple[int, int, int] | None,
    ) -> None:
        self.py_func = fn
        self.name: str = fn.__name__
        self._domain = domain
        # The rewritten function's globals: refreshed from the user's module
        # at first compile, so names defined after the decorator resolve.
        self._namespace: dict[str, Any] = {"__builtins__": fn.__globals__.get("__builtins__")}
        self._rewritten: Rewritten = rewrite(
            fn,
            kernel=self.name,
            kind="kernel" if kind == "kernel" else "device",
            domain=domain,
            views=views,
            exact_block=exact_block,
            namespace=self._namespace,
            is_gated=_is_gated,
            forbidden=_forbidden,
            cuda_module=cuda,
        )
        self._resolved = False

    @property
    def unsafe_regions(self) -> list[UnsafeRegion]:
        """The ``with simtsafe.unsafe(...)`` regions of this function, with their reasons."""
        return list(self._rewritten.unsafe_regions)

    @property
    def filename(self) -> str:
        return self.py_func.__code__.co_filename

    def _resolve_namespace(self) -> None:
        """Fill the rewritten function's globals: user globals, helpers, ``__ss_*`` builtins."""
        if self._resolved:
            return
        self._resolved = True  # first: a helper that refers to itself must not recurse
        ns = self._namespace
        for key, value in self.py_func.__globals__.items():
            ns[key] = value._target() if isinstance(value, DeviceFunction) else value
        ns.update(device_builtins(proven_domain=self._domain))

    def _translate(self, exc: BaseException) -> BaseException:
        return _translate_typing_error(exc, self.name, self.filename)


@final
class DeviceFunction(_Compiled):
    """A ``@simtsafe.device`` helper: checked like a kernel, callable from kernels."""

    def __init__(self, fn: pytypes.FunctionType) -> None:
        super().__init__(fn, kind="device", domain=None, views=(), exact_block=None)
        self._dispatcher: Any = None

    def _target(self) -> Any:
        """What kernels call: a Numba device dispatcher, or the Python function on the simulator."""
        if self._dispatcher is None:
            fn = self._rewritten.function
            self._dispatcher = fn if SIMULATOR else cuda.jit(device=True)(fn)
            self._resolve_namespace()
        return self._dispatcher

    def __call__(self, *args: Any) -> NoReturn:
        raise RuntimeError(
            f"simtsafe.device function {self.name!r} runs only inside kernels; call it from a "
            "@simtsafe.kernel"
        )

    def __repr__(self) -> str:
        return f"<simtsafe.device {self.name!r}>"


@dataclass(frozen=True)
class Specialization:
    """One compiled specialization of a kernel for a set of argument types."""

    argtypes: tuple[Any, ...]
    numba_kernel: Any  # numba.cuda.dispatcher._Kernel (None on the simulator)


@final
class Kernel(_Compiled, Generic[P]):
    """A ``@simtsafe.kernel``: the user's function, checked, rewritten and contract-bound.

    Launch it through ``prepare(grid=..., block=...)`` (checked) or, inside
    ``simtsafe.unsafe``, ``kernel.unchecked[grid, block](...)`` (raw).
    """

    __simtsafe_kernel__ = True

    def __init__(self, fn: pytypes.FunctionType, contract: LaunchContract | None) -> None:
        name = fn.__name__
        self.params: tuple[Param, ...] = parse_params(fn, name)
        self.contract = contract
        self.bound: BoundContract | None = (
            contract.bind([p.info() for p in self.params], kernel=name) if contract else None
        )
        exact_block = contract.block if contract is not None else None
        views = tuple(
            ParamView(p.name, "in" if p.kind == "in" else str(p.space))
            for p in self.params
            if p.is_array
        )
        super().__init__(
            fn,
            kind="kernel",
            domain=contract.domain if contract is not None else None,
            views=views,
            exact_block=exact_block,
        )
        self._dispatcher: Any = None
        self._specs: dict[tuple[str, ...], Specialization] = {}
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    # ------------------------------------------------------------------ compilation

    def _get_dispatcher(self) -> Any:
        self._resolve_namespace()
        if self._dispatcher is None:
            options: dict[str, Any] = {}
            if (
                self.contract is not None
                and self.contract.max_threads is not None
                and not SIMULATOR
            ):
                # .maxntid lets the compiler budget registers for the contract's
                # block size (an exact block is stamped as .reqntid instead).
                options["launch_bounds"] = self.contract.max_threads
            self._dispatcher = cuda.jit(**options)(self._rewritten.function)
        return self._dispatcher

    def argtypes(self, layouts: tuple[str, ...] | None = None) -> tuple[Any, ...]:
        """Numba argument types of the kernel ABI (plain arrays and scalars).

        Args:
            layouts: one of ``"C"``/``"A"`` per input array parameter
                (default all ``"C"``); outputs are always C-contiguous.
        """
        from numba.cuda import types
        from numba.cuda.np.numpy_support import from_dtype

        layouts = layouts or tuple("C" for p in self.params if p.kind == "in")
        it = iter(layouts)
        out: list[Any] = []
        for p in self.params:
            if p.kind == "scalar":
                out.append(from_dtype(p.dtype))
            else:
                layout = next(it) if p.kind == "in" else "C"
                out.append(types.Array(from_dtype(p.dtype), p.ndim, layout))
        return tuple(out)

    def specialize(self, layouts: tuple[str, ...] | None = None) -> Specialization:
        """Compile (once) and return the specialization for the given input layouts.

        Raises:
            SafetyError: the kernel body breaks a typing rule (a write without
                a witness, a store into an input, arithmetic on a witness...).
        """
        key = layouts or tuple("C" for p in self.params if p.kind == "in")
        spec = self._specs.get(key)
        if spec is not None:
            return spec
        disp = self._get_dispatcher()
        if SIMULATOR:
            spec = Specialization((), None)
        else:
            argtypes = self.argtypes(key)
            try:
                numba_kernel = disp.compile(argtypes)
            except typing_error_classes() as exc:
                raise self._translate(exc) from None
            spec = Specialization(argtypes, numba_kernel)
        self._specs[key] = spec
        return spec

    def ptx(self, cc: tuple[int, int] = (9, 0), layouts: tuple[str, ...] | None = None) -> str:
        """PTX of the kernel for compute capability ``cc``; needs NVVM, not a GPU."""
        if SIMULATOR:
            raise RuntimeError("Kernel.ptx() needs the CUDA target; unset NUMBA_ENABLE_CUDASIM")
        self._resolve_namespace()
        try:
            bounds = self.contract.max_threads if self.contract is not None else None
            with assume_compute_capability(cc):
                ptx, _ = cuda.compile_ptx(
                    self._rewritten.function, self.argtypes(layouts), cc=cc, launch_bounds=bounds
                )
        except typing_error_classes() as exc:
            raise self._translate(exc) from None
        return str(ptx)

    # ------------------------------------------------------------------ launching

    def prepare(
        self,
        grid: Dims,
        block: Dims,
        shared_mem: int = 0,
        stream: Any = None,
    ) -> PreparedLaunch:
        """Check a launch configuration once and return a reusable ``PreparedLaunch``.

        Checks, in order: dimensions, the contract's domain/block/shared
        memory, the live device's limits, the compiled function's limits,
        compute capability. See docs/contracts.md for every error.

        Raises:
            LaunchContractError: a subclass naming what is wrong and the fix.
            SafetyError: the kernel fails to compile under simtsafe's rules.
        """
        from ._prepare import prepare

        return prepare(self, grid=grid, block=block, shared_mem=shared_mem, stream=stream)

    @property
    def unchecked(self) -> _UncheckedLauncher:
        """``kernel.unchecked[grid, block](*args)``: a raw Numba launch, only inside ``simtsafe.unsafe``.

        Safety:
            No contract or argument check runs; the caller guarantees the
            launch shape matches the kernel's witnesses and the arguments
            are valid, non-aliasing device arrays.
        """
        return _UncheckedLauncher(self)

    def __getitem__(self, config: Any) -> NoReturn:
        raise TypeError(
            f"kernel {self.name!r} is launched through kernel.prepare(grid=..., block=...)(*args), "
            "which checks the launch contract; a raw launch is kernel.unchecked[grid, block](...) "
            'inside `with simtsafe.unsafe("SAFETY: ...")`'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            f"kernel {self.name!r} is not called directly; launch it with "
            f"{self.name}.prepare(grid=..., block=...)(*args)"
        )

    def __repr__(self) -> str:
        return f"<simtsafe.kernel {self.name!r} contract={self.contract!r}>"


@final
class _UncheckedLauncher:
    __slots__ = ("_kernel",)

    def __init__(self, kernel: Kernel[Any]) -> None:
        self._kernel = kernel

    def __getitem__(self, config: Any) -> Callable[..., None]:
        kernel = self._kernel
        if not in_unsafe_region():
            raise UnsafeRegionRequired(
                f"kernel {kernel.name!r}: kernel.unchecked[...] launches without any contract or "
                'argument check; it is allowed only inside `with simtsafe.unsafe("SAFETY: why '
                'this launch is sound"):`. Use kernel.prepare(grid=..., block=...)(*args) for a '
                "checked launch",
                kernel=kernel.name,
                rule="unchecked-launch",
            )
        launcher = kernel._get_dispatcher()[config]

        def run(*args: Any) -> None:
            launcher(*args)

        return run


@overload
def kernel(fn: Callable[P, None], /) -> Kernel[P]: ...
@overload
def kernel(
    *, contract: LaunchContract | None = None
) -> Callable[[Callable[P, None]], Kernel[P]]: ...
def kernel(
    fn: Callable[P, None] | None = None, /, *, contract: LaunchContract | None = None
) -> Kernel[P] | Callable[[Callable[P, None]], Kernel[P]]:
    """Make a safe CUDA kernel from an annotated Python function.

    Args:
        fn: the kernel function (when used as ``@simtsafe.kernel`` without arguments).
        contract: the launch contract; without one the kernel has no proven
            domain (witnesses check the launch shape on the device) and
            ``prepare`` checks only the device's limits.

    Raises:
        SafetyError: the source breaks a rule, a parameter is unannotated...
        LaunchContractError: the contract does not fit the parameters.
    """
    if contract is not None and not isinstance(contract, LaunchContract):
        raise TypeError(
            f"contract must be a simtsafe.LaunchContract, got {type(contract).__name__}"
        )

    def decorate(f: Callable[P, None]) -> Kernel[P]:
        if not isinstance(f, pytypes.FunctionType):
            raise TypeError(f"@simtsafe.kernel decorates a plain function, got {type(f).__name__}")
        return Kernel(f, contract)

    return decorate(fn) if fn is not None else decorate


def device(fn: Callable[P, Any]) -> DeviceFunction:
    """Make a device helper callable from simtsafe kernels, checked by the same rules.

    Its witnesses carry no domain proof (it may be called from any kernel),
    so ``thread.index_1d()`` inside it checks the launch shape on the device.
    It may not return a witness.
    """
    if not isinstance(fn, pytypes.FunctionType):
        raise TypeError(f"@simtsafe.device decorates a plain function, got {type(fn).__name__}")
    return DeviceFunction(fn)
