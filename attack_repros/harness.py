"""Attack harness: decorate a kernel source, report the static verdict and sim.check."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

import simtsafe as ss
from tests.kernels import load_kernel_module

F32 = np.float32


def args_for(block, ndim):
    n = block[0] * block[1] * block[2]
    if ndim == 1:
        a = np.arange(n, dtype=F32) % 5
    elif ndim == 2:
        a = (np.arange(block[0] * block[1], dtype=F32) % 5).reshape(block[1], block[0])
    else:
        a = (np.arange(n, dtype=F32) % 5).reshape(block[2], block[1], block[0])
    return np.zeros_like(a), a, 3


def try_one(name, source, block, ndim=1, dump=False):
    tmp = Path(tempfile.mkdtemp())
    try:
        mod = load_kernel_module(tmp, source)
    except ss.SafetyError as exc:
        print(f"[{name}] decoration REFUSED: {str(exc)[:150]}")
        return
    k = mod.k
    verdict = "?"
    try:
        if ss.SIMULATOR:
            grid = (1,) * ndim if ndim > 1 else 1
            k.prepare(grid=grid, block=block)
        else:
            k.ptx()
        verdict = "ACCEPTED"
    except ss.SafetyError as exc:
        verdict = f"refused ({exc.rule}): {str(exc)[:120]}"
    src = k.source_uniformity().finding
    line = f"[{name}] static: {verdict} | source-level: {'refuse' if src else 'accept'}"
    if ss.SIMULATOR:
        grid = (1,) * ndim if ndim > 1 else 1
        try:
            rep = ss.sim.check(k, grid, block, *args_for(block, ndim))
            kinds = sorted({f.kind for f in rep.findings})
            line += f" | sim.check: {kinds or 'ok'}"
        except Exception as exc:  # noqa: BLE001
            line += f" | sim.check crashed: {type(exc).__name__}"
    print(line, flush=True)
