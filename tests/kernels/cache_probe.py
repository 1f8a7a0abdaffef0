"""A process that compiles the kernels of a module and says what it compiled (cache tests).

    python -m tests.kernels.cache_probe MODULE_DIR MODULE ptx|launch|simulator

prints one JSON line: how many Numba compiles, compiled-form checks and compile-worker
requests ran, the time, and a digest of the results.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time


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
