"""What a check replays: the kernel's Python function, rebuilt over the fake ``numba.cuda``.

The one place that knows how kernels are represented (the lead adjusts it
when the decoration internals change):

* a raw kernel -- a ``numba.cuda.jit`` dispatcher (``py_func``), a Numba
  simulator kernel (``fn``) or a plain function -- runs as its own Python
  function;
* a ``simtsafe.Kernel`` (or the kernel of a ``PreparedLaunch``) runs as the
  decorator's frozen rewrite (``kernel._freeze()``: the strict analysis of
  its frozen scope, unsafe markers stripped, ``thread.*`` bound to
  ``__ss_*`` names) over the objects that analysis checked, with the
  simulator twins of ``simtsafe.lowering._sim`` as the ``__ss_*`` names.

Either way the function is rebuilt over a copy of its globals (and closure
cells) in which the ``numba.cuda`` module, ``numba`` itself, every
``numba.cuda`` member bound by name, every device function (raw or
``simtsafe.device``, recursively, once per check) and every global numpy
array (a constant to Numba) are replaced by the replay's stand-ins. The
user's module is never modified.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..decoration._declaration import HelperDeclaration as DeviceFunction
from ..decoration._declaration import KernelDeclaration as Kernel
from ..lowering import _sim
from ._device import FakeCuda, FakeNumba, const_array, member_map
from ._sched import Replay

__all__ = ["Rebuilder", "Target", "resolve"]


@dataclass(frozen=True)
class Target:
    """A kernel, as the checker sees it."""

    name: str
    function: types.FunctionType  # what runs (the rewrite, for simtsafe kernels)
    user_globals: dict[str, Any]  # the globals it resolves names in
    params: tuple[str, ...]
    kernel: Kernel | None  # the simtsafe kernel, if any
    launch: Any  # the PreparedLaunch it came from, if any


def _raw_function(obj: Any) -> types.FunctionType | None:
    """The Python function behind a Numba dispatcher or simulator kernel, or None."""
    if isinstance(obj, types.FunctionType):
        return obj
    kind = type(obj).__name__
    if kind == "FakeCUDAKernel":
        fn = getattr(obj, "fn", None)
    elif kind.endswith("Dispatcher"):
        fn = getattr(obj, "py_func", None)
    else:
        return None
    return fn if isinstance(fn, types.FunctionType) else None


def resolve(kernel: Any) -> Target:
    """A ``Target`` for a simtsafe kernel, a ``PreparedLaunch``, a Numba kernel or a function.

    Raises:
        TypeError: ``kernel`` is none of those (or is a device helper).
    """
    from ..host._prepare import PreparedLaunch

    launch = None
    if isinstance(kernel, PreparedLaunch):
        launch, kernel = kernel, kernel.kernel
    if isinstance(kernel, Kernel):
        function, user_globals = _frozen(kernel)
        return Target(
            name=kernel.name,
            function=function,
            user_globals=user_globals,
            params=tuple(p.name for p in kernel.params),
            kernel=kernel,
            launch=launch,
        )
    if isinstance(kernel, DeviceFunction):
        raise TypeError(
            f"{kernel.name!r} is a @simtsafe.device helper; check the kernel that calls it"
        )
    fn = _raw_function(kernel)
    if fn is None:
        raise TypeError(
            "simtsafe.sim.check takes a @simtsafe.kernel, a PreparedLaunch, a numba.cuda.jit "
            f"kernel or a plain Python function; got {type(kernel).__name__}"
        )
    params = tuple(inspect.signature(fn).parameters)
    return Target(fn.__name__, fn, fn.__globals__, params, None, None)


def _frozen(compiled: Kernel | DeviceFunction) -> tuple[types.FunctionType, dict[str, Any]]:
    """The checked rewrite of a kernel or helper and the objects its names denote.

    Freezing runs the strict analysis (a kernel refused on the GPU path is refused
    here too); the names map to the objects checked, helpers as ``DeviceFunction``
    (rebuilt in turn), not their Numba dispatchers.
    """
    build = compiled._freeze()
    names = {**build.analysis.globals_used, **build.analysis.substitutes}
    names["__builtins__"] = build.namespace["__builtins__"]
    return build.function, names


def _referenced(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _referenced(const)
    return names


class Rebuilder:
    """Rebuilds functions over the replay's stand-ins; one per check (caches per function)."""

    def __init__(self, replay: Replay) -> None:
        import numba
        import numba.cuda

        self.replay = replay
        self.fake = FakeCuda(replay)
        self.fake_numba = FakeNumba(self.fake)
        self._numba = numba
        self._cuda = numba.cuda
        self._members = member_map(self.fake)
        self._done: dict[int, types.FunctionType] = {}
        self._consts: dict[int, Any] = {}

    def kernel_function(self, target: Target) -> types.FunctionType:
        if target.kernel is None:
            return self._rebuild(target.function, target.user_globals, None)
        builtins = _sim.builtins(proven_domain=target.kernel._domain)
        return self._rebuild(target.function, target.user_globals, builtins)

    def _rebuild(
        self,
        fn: types.FunctionType,
        user_globals: dict[str, Any],
        builtins: dict[str, Any] | None,
    ) -> types.FunctionType:
        done = self._done.get(id(fn))
        if done is not None:
            return done
        namespace = dict(user_globals)
        closure = None
        if fn.__closure__:
            closure = tuple(types.CellType() for _ in fn.__closure__)
        new = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, closure)
        new.__kwdefaults__ = fn.__kwdefaults__
        self._done[id(fn)] = new  # first: a function that calls itself resolves to the rebuild
        for name in _referenced(fn.__code__):
            if name in namespace:
                namespace[name] = self._stand_in(name, namespace[name])
        if builtins is not None:
            namespace.update(builtins)
        if fn.__closure__ and closure is not None:
            for name, old, cell in zip(
                fn.__code__.co_freevars, fn.__closure__, closure, strict=True
            ):
                try:
                    value = old.cell_contents
                except ValueError:  # an empty cell: leave the new one empty too
                    continue
                cell.cell_contents = self._stand_in(name, value)
        return new

    def _stand_in(self, name: str, value: Any) -> Any:
        if value is self._cuda:
            return self.fake
        if value is self._numba:
            return self.fake_numba
        member = self._members.get(id(value))
        if member is not None:
            return member
        if isinstance(value, DeviceFunction):
            builtins = _sim.builtins(proven_domain=None)
            function, names = _frozen(value)
            return self._rebuild(function, names, builtins)
        if isinstance(value, Kernel):
            return value
        fn = _raw_function(value) if not isinstance(value, types.FunctionType) else None
        if fn is not None:
            return self._rebuild(fn, fn.__globals__, None)
        if isinstance(value, types.FunctionType):
            module = value.__module__ or ""
            if module not in _LIBRARY_MODULES and not module.startswith(
                ("numpy", "numba", "math", "simtsafe")
            ):
                # A plain helper function: it may use numba.cuda too.
                return self._rebuild(value, value.__globals__, None)
        if isinstance(value, np.ndarray) and name.startswith("__ss_ref"):
            # The decorator's read-only snapshot behind ``cuda.const.array_like(ARR)``:
            # ``__ss_const_array`` wraps it (a read out of range is 0, as on the GPU).
            return value
        if isinstance(value, np.ndarray):
            # A global array is a constant to Numba: read-only, bounds-checked here.
            arr = self._consts.get(id(value))
            if arr is None:
                arr = self._consts[id(value)] = const_array(self.replay, value, name)
            return arr
        return value


_LIBRARY_MODULES = frozenset({"math", "cmath", "operator", "builtins"})
