"""``simtsafe sim-check module:kernel --grid G --block B [--args SPEC] ...``.

Builds arguments -- from a simtsafe kernel's annotations, or from an
``--args`` spec for raw Numba kernels -- runs ``simtsafe.sim.check`` and
prints the report. Exit status: 0 clean, 1 findings (or an incomplete
replay), 2 usage errors.

Argument spec: comma-separated items, one per kernel parameter:

* ``TYPE[SHAPE]`` an array of random values (floats: standard normal;
  integers: uniform in [0, number of elements); booleans: fair coin);
* ``TYPE[SHAPE]=FILL`` an array filled with a number, ``arange``, or
  ``randint:LO:HI`` (integers uniform in [LO, HI));
* ``TYPE:VALUE`` a scalar.

``TYPE`` is ``f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 b1 c64 c128``; a
SHAPE is ``N`` or ``N,M[,K]``. Example: ``"f32[1024],f32[1024],i32:5"``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["add_parser", "parse_args_spec", "run"]

_TYPES = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "b1": np.bool_,
    "c64": np.complex64,
    "c128": np.complex128,
}

_ARRAY = re.compile(r"^(\w+)\[([\d,\s]+)\](?:=(.+))?$")
_SCALAR = re.compile(r"^(\w+):(.+)$")


class UsageError(ValueError):
    """A bad command line: reported with exit status 2."""


def _split(spec: str) -> list[str]:
    items: list[str] = []
    depth = 0
    cur = ""
    for ch in spec:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur.strip())
    return items


def _dtype(name: str, item: str) -> np.dtype[Any]:
    if name not in _TYPES:
        raise UsageError(
            f"--args item {item!r}: unknown type {name!r}; use one of {', '.join(_TYPES)}"
        )
    return np.dtype(_TYPES[name])


def _random(dtype: np.dtype[Any], shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    n = int(np.prod(shape))
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(dtype)
    return rng.integers(0, max(n, 1), shape).astype(dtype)


def parse_args_spec(spec: str, rng: np.random.Generator) -> list[Any]:
    """Kernel arguments from an ``--args`` spec (see the module docstring).

    Raises:
        UsageError: an item does not parse.
    """
    out: list[Any] = []
    for item in _split(spec):
        m = _ARRAY.match(item)
        if m:
            dtype = _dtype(m.group(1), item)
            shape = tuple(int(s) for s in m.group(2).split(",") if s.strip())
            fill = m.group(3)
            if fill is None or fill == "rand":
                out.append(_random(dtype, shape, rng))
            elif fill == "arange":
                out.append(np.arange(int(np.prod(shape))).reshape(shape).astype(dtype))
            elif fill.startswith("randint:"):
                try:
                    _, lo, hi = fill.split(":")
                    out.append(rng.integers(int(lo), int(hi), shape).astype(dtype))
                except ValueError:
                    raise UsageError(f"--args item {item!r}: write randint:LO:HI") from None
            else:
                try:
                    out.append(
                        np.full(shape, complex(fill) if dtype.kind == "c" else float(fill)).astype(
                            dtype
                        )
                    )
                except ValueError:
                    raise UsageError(
                        f"--args item {item!r}: fill with a number, arange, rand or randint:LO:HI"
                    ) from None
            continue
        m = _SCALAR.match(item)
        if m:
            dtype = _dtype(m.group(1), item)
            try:
                value = complex(m.group(2)) if dtype.kind == "c" else float(m.group(2))
            except ValueError:
                raise UsageError(f"--args item {item!r}: {m.group(2)!r} is not a number") from None
            out.append(dtype.type(value))
            continue
        raise UsageError(
            f"--args item {item!r} is neither TYPE[SHAPE] (an array) nor TYPE:VALUE (a scalar)"
        )
    return out


def _annotated_args(kernel: Any, size: int, rng: np.random.Generator) -> list[Any]:
    """Random arguments from a simtsafe kernel's annotations (arrays of ``size`` per axis)."""
    out: list[Any] = []
    for p in kernel.params:
        shape = (size,) * p.ndim
        if p.kind == "scalar":
            out.append(p.dtype.type(size if p.dtype.kind in "iu" else rng.standard_normal()))
        elif p.space == "Counter":  # an append buffer's counter: one element, from 0
            out.append(np.zeros(1, p.dtype))
        elif p.kind == "out":
            out.append(np.zeros(shape, p.dtype))
        elif p.dtype.kind in "iu":
            out.append(rng.integers(0, size, shape).astype(p.dtype))
        else:
            out.append(_random(p.dtype, shape, rng))
    return out


def _dims(text: str, what: str) -> tuple[int, ...]:
    parts = [p for p in re.split(r"[,x\s()]+", text) if p]
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise UsageError(f"--{what} {text!r}: write N or N,M[,K]") from None
    if not 1 <= len(dims) <= 3:
        raise UsageError(f"--{what} {text!r}: 1 to 3 axes")
    return dims


def _load(target: str) -> Any:
    if ":" not in target:
        raise UsageError(f"{target!r}: name the kernel as module:kernel or path/to/file.py:kernel")
    module_name, _, attr = target.rpartition(":")
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name).resolve()
        if not path.exists():
            raise UsageError(f"{module_name}: no such file")
        sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        sys.path.insert(0, str(Path.cwd()))
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise UsageError(f"cannot import {module_name!r}: {exc}") from None
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def add_parser(sub: Any) -> None:
    """Register ``sim-check`` on the ``simtsafe`` command's subparsers."""
    p = sub.add_parser(
        "sim-check",
        help="replay a kernel on the CPU and report races and synchronization errors",
        description=__doc__.splitlines()[0] if __doc__ else None,
    )
    p.add_argument("target", help="module:kernel or path/to/file.py:kernel")
    p.add_argument("--grid", required=True, help="N or N,M[,K]")
    p.add_argument("--block", required=True, help="N or N,M[,K]")
    p.add_argument("--shared-mem", type=int, default=0, help="dynamic shared memory in bytes")
    p.add_argument("--args", default=None, help='e.g. "f32[1024],f32[1024],i32:5"')
    p.add_argument("--size", type=int, default=1024, help="array extent per axis (annotations)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random arguments")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--max-steps", type=int, default=None, help="replay step limit")
    p.add_argument("--timeout", type=float, default=None, help="replay time limit in seconds")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..decoration._declaration import KernelDeclaration as Kernel
    from ._check import DEFAULT_MAX_STEPS, DEFAULT_TIMEOUT, check

    try:
        kernel = _load(args.target)
        grid = _dims(args.grid, "grid")
        block = _dims(args.block, "block")
        rng = np.random.default_rng(args.seed)
        inner = getattr(kernel, "kernel", kernel)  # a PreparedLaunch holds its kernel
        if args.args is not None:
            kernel_args = parse_args_spec(args.args, rng)
        elif isinstance(inner, Kernel):
            kernel_args = _annotated_args(inner, args.size, rng)
        else:
            raise UsageError(
                f"{args.target}: a raw Numba kernel has no annotations to build arguments from; "
                'give them with --args, e.g. --args "f32[1024],f32[1024],i32:5"'
            )
    except UsageError as exc:
        print(f"simtsafe sim-check: {exc}", file=sys.stderr)
        return 2
    try:
        report = check(
            kernel,
            grid,
            block,
            *kernel_args,
            shared_mem=args.shared_mem,
            max_steps=args.max_steps or DEFAULT_MAX_STEPS,
            timeout=args.timeout or DEFAULT_TIMEOUT,
        )
    except (TypeError, ValueError) as exc:
        print(f"simtsafe sim-check: {exc}", file=sys.stderr)
        return 2
    print(report.to_json() if args.format == "json" else str(report))
    return 0 if report.ok else 1
