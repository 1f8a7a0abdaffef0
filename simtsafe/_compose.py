"""The objects users hold: a kernel or helper composed of its declaration, compile and launch.

``@simtsafe.kernel`` / ``@simtsafe.device`` make them. Each composes, top
down, the parts below it, none of which calls back up:

* the declaration (``decoration``): annotations, contract, the source rules,
  the frozen rewritten function;
* the compile (``lowering``): Numba's typing with simtsafe's rules, the PTX,
  and on the simulator the compile worker's verdict for the CUDA target;
* the compiled-form checks (``verify``) on the LLVM IR of every compile;
* the launch (``host``): ``prepare`` -> ``PreparedLaunch``, and the raw
  ``kernel.unchecked[...]`` inside ``simtsafe.unsafe``.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import types as pytypes
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    NoReturn,
    ParamSpec,
    SupportsIndex,
    TypeGuard,
    final,
    overload,
)

import numpy as np
from numba import cuda

from ._errors import SafetyError, UnsafeRegionRequired
from ._unsafe import in_unsafe_region
from .decoration._declaration import (
    Declared,
    HelperDeclaration,
    KernelDeclaration,
    _Build,
    _decl_fingerprint,
    _factory_key,
    describe_instances,
    stable_text,
)
from .decoration._options import DEFAULT_OPTIONS, CompileOptions
from .decoration._params import Param, admits, allowed_types
from .decoration._uniformity import with_loop_note
from .host._contract import BoundContract, LaunchContract
from .host._requires import ParamInfo
from .lowering import _diskcache, simtsafe_typing
from .lowering._compat import (
    SIMULATOR,
    assume_compute_capability,
    compile_kernel_ir,
    compile_kernel_ptx,
    current_compute_capability,
    dumps_kernel,
    kernel_ir,
    loads_kernel,
    typing_error_classes,
)
from .lowering._irform import WRAPPING_MARK
from .verify import SourceInfo, check_kernel_ir

if TYPE_CHECKING:
    from .host._prepare import PreparedLaunch

__all__ = ["DeviceFunction", "Kernel", "Specialization", "device", "kernel"]

P = ParamSpec("P")

#: A grid or block: an int or 1 to 3 ints (numpy integers too), padded with 1s.
Dims = (
    SupportsIndex
    | tuple[SupportsIndex]
    | tuple[SupportsIndex, SupportsIndex]
    | tuple[SupportsIndex, SupportsIndex, SupportsIndex]
)


#: A zero-length external array in shared memory: dynamic shared memory (the symbol's name).
_DYNAMIC_SHARED = re.compile(
    r'^(@(?:"[^"]*"|[-\w.$]+)) = external addrspace\(3\) global \[0 x ', re.M
)


@dataclass(frozen=True)
class Specialization:
    """One compiled specialization of a kernel for a set of argument types."""

    argtypes: tuple[Any, ...]
    numba_kernel: Any  # numba.cuda.dispatcher._Kernel (None on the simulator)
    decl: Any = None  # the declaration it was compiled from


def _keeps_below(text: str, array: str, scalar: str) -> bool:
    """Is the relation ``text`` exactly ``array``'s extent ``>=``/``>``/``==`` ``scalar``?"""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(tree, ast.Compare) or len(tree.ops) != 1:
        return False

    def extent(node: ast.expr) -> bool:
        if isinstance(node, ast.Attribute) and node.attr == "size":
            return isinstance(node.value, ast.Name) and node.value.id == array
        return (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == 0
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == array
        )

    def named(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == scalar

    left, op, right = tree.left, tree.ops[0], tree.comparators[0]
    if extent(left) and named(right):
        return isinstance(op, ast.GtE | ast.Gt | ast.Eq)
    if named(left) and extent(right):
        return isinstance(op, ast.LtE | ast.Lt | ast.Eq)
    return False


#: Sizes up to which a contract's size relations are evaluated for the read-range proof.
_SIZE_PROOF_LIMIT = 1 << 12


def _bind(contract: LaunchContract, params: tuple[Param, ...], name: str) -> BoundContract:
    """The contract bound to the kernel's parameters (``requires`` names checked)."""
    return contract.bind([_param_info(p) for p in params], kernel=name)


@final
@describe_instances
class DeviceFunction(HelperDeclaration):
    """A ``@simtsafe.device`` helper: checked like a kernel, callable from kernels."""

    __slots__ = ()

    def _target(self) -> Any:
        """What kernels call: a Numba device dispatcher (a simulator device function)."""
        build = self._freeze()
        if build.dispatcher is None:
            # On the simulator, a jit(device=True) function swaps `cuda` for the running
            # kernel's fake module when called, so helpers can read cuda.threadIdx too.
            options = {} if SIMULATOR else self.options.jit(device=True)
            build.dispatcher = cuda.jit(device=True, **options)(build.function)
        return build.dispatcher

    def __call__(self, *args: Any) -> NoReturn:
        raise RuntimeError(
            f"simtsafe.device function {self.name!r} runs only inside kernels; call it from a "
            "@simtsafe.kernel"
        )

    def __repr__(self) -> str:
        return f"<simtsafe.device {_where(self)}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (to the simulator's compile worker) as its declaration, over the scope the
        # simulator runs: decorated again there.
        return (_rebuild_helper, (_as_frozen(self), self._decl.options))


@final
@describe_instances
class Kernel(KernelDeclaration, Generic[P]):
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
        options: CompileOptions = DEFAULT_OPTIONS,
    ) -> None:
        super().__init__(fn, contract, binding, _bind, options)

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
        cache: dict[Any, Any] = self._taint_cache
        made = cache.get(key)
        if made is None:
            made = cache[key] = Kernel(self._decl.py_func, self.contract, binding, self.options)
        return made

    # ------------------------------------------------------------------ compilation

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
            block=self.contract.block if self.contract is not None else None,
            one_d=self.contract is not None and self.contract.domain == 1,
            inputs=tuple(
                (
                    p.name,
                    p.dtype.itemsize,
                    self._guaranteed_size(p.name),
                    self._bounded_scalars(p.name),
                )
                for p in self.params
                if p.kind == "in" and p.ndim == 1
            ),
        )

    def _bounded_scalars(self, name: str) -> tuple[str, ...]:
        """The integer scalar parameters ``n`` whose relation keeps ``n <= name.size``.

        Read off relations of exactly that form: ``a.size >= n``, ``a.shape[0] > n``,
        ``a.size == n``, ``n <= a.size``... (the compiled-form check then trusts a
        read ``a[k]`` under ``k < n``).
        """
        bound = self.bound
        scalars = {p.name for p in self.params if p.kind == "scalar"}
        out: list[str] = []
        for relation in bound.relations if bound else ():
            other = relation.names - {name}
            if relation.launch or name not in relation.names or len(other) != 1:
                continue
            (n,) = other
            if n in scalars and _keeps_below(relation.text, name, n):
                out.append(n)
        return tuple(out)

    def _guaranteed_size(self, name: str) -> int:
        """The fewest elements the contract's ``requires`` let the 1D input ``name`` have.

        Only relations that read this input alone (``a.size >= 4``) count; each is
        evaluated exactly, for sizes up to a bound the compiled-form check needs.
        """
        bound = self.bound
        relations = (
            [r for r in bound.relations if r.names == {name} and not r.launch] if bound else []
        )
        if not relations:
            return 0
        for size in range(_SIZE_PROOF_LIMIT):
            if all(r.holds({name: (size,)}) for r in relations):
                return size
        return _SIZE_PROOF_LIMIT

    def _verify(self, build: _Build, texts: list[str], entry: str) -> None:
        """The compiled-form verdict (simtsafe.verify): it decides, the source analysis words.

        The analysis reads the wrapping form; it decides only for code NVVM compiled from
        that same text (``lowering/_nvvminput``). A library whose texts are Numba's own was
        made outside simtsafe's compile -- an overload Numba compiled for a launch's argument
        types, kept by the dispatcher the checked launches share -- and NVVM's default level
        may have folded through the poison the analysed copy does not have (attack round 35).
        """
        if not all(text.startswith(WRAPPING_MARK) for text in texts):
            raise SafetyError(
                f"kernel {self.name!r}: its compiled code was not made by simtsafe's compile "
                "(NVVM got Numba's own IR, whose poison flags the checks do not read; an "
                "overload Numba compiled outside it for a launch's argument types): the checks "
                "cannot vouch for it. Compile it through simtsafe (prepare(), ptx())",
                kernel=self.name,
                rule="compiled-form",
            )
        self._check_tile_window(texts)
        try:
            check_kernel_ir(texts, entry, self._source_info(build))
        except SafetyError as exc:
            worded = with_loop_note(exc, self._thread_loops())
            if worded is exc:
                raise
            raise worded from None

    def _thread_loops(self) -> list[tuple[str, int, int, str]]:
        """The witness loops with a per-thread trip count of this function and its helpers."""
        return [
            (f._decl.source.filename, *loop)
            for f in self._reachable()
            if f._build is not None
            for loop in f._build.analysis.thread_loops
        ]

    def _check_tile_window(self, texts: list[str]) -> None:
        """With ``tile_shared``, the launch's dynamic shared memory is the tiles' window:
        any other dynamic shared array (``cuda.shared.array(0, ...)``, in an unsafe region)
        would start at the same address as the first tile, so none may exist."""
        if self.contract is None or not self.contract.tile_shared:
            return
        for text in texts:
            for name in _DYNAMIC_SHARED.findall(text):
                if not name.lstrip("@").strip('"').startswith("_simtsafe_tile"):
                    raise SafetyError(
                        f"kernel {self.name!r}: its contract declares tile_shared="
                        f"{self.contract.tile_shared}, so the launch's dynamic shared memory "
                        "holds its shared tiles; a raw dynamic shared array "
                        "(`cuda.shared.array(0, ...)`) would start at the first tile's address "
                        "and alias it. Make that memory a `shared.tile` too (it gets its own "
                        "bytes of the window), or drop tile_shared",
                        kernel=self.name,
                        rule="tile-window",
                    )

    def _get_dispatcher(self) -> Any:
        build = self._recheck()
        if build.dispatcher is None:
            # The contract's max_threads becomes .maxntid, so the compiler budgets
            # registers for it (an exact block is stamped as .reqntid instead).
            options = {} if SIMULATOR else self.options.jit(device=False, **self._bounds())
            build.dispatcher = cuda.jit(**options)(build.function)
        return build.dispatcher

    def _bounds(self) -> dict[str, Any]:
        top = self.contract.max_threads if self.contract is not None else None
        return {"contract_max_threads": top}

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
            return spec  # type: ignore[no-any-return]
        disp = self._get_dispatcher()  # re-checks the frozen scope and the declaration
        if SIMULATOR:
            cache_key = self._cache_key("simulator-verdict", key) if self.options.cache else None
            if cache_key is None or _diskcache.load(cache_key) is None:
                self._simulator_verdict(key)
                if cache_key is not None:
                    _diskcache.store(cache_key, {"verdict": "accepted"})
            spec = Specialization((), None, self._decl)
        else:
            argtypes = self.argtypes(key)
            numba_kernel = self._cached_kernel(key) if self.options.cache else None
            if numba_kernel is None:
                try:
                    with simtsafe_typing():
                        numba_kernel = disp.compile(argtypes)
                except typing_error_classes() as exc:
                    raise self._translate(exc) from None
                self._verify(build, *kernel_ir(numba_kernel))
                if self.options.cache:
                    self._store_kernel(key, numba_kernel)
            spec = Specialization(argtypes, numba_kernel, self._decl)
        build.specs[key] = spec
        return spec

    # ------------------------------------------------------------------ the on-disk cache

    def _cache_key(self, what: str, *extra: Any) -> str:
        """Everything that decides the compiled code and the checks' verdict, as text."""
        return repr((what, extra, [_describe(f) for f in self._reachable()]))

    def _cached_kernel(self, layouts: tuple[str, ...]) -> Any:
        entry = _diskcache.load(self._cache_key("kernel", layouts, current_compute_capability()))
        return None if entry is None else loads_kernel(entry["kernel"])

    def _store_kernel(self, layouts: tuple[str, ...], numba_kernel: Any) -> None:
        key = self._cache_key("kernel", layouts, current_compute_capability())
        data = dumps_kernel(numba_kernel)  # with the cubin for this device: nothing to link later
        if data is not None:
            _diskcache.store(key, {"kernel": data, "verdict": "accepted"})

    def _compiled_verdict(self, layouts: tuple[str, ...] | None = None) -> None:
        """Type and lower for the CUDA target (no NVVM) and run the compiled-form checks.

        What the simulator's compile worker runs (``lowering._compileworker``).
        """
        self._concrete("compiling")
        build = self._recheck()
        try:
            with assume_compute_capability((9, 0)), simtsafe_typing():
                texts, entry = compile_kernel_ir(
                    build.function,
                    self.argtypes(layouts),
                    (9, 0),
                    **self.options.ptx(**self._bounds()),
                )
        except typing_error_classes() as exc:
            raise self._translate(exc) from None
        self._verify(build, texts, entry)

    def _simulator_verdict(self, layouts: tuple[str, ...]) -> None:
        """On the simulator: the CUDA target's verdict, from a compile worker process.

        Raises:
            SafetyError: what compiling this kernel for the GPU raises.
        """
        from . import _errors
        from .lowering._compileworker import Unavailable, verdict

        reachable = self._reachable()
        modules = {f._decl.py_func.__module__ for f in reachable}
        sources = {f._decl.source.filename for f in reachable}
        try:
            reply = verdict(self, layouts, modules, _user_modules(reachable), sources)
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
        cache_key = self._cache_key("ptx", layouts, cc) if self.options.cache else None
        if cache_key is not None:
            hit = _diskcache.load(cache_key)
            if hit is not None:
                return str(hit["ptx"])
        try:
            with assume_compute_capability(cc), simtsafe_typing():
                ptx, texts, entry = compile_kernel_ptx(
                    build.function, self.argtypes(layouts), cc, **self.options.ptx(**self._bounds())
                )
        except typing_error_classes() as exc:
            raise self._translate(exc) from None
        self._verify(build, texts, entry)
        if cache_key is not None:
            _diskcache.store(cache_key, {"ptx": ptx, "verdict": "accepted"})
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
            from .host._generic import GenericLaunch

            return GenericLaunch(self, grid, block, shared_mem, stream)  # type: ignore[return-value]
        from .host._prepare import prepare

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
        return f"<simtsafe.kernel {_where(self)} contract={self.contract!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (to the simulator's compile worker) as its declaration: decorated again
        # there. The annotations travel evaluated (names used only in string annotations
        # are not among the globals a function's code refers to).
        d = self._decl
        annotations = inspect.get_annotations(d.py_func, eval_str=True)
        return (_rebuild_kernel, (_as_frozen(self), annotations, d.contract, d.binding, d.options))


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
    finding = kernel.source_uniformity().finding
    if finding is not None:
        raise with_loop_note(finding, kernel._thread_loops())
    if {"grid.sync", "grid.read"} & kernel._api_closure():
        # The source-level levels are block-uniform at best: a branch on blockIdx passes
        # them, yet some blocks would skip a grid sync. Only the compiled form decides it.
        raise SafetyError(
            f"kernel {kernel.name!r} calls simtsafe.grid.sync() or grid.read(), whose "
            "grid-uniform control flow and grid phases only the compiled-form check can "
            f"prove, and it cannot run here ({why}); "
            "install the CUDA compiler libraries (pip install 'simtsafe[cu13]')",
            kernel=kernel.name,
            rule="uniformity",
        )


def _rebuild_kernel(
    fn: pytypes.FunctionType,
    annotations: dict[str, Any],
    contract: LaunchContract | None,
    binding: dict[Any, Any] | None,
    options: CompileOptions,
) -> Kernel[Any]:
    """The other end of ``Kernel.__reduce__``."""
    fn.__annotations__ = dict(annotations)
    return Kernel(fn, contract, binding, options)


def _user_modules(functions: Iterable[Declared]) -> set[str]:
    """The user's own modules the frozen scopes name (``cfg`` in ``cfg.LIMIT``), and the
    user's modules those hold as attributes (``outer.settings.LIMIT``), to any depth.

    The compile worker would import them afresh, seeing their import-time
    attributes; they travel by value, as this process has them.
    """
    import sysconfig

    libraries = {
        os.path.realpath(path)
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (path := sysconfig.get_paths().get(key))
    }

    def users(value: Any) -> TypeGuard[pytypes.ModuleType]:
        file = getattr(value, "__file__", None)
        if not isinstance(value, pytypes.ModuleType) or not isinstance(file, str):
            return False
        if value.__name__.split(".")[0] in ("simtsafe", "numba", "numpy"):
            return False
        path = os.path.realpath(file)
        return not any(path.startswith(lib + os.sep) for lib in libraries)

    todo: list[pytypes.ModuleType] = []
    for f in functions:
        build = f._build
        code = f._decl.py_func.__code__
        if build is None:
            continue
        for name in (*code.co_names, *code.co_freevars):
            value = build.scope.get(name)
            if users(value):
                todo.append(value)
    names: set[str] = set()
    while todo:
        module = todo.pop()
        if module.__name__ in names:
            continue
        names.add(module.__name__)
        todo.extend(v for v in list(vars(module).values()) if users(v))
    return names


def _as_frozen(f: Declared) -> pytypes.FunctionType:
    """The user's function over the scope its first compile froze (the one the simulator runs).

    Its live globals may have been rebound since; the compile worker must check
    the values this process runs, not those (``_compileworker``).
    """
    fn = f._decl.py_func
    build = f._build
    if build is None:
        return fn
    cache: dict[Any, Any] = f._taint_cache
    made = cache.get(("frozen-function", id(build)))
    if made is not None:  # one object per build: a recursive helper pickles as a cycle
        return made  # type: ignore[no-any-return]
    scope = build.scope
    cells = tuple(
        pytypes.CellType(scope[name]) if name in scope else pytypes.CellType()
        for name in fn.__code__.co_freevars
    )
    copy = pytypes.FunctionType(
        fn.__code__, dict(scope), fn.__name__, fn.__defaults__, cells or None
    )
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__annotations__ = dict(fn.__annotations__)
    copy.__doc__ = fn.__doc__
    cache[("frozen-function", id(build))] = copy
    return copy


def _rebuild_helper(fn: pytypes.FunctionType, options: CompileOptions) -> DeviceFunction:
    """The other end of ``DeviceFunction.__reduce__``."""
    return DeviceFunction(fn, options)


def _describe(f: Declared) -> tuple[Any, ...]:
    """A kernel's or helper's part of a cache key: its declaration, source, rewritten code
    and the values its frozen scope gives every name it uses."""
    build = f._freeze()
    scope = {**build.analysis.globals_used, **build.analysis.substitutes}
    return (
        f._origin,
        f._decl.source.text,
        ast.dump(build.analysis.module),
        sorted((name, _describe_value(value)) for name, value in scope.items()),
    )


def _describe_value(value: Any) -> tuple[Any, ...]:
    """A scope value as text that changes whenever what it means for the kernel does.

    A value with no stable description (an object repr with an address) makes a
    key no later process produces: a miss, never a wrong hit.
    """
    if isinstance(value, Declared):
        return ("function", value.__module__, value.py_func.__qualname__)  # described itself
    if isinstance(value, pytypes.ModuleType):
        return ("module", value.__name__)
    if isinstance(value, (int, float, complex, str, bytes, tuple, np.generic)):
        # A constant by its value, never by names it may carry (an int subclass with a
        # ``__name__`` class attribute would otherwise be keyed by that name alone).
        return ("value", type(value).__module__, type(value).__qualname__, stable_text(value))
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    module = getattr(value, "__module__", None)
    if isinstance(name, str) and isinstance(module, str):
        return ("object", module, name, type(value).__qualname__)
    return ("value", type(value).__module__, type(value).__qualname__, stable_text(value))


def _where(f: Declared) -> str:
    """``'blur' (pkg.mod.blur)``: the name, then where it is defined."""
    return f"{f.name!r} ({f.__module__}.{f.py_func.__qualname__})"


def _param_info(p: Param) -> ParamInfo:
    """What a ``requires`` relation may say about parameter ``p``."""
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
            # Numba compiles the overload for the arguments' types here, into the dispatcher
            # a checked launch of the same types reuses: inside simtsafe's compile, so that
            # NVVM gets the wrapping form the checks read (lowering/_nvvminput).
            with simtsafe_typing():
                launcher(*args)

        return run


#: Kernels made by factories, by what determines their compiled code (see `kernel`).
_FACTORY_CACHE: dict[Any, Kernel[Any]] = {}


@overload
def kernel(fn: Callable[P, None], /) -> Kernel[P]: ...
@overload
def kernel(
    *,
    contract: LaunchContract | None = None,
    fastmath: bool = False,
    lineinfo: bool = False,
    debug: bool = False,
    opt: bool = True,
    max_registers: int | None = None,
    launch_bounds: int | tuple[int, ...] | None = None,
    cache: bool = False,
) -> Callable[[Callable[P, None]], Kernel[P]]: ...
def kernel(
    fn: Callable[P, None] | None = None,
    /,
    *,
    contract: LaunchContract | None = None,
    **options: Any,
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
        fastmath, lineinfo, debug, opt: as for ``numba.cuda.jit`` (``debug``
            needs ``opt=False``; ``lineinfo`` puts ``.loc`` line records in the PTX).
        max_registers: a register budget per thread (``.maxnreg`` in the PTX,
            and the linker's limit).
        launch_bounds: ``max_threads`` or ``(max_threads, min_blocks_per_sm[,
            max_blocks_per_cluster])`` (``.maxntid``/``.minnctapersm``); not with a
            contract's exact ``block`` (stamped as ``.reqntid``).
        cache: keep the compiled kernel and the checks' verdict on disk, keyed
            by everything that decides them; a later process compiles nothing
            for an unchanged kernel (docs/performance.md, "Compiling once").

    Raises:
        SafetyError: the source breaks a rule, a parameter is unannotated...
        LaunchContractError: the contract does not fit the parameters.
        TypeError: an option of the wrong type, or one that cannot compile.
    """
    if contract is not None and not isinstance(contract, LaunchContract):
        raise TypeError(
            f"contract must be a simtsafe.LaunchContract, got {type(contract).__name__}"
        )
    _known_options(options, _KERNEL_OPTIONS, "kernel")

    def decorate(f: Callable[P, None]) -> Kernel[P]:
        if not isinstance(f, pytypes.FunctionType):
            raise TypeError(f"@simtsafe.kernel decorates a plain function, got {type(f).__name__}")
        compiled = CompileOptions.make(f.__name__, "kernel", contract, **options)
        key = _factory_key(f, contract)
        if key is not None:
            key = (key, compiled)
            cached = _FACTORY_CACHE.get(key)
            if cached is not None:
                return cached
        made: Kernel[P] = Kernel(f, contract, None, compiled)
        if key is not None:
            _FACTORY_CACHE[key] = made
        return made

    return decorate(fn) if fn is not None else decorate


_KERNEL_OPTIONS = frozenset(
    {"fastmath", "lineinfo", "debug", "opt", "max_registers", "launch_bounds", "cache"}
)
_HELPER_OPTIONS = frozenset({"fastmath", "lineinfo", "debug", "opt", "inline"})


def _known_options(options: dict[str, Any], known: frozenset[str], what: str) -> None:
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(
            f"@simtsafe.{what} got unknown option(s) {', '.join(unknown)}; it takes "
            f"{', '.join(sorted(known))} (numba.cuda.jit's names and meaning)"
        )


_HELPER_CACHE: dict[Any, DeviceFunction] = {}


@overload
def device(fn: Callable[P, Any], /) -> DeviceFunction: ...
@overload
def device(
    *,
    fastmath: bool = False,
    lineinfo: bool = False,
    debug: bool = False,
    opt: bool = True,
    inline: bool = False,
) -> Callable[[Callable[P, Any]], DeviceFunction]: ...
def device(
    fn: Callable[P, Any] | None = None, /, **options: Any
) -> DeviceFunction | Callable[[Callable[P, Any]], DeviceFunction]:
    """Make a device helper callable from simtsafe kernels, checked by the same rules.

    Its witnesses carry no domain proof (it may be called from any kernel),
    so ``thread.index_1d()`` inside it checks the launch shape on the device.
    It may not return a witness. Like kernels, helpers made inside a factory
    may close over constants and other helpers (cached by those values).
    ``@simtsafe.device(fastmath=True)`` etc. take ``numba.cuda.jit``'s options
    that apply to device functions; ``inline=True`` inlines the helper into each
    caller at the Numba IR level (``inline="always"``): its code is then lowered
    in the kernel, where the kernel's exact block is known, so checks that the
    block decides (an ``ldmatrix`` run inside its tile, whole warps) fold there
    as in the kernel's own body.
    """
    _known_options(options, _HELPER_OPTIONS, "device")

    def decorate(f: Callable[P, Any]) -> DeviceFunction:
        if not isinstance(f, pytypes.FunctionType):
            raise TypeError(f"@simtsafe.device decorates a plain function, got {type(f).__name__}")
        compiled = CompileOptions.make(f.__name__, "device", None, **options)
        key = _factory_key(f, None)
        if key is not None:
            key = (key, compiled)
            if key in _HELPER_CACHE:
                return _HELPER_CACHE[key]
        made = DeviceFunction(f, compiled)
        if key is not None:
            _HELPER_CACHE[key] = made
        return made

    return decorate(fn) if fn is not None else decorate
