"""Constant arrays in Tier 1 (``cuda.const.array_like``): accepted kernels and refused routes.

Shared by tests/ptx/test_constmem_ptx.py (compiled form, PTX), tests/sim/test_constmem_sim.py
(the simulator's values and refusals) and tests/gpu/test_constmem_gpu.py. Each source is a
module body for ``tests.kernels.load_kernel_module``.
"""

from __future__ import annotations

import numpy as np

#: The constants the accepted kernels read.
FILT = np.array([1, 4, 6, 4, 1], dtype=np.float32) / 16
LUT = (np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5 - 2).astype(np.float32)

#: port17's FR_CONST_FILTER, now accepted: a 5-tap blur whose filter is constant memory.
BLUR = """
FILT = np.array([1, 4, 6, 4, 1], dtype=np.float32) / 16


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size == out.size"]))
def blur1d(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        f = cuda.const.array_like(FILT)
        acc = np.float32(0)
        for k in range(5):
            j = i.index + k - 2
            if j >= 0 and j < x.size:
                acc += f[k] * x[j]
        out[i] = acc
"""

#: A 2D lookup table read at indices loaded from inputs (so the read is a real ld.const),
#: with the table's shape and an out-of-range read (0, as a tile's or local array's).
LUT2D = """
LUT = (np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5 - 2).astype(np.float32)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64,
                                      requires=["r.size == out.size", "c.size == out.size"]))
def lut2d(out: DisjointSlice[np.float32], r: In[np.int32], c: In[np.int32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        t = cuda.const.array_like(LUT)
        rows, cols = t.shape
        out[i] = t[r[i.index], c[i.index]] + np.float32(t.size - rows * cols + len(t) - 3)
"""

#: The table read inside a helper, given to it by the kernel and made in another helper.
HELPER = """
LUT = (np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5 - 2).astype(np.float32)
BIAS = np.array([10, 20, 30], dtype=np.int64)


@ss.device
def look(t, r, c):
    return t[r, c]


@ss.device
def bias(r):
    b = cuda.const.array_like(BIAS)
    return b[r]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64,
                                      requires=["r.size == out.size", "c.size == out.size"]))
def lut_helper(out: DisjointSlice[np.float32], r: In[np.int32], c: In[np.int32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out):
        t = cuda.const.array_like(LUT)
        out[i] = look(t, r[i.index], c[i.index]) + np.float32(bias(r[i.index]))
"""

#: A barrier steered by a constant read at a uniform index (a scalar parameter): uniform.
UNIFORM = """
LUT = (np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5 - 2).astype(np.float32)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size == out.size"]))
def steer(out: DisjointSlice[np.float32], x: In[np.float32], k: np.int64) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(LUT)
    v = x[i] if i.in_bounds(x) else np.float32(0)
    if t[1, k] > 0:
        s = ss.block.sum(v)
        out[i] = s
    else:
        out[i] = v
"""

#: The same beside an unsafe region (where the analysis trusts no other memory): constant
#: memory stays trusted, since no write can reach it (the compiled form refuses one).
UNIFORM_BESIDE_UNSAFE = UNIFORM.replace(
    "    v = x[i] if i.in_bounds(x) else np.float32(0)\n",
    "    v = x[i] if i.in_bounds(x) else np.float32(0)\n"
    '    with ss.unsafe("SAFETY: a fence orders nothing here; it only makes a region"):\n'
    "        cuda.threadfence()\n",
)

#: Accepted kernels by name.
ACCEPTED = {
    "blur": BLUR,
    "lut2d": LUT2D,
    "helper": HELPER,
    "uniform": UNIFORM,
    "uniform_beside_unsafe": UNIFORM_BESIDE_UNSAFE,
}

_KERNEL = """
LUT = (np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5 - 2).astype(np.float32)
{extra}

@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def bad(out: DisjointSlice[np.float32], r: In[np.int32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(LUT)
{body}
    out[i] = t[0, 0]
"""


def _bad(body: str, extra: str = "") -> str:
    return _KERNEL.format(body="\n".join("    " + line for line in body.splitlines()), extra=extra)


_READ_ONLY = r"a constant array \(`cuda\.const\.array_like`\) is read-only: it lives in the GPU's"

#: Refused routes: name -> (source, where it is refused, message regex). ``where`` is
#: "decoration" (at import) or "compile" (the first compile: typing or the compiled form).
REFUSED: dict[str, tuple[str, str, str]] = {
    "store": (_bad("t[0, 1] = 1.0"), "compile", _READ_ONLY),
    "augmented_store": (_bad("t[0, 1] += 1.0"), "compile", _READ_ONLY),
    "alias_store": (_bad("d = t\nd[0, 0] = 1.0"), "compile", _READ_ONLY),
    "helper_store": (
        _bad(
            "poke(t)",
            extra="\n@ss.device\ndef poke(c):\n    c[0, 0] = np.float32(1)\n",
        ),
        "compile",
        _READ_ONLY,
    ),
    "slice_store": (
        _bad("t[1:][0, 0] = 1.0"),
        "compile",
        r"a 2D constant array is read with 2 ints, one element at a time \(t\[i, j\]\); it has no rows or slices",
    ),
    "witness_store": (
        _bad("t[i] = 1.0"),
        "compile",
        _READ_ONLY,
    ),
    "fill": (_bad("t.fill(0)"), "decoration", r"attribute `\.fill` is not allowed in kernels"),
    "flat": (_bad("t.flat[0] = 1.0"), "decoration", r"attribute `\.flat` is not allowed"),
    "ufunc_out": (
        _bad("np.add(np.float32(1), np.float32(2), t)"),
        "decoration",
        r"takes exactly its 2 input\(s\) in kernels; an extra `out` argument",
    ),
    "atomic": (
        _bad(
            'with ss.unsafe("SAFETY: an attack: an atomic on constant memory"):\n'
            "    cuda.atomic.add(t, (0, 1), np.float32(1))"
        ),
        "compile",
        _READ_ONLY,
    ),
    "atomic_store_in_unsafe": (
        _bad('with ss.unsafe("SAFETY: an attack: a store in a region"):\n    t[0, 1] = 1.0'),
        "compile",
        _READ_ONLY,
    ),
    "as_output_of_helper": (
        _bad(
            "fill_out(t, i)",
            extra="\n@ss.device\ndef fill_out(o, w):\n    o[w] = np.float32(1)\n",
        ),
        "compile",
        _READ_ONLY,
    ),
    "returned": (
        _bad("u = give(t)", extra="\n@ss.device\ndef give(c):\n    return c\n"),
        "compile",
        r"a device helper may not return a witness, a tile or a thread-private array",
    ),
    "iterated": (
        _bad("for v in t:\n    pass"),
        "compile",
        r"a constant array cannot be iterated",
    ),
    "local_name": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def bad(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(x)
    out[i] = t[0]
""",
        "decoration",
        r"`x` is a local name; cuda\.const\.array_like takes a module-level numpy array",
    ),
    "records": (
        """
PTS = np.zeros(4, dtype=np.dtype([("x", np.float32), ("y", np.float32)]))


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def bad(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(PTS)
    out[i] = t[0].x
""",
        "decoration",
        r"an array of records \(.*\) is not supported: give each field its own constant array",
    ),
    "too_large": (
        """
BIG = np.zeros(20000, dtype=np.float32)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def bad(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(BIG)
    out[i] = t[0]
""",
        "decoration",
        r"takes at most 65536 bytes \(the GPU's constant bank\), got an array of 80000 bytes",
    ),
    "tuple_global": (
        """
TAPS = (1.0, 2.0)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def bad(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(TAPS)
    out[i] = t[0]
""",
        "decoration",
        r"takes a module-level numpy array, got builtins\.tuple; index the tuple itself",
    ),
    "divergent_steer": (
        """
LUT = (np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5 - 2).astype(np.float32)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def bad(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(LUT)
    v = x[i] if i.in_bounds(x) else np.float32(0)
    if t[1, cuda.threadIdx.x % 4] > 0:
        s = ss.block.sum(v)
        out[i] = s
""",
        "compile",
        r"`block\.sum` needs every thread of the block to reach it",
    ),
    "function_value": (
        """
FILT = np.ones(3, dtype=np.float32)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def bad(out: DisjointSlice[np.float32]) -> None:
    i = thread.index_1d()
    make = cuda.const.array_like
    out[i] = make(FILT)[0]
""",
        "decoration",
        r"call `cuda\.const\.array_like\(ARR\)` directly",
    ),
}
