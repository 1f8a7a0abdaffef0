"""``@simtsafe.kernel`` and ``@simtsafe.device``: checked, rewritten Numba CUDA functions.

Decoration parses the annotations (``_params``), validates the contract
against them, and checks + rewrites the source (``analysis``); nothing is
compiled yet. The first ``prepare`` (or ``ptx``) resolves the function's
globals, binds the ``__ss_*`` device builtins for the contract's proven
domain, and compiles one specialization per input-layout combination.
"""

from __future__ import annotations

import types as pytypes
from collections.abc import Callable
from dataclasses import dataclass
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

from .._errors import UnsafeRegionRequired
from .._unsafe import in_unsafe_region
from ..lowering import builtins as device_builtins
from ..lowering import numba_type
from ..lowering._compat import (
    SIMULATOR,
    assume_compute_capability,
    typing_error_classes,
)
from ..lowering._diagnostics import translate_typing_error
from ._params import Param, parse_params
from ._policy import forbidden, is_gated
from ._rewrite import ParamView, Rewritten, UnsafeRegion, rewrite

if TYPE_CHECKING:
    from ..host._contract import BoundContract, LaunchContract
    from ..host._prepare import PreparedLaunch
    from ..host._requires import ParamInfo

__all__ = ["DeviceFunction", "Kernel", "device", "kernel"]

P = ParamSpec("P")

#: A grid or block: an int or 1 to 3 ints (numpy integers too), padded with 1s.
Dims = (
    SupportsIndex
    | tuple[SupportsIndex]
    | tuple[SupportsIndex, SupportsIndex]
    | tuple[SupportsIndex, SupportsIndex, SupportsIndex]
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
            is_gated=is_gated,
            forbidden=forbidden,
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
        return translate_typing_error(exc, self.name, self.filename)


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
            contract.bind([_param_info(p) for p in self.params], kernel=name) if contract else None
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
        layouts = layouts or tuple("C" for p in self.params if p.kind == "in")
        it = iter(layouts)
        out: list[Any] = []
        for p in self.params:
            if p.kind == "scalar":
                out.append(numba_type(p.dtype))
            else:
                layout = next(it) if p.kind == "in" else "C"
                out.append(numba_type(p.dtype, p.ndim, layout))
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
        from ..host._prepare import prepare

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


def _param_info(p: Param) -> ParamInfo:
    """What a ``requires`` relation may say about parameter ``p``."""
    from ..host._requires import ParamInfo

    if p.is_array:
        return ParamInfo(p.name, "array", p.ndim)
    return ParamInfo(p.name, "int" if p.dtype.kind in "iu" else "float")


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
    from ..host._contract import LaunchContract

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
