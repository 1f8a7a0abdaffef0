"""Device-call helper (not a test): time PTX variants of the wgmma example's kernel, each
loaded by the driver and launched with the example's arguments, beside the example launched
through ``prepare`` and its raw twin; every output compared with the prepared launch's.

A variant is a file of PTX with one ``.entry`` taking the Numba array model of ``(c, a, b)``
(``c`` float32, ``a``/``b`` bf16 or their uint16 bits: 9 parameters each), given as
``PATH:SHARED`` (dynamic shared bytes). It answers "what would this change of the compiled
form be worth" before the lowering is changed to produce it.

    python3 scripts/ptx_variants.py [--k 8192] [--reps 10] .alt/v0.ptx:204800 ...
    python3 scripts/ptx_variants.py --make DIR    # no GPU: write the variants below to DIR

The variants ``--make`` writes (NVVM for sm_90a; ``.version`` lowered to 8.5 for older drivers):
``safe.ptx`` (the example as a launch of aligned inputs compiles it: the run-aligned
specialization, ``lowering._runaligned``), ``safe_any_input.ptx`` (as compiled for inputs not
aligned for runs: the fills keep their per-run path), ``raw.ptx`` (its raw twin: a check of
this loader) and ``safe_base.ptx`` (every tile's shared address from one base computed once,
which ptxas keeps in a register instead of re-reading ``%cgactaid`` in the loop). Earlier
sessions' variants (the fills' per-run branches removed, their tests taken as true) were of
forms the lowering no longer emits; their figures are in benchmarks/results.
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
from pathlib import Path

import numpy as np
from numba import cuda
from numba import types as t

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT))
import gemm_bf16_wgmma as g  # noqa: E402

from benchmarks._common import time_batched  # noqa: E402

SAFE_SHARED = g.TILE_SHARED
RAW_SHARED = g.RAW_SHARED


def _lowered(ptx: str) -> str:
    return re.sub(r"^\.version \d+\.\d+", ".version 8.5", ptx, flags=re.M)


def _one_base(ptx: str) -> str:
    """Each ``mov.u64 %rd, <tile symbol>`` replaced by a copy of one base register, computed
    once at entry (every tile symbol of a tile window is the dynamic shared base)."""
    head, body = ptx.split(".entry", 1)
    symbol = re.search(r"_simtsafe_tile_L\d+_\d+", body)
    assert symbol, "no tile symbol"
    lines = body.split("\n")
    first = next(
        i
        for i, ln in enumerate(lines)
        if i > 0
        and ln.startswith("\t")
        and not ln.strip().startswith((".reg", ".param", "//", ")"))
        and "(" not in ln
        and ln.strip() not in ("{", "")
    )
    setup = [
        "\t.reg .b64 %ssbase;",
        f"\tmov.u64 %ssbase, {symbol.group(0)};",
        "\tadd.s64 %ssbase, %ssbase, 1023;",  # the symbol is 1024-aligned: the same address,
        "\tand.b64 %ssbase, %ssbase, -1024;",  # in a form ptxas keeps rather than recomputes
    ]
    rest = "\n".join(lines[first:])
    rest = re.sub(r"mov\.u64(\s+%rd\d+), _simtsafe_tile_L\d+_\d+;", r"mov.u64\1, %ssbase;", rest)
    return head + ".entry" + "\n".join(lines[:first] + setup) + "\n" + rest


def make(out: Path) -> None:
    cc = (9, 0, "a")
    out.mkdir(parents=True, exist_ok=True)
    safe = _lowered(str(g.gemm_bf16.ptx(cc=cc, layouts=("C16", "C16"))))
    u16 = t.uint16[:, ::1]
    raw, _ = cuda.compile_ptx(g.gemm_bf16_raw.py_func, (t.float32[:, ::1], u16, u16), cc=cc)
    files = {
        "safe.ptx": safe,
        "safe_any_input.ptx": _lowered(str(g.gemm_bf16.ptx(cc=cc, layouts=("C", "C")))),
        "raw.ptx": _lowered(raw),
        "safe_base.ptx": _one_base(safe),
    }
    for name, text in files.items():
        (out / name).write_text(text)
        shared = RAW_SHARED if name == "raw.ptx" else SAFE_SHARED
        print(f"{out / name}:{shared}")


def _check(what: str, result: tuple) -> object:  # type: ignore[type-arg]
    from cuda.bindings import driver as drv

    err, *rest = result
    if err != drv.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{what}: {err}")
    return rest[0] if rest else None


def _array_params(arr: object) -> list[int]:
    a = arr  # a numba DeviceNDArray
    shape, strides = a.shape, a.strides  # type: ignore[attr-defined]
    return [0, 0, a.size, a.dtype.itemsize, a.device_ctypes_pointer.value, *shape, *strides]  # type: ignore[attr-defined]


def _padded(arr: object, shape: tuple[int, int]) -> list[int]:
    """A padded array's parameters with its first ``shape`` rows' shape."""
    p = _array_params(arr)
    p[2] = shape[0] * shape[1]
    p[5], p[6] = shape
    return p


def _loader(path: str, shared: int, grid: tuple[int, int], args: list[int]):  # type: ignore[no-untyped-def]
    from cuda.bindings import driver as drv

    ptx = Path(path).read_text()
    name = re.search(r"\.entry\s+(\S+)\s*\(", ptx)
    assert name, f"{path}: no .entry"
    module = _check("cuModuleLoadData", drv.cuModuleLoadData(ptx.encode() + b"\0"))
    fn = _check("cuModuleGetFunction", drv.cuModuleGetFunction(module, name.group(1).encode()))
    attr = drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    _check("cuFuncSetAttribute", drv.cuFuncSetAttribute(fn, attr, shared))
    values = [ctypes.c_uint64(v) for v in args]
    pointers = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    address = ctypes.addressof(pointers)
    stream = drv.CUstream(0)
    bx, by, bz = g.BLOCK

    def launch() -> None:
        _check(
            "cuLaunchKernel",
            drv.cuLaunchKernel(fn, grid[0], grid[1], 1, bx, by, bz, shared, stream, address, 0),
        )

    launch.keep = (values, pointers)  # type: ignore[attr-defined]
    return launch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--k", type=int, default=8192)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--make", type=Path, help="write the variants here and stop")
    parser.add_argument("variants", nargs="*")
    args = parser.parse_args()
    if args.make:
        make(args.make)
        return
    m = n = 8192
    k = args.k
    a, b = g.inputs(m, k, n, seed=5)
    d_a, d_b = g.to_device_bf16(a), g.to_device_bf16(b)
    ra, rb = d_a.view(np.uint16), d_b.view(np.uint16)
    grid = g.grid_for(m, n)
    outs: dict[str, object] = {}
    runs: dict[str, object] = {}
    c0 = cuda.device_array((m, n), np.float32)
    safe = g.gemm_bf16.prepare(grid=grid, block=g.BLOCK)
    runs["simtsafe (prepare)"] = lambda: safe(c0, d_a, d_b)
    outs["simtsafe (prepare)"] = c0
    c1 = cuda.device_array((m, n), np.float32)
    u16 = t.uint16[:, ::1]
    raw = g.raw_launcher(m, n, (t.float32[:, ::1], u16, u16))
    runs["raw twin"] = lambda: raw(c1, ra, rb)
    outs["raw twin"] = c1
    # The variants read padded copies (a row of A and 256 rows of B more, shapes as before):
    # a variant without checks fills the stages past K's end from inside the allocation.
    pa = cuda.to_device(np.vstack([a.view(np.uint16), np.zeros((1, k), np.uint16)]))
    pb = cuda.to_device(np.vstack([b.view(np.uint16), np.zeros((256, n), np.uint16)]))
    for spec in args.variants:
        path, shared = spec.rsplit(":", 1)
        c = cuda.device_array((m, n), np.float32)
        params = _array_params(c) + _padded(pa, (m, k)) + _padded(pb, (k, n))
        runs[Path(path).name] = _loader(path, int(shared), grid, params)
        outs[Path(path).name] = c
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(3):  # rounds, each timing every row once: drift shows as spread
        for name, fn in runs.items():
            times[name].append(time_batched(fn, args.reps, 5))  # type: ignore[arg-type]
    want = c0.copy_to_host()
    flops = 2.0 * m * n * k
    base = min(times["raw twin"])
    print(f"wgmma example {m}x{k}x{n} on {cuda.get_current_device().name}")
    print("| kernel | best ms | TFLOP/s | speed vs raw twin | rounds ms | output equal |")
    print("|---|---:|---:|---:|---|---|")
    for name, ts in times.items():
        best = min(ts)
        same = np.array_equal(outs[name].copy_to_host(), want)  # type: ignore[attr-defined]
        rounds = ", ".join(f"{v * 1e3:.3f}" for v in ts)
        print(
            f"| {name} | {best * 1e3:.3f} | {flops / best / 1e12:.1f} | {base / best:.3f} |"
            f" {rounds} | {same} |"
        )


if __name__ == "__main__":
    main()
