"""``simtsafe.shared.accumulator((R, C), dtype)``: a 2D shared accumulator indexed by pairs.

The accepted kernel ``k(out, idx, val)`` runs one 128-thread block: thread ``t`` adds
``val[t]`` to element ``(idx[2t], idx[2t + 1])`` of a (5, 7) int32 accumulator and takes
the min and max of float32 ``val[t]`` into element ``(idx[2t], 0)`` of two (5, 1) float32
accumulators; after a barrier, thread ``t < 35`` writes element ``(t // 7, t % 7)`` of the
sum to ``out[t]`` and threads 35..39 write the five mins, 40..44 the five maxes, and threads
45..47 read ``(-1, 0)``, ``(5, 0)``, ``(0, 7)`` (out of range: 0). Indices out of range in
``idx`` (negative, past an axis) are skipped. Refused kernels fail at typing (when compiled
or run) with the fragment given, at the line marked ``# BAD``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ACCEPTED",
    "COLS",
    "FLOAT_INTO_INT",
    "FLOAT_INTO_INT_EXPECTED",
    "REFUSED",
    "ROWS",
    "expected",
]

ROWS, COLS = 5, 7

_HEAD = (
    "@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))\n"
    "def k(out: DisjointSlice[np.float32], idx: In[np.int64], val: In[np.float32]) -> None:\n"
    "    w = thread.index_1d()\n"
)


def _k(body: str) -> str:
    return _HEAD + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


ACCEPTED = _k(
    f"""
h = ss.shared.accumulator(({ROWS}, {COLS}), np.int32)
lo = ss.shared.accumulator(({ROWS}, 1), np.float32)
hi = ss.shared.accumulator(({ROWS}, 1), np.float32)
t = cuda.threadIdx.x
if t < {ROWS}:
    lo.add((t, 0), np.float32(1e30))
    hi.add((t, 0), np.float32(-1e30))
ss.block.sync()
h.add((idx[2 * t], idx[2 * t + 1]), 1 + t % 3)
lo.min((idx[2 * t], 0), val[t])
hi.max((idx[2 * t], 0), val[t])
ss.block.sync()
v = np.float32(0)
if t < {ROWS * COLS}:
    v = np.float32(h[t // {COLS}, t % {COLS}])
elif t < {ROWS * COLS + ROWS}:
    v = lo[t - {ROWS * COLS}, 0]
elif t < {ROWS * COLS + 2 * ROWS}:
    v = hi[t - {ROWS * COLS + ROWS}, 0]
elif t == {ROWS * COLS + 2 * ROWS}:
    v = np.float32(h[-1, 0])
elif t == {ROWS * COLS + 2 * ROWS + 1}:
    v = np.float32(h[{ROWS}, 0])
elif t == {ROWS * COLS + 2 * ROWS + 2}:
    v = np.float32(h[0, {COLS}])
out[w] = v + np.float32(h.size + len(h) * 1000 + h.shape[1] * 100000) * np.float32(t == 127)
"""
)


def expected(idx: np.ndarray, val: np.ndarray) -> np.ndarray:
    """What ACCEPTED writes for ``idx`` (2 * 128 ints) and ``val`` (128 floats)."""
    h = np.zeros((ROWS, COLS), np.int64)
    lo = np.full(ROWS, 1e30, np.float32)
    hi = np.full(ROWS, -1e30, np.float32)
    for t in range(128):
        i, j = int(idx[2 * t]), int(idx[2 * t + 1])
        if 0 <= i < ROWS and 0 <= j < COLS:
            h[i, j] += 1 + t % 3
        if 0 <= i < ROWS:
            lo[i] = min(lo[i], val[t])
            hi[i] = max(hi[i], val[t])
    out = np.zeros(128, np.float32)
    out[: ROWS * COLS] = h.reshape(-1)
    out[ROWS * COLS : ROWS * COLS + ROWS] = lo
    out[ROWS * COLS + ROWS : ROWS * COLS + 2 * ROWS] = hi
    out[127] = ROWS * COLS + ROWS * 1000 + COLS * 100000
    return out


#: Float values into int32 / uint32 accumulators (attack round 22): thread 0 adds val[0] and
#: val[1] to int32 elements, val[2] to a uint32 one, and takes the max with val[3]; threads
#: 0..3 write those elements. The GPU converts with cvt.rzi (toward zero, saturating, NaN
#: to 0); the simulator converts the same way.
FLOAT_INTO_INT = _k(
    """
t = cuda.threadIdx.x
h = ss.shared.accumulator((4, 32), np.int32)
g = ss.shared.accumulator((4, 32), np.uint32)
if t == 0:
    h.add((0, 0), val[0])
    h.add((0, 1), val[1])
    g.add((0, 0), val[2])
    h.max((0, 2), val[3])
    h.add((0, 3), val[4])
ss.block.sync()
v = np.float32(0)
if t == 0:
    v = np.float32(h[0, 0])
elif t == 1:
    v = np.float32(h[0, 1] & 0xFFFFF)  # the low 20 bits: float32 holds them exactly
elif t == 2:
    v = np.float32(g[0, 0])
elif t == 3:
    v = np.float32(h[0, 2] & 0xFFFFF)
elif t == 4:
    v = np.float32(h[0, 3])
out[w] = v
"""
)

#: FLOAT_INTO_INT's first five outputs for val = [NaN, 1e10, -1.0, 3e9, -2.7] (float32):
#: NaN -> 0, 1e10 -> INT32_MAX (its low 20 bits: 0xFFFFF; INT32_MIN's are 0), -1 -> 0 as a
#: uint32, max(0, 3e9 -> INT32_MAX), -2.7 -> -2.
FLOAT_INTO_INT_EXPECTED = [0.0, float(0xFFFFF), 0.0, float(0xFFFFF), -2.0]


def _refused(body: str) -> str:
    return _k("h = ss.shared.accumulator((4, 32), np.int32)\n" + body)


#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "update-at-one-int": (
        _refused("h.add(cuda.threadIdx.x, 1)  # BAD\nss.block.sync()\nout[w] = h[0, 0]"),
        "acc.add((i, j), v): a 2D accumulator (4, 32) is updated at a pair of ints (i, j); got",
    ),
    "update-at-a-triple": (
        _refused("h.max((1, 2, 3), 1)  # BAD\nss.block.sync()\nout[w] = h[0, 0]"),
        "acc.max((i, j), v): a 2D accumulator (4, 32) is updated at a pair of ints (i, j); got",
    ),
    "update-at-a-float-pair": (
        _refused("h.add((1.5, 2), 1)  # BAD\nss.block.sync()\nout[w] = h[0, 0]"),
        "a 2D accumulator (4, 32) is updated at a pair of ints (i, j); got",
    ),
    "read-at-one-int": (
        _refused("h.add((1, 2), 1)\nss.block.sync()\nout[w] = h[3]  # BAD"),
        "a 2D shared accumulator (4, 32) is read at a pair of ints acc[i, j]; got",
    ),
    "written-by-index": (
        _refused("h[1, 2] = 3  # BAD\nss.block.sync()\nout[w] = h[1, 2]"),
        "an accumulator is not written with `acc[i] = v`",
    ),
    "1d-updated-at-a-pair": (
        _k(
            "h = ss.shared.accumulator(16, np.int32)\nh.add((1, 2), 1)  # BAD\nss.block.sync()\n"
            "out[w] = h[0]"
        ),
        "acc.add(i, v): the index must be an int; got",
    ),
    "empty-axis": (
        _k("h = ss.shared.accumulator((4, 0), np.int32)  # BAD\nss.block.sync()\nout[w] = 0"),
        "a 2D accumulator's shape is a pair of positive ints known when the kernel compiles: "
        "a literal",
    ),
    "past-static-shared-memory": (
        _k("h = ss.shared.accumulator((256, 64), np.int32)  # BAD\nss.block.sync()\nout[w] = 0"),
        "shared.accumulator: 256 x 64 elements of int32 are 65536 bytes; a block's static shared "
        "memory is at most 49152 bytes (48 KiB) on every GPU: use fewer or smaller elements",
    ),
    "1d-past-static-shared-memory": (
        _k("h = ss.shared.accumulator(6145, np.float64)  # BAD\nss.block.sync()\nout[w] = 0"),
        "shared.accumulator: 6145 elements of float64 are 49160 bytes",
    ),
    "numpy-integer-constant-shape": (
        "R = np.int64(4)\n\n\n"
        + _k("h = ss.shared.accumulator((R, 32), np.int32)  # BAD\nss.block.sync()\nout[w] = 0"),
        "a 2D accumulator's shape is a pair of positive ints known when the kernel compiles: a "
        "literal, or a module constant of type int (a numpy integer such as np.int64(4) is not "
        "a literal to Numba: write 4, or int(...) where the constant is made), such as (256, "
        "32); got",
    ),
    "numpy-integer-constant-size": (
        "N = np.int64(64)\n\n\n"
        + _k("h = ss.shared.accumulator(N, np.int32)  # BAD\nss.block.sync()\nout[w] = 0"),
        "shared.accumulator(n, dtype): n must be an int known when the kernel compiles",
    ),
    "two-past-static-shared-memory": (
        _k(
            "h = ss.shared.accumulator((4, 2048), np.int32)\n"
            "g = ss.shared.accumulator((4, 2048), np.int32)  # BAD\n"
            "h.add((1, cuda.threadIdx.x), 1)\ng.add((1, cuda.threadIdx.x), 1)\nss.block.sync()\n"
            "out[w] = h[1, 1] + g[1, 2]"
        ),
        "shared objects take 65536 bytes of static shared memory",
    ),
    "three-axes": (
        _k("h = ss.shared.accumulator((4, 2, 2), np.int32)  # BAD\nss.block.sync()\nout[w] = 0"),
        "a 2D accumulator's shape is a pair of positive ints known when the kernel compiles",
    ),
}
