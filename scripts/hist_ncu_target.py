"""Device-call helper (not a test): launch the histogram example (``safe``) or its raw twin
(``raw``, benchmarks/primitives.py) 3 times on 2^28 bytes, uniform or skewed as the benchmark
makes them, for Nsight Compute (``ncu -k regex:histogram --launch-skip 2 --launch-count 1``)."""

import sys
from pathlib import Path

import numpy as np
from numba import cuda

root = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(root / "examples"), str(root / "benchmarks")]
import histogram_vec as h  # noqa: E402
import primitives as p  # noqa: E402

which, kind = sys.argv[1], sys.argv[2]
data = cuda.to_device(p._bytes(kind, 1 << 28))
words = h.as_words(data)
counts = cuda.to_device(np.zeros(256, np.uint32))
if which == "safe":
    launch = h.histogram_vec.prepare(grid=h.grid_blocks(), block=h.BLOCK)
    for _ in range(3):
        launch(counts, words, data)
else:
    kernel = p.histogram_raw[h.grid_blocks(), p.HIST_BLOCK]
    for _ in range(3):
        kernel(counts, words, data)
cuda.synchronize()
print("done", which, kind)
