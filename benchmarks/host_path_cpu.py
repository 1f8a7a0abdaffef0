"""The Python side of a checked launch, without a GPU: checks, facts, ordering ledger.

    NUMBA_ENABLE_CUDASIM=1 python benchmarks/host_path_cpu.py [--launches 20000] [--tree DIR]

``--tree DIR`` measures the simtsafe package under DIR instead of this
checkout's (e.g. an older commit: ``git archive <rev> simtsafe | tar -x -C
DIR``); a tree without ``simtsafe.configure`` is measured once, as "before".

A development tool, not a GPU benchmark: the vecadd example is prepared on
Numba's simulator, then its launch plan is switched to the CUDA code path
with a driver launch that does nothing, Numba's simulator arrays standing in
for device arrays (their facts cached like ``DeviceNDArray``'s) and a lean
CuPy stand-in with plain attributes (CuPy's are C-level; the stand-ins of
tests/fake_arrays.py compute theirs in Python). What it times is exactly the
per-launch Python work simtsafe adds in front of ``cuda.core.launch`` --
memo lookup, generated checks, native CuPy facts, the ordering ledger --
with ordering on and off in one run. launch_latency.py measures the real
thing on a GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _lean_cupy() -> Any:
    """A module ``cupy`` whose 1-D float32 ``ndarray`` has plain attributes."""
    import types

    class Memory:
        def __init__(self, ptr: int) -> None:
            self.ptr = ptr

    class ndarray:  # noqa: N801 - CuPy's name
        _c_contiguous = True
        dtype = np.dtype(np.float32)

        def __init__(self, ptr: int, n: int) -> None:
            self.data = Memory(ptr)
            self.shape = (n,)
            self.strides = (4,)
            self.size = n

        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:  # as CuPy builds it
            return {
                "shape": self.shape,
                "typestr": self.dtype.str,
                "descr": self.dtype.descr,
                "stream": stream.ptr or 1,
                "version": 3,
                "strides": None,
                "data": (self.data.ptr, False),
            }

    stream = types.SimpleNamespace(ptr=0)
    module = types.ModuleType("cupy")
    module.ndarray = ndarray  # type: ignore[attr-defined]
    module.cuda = types.SimpleNamespace(get_current_stream=lambda: stream)  # type: ignore[attr-defined]
    return module


def _twelve() -> Any:
    """benchmarks/launch_latency.py's kernel of twelve arguments (six arrays, six scalars)."""
    from launch_latency import twelve

    return twelve


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tree", default=str(ROOT), help="directory holding simtsafe/")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "examples"))
    sys.path.insert(0, args.tree)

    from numba import cuda

    import simtsafe as ss

    if not ss.SIMULATOR:
        print("run with NUMBA_ENABLE_CUDASIM=1 (this measures the host path without a GPU)")
        return 2
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray
    from vecadd import vecadd

    import simtsafe.host._argfacts as argfacts
    import simtsafe.host._launch as launch_module

    n = 1024
    prepared = vecadd.prepare(grid=4, block=256)
    prepared12 = _twelve().prepare(grid=4, block=256)
    plan, plan12 = prepared._plan, prepared12._plan
    # The CUDA code path with a launch that does nothing.
    argfacts.device_array_type = lambda: FakeCUDAArray  # type: ignore[assignment]
    launch_module.SIMULATOR = False  # type: ignore[misc]
    launch_module.device_array_type = lambda: FakeCUDAArray  # type: ignore[assignment]
    plan._cufuncs[("C", "C")] = type("F", (), {"kernel": object()})
    plan._core_launch = lambda *a: None
    plan12._cufuncs[("C",) * 5] = type("F", (), {"kernel": object()})
    plan12._core_launch = lambda *a: None
    sys.modules["cupy"] = _lean_cupy()
    make_cupy = sys.modules["cupy"].ndarray

    a, b = (cuda.to_device(np.ones(n, np.float32)) for _ in range(2))
    out = cuda.device_array(n, np.float32)
    ring = [(cuda.device_array(n, np.float32), a, b) for _ in range(16)]
    c = [make_cupy((1 + i) << 20, n) for i in range(3)]
    cring = [(make_cupy((10 + i) << 20, n), c[1], c[2]) for i in range(16)]
    turn = [0]

    def rotating(sets: list[Any]) -> Callable[[], None]:
        def run() -> None:
            turn[0] += 1
            plan.launch(sets[turn[0] & 15])

        return run

    args12 = (out, a, b, *(cuda.to_device(np.ones(n, np.float32)) for _ in range(3)))
    args12 += (1, 2, 3, 4, 5, np.float32(0.5))
    bound3 = prepared.bind(out, a, b) if hasattr(prepared, "bind") else lambda: None
    bound12 = prepared12.bind(*args12) if hasattr(prepared12, "bind") else lambda: None
    variants: dict[str, Callable[[], None]] = {
        "same arrays (checks memoized)": lambda: plan.launch((out, a, b)),
        "12 arguments, same arrays (checks memoized)": lambda: plan12.launch(args12),
        "BoundLaunch, same arrays": bound3,
        "BoundLaunch, 12 arguments": bound12,
        "16 rotating arrays (checks re-run)": rotating(ring),
        "CuPy arrays (native facts, memoized)": lambda: plan.launch(tuple(c)),
        "CuPy arrays, 16 rotating (native facts)": rotating(cring),
    }

    def per_launch(fn: Callable[[], None]) -> float:
        t0 = time.perf_counter()
        for _ in range(args.launches):
            fn()
        return (time.perf_counter() - t0) / args.launches * 1e6

    samples: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for name, fn in variants.items():
            if not hasattr(ss, "configure"):  # a tree from before the ordering ledger
                fn()
                samples.setdefault(f"{name}, before", []).append(per_launch(fn))
                continue
            for ordering in ("auto", "off"):
                with ss.unsafe("SAFETY: no launch reaches a device here"):
                    settings = ss.configure(ordering=ordering)
                with settings:
                    fn()
                    samples.setdefault(f"{name}, ordering {ordering}", []).append(per_launch(fn))
    print(
        f"{ss.__file__}: Python-side host time per launch, us (min and median of "
        f"{args.rounds} rounds; on a shared machine the min is the steadier figure):"
    )
    for name, values in samples.items():
        print(f"  {name:55s} {min(values):7.3f} {statistics.median(values):7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
