"""A process that compiles the kernels of a module and says what it compiled (cache tests).

    python -m tests.kernels.cache_probe MODULE_DIR MODULE ptx|launch|simulator

prints one JSON line: how many Numba compiles, compiled-form checks and compile-worker
requests ran, the time, and a digest of the results. ``probe``/``run_probe`` start such
a process from a test, each under its own string-hash seed (nothing in a cache key may
follow set order).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SEEDS = itertools.count(1)


def run_probe(folder: Path, cache: Path, mode: str) -> subprocess.CompletedProcess[str]:
    """This module run on ``folder/kmod.py`` in a fresh process with cache directory ``cache``."""
    env = {**os.environ, "PYTHONHASHSEED": str(next(_SEEDS)), "SIMTSAFE_CACHE_DIR": str(cache)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    if mode == "simulator":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run(
        [sys.executable, "-m", "tests.kernels.cache_probe", str(folder), "kmod", mode],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


def probe(folder: Path, cache: Path, mode: str) -> dict[str, object]:
    """What a successful ``run_probe`` compiled (its JSON line)."""
    out = run_probe(folder, cache, mode)
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    folder, module, mode = sys.argv[1:4]
    t0 = time.perf_counter()
    sys.path.insert(0, folder)
    import numba.cuda.compiler as compiler

    from simtsafe import _compose
    from simtsafe.lowering import _compileworker

    counts = {"compiles": 0, "checks": 0, "worker": 0}
    compile_cuda, check, verdict = (
        getattr(compiler, "compile_cuda", None),
        _compose.check_kernel_ir,
        _compileworker.verdict,
    )

    def counting_compile(*a: object, **k: object) -> object:
        counts["compiles"] += 1
        return compile_cuda(*a, **k)  # type: ignore[misc]

    def counting_check(*a: object, **k: object) -> object:
        counts["checks"] += 1
        return check(*a, **k)  # type: ignore[arg-type]

    def counting_verdict(*a: object, **k: object) -> object:
        counts["worker"] += 1
        return verdict(*a, **k)  # type: ignore[arg-type]

    if compile_cuda is not None:
        compiler.compile_cuda = counting_compile
        import numba.cuda.dispatcher as dispatcher

        if hasattr(dispatcher, "compile_cuda"):
            dispatcher.compile_cuda = counting_compile
    _compose.check_kernel_ir = counting_check  # type: ignore[assignment]
    _compileworker.verdict = counting_verdict  # type: ignore[assignment]
    import importlib

    import numpy as np

    mod = importlib.import_module(module)
    digest = hashlib.sha256()
    if mode == "ptx":
        digest.update(mod.k.ptx().encode())
    else:
        from numba import cuda

        n = 256
        a = np.arange(n, dtype=np.float32)
        out = cuda.to_device(np.zeros(n, np.float32))
        mod.k.prepare(grid=2, block=128)(out, cuda.to_device(a), 3)
        digest.update(out.copy_to_host().tobytes())
    print(json.dumps({**counts, "seconds": time.perf_counter() - t0, "digest": digest.hexdigest()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
