"""The declaration of a kernel or helper: what its source says, checked, and frozen for compiling.

Decoration parses the annotations (``_params``), validates the contract
against them and checks the source (``_rewrite``) against the names bound so
far; nothing is compiled. The first compile *freezes* the function: it
snapshots the module globals and closure values, runs the same analysis
strictly over that snapshot (a name bound after decoration is classified like
any other; an unknown name is an error), and builds the rewritten function
against a namespace holding exactly the objects that were checked. Every
later compile re-runs the analysis over the frozen snapshot.

The objects users hold (``simtsafe.Kernel``, ``simtsafe.DeviceFunction``,
in ``simtsafe._compose``) subclass ``KernelDeclaration`` and
``HelperDeclaration`` and add compiling and launching.

Invariant: a kernel's declaration (function, parameters, contract) never
changes after decoration (the objects refuse attribute assignment, and the
declaration's values are sealed as text when it is complete); every compile
and ``prepare`` compares the declaration with the seal.
"""

from __future__ import annotations

import builtins as _py_builtins
import dataclasses
import hashlib
import os
import threading
import types as pytypes
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pydantic

from .._errors import SafetyError
from ..lowering import builtins as device_builtins
from ..lowering import mark_built, numba_type
from ..lowering._diagnostics import translate_typing_error
from ._appends import view_args
from ._options import DEFAULT_OPTIONS, CompileOptions
from ._params import Param, annotated_record_fields, parse_params, record_fields, typevars
from ._policy import LOCAL_ATTRIBUTES
from ._registry import register
from ._rewrite import Analysis, ParamView, Source, UnsafeRegion, analyze, parse_source
from ._uniformity import UniformitySummary

if TYPE_CHECKING:
    from ..host._contract import BoundContract, LaunchContract

__all__ = ["Declared", "HelperDeclaration", "KernelDeclaration"]


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
    options: CompileOptions = DEFAULT_OPTIONS


@dataclass
class _Build:
    """What the first compile froze: the scope, the checked function, its dispatcher."""

    decl: _Decl
    scope: dict[str, Any]
    analysis: Analysis
    function: pytypes.FunctionType
    namespace: dict[str, Any]
    dispatcher: Any = None
    specs: dict[tuple[str, ...], Any] = field(default_factory=dict)  # Specialization
    fingerprint: str = ""  # the declaration's values when frozen (see _decl_fingerprint)


def stable_text(value: Any) -> str:
    """A value as text that is the same in every process and changes with the value.

    ``repr`` is not enough: a set's follows string hashing, which changes per
    process (the on-disk cache would never hit), and a subclass of ``int`` may
    spell any value as anything (two different constants, one key). So sets are
    spelled sorted; numbers and strings by their value (``int.__repr__``,
    ``float.hex``), with their type; dataclasses and pydantic models field by
    field from their stored values, every field (``Relation``'s compiled check is
    a field its repr hides), so an edit made with ``object.__setattr__`` still
    changes the text; functions by their code, defaults, closure and the globals
    they name.
    """
    return _stable(value, set())


_VALUE_TYPES = (int, float, complex, str, bytes, np.generic)


def _plain_value_type(t: type) -> bool:
    """Python's own number and string types, and numpy's scalar types."""
    return t in (int, float, complex, str, bytes) or t.__module__ == "numpy"


#: Exact built-in types spelled directly: most of a declaration, so the fast path.
_LEAVES: dict[type, Callable[[Any], str]] = {
    type(None): repr,
    bool: repr,
    int: lambda v: f"builtins.int:{int.__repr__(v)}",
    float: lambda v: f"builtins.float:{float.hex(v)}",
    str: lambda v: f"builtins.str:{str.__repr__(v)}",
}


def _stable(value: Any, seen: set[int]) -> str:
    leaf = _LEAVES.get(type(value))
    if leaf is not None:
        return leaf(value)
    if id(value) in seen:
        return "<cycle>"
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, _VALUE_TYPES) and not _plain_value_type(type(value)):
        # A subclass may give Numba another value than Python's (its ``str`` is what
        # the IR spells, its ``__bool__`` what a branch folds): no text can stand for
        # it, so it gets one no other process produces (a cache miss, never a wrong hit).
        return f"{kind}:unkeyed:{os.getpid()}:{id(value)}"
    if isinstance(value, int):
        return f"{kind}:{int.__repr__(value)}"
    if isinstance(value, float):
        return f"{kind}:{float.hex(value)}"
    if isinstance(value, complex):
        return f"{kind}:{float.hex(value.real)},{float.hex(value.imag)}"
    if isinstance(value, (str, bytes)):
        return f"{kind}:{str.__repr__(value) if isinstance(value, str) else bytes.__repr__(value)}"
    if isinstance(value, np.generic):
        return f"{kind}:{value.dtype.str}:{value.tobytes().hex()}"
    if type(value) is np.ndarray and value.dtype.kind in "biufc":
        # A constant array's snapshot (``cuda.const.array_like``): its values are compiled
        # in, so they are part of the key (numpy's repr elides large arrays).
        data = np.ascontiguousarray(value).tobytes()
        return f"{kind}:{value.dtype.str}:{value.shape}:{hashlib.sha256(data).hexdigest()}"
    seen = seen | {id(value)}
    if isinstance(value, (set, frozenset)):
        return f"{kind}({{{', '.join(sorted(_stable(v, seen) for v in value))}}})"
    if isinstance(value, dict):
        items = sorted(f"{_stable(k, seen)}: {_stable(v, seen)}" for k, v in value.items())
        return f"{kind}{{{', '.join(items)}}}"
    if isinstance(value, (tuple, list)):
        return f"{kind}([{', '.join(_stable(v, seen) for v in value)}])"
    if isinstance(value, pytypes.CodeType):
        consts = _stable(value.co_consts, seen)
        return f"code({value.co_code.hex()}, {consts}, {value.co_names})"
    if isinstance(value, pytypes.FunctionType):
        code = value.__code__
        cells = tuple(c.cell_contents for c in value.__closure__ or ())
        named = {n: value.__globals__[n] for n in code.co_names if n in value.__globals__}
        parts = (code, value.__defaults__, value.__kwdefaults__, cells, named)
        return f"function({value.__module__}.{value.__qualname__}, {_stable(parts, seen)})"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (
            f"{f.name}={_stable(getattr(value, f.name), seen)}" for f in dataclasses.fields(value)
        )
        return f"{kind}({', '.join(fields)})"
    if isinstance(value, pydantic.BaseModel):
        fields = (f"{k}={_stable(v, seen)}" for k, v in vars(value).items())
        return f"{kind}({', '.join(fields)})"
    return repr(value)


def _decl_fingerprint(d: _Decl) -> str:
    """The declaration's values, as text: what the compiled code embodies.

    Compared at every compile and ``prepare``: a declaration (or its frozen
    pydantic contract) changed in place with ``object.__setattr__`` keeps its
    identity but not this text.
    """
    return stable_text(
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
            d.options,
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


#: Summaries of helpers that are not frozen yet, kept for one outermost analysis: within
#: it no name is bound anew (the analysis runs start to end on one thread), so a helper's
#: summary for the same arguments is the same wherever it is asked for. Without it, each
#: call site re-analyzes the whole helper tree below it (nested helpers: exponential).
_SESSION = threading.local()


class _summary_session:
    """Open (or join) the summary memo of the outermost analysis on this thread."""

    def __enter__(self) -> None:
        depth = getattr(_SESSION, "depth", 0)
        if depth == 0:
            _SESSION.memo = {}
        _SESSION.depth = depth + 1

    def __exit__(self, *exc: object) -> None:
        _SESSION.depth -= 1
        if _SESSION.depth == 0:
            _SESSION.memo = None


def _session_memo() -> dict[Any, Any] | None:
    return getattr(_SESSION, "memo", None)


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


class _FunctionAttribute:
    """``kernel.__name__`` is the function's; ``Kernel.__name__`` stays the class's (the type's
    own data descriptor answers for the class)."""

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return type.__dict__[self.attr].__get__(owner)
        return obj._function_attribute(self.attr)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{self.attr} of a simtsafe kernel or helper is read-only")


class _PerInstance(str):
    """The class's own ``__module__`` / ``__doc__`` -- still a str, for the class -- that
    answers for the decorated function when read on an instance (a non-data descriptor:
    the instances have no ``__dict__``)."""

    attr: str

    def __new__(cls, value: str, attr: str) -> _PerInstance:
        made = super().__new__(cls, value)
        made.attr = attr
        return made

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return str(self)
        return obj._function_attribute(self.attr)


class Declared:
    """What kernels and helpers share: an immutable declaration, a build frozen on first use.

    The source side only: what was declared and checked, and the rewritten
    function Numba compiles. Compiling and launching are the composed objects'
    (``simtsafe._compose.Kernel`` / ``DeviceFunction``), which subclass these.
    """

    __slots__ = ("__weakref__", "_build", "_decl", "_origin", "_taint_cache")

    _decl: _Decl
    _build: _Build | None
    _origin: str
    _taint_cache: dict[Any, Any]

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

    __name__ = _FunctionAttribute("__name__")

    if not TYPE_CHECKING:  # (hidden from mypy: it would make every attribute Any)

        def __getattr__(self, attr: str) -> Any:
            # Only for names the class does not define: instances have no __qualname__
            # of their own, so it is the function's.
            if attr == "__qualname__":
                return self._decl.py_func.__qualname__
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def _function_attribute(self, attr: str) -> Any:
        fn = self._decl.py_func
        if attr == "__doc__":
            return self._describe()
        return getattr(fn, attr)

    def _describe(self) -> str:
        """The docstring ``help()`` shows: signature, the function's own doc, the contract."""
        import inspect

        fn = self._decl.py_func
        kind = "simtsafe kernel" if self._decl.kind == "kernel" else "simtsafe device helper"
        lines = [f"{fn.__name__}{inspect.signature(fn)}  [{kind}]"]
        if fn.__doc__:
            lines += ["", inspect.cleandoc(fn.__doc__)]
        if self._decl.contract is not None:
            lines += ["", f"Launch contract: {self._decl.contract!r}"]
        if self._decl.options != DEFAULT_OPTIONS:
            lines += ["", f"Compiled with: {self._decl.options}"]
        return "\n".join(lines)

    @property
    def __signature__(self) -> Any:
        import inspect

        return inspect.signature(self._decl.py_func)

    @property
    def __wrapped__(self) -> pytypes.FunctionType:
        return self._decl.py_func

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
    def options(self) -> CompileOptions:
        """The compiler options (``fastmath``, ``lineinfo``, ...) it is compiled with."""
        return self._decl.options

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
        with_uniformity: bool = False,
    ) -> Analysis:
        with _summary_session():
            return self._analyze_now(scope, strict, seeds, param_levels, with_uniformity)

    def _analyze_now(
        self,
        scope: Mapping[str, Any],
        strict: bool,
        seeds: Mapping[str, int] | None,
        param_levels: Mapping[str, int] | None,
        with_uniformity: bool,
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
            with_uniformity=with_uniformity,
            max_registers=d.options.max_registers if d.kind == "kernel" else None,
            blocks_per_sm=(
                d.contract.blocks_per_sm if d.kind == "kernel" and d.contract is not None else None
            ),
            tile_window=(
                d.contract.tile_shared if d.kind == "kernel" and d.contract is not None else None
            ),
            max_threads=(
                d.contract.max_threads if d.kind == "kernel" and d.contract is not None else None
            ),
        )

    def source_uniformity(self) -> UniformitySummary:
        """The source-level uniformity analysis of the frozen function (computed once).

        It decides nothing where the compiled form can be checked; its finding
        is the simulator's verdict where no CUDA target exists, and what the
        differential test compares the compiled form with.
        """
        build = self._freeze()
        cache: dict[Any, Any] = self._taint_cache
        summary = cache.get("source-uniformity")
        if summary is None:
            analysis = self._analyze(build.scope, strict=True, with_uniformity=True)
            summary = cache["source-uniformity"] = analysis.uniformity
        return summary

    def _api_closure(self) -> frozenset[str]:
        """The kernel-API names (``cuda.cg.this_grid``...) this code and its helpers call.

        The source-level fact the simulator has where the CUDA target reads the
        compiled kernel (``numba_kernel.cooperative``): it has no compiled form.
        """
        used: set[str] = set()
        todo: list[Declared] = [self]
        seen: set[int] = set()
        while todo:
            compiled = todo.pop()
            if id(compiled) in seen:
                continue
            seen.add(id(compiled))
            analysis = compiled._freeze().analysis
            used |= analysis.api_used
            for value in {**analysis.globals_used, **analysis.substitutes}.values():
                if isinstance(value, HelperDeclaration):
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
            mark_built(
                function,
                tuple((r.lineno, max(r.end_lineno, r.lineno)) for r in analysis.unsafe_regions),
            )
            build = _Build(d, scope, analysis, function, namespace)
            build.fingerprint = self._origin
            object.__setattr__(self, "_build", build)
            # Only now bind what the code refers to: a helper that refers (perhaps
            # through others) back to this one finds this build already in place.
            for name, value in {**analysis.globals_used, **analysis.substitutes}.items():
                namespace[name] = value._target() if isinstance(value, HelperDeclaration) else value
            return build

    def _recheck(self) -> _Build:
        """Re-run the analysis over the frozen scope (every compile), and the declaration."""
        fresh = self._build is None  # _freeze analyses the frozen scope itself
        build = self._freeze()
        self._check_sealed()
        if build.decl is not self._decl or build.fingerprint != _decl_fingerprint(self._decl):
            raise SafetyError(
                f"kernel {self.name!r}: its declaration was replaced after it was compiled (the "
                "compiled code embodies the old contract); decorate a new function instead",
                kernel=self.name,
                rule="immutable",
            )
        if not fresh:
            self._analyze(build.scope, strict=True)
        return build

    def _translate(self, exc: BaseException) -> BaseException:
        return translate_typing_error(exc, self.name, self.filename)

    def _reachable(self) -> list[Declared]:
        """This function and every frozen helper it calls, transitively."""
        found: list[Declared] = []
        seen: set[int] = set()
        work: list[Declared] = [self]
        while work:
            f = work.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            found.append(f)
            fb = f._build
            if fb is not None:
                # A helper named by a global (`helper(x)`) or reached through a module
                # attribute (`mod.helper(x)`: a substitute name) -- both are called (attack
                # round 23: the second was missing from the cache key and the unsafe regions).
                called = {**fb.analysis.globals_used, **fb.analysis.substitutes}.values()
                work += [v for v in called if isinstance(v, Declared)]
        return found


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
    if not isinstance(helper, HelperDeclaration):
        return True
    return helper._returns_raw(seeds)


def _helper_uniformity(helper: Any, levels: tuple[int, ...]) -> UniformitySummary:
    """Uniformity summary of a helper called with arguments of the given levels."""
    if not isinstance(helper, HelperDeclaration):
        return UniformitySummary(result=2, nonuniform_source=True)
    return helper._uniformity(levels)


class HelperDeclaration(Declared):
    """A ``@simtsafe.device`` helper as declared: its source checked, its summaries for callers."""

    __slots__ = ()

    def __init__(self, fn: pytypes.FunctionType, options: CompileOptions = DEFAULT_OPTIONS) -> None:
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
            # the fields of records its annotated views hold read by name, as in a kernel
            # (a field `mean` is not the array method: port18)
            attributes=LOCAL_ATTRIBUTES | annotated_record_fields(fn),
            unsafe_regions=(),
            options=options,
        )
        self._init(decl)
        analysis = self._analyze(_scope_of(fn), strict=False)
        _check_helper_uses(decl, analysis)
        self._seal(_with_regions(decl, analysis))
        register(self)  # the gate's registry (_registry): every helper made, in order

    def _returns_raw(self, seeds: dict[int, int]) -> bool:
        """Check this helper with raw values in the given parameters; does it return one?"""
        frozen = self._build is not None
        key = ("taint", frozenset(seeds.items()), frozen)
        cache: dict[Any, Any] = self._taint_cache
        if key in cache:
            return cache[key]  # type: ignore[no-any-return]
        memo = _session_memo()
        if memo is not None and (id(self), key) in memo:
            return memo[(id(self), key)]  # type: ignore[no-any-return]
        cache[key] = True  # recursion: assume the worst until known
        params = self._decl.source.params
        named = {params[i]: rank for i, rank in seeds.items() if i < len(params)}
        scope = self._build.scope if self._build is not None else _scope_of(self._decl.py_func)
        analysis = self._analyze(scope, strict=False, seeds=named)
        _settle(cache, key, analysis.returns_raw, frozen)
        if memo is not None:
            memo[(id(self), key)] = analysis.returns_raw
        return analysis.returns_raw

    def _uniformity(self, levels: tuple[int, ...]) -> UniformitySummary:
        """Analyze this helper's barriers and collectives with its arguments' uniformity."""
        frozen = self._build is not None
        key = ("uniformity", levels, frozen)
        cache: dict[Any, Any] = self._taint_cache
        if key in cache:
            return cache[key]  # type: ignore[no-any-return]
        memo = _session_memo()
        if memo is not None and (id(self), key) in memo:
            return memo[(id(self), key)]  # type: ignore[no-any-return]
        # Recursion: assume the worst (a thread-dependent result, a barrier inside).
        cache[key] = UniformitySummary(result=2, block_op_line=0, nonuniform_source=True)
        params = self._decl.source.params
        named = {p: (levels[i] if i < len(levels) else 2) for i, p in enumerate(params)}
        scope = self._build.scope if self._build is not None else _scope_of(self._decl.py_func)
        summary = self._analyze(
            scope, strict=False, param_levels=named, with_uniformity=True
        ).uniformity
        _settle(cache, key, summary, frozen)
        if memo is not None:
            memo[(id(self), key)] = summary
        return summary

    def _target(self) -> Any:
        """What kernels call (a Numba device dispatcher): the composed helper's."""
        raise NotImplementedError


def _with_regions(decl: _Decl, analysis: Analysis) -> _Decl:
    from dataclasses import replace

    return replace(decl, unsafe_regions=tuple(analysis.unsafe_regions))


class KernelDeclaration(Declared):
    """A ``@simtsafe.kernel`` as declared: parameters, contract, source checked."""

    __slots__ = ()

    def __init__(
        self,
        fn: pytypes.FunctionType,
        contract: LaunchContract | None,
        binding: dict[Any, Any] | None,
        bind: Callable[[LaunchContract, tuple[Param, ...], str], BoundContract],
        options: CompileOptions = DEFAULT_OPTIONS,
    ) -> None:
        name = fn.__name__
        params = parse_params(fn, name, binding)
        if contract is not None:
            # A private copy: the caller's object may be edited later, this one is checked.
            contract = contract.model_copy(deep=True)
        bound = bind(contract, params, name) if contract is not None else None
        partners = view_args(params, contract, name, fn)
        views = tuple(
            ParamView(
                p.name,
                p.kind if p.kind in ("in", "acc") else str(p.space),
                p.ndim,
                partners.get(p.name, ()),
            )
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
            options=options,
        )
        self._init(decl)
        analysis = self._analyze(_scope_of(fn), strict=False)
        _check_contract_needs(decl, analysis)
        self._seal(_with_regions(decl, analysis))
        register(self)  # the gate's registry (_registry): every kernel made, in order

    @property
    def params(self) -> tuple[Param, ...]:
        """The parameters as declared by their annotations (kind, dtype, rank, index space)."""
        return self._decl.params

    @property
    def typevars(self) -> dict[str, Any]:
        """The type variables of a dtype-generic kernel (empty for a concrete one)."""
        return typevars(self._decl.params)

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
        """The launch contract (the kernel's own copy, taken at decoration), or None."""
        return self._decl.contract

    @property
    def bound(self) -> BoundContract | None:
        """The contract bound to the parameters (``requires`` and ``covers`` resolved)."""
        return self._decl.bound

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
        if isinstance(value, Declared):
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


_Class = TypeVar("_Class", bound=type)


def describe_instances(cls: _Class) -> _Class:
    """Instances of ``cls`` read like their function (``__module__``, ``__doc__`` for
    ``help(kernel)``); ``cls`` itself keeps its own module and docstring."""
    type.__setattr__(cls, "__doc__", _PerInstance(cls.__dict__.get("__doc__") or "", "__doc__"))
    type.__setattr__(cls, "__module__", _PerInstance(cls.__dict__["__module__"], "__module__"))
    return cls


for _cls in (Declared, HelperDeclaration, KernelDeclaration):
    describe_instances(_cls)
