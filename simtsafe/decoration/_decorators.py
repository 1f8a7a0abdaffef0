"""``@simtsafe.kernel`` and ``@simtsafe.device``: checked, rewritten Numba CUDA functions.

Decoration parses the annotations (``_params``), validates the contract
against them and checks the source (``_rewrite``) against the names bound so
far; nothing is compiled. The first compile (``prepare``, ``ptx()``, a
simulator launch) *freezes* the function: it snapshots the module globals
and closure values, runs the same analysis strictly over that snapshot (a
name bound after decoration is classified like any other; an unknown name is
an error), and compiles the rewritten function against a namespace holding
exactly the objects that were checked. Every later compile re-runs the
analysis over the frozen snapshot.

Invariant: a kernel's declaration (function, parameters, contract) never
changes after decoration (the objects refuse attribute assignment), and
every compiled specialization records the declaration it was built from;
``prepare`` refuses a kernel whose declaration differs from its compiled
one.
"""

from __future__ import annotations

import builtins as _py_builtins
import inspect
import threading
import types as pytypes
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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

import numpy as np
from numba import cuda

from .._errors import SafetyError, UnsafeRegionRequired
from .._unsafe import in_unsafe_region
from ..lowering import builtins as device_builtins
from ..lowering import mark_built, numba_type, simtsafe_typing
from ..lowering._compat import (
    SIMULATOR,
    assume_compute_capability,
    compile_kernel_ir,
    compile_kernel_ptx,
    kernel_ir,
    typing_error_classes,
)
from ..lowering._diagnostics import translate_typing_error
from ..verify import SourceInfo, check_kernel_ir
from ._params import Param, admits, allowed_types, parse_params, record_fields, typevars
from ._policy import LOCAL_ATTRIBUTES
from ._registry import register
from ._rewrite import Analysis, ParamView, Source, UnsafeRegion, analyze, parse_source
from ._uniformity import UniformitySummary

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


@dataclass(frozen=True)
class _Decl:
    """What decoration decided about a kernel or helper (immutable)."""

    py_func: pytypes.FunctionType
    name: str
    kind: str  # "kernel" or "device"
    source: Source
    params: tuple[Param, ...]
    contract: LaunchContract | None
    bound: BoundContract | None
    domain: int | None
    views: tuple[ParamView, ...]
    exact_block: tuple[int, int, int] | None
    attributes: frozenset[str]
    unsafe_regions: tuple[UnsafeRegion, ...]
    binding: Any = None  # a dtype-generic kernel's instance: TypeVar -> dtype


@dataclass
class _Build:
    """What the first compile froze: the scope, the checked function, its dispatcher."""

    decl: _Decl
    scope: dict[str, Any]
    analysis: Analysis
    function: pytypes.FunctionType
    namespace: dict[str, Any]
    dispatcher: Any = None
    specs: dict[tuple[str, ...], Specialization] = field(default_factory=dict)
    fingerprint: str = ""  # the declaration's values when frozen (see _decl_fingerprint)


@dataclass(frozen=True)
class Specialization:
    """One compiled specialization of a kernel for a set of argument types."""

    argtypes: tuple[Any, ...]
    numba_kernel: Any  # numba.cuda.dispatcher._Kernel (None on the simulator)
    decl: Any = None  # the declaration it was compiled from


def _decl_fingerprint(d: _Decl) -> str:
    """The declaration's values, as text: what the compiled code embodies.

    Compared at every compile and ``prepare``: a declaration (or its frozen
    pydantic contract) changed in place with ``object.__setattr__`` keeps its
    identity but not this text.
    """
    return repr(
        (
            d.name,
            d.kind,
            d.params,
            d.contract,
            d.bound,
            d.domain,
            d.views,
            d.exact_block,
            sorted(d.attributes),
            d.unsafe_regions,
        )
    )


def _settle(cache: dict[Any, Any], key: Any, value: Any, frozen: bool) -> None:
    """Keep a helper summary only when it was computed over the helper's frozen scope.

    Before the helper is frozen its scope is live: a name it calls may still
    be pending (defined further down the module) and resolve to a barrier or
    a raw value later, so a summary computed then must not outlive the call
    that needed it (the recursion guard is dropped too).
    """
    if frozen:
        cache[key] = value
    else:
        cache.pop(key, None)


def _scope_of(fn: pytypes.FunctionType) -> dict[str, Any]:
    """Globals and closure values of ``fn`` as they are now (closure values shadow globals)."""
    scope = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # an empty cell: not bound yet
            scope.pop(name, None)
    return scope


_FREEZE_LOCK = threading.RLock()


class _Compiled:
    """What kernels and helpers share: an immutable declaration, a build frozen on first use."""

    __slots__ = ("__weakref__", "_build", "_decl", "_origin", "_taint_cache")

    _decl: _Decl
    _build: _Build | None
    _origin: str

    def _init(self, decl: _Decl) -> None:
        object.__setattr__(self, "_decl", decl)
        object.__setattr__(self, "_build", None)
        object.__setattr__(self, "_taint_cache", {})
        object.__setattr__(self, "_origin", "")

    def _seal(self, decl: _Decl) -> None:
        """The declaration is complete: record its values, as text, once and for all.

        Invariant: every compile and ``prepare`` compares the declaration with this
        text, so a contract (or any part of the declaration) edited in place with
        ``object.__setattr__`` -- before or after the first compile -- is refused,
        never compiled or checked in its edited form.
        """
        object.__setattr__(self, "_decl", decl)
        object.__setattr__(self, "_origin", _decl_fingerprint(decl))

    def _check_sealed(self) -> None:
        if self._origin != _decl_fingerprint(self._decl):
            raise SafetyError(
                f"kernel {self.name!r}: its declaration (contract, parameters) was replaced or "
                "edited after decoration (object.__setattr__ on a frozen object); the checked "
                "declaration is the one decorated. Decorate a new function with the contract "
                "you want",
                kernel=self.name,
                rule="immutable",
            )

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(
            f"{type(self).__name__} {self._decl.name!r} is immutable after decoration: its "
            "contract, parameters and source were checked together and compiled together. "
            "Decorate a new function instead"
        )

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"{type(self).__name__} {self._decl.name!r} is immutable")

    # ------------------------------------------------------------------ declaration

    @property
    def py_func(self) -> pytypes.FunctionType:
        return self._decl.py_func

    @property
    def name(self) -> str:
        return self._decl.name

    @property
    def filename(self) -> str:
        return self._decl.source.filename

    @property
    def unsafe_regions(self) -> list[UnsafeRegion]:
        """The ``with simtsafe.unsafe(...)`` regions of this function, with their reasons."""
        return list(self._decl.unsafe_regions)

    @property
    def _domain(self) -> int | None:
        return self._decl.domain

    # ------------------------------------------------------------------ analysis

    def _analyze(
        self,
        scope: Mapping[str, Any],
        *,
        strict: bool,
        seeds: Mapping[str, int] | None = None,
        param_levels: Mapping[str, int] | None = None,
    ) -> Analysis:
        d = self._decl
        return analyze(
            d.source,
            kernel=d.name,
            kind="kernel" if d.kind == "kernel" else "device",
            domain=d.domain,
            views=d.views,
            exact_block=d.exact_block,
            scope=scope,
            strict=strict,
            attributes=d.attributes,
            seeds=seeds,
            helper_returns_raw=_helper_returns_raw,
            param_levels=param_levels,
            helper_uniformity=_helper_uniformity,
        )

    def _api_closure(self) -> frozenset[str]:
        """The kernel-API names (``cuda.cg.this_grid``...) this code and its helpers call.

        The source-level fact the simulator has where the CUDA target reads the
        compiled kernel (``numba_kernel.cooperative``): it has no compiled form.
        """
        used: set[str] = set()
        todo: list[_Compiled] = [self]
        seen: set[int] = set()
        while todo:
            compiled = todo.pop()
            if id(compiled) in seen:
                continue
            seen.add(id(compiled))
            analysis = compiled._freeze().analysis
            used |= analysis.api_used
            for value in {**analysis.globals_used, **analysis.substitutes}.values():
                if isinstance(value, DeviceFunction):
                    todo.append(value)
        return frozenset(used)

    def _freeze(self) -> _Build:
        """Snapshot the scope, check strictly, build the function Numba compiles (once)."""
        build = self._build
        if build is not None:
            return build
        with _FREEZE_LOCK:
            if self._build is not None:
                return self._build
            self._check_sealed()
            d = self._decl
            scope = _scope_of(d.py_func)
            analysis = self._analyze(scope, strict=True)
            if d.kind == "kernel":
                _check_contract_needs(d, analysis)
            else:
                _check_helper_uses(d, analysis)
            namespace: dict[str, Any] = {"__builtins__": _py_builtins}
            namespace.update(device_builtins(proven_domain=d.domain))
            function = analysis.build(namespace, d.py_func.__qualname__, d.py_func.__module__)
            function.__doc__ = d.py_func.__doc__
            mark_built(function)
            build = _Build(d, scope, analysis, function, namespace)
            build.fingerprint = self._origin
            object.__setattr__(self, "_build", build)
            # Only now bind what the code refers to: a helper that refers (perhaps
            # through others) back to this one finds this build already in place.
            for name, value in {**analysis.globals_used, **analysis.substitutes}.items():
                namespace[name] = value._target() if isinstance(value, DeviceFunction) else value
            return build

    def _recheck(self) -> _Build:
        """Re-run the analysis over the frozen scope (every compile), and the declaration."""
        build = self._freeze()
        self._check_sealed()
        if build.decl is not self._decl or build.fingerprint != _decl_fingerprint(self._decl):
            raise SafetyError(
                f"kernel {self.name!r}: its declaration was replaced after it was compiled (the "
                "compiled code embodies the old contract); decorate a new function instead",
                kernel=self.name,
                rule="immutable",
            )
        self._analyze(build.scope, strict=True)
        return build

    def _translate(self, exc: BaseException) -> BaseException:
        return translate_typing_error(exc, self.name, self.filename)

    def _reachable(self) -> list[_Compiled]:
        """This function and every frozen helper it calls, transitively."""
        found: list[_Compiled] = []
        seen: set[int] = set()
        work: list[_Compiled] = [self]
        while work:
            f = work.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            found.append(f)
            fb = f._build
            if fb is not None:
                work += [v for v in fb.analysis.globals_used.values() if isinstance(v, _Compiled)]
        return found

    def _source_info(self, build: _Build) -> SourceInfo:
        """Where this function's code is, and every unsafe region it (or a helper) has."""
        node = self._decl.source.node
        regions = [
            (r.filename, r.lineno, r.end_lineno or r.lineno)
            for f in self._reachable()
            for r in f._decl.unsafe_regions
        ]
        return SourceInfo(
            kernel=self.name,
            filename=self._decl.source.filename,
            first_line=node.lineno,
            last_line=node.end_lineno or node.lineno,
            unsafe=tuple(regions),
        )

    def _verify(self, build: _Build, texts: list[str], entry: str) -> None:
        """The compiled-form verdict (simtsafe.verify): it decides, the source analysis words."""
        check_kernel_ir(texts, entry, self._source_info(build))


_KERNEL_ONLY = ("shared.tile", "shared.dynamic_tile", "shared.accumulator")


def _check_helper_uses(decl: _Decl, analysis: Analysis) -> None:
    """Shared tiles and accumulators belong to kernels, not helpers.

    A helper's shared array is one allocation per compiled helper: two calls of
    the helper in one kernel would share it without a barrier between the first
    call's reads and the second call's fill, and a helper's dynamic tile would
    alias the kernel's. The phase analysis follows a tile within one function.
    """
    used = sorted(analysis.api_used & set(_KERNEL_ONLY))
    if used:
        raise SafetyError(
            f"kernel {decl.name!r}: simtsafe.{used[0]} is used in a @simtsafe.device helper; "
            "shared tiles and accumulators are made in the kernel itself (a helper's would be "
            "shared by all its calls, with no barrier between them). Make the tile in the "
            "kernel and pass the helper the values it needs",
            kernel=decl.name,
            rule="tile-phase",
            filename=decl.source.filename,
            lineno=decl.source.node.lineno,
        )


def _check_contract_needs(decl: _Decl, analysis: Analysis) -> None:
    """Kernel-API uses that need a declaration in the contract."""
    if "shared.dynamic_tile" in analysis.api_used and (
        decl.contract is None or decl.contract.dynamic_shared is None
    ):
        raise SafetyError(
            f"kernel {decl.name!r} uses simtsafe.shared.dynamic_tile, whose size is the launch's "
            "dynamic shared memory: declare it in the contract, e.g. "
            "LaunchContract(..., dynamic_shared=(0, 49152)), so that prepare checks every launch",
            kernel=decl.name,
            rule="contract",
            filename=decl.source.filename,
            lineno=decl.source.node.lineno,
        )


def _helper_returns_raw(helper: Any, seeds: dict[int, int]) -> bool:
    """Taint summary of a helper called with raw arguments at ``seeds`` (position -> rank)."""
    if not isinstance(helper, DeviceFunction):
        return True
    return helper._returns_raw(seeds)


def _helper_uniformity(helper: Any, levels: tuple[int, ...]) -> UniformitySummary:
    """Uniformity summary of a helper called with arguments of the given levels."""
    if not isinstance(helper, DeviceFunction):
        return UniformitySummary(result=2, nonuniform_source=True)
    return helper._uniformity(levels)


@final
class DeviceFunction(_Compiled):
    """A ``@simtsafe.device`` helper: checked like a kernel, callable from kernels."""

    __slots__ = ()

    def __init__(self, fn: pytypes.FunctionType) -> None:
        name = fn.__name__
        source = parse_source(fn, name)
        decl = _Decl(
            py_func=fn,
            name=name,
            kind="device",
            source=source,
            params=(),
            contract=None,
            bound=None,
            domain=None,
            views=(),
            exact_block=None,
            attributes=LOCAL_ATTRIBUTES,
            unsafe_regions=(),
        )
        self._init(decl)
        analysis = self._analyze(_scope_of(fn), strict=False)
        _check_helper_uses(decl, analysis)
        self._seal(_with_regions(decl, analysis))
        register(self)  # the gate's registry (_registry): every helper made, in order

    def _target(self) -> Any:
        """What kernels call: a Numba device dispatcher (a simulator device function)."""
        build = self._freeze()
        if build.dispatcher is None:
            # On the simulator, a jit(device=True) function swaps `cuda` for the running
            # kernel's fake module when called, so helpers can read cuda.threadIdx too.
            build.dispatcher = cuda.jit(device=True)(build.function)
        return build.dispatcher

    def _returns_raw(self, seeds: dict[int, int]) -> bool:
        """Check this helper with raw values in the given parameters; does it return one?"""
        frozen = self._build is not None
        key = ("taint", frozenset(seeds.items()), frozen)
        cache: dict[Any, Any] = self._taint_cache  # type: ignore[attr-defined]
        if key in cache:
            return cache[key]  # type: ignore[no-any-return]
        cache[key] = True  # recursion: assume the worst until known
        params = self._decl.source.params
        named = {params[i]: rank for i, rank in seeds.items() if i < len(params)}
        scope = self._build.scope if self._build is not None else _scope_of(self._decl.py_func)
        analysis = self._analyze(scope, strict=False, seeds=named)
        _settle(cache, key, analysis.returns_raw, frozen)
        return analysis.returns_raw

    def _uniformity(self, levels: tuple[int, ...]) -> UniformitySummary:
        """Analyze this helper's barriers and collectives with its arguments' uniformity."""
        frozen = self._build is not None
        key = ("uniformity", levels, frozen)
        cache: dict[Any, Any] = self._taint_cache  # type: ignore[attr-defined]
        if key in cache:
            return cache[key]  # type: ignore[no-any-return]
        # Recursion: assume the worst (a thread-dependent result, a barrier inside).
        cache[key] = UniformitySummary(result=2, block_op_line=0, nonuniform_source=True)
        params = self._decl.source.params
        named = {p: (levels[i] if i < len(levels) else 2) for i, p in enumerate(params)}
        scope = self._build.scope if self._build is not None else _scope_of(self._decl.py_func)
        summary = self._analyze(scope, strict=False, param_levels=named).uniformity
        _settle(cache, key, summary, frozen)
        return summary

    def __call__(self, *args: Any) -> NoReturn:
        raise RuntimeError(
            f"simtsafe.device function {self.name!r} runs only inside kernels; call it from a "
            "@simtsafe.kernel"
        )

    def __repr__(self) -> str:
        return f"<simtsafe.device {self.name!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (to the simulator's compile worker) as its declaration: decorated again there.
        return (device, (self._decl.py_func,))


def _with_regions(decl: _Decl, analysis: Analysis) -> _Decl:
    from dataclasses import replace

    return replace(decl, unsafe_regions=tuple(analysis.unsafe_regions))


@final
class Kernel(_Compiled, Generic[P]):
    """A ``@simtsafe.kernel``: the user's function, checked, rewritten and contract-bound.

    Launch it through ``prepare(grid=..., block=...)`` (checked) or, inside
    ``simtsafe.unsafe``, ``kernel.unchecked[grid, block](...)`` (raw).
    Immutable: its contract cannot be replaced after decoration.
    """

    __slots__ = ()
    __simtsafe_kernel__ = True

    def __init__(
        self,
        fn: pytypes.FunctionType,
        contract: LaunchContract | None,
        binding: dict[Any, Any] | None = None,
    ) -> None:
        name = fn.__name__
        params = parse_params(fn, name, binding)
        if contract is not None:
            # A private copy: the caller's object may be edited later, this one is checked.
            contract = contract.model_copy(deep=True)
        bound = contract.bind([_param_info(p) for p in params], kernel=name) if contract else None
        views = tuple(
            ParamView(p.name, p.kind if p.kind in ("in", "acc") else str(p.space), p.ndim)
            for p in params
            if p.is_array
        )
        decl = _Decl(
            py_func=fn,
            name=name,
            kind="kernel",
            source=parse_source(fn, name),
            params=params,
            contract=contract,
            bound=bound,
            domain=contract.domain if contract is not None else None,
            views=views,
            exact_block=contract.block if contract is not None else None,
            attributes=LOCAL_ATTRIBUTES | record_fields(params),
            unsafe_regions=(),
            binding=binding,
        )
        self._init(decl)
        analysis = self._analyze(_scope_of(fn), strict=False)
        _check_contract_needs(decl, analysis)
        self._seal(_with_regions(decl, analysis))
        register(self)  # the gate's registry (_registry): every kernel made, in order

    @property
    def params(self) -> tuple[Param, ...]:
        return self._decl.params

    @property
    def typevars(self) -> dict[str, Any]:
        """The type variables of a dtype-generic kernel (empty for a concrete one)."""
        return typevars(self._decl.params)

    def instantiate(self, **types: Any) -> Kernel[P]:
        """The concrete kernel for one dtype per type variable (compiled once, cached).

        Example: ``saxpy.instantiate(T=np.float64)`` for
        ``def saxpy(out: DisjointSlice[T], alpha: T, x: In[T], y: In[T])``.

        Raises:
            TypeError: a type variable is missing, unknown, or bound to a type its
                constraints (or bound) do not admit.
        """
        tvs = self.typevars
        if not tvs:
            raise TypeError(f"kernel {self.name!r} has no type variables to instantiate")
        unknown = sorted(set(types) - set(tvs))
        missing = sorted(set(tvs) - set(types))
        if unknown or missing:
            raise TypeError(
                f"kernel {self.name!r} is generic in {', '.join(tvs)}: instantiate it with "
                "exactly those, e.g. "
                + ", ".join(f"{n}=np.float32" for n in tvs)
                + (f" (unknown: {', '.join(unknown)})" if unknown else "")
                + (f" (missing: {', '.join(missing)})" if missing else "")
            )
        binding: dict[Any, Any] = {}
        for name, tv in tvs.items():
            dtype = np.dtype(types[name])
            if not admits(tv, dtype):
                allowed = allowed_types(tv)
                what = (
                    ", ".join(np.dtype(c).name for c in allowed)
                    if allowed is not None
                    else f"subtypes of {getattr(tv.__bound__, '__name__', tv.__bound__)}"
                )
                raise TypeError(f"kernel {self.name!r}: {name} may be {what}; got {dtype.name}")
            binding[tv] = dtype.type
        key = ("instance", tuple(sorted((n, np.dtype(types[n]).str) for n in tvs)))
        cache: dict[Any, Any] = self._taint_cache  # type: ignore[attr-defined]
        made = cache.get(key)
        if made is None:
            made = cache[key] = Kernel(self._decl.py_func, self.contract, binding)
        return made

    def _concrete(self, what: str) -> None:
        if self.typevars:
            example = ", ".join(f"{n}=np.float32" for n in self.typevars)
            raise TypeError(
                f"kernel {self.name!r} is generic in {', '.join(self.typevars)}: {what} needs "
                f"one dtype per type variable; use {self.name}.instantiate({example}), or "
                f"launch it through prepare(), which binds them from the arguments"
            )

    @property
    def contract(self) -> LaunchContract | None:
        return self._decl.contract

    @property
    def bound(self) -> BoundContract | None:
        return self._decl.bound

    @property
    def __wrapped__(self) -> pytypes.FunctionType:
        return self._decl.py_func

    # ------------------------------------------------------------------ compilation

    def _get_dispatcher(self) -> Any:
        build = self._recheck()
        if build.dispatcher is None:
            options: dict[str, Any] = {}
            contract = self.contract
            if contract is not None and contract.max_threads is not None and not SIMULATOR:
                # .maxntid lets the compiler budget registers for the contract's
                # block size (an exact block is stamped as .reqntid instead).
                options["launch_bounds"] = contract.max_threads
            build.dispatcher = cuda.jit(**options)(build.function)
        return build.dispatcher

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
            SafetyError: the kernel body breaks a rule (a write without a
                witness, a store into an input, a name outside the allow-list...).
        """
        self._concrete("compiling")
        key = layouts or tuple("C" for p in self.params if p.kind == "in")
        build = self._freeze()
        spec = build.specs.get(key)
        if (
            spec is not None
            and spec.decl is self._decl
            and build.fingerprint == _decl_fingerprint(self._decl)
        ):
            return spec
        disp = self._get_dispatcher()  # re-checks the frozen scope and the declaration
        if SIMULATOR:
            self._simulator_verdict(key)
            spec = Specialization((), None, self._decl)
        else:
            argtypes = self.argtypes(key)
            try:
                with simtsafe_typing():
                    numba_kernel = disp.compile(argtypes)
            except typing_error_classes() as exc:
                raise self._translate(exc) from None
            self._verify(build, *kernel_ir(numba_kernel))
            spec = Specialization(argtypes, numba_kernel, self._decl)
        build.specs[key] = spec
        return spec

    def _compiled_verdict(self, layouts: tuple[str, ...] | None = None) -> None:
        """Type and lower for the CUDA target (no NVVM) and run the compiled-form checks.

        What the simulator's compile worker runs (``lowering._compileworker``).
        """
        self._concrete("compiling")
        build = self._recheck()
        try:
            bounds = self.contract.max_threads if self.contract is not None else None
            with assume_compute_capability((9, 0)), simtsafe_typing():
                texts, entry = compile_kernel_ir(
                    build.function, self.argtypes(layouts), (9, 0), launch_bounds=bounds
                )
        except typing_error_classes() as exc:
            raise self._translate(exc) from None
        self._verify(build, texts, entry)

    def _simulator_verdict(self, layouts: tuple[str, ...]) -> None:
        """On the simulator: the CUDA target's verdict, from a compile worker process.

        Raises:
            SafetyError: what compiling this kernel for the GPU raises.
        """
        from .. import _errors
        from ..lowering._compileworker import Unavailable, verdict

        modules = {f._decl.py_func.__module__ for f in self._reachable()}
        try:
            reply = verdict(self, layouts, modules)
        except Unavailable as exc:
            _fallback_to_source_verdict(self, str(exc))
            return
        if reply.get("ok"):
            return
        name, message, fields = reply["error"]
        cls = getattr(_errors, name, None)
        if not (isinstance(cls, type) and issubclass(cls, SafetyError)):
            cls = SafetyError
        raise cls(message, **fields)

    def ptx(self, cc: tuple[int, int] = (9, 0), layouts: tuple[str, ...] | None = None) -> str:
        """PTX of the kernel for compute capability ``cc``; needs NVVM, not a GPU.

        The same checks run as for a launch: the strict analysis of the
        frozen scope, then Numba's typing with simtsafe's rules.
        """
        if SIMULATOR:
            raise RuntimeError("Kernel.ptx() needs the CUDA target; unset NUMBA_ENABLE_CUDASIM")
        self._concrete("ptx()")
        build = self._recheck()
        try:
            bounds = self.contract.max_threads if self.contract is not None else None
            with assume_compute_capability(cc), simtsafe_typing():
                ptx, texts, entry = compile_kernel_ptx(
                    build.function, self.argtypes(layouts), cc, launch_bounds=bounds
                )
        except typing_error_classes() as exc:
            raise self._translate(exc) from None
        self._verify(build, texts, entry)
        return ptx

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
        self._check_sealed()
        if self.typevars:
            from ..host._generic import GenericLaunch

            return GenericLaunch(self, grid, block, shared_mem, stream)  # type: ignore[return-value]
        from ..host._prepare import prepare

        return prepare(self, grid=grid, block=block, shared_mem=shared_mem, stream=stream)

    @property
    def unchecked(self) -> _UncheckedLauncher:
        """``kernel.unchecked[grid, block](*args)``: a raw Numba launch, only inside ``simtsafe.unsafe``.

        Safety:
            No contract or argument check runs; the caller guarantees the
            launch shape matches the kernel's witnesses and the arguments
            are valid, non-aliasing device arrays. Both the configuration
            and the call must happen inside the region.
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

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (to the simulator's compile worker) as its declaration: decorated again
        # there. The annotations travel evaluated (names used only in string annotations
        # are not among the globals a function's code refers to).
        d = self._decl
        annotations = inspect.get_annotations(d.py_func, eval_str=True)
        return (_rebuild_kernel, (d.py_func, annotations, d.contract, d.binding))


_FALLBACK_WARNED: set[str] = set()


def _fallback_to_source_verdict(kernel: Kernel[Any], why: str) -> None:
    """No CUDA target to compile with: the source-level uniformity finding decides, said once."""
    import warnings

    if why not in _FALLBACK_WARNED:
        _FALLBACK_WARNED.add(why)
        warnings.warn(
            f"simtsafe: the compiled-form checks could not run for the simulator ({why}); "
            "kernels are checked by the source-level rules only, which refuse more",
            RuntimeWarning,
            stacklevel=3,
        )
    build = kernel._freeze()
    finding = build.analysis.uniformity.finding
    if finding is not None:
        raise finding


def _rebuild_kernel(
    fn: pytypes.FunctionType,
    annotations: dict[str, Any],
    contract: LaunchContract | None,
    binding: dict[Any, Any] | None,
) -> Kernel[Any]:
    """The other end of ``Kernel.__reduce__``."""
    fn.__annotations__ = dict(annotations)
    return Kernel(fn, contract, binding)


def _param_info(p: Param) -> ParamInfo:
    """What a ``requires`` relation may say about parameter ``p``."""
    from ..host._requires import ParamInfo

    if p.is_array:
        return ParamInfo(p.name, "array", p.ndim)
    return ParamInfo(p.name, "int" if p.dtype.kind in "iu" else "float")


def _require_unsafe(kernel: Kernel[Any], what: str) -> None:
    if not in_unsafe_region():
        raise UnsafeRegionRequired(
            f"kernel {kernel.name!r}: kernel.unchecked[...] {what} without any contract or "
            'argument check; it is allowed only inside `with simtsafe.unsafe("SAFETY: why '
            'this launch is sound"):`, and the launch itself must happen inside it too. Use '
            "kernel.prepare(grid=..., block=...)(*args) for a checked launch",
            kernel=kernel.name,
            rule="unchecked-launch",
        )


@final
class _UncheckedLauncher:
    __slots__ = ("_kernel",)

    def __init__(self, kernel: Kernel[Any]) -> None:
        self._kernel = kernel

    def __getitem__(self, config: Any) -> Callable[..., None]:
        kernel = self._kernel
        _require_unsafe(kernel, "launches")
        launcher = kernel._get_dispatcher()[config]

        def run(*args: Any) -> None:
            # Checked again at the call: a launcher configured inside a region
            # and called after it would escape the region's reason.
            _require_unsafe(kernel, "launched (a launcher kept past its unsafe region)")
            launcher(*args)

        return run


#: Kernels made by factories, by what determines their compiled code (see `kernel`).
_FACTORY_CACHE: dict[Any, Kernel[Any]] = {}


def _factory_key(fn: pytypes.FunctionType, contract: LaunchContract | None) -> Any:
    """A key for a kernel defined inside a function, or None if it cannot be cached."""
    if not fn.__closure__:
        return None
    values: list[Any] = []
    for cell in fn.__closure__:
        try:
            value = cell.cell_contents
        except ValueError:
            return None
        if isinstance(value, DeviceFunction | Kernel):
            values.append(("obj", id(value)))
        else:
            try:
                hash(value)
            except TypeError:
                return None
            # repr tells apart what == does not: -0.0 and 0.0, (1, 2) and (1, 2.0)
            values.append((type(value), value, repr(value)))
    # Annotations evaluated at definition (no `from __future__ import annotations`) may
    # name a factory argument that is no closure cell: `In[dt]` decides the parameters.
    annotations = tuple((k, repr(v)) for k, v in getattr(fn, "__annotations__", {}).items())
    return (fn.__code__, id(fn.__globals__), contract, tuple(values), annotations)


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

    A kernel defined inside a function (a *kernel factory*) may close over
    compile-time constants and ``@simtsafe.device`` helpers, checked like
    globals; calling the factory again with the same values returns the same
    kernel (compiled once).

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
        key = _factory_key(f, contract)
        if key is not None:
            cached = _FACTORY_CACHE.get(key)
            if cached is not None:
                return cached
        made: Kernel[P] = Kernel(f, contract)
        if key is not None:
            _FACTORY_CACHE[key] = made
        return made

    return decorate(fn) if fn is not None else decorate


_HELPER_CACHE: dict[Any, DeviceFunction] = {}


def device(fn: Callable[P, Any]) -> DeviceFunction:
    """Make a device helper callable from simtsafe kernels, checked by the same rules.

    Its witnesses carry no domain proof (it may be called from any kernel),
    so ``thread.index_1d()`` inside it checks the launch shape on the device.
    It may not return a witness. Like kernels, helpers made inside a factory
    may close over constants and other helpers (cached by those values).
    """
    if not isinstance(fn, pytypes.FunctionType):
        raise TypeError(f"@simtsafe.device decorates a plain function, got {type(fn).__name__}")
    key = _factory_key(fn, None)
    if key is not None and key in _HELPER_CACHE:
        return _HELPER_CACHE[key]
    made = DeviceFunction(fn)
    if key is not None:
        _HELPER_CACHE[key] = made
    return made
