"""Attack: the staged scan kernel under a checked launch whose counter starts negative.

The kernel's contract requires only `ctl.size >= 1`; the publish region says
"tile < status.size, checked above" but nothing checks tile >= 0. With ctl[0] = -100 and
64 status words, thread 255 does cuda.atomic.exch(status.unchecked, -100, word): Numba's
atomics wrap negative indices once (-100 + 64 = -36), still before the array.

cd /work/wt-attack2 && NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=/work/wt-attack2 /work/main/.venv/bin/python attacks/scan_negative_counter.py
"""
import numpy as np
from numba import cuda

from simtsafe.lib import _scan_kernels as sk

dt = np.dtype(np.int32)
kernel = sk.SCAN[dt]
n = 100
# the contract holds: out.size == x.size, ctl.size >= 1, status.size * TILE >= n, grid * TILE >= n
backing = cuda.to_device(np.zeros(128, np.uint64))
status = backing[64:]            # 64 words; the 64 words before it stand for "other memory"
ctl = cuda.to_device(np.array([-100], np.int32))
out = cuda.to_device(np.zeros(n, np.int32))
x = cuda.to_device(np.ones(n, np.int32))
launch = kernel.prepare(grid=1, block=sk.BLOCK, shared_mem=sk.SLOT_BYTES)
try:
    launch(out, x, status, ctl)
    b = backing.copy_to_host()
    print("checked launch ACCEPTED; words written before status:", np.nonzero(b[:64])[0], b[:64][b[:64] != 0])
    print("status:", np.nonzero(status.copy_to_host())[0])
except Exception as e:
    print("REFUSED/ERROR:", type(e).__name__, str(e)[:400])
