"""Compiler options of a kernel or helper: ``numba.cuda.jit``'s names and meaning.

Part of the declaration (sealed with it, in the factory cache key and in the
on-disk cache key): ``fastmath``, ``lineinfo``, ``debug``, ``opt``, and for
kernels ``max_registers`` (in the PTX as ``.maxnreg`` and at link time),
``launch_bounds`` (``.maxntid``/``.minnctapersm``) and ``cache`` (compile
once per machine: docs/performance.md "Compiling once"), for helpers
``inline`` (Numba inlines the helper's IR into each caller).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_OPTIONS", "CompileOptions"]


@dataclass(frozen=True)
class CompileOptions:
    """What a kernel or helper is compiled with (defaults: Numba's)."""

    fastmath: bool = False
    lineinfo: bool = False
    debug: bool = False
    opt: bool = True
    max_registers: int | None = None
    launch_bounds: tuple[int, ...] | None = None
    cache: bool = False
    #: Helpers: inlined into each caller at the Numba IR level (``inline="always"``), so
    #: the helper's code is lowered inside the kernel and sees what the kernel proves
    #: (its exact block: ``%tid``/``%ntid`` ranges, whole warps), as its own body does.
    inline: bool = False

    @classmethod
    def make(
        cls,
        name: str,
        kind: str,
        contract: Any = None,
        **given: Any,
    ) -> CompileOptions:
        """Validated options for kernel (``kind="kernel"``) or helper ``name``.

        Raises:
            TypeError: an option of the wrong type or value, or a combination
                that cannot compile (the message says which and what to do).
        """
        for flag in ("fastmath", "lineinfo", "debug", "opt", "cache", "inline"):
            if flag in given and not isinstance(given[flag], bool):
                raise TypeError(
                    f"{kind} {name!r}: {flag}= takes True or False, got {given[flag]!r}"
                )
        if kind == "device":
            extra = sorted(set(given) - {"fastmath", "lineinfo", "debug", "opt", "inline"})
            if extra:
                raise TypeError(
                    f"helper {name!r}: {', '.join(extra)} apply to kernels (the helper is "
                    "compiled into each kernel that calls it, with the kernel's limits)"
                )
        if given.get("debug") and given.get("lineinfo"):
            raise TypeError(
                f"{kind} {name!r}: debug=True already includes line information; pass "
                "debug=True or lineinfo=True, not both (numba.cuda.jit refuses the pair too)"
            )
        if given.get("debug") and given.get("opt", True):
            raise TypeError(
                f"{kind} {name!r}: debug=True needs opt=False (NVVM does not optimize debug "
                "builds: numba.cuda.jit warns that the pair may crash)"
            )
        regs = given.get("max_registers")
        if regs is not None and not (isinstance(regs, int) and not isinstance(regs, bool)):
            raise TypeError(f"kernel {name!r}: max_registers= takes an int, got {regs!r}")
        if regs is not None and not 1 <= regs <= 255:
            raise TypeError(
                f"kernel {name!r}: max_registers={regs} is outside 1..255 (a thread has at "
                "most 255 registers)"
            )
        bounds = _launch_bounds(name, given.get("launch_bounds"))
        if bounds is not None and contract is not None:
            block = getattr(contract, "block", None)
            if block is not None:
                raise TypeError(
                    f"kernel {name!r}: launch_bounds= with a contract that fixes block={block}: "
                    "the exact block is stamped as .reqntid, which ptxas refuses beside "
                    ".maxntid. Drop launch_bounds (the block is already known exactly), or "
                    "declare max_threads= in the contract instead of block="
                )
            top = getattr(contract, "max_threads", None)
            if top is not None and bounds[0] != top:
                raise TypeError(
                    f"kernel {name!r}: launch_bounds[0]={bounds[0]} contradicts the contract's "
                    f"max_threads={top}; use launch_bounds=({top}, ...) or change the contract"
                )
        return cls(
            fastmath=bool(given.get("fastmath", False)),
            lineinfo=bool(given.get("lineinfo", False)),
            debug=bool(given.get("debug", False)),
            opt=bool(given.get("opt", True)),
            inline=bool(given.get("inline", False)),
            max_registers=regs,
            launch_bounds=bounds,
            cache=bool(given.get("cache", False)),
        )

    def jit(self, *, device: bool, contract_max_threads: int | None = None) -> dict[str, Any]:
        """Keyword arguments for ``numba.cuda.jit`` (kernels: also the launch bounds)."""
        options: dict[str, Any] = {
            "fastmath": self.fastmath,
            "lineinfo": self.lineinfo,
            "debug": self.debug,
            "opt": self.opt,
        }
        if device:
            if self.inline:
                options["inline"] = "always"
            return options
        if self.max_registers is not None:
            options["max_registers"] = self.max_registers
        bounds = self.launch_bounds or (
            (contract_max_threads,) if contract_max_threads is not None else None
        )
        if bounds is not None:
            options["launch_bounds"] = bounds if len(bounds) > 1 else bounds[0]
        if self.cache:
            options["cache"] = True
        return options

    def ptx(self, contract_max_threads: int | None = None) -> dict[str, Any]:
        """Keyword arguments for compiling to PTX (the same meaning as ``jit``)."""
        bounds = self.launch_bounds or (
            (contract_max_threads,) if contract_max_threads is not None else None
        )
        return {
            "fastmath": self.fastmath,
            "lineinfo": self.lineinfo,
            "debug": self.debug,
            "opt": self.opt,
            "launch_bounds": (bounds if bounds is None or len(bounds) > 1 else bounds[0]),
        }


def _launch_bounds(name: str, value: Any) -> tuple[int, ...] | None:
    if value is None:
        return None
    items = value if isinstance(value, tuple) else (value,)
    if not 1 <= len(items) <= 3 or not all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in items
    ):
        raise TypeError(
            f"kernel {name!r}: launch_bounds= takes max threads per block, or a tuple "
            f"(max threads, min blocks per multiprocessor[, max blocks per cluster]) of "
            f"positive ints, as numba.cuda.jit does; got {value!r}"
        )
    return tuple(items)


#: Numba's defaults: what a kernel or helper decorated without options is compiled with.
DEFAULT_OPTIONS = CompileOptions()
