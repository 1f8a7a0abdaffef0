"""Launching a dtype-generic kernel: bind its type variables from the arguments, per launch.

``prepare`` on a kernel with type variables (``DisjointSlice[T]``, ``In[T]``,
``alpha: T``) returns a ``GenericLaunch``. Each call reads the dtype of every
generic array argument, checks that each type variable gets one dtype (and
one its constraints admit), and launches the concrete kernel for that
binding (``kernel.instantiate(T=...)``, compiled once per binding), prepared
with the same configuration (each binding's ``PreparedLaunch`` is made and
checked once, then reused).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final

import numpy as np

from .._errors import ArgumentTypeError

if TYPE_CHECKING:
    from .._compose import Kernel
    from ._prepare import PreparedLaunch

__all__ = ["GenericLaunch"]


def _array_dtype(obj: Any) -> np.dtype[Any] | None:
    dtype = getattr(obj, "dtype", None)
    if isinstance(dtype, np.dtype):
        return dtype
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:  # e.g. a PyTorch tensor, whose dtype is not numpy's
        typed: np.dtype[Any] = np.dtype(cai["typestr"])
        return typed
    return None


def _scalar_dtype(obj: Any) -> np.dtype[Any] | None:
    if isinstance(obj, np.generic):
        return obj.dtype
    if isinstance(obj, bool):
        return np.dtype(np.bool_)
    if isinstance(obj, int):
        return np.dtype(np.int64)
    if isinstance(obj, float):
        return np.dtype(np.float64)
    if isinstance(obj, complex):
        return np.dtype(np.complex128)
    return None


@final
class GenericLaunch:
    """A launch configuration of a dtype-generic kernel; each call binds the dtypes."""

    __slots__ = ("_prepared", "block", "grid", "kernel", "shared_mem", "stream")

    def __init__(
        self, kernel: Kernel[Any], grid: Any, block: Any, shared_mem: int, stream: Any
    ) -> None:
        self.kernel = kernel
        self.grid = grid
        self.block = block
        self.shared_mem = shared_mem
        self.stream = stream
        self._prepared: dict[tuple[str, ...], PreparedLaunch] = {}

    def binding(self, args: tuple[Any, ...]) -> dict[str, np.dtype[Any]]:
        """The dtype of each type variable, read off the arguments (arrays first)."""
        kernel = self.kernel
        params = kernel.params
        if len(args) != len(params):
            raise ArgumentTypeError(
                f"kernel {kernel.name!r} takes {len(params)} arguments "
                f"({', '.join(p.name for p in params)}), got {len(args)}",
                kernel=kernel.name,
                actual=len(args),
                limit=len(params),
            )
        bound: dict[str, tuple[np.dtype[Any], str]] = {}
        for scalars in (False, True):  # arrays decide; scalars only where no array does
            for p, obj in zip(params, args, strict=True):
                if p.typevar is None or p.is_array == scalars:
                    continue
                name = p.typevar.__name__
                dtype = _array_dtype(obj) if p.is_array else _scalar_dtype(obj)
                if dtype is None:
                    continue  # the launch's own checks will say what is wrong
                if name not in bound:
                    bound[name] = (dtype, p.name)
                elif p.is_array and bound[name][0] != dtype:
                    first, by = bound[name]
                    raise ArgumentTypeError(
                        f"kernel {kernel.name!r}: type variable {name} is bound to {first.name} "
                        f"by argument {by!r}, but argument {p.name!r} is {dtype.name}; every "
                        f"argument typed with {name} must have the same dtype in one launch",
                        kernel=kernel.name,
                        argument=p.name,
                        actual=dtype.name,
                        limit=first.name,
                    )
        missing = [n for n in kernel.typevars if n not in bound]
        if missing:
            raise ArgumentTypeError(
                f"kernel {kernel.name!r}: no argument tells the dtype of "
                f"{', '.join(missing)}; pass device arrays for the parameters typed with it",
                kernel=kernel.name,
            )
        return {name: dtype for name, (dtype, _) in bound.items()}

    def prepared(self, args: tuple[Any, ...]) -> PreparedLaunch:
        """The concrete, checked launch for these arguments' binding."""
        binding = self.binding(args)
        key = tuple(binding[n].str for n in self.kernel.typevars)
        launch = self._prepared.get(key)
        if launch is None:
            try:
                concrete = self.kernel.instantiate(**binding)
            except TypeError as exc:
                raise ArgumentTypeError(
                    f"{exc} (bound from the arguments: "
                    + ", ".join(f"{n}={d.name}" for n, d in binding.items())
                    + ")",
                    kernel=self.kernel.name,
                ) from None
            launch = concrete.prepare(self.grid, self.block, self.shared_mem, self.stream)
            self._prepared[key] = launch
        return launch

    def __call__(self, *args: Any) -> None:
        """Bind the dtypes, then check the arguments and launch (see ``PreparedLaunch``)."""
        self.prepared(args)(*args)

    def launch(self, *args: Any) -> Any:
        """Like calling, returning the ``LaunchHandle`` of ``PreparedLaunch.launch``."""
        return self.prepared(args).launch(*args)

    def bind(self, *args: Any) -> Any:
        """``PreparedLaunch.bind`` of the concrete launch for these arguments' dtypes."""
        return self.prepared(args).bind(*args)

    def __repr__(self) -> str:
        return (
            f"GenericLaunch(kernel={self.kernel.name!r}, grid={self.grid}, block={self.block}, "
            f"typevars={list(self.kernel.typevars)})"
        )
