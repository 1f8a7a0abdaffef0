"""Collective test cases shared by tests/sim, tests/ptx and tests/gpu: kernels and references.

``collective_source(dtype, scope)`` is the source of a kernel (for
``load_kernel_module``) that runs every collective of ``simtsafe.block`` or
``simtsafe.warp`` on one value per thread and writes each result to its
own output. Arrays are 3D ``(bz, by, gx * bx)`` so that 1D, 2D and 3D
blocks share one layout: thread ``(x, y, z)`` of block ``b`` owns
``[z, y, b * bx + x]``, and a block's values in linear thread order
(``x + bx * (y + by * z)``) are ``arr[:, :, b * bx:(b + 1) * bx].reshape(-1)``.
``expected(...)`` computes every output with numpy.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = [
    "LOOPED_SOURCE",
    "OUTPUTS",
    "block_values",
    "collective_source",
    "dims",
    "expected",
    "looped_expected",
    "random_values",
    "tolerance",
]

#: The kernel's outputs, in parameter order (the input ``a`` comes last).
OUTPUTS = ("o_sum", "o_max", "o_min", "o_red", "o_opx", "o_incl", "o_excl", "o_bc")


def collective_source(dtype: str, scope: str) -> str:
    """A kernel applying every ``simtsafe.<scope>`` collective to ``a``'s elements."""
    is_float = dtype.startswith("float")
    opx = "max" if is_float else "operator.xor"
    params = ", ".join(f"{o}: DisjointSlice3D[np.{dtype}]" for o in OUTPUTS)
    return f"""
import operator


@ss.device
def plus(a, b):
    return a + b


@ss.kernel
def collectives({params}, a: In3D[np.{dtype}]) -> None:
    w = thread.index_3d()
    v = a[w]
    o_sum[w] = ss.{scope}.sum(v)
    o_max[w] = ss.{scope}.max(v)
    o_min[w] = ss.{scope}.min(v)
    o_red[w] = ss.{scope}.reduce(v, plus)
    o_opx[w] = ss.{scope}.reduce(v, {opx})
    o_incl[w] = ss.{scope}.scan(v)
    o_excl[w] = ss.{scope}.scan(v, inclusive=False)
    o_bc[w] = ss.{scope}.broadcast(v)
"""


def dims(block: int | tuple[int, ...]) -> tuple[int, int, int]:
    b = (block,) if isinstance(block, int) else tuple(block)
    return (b + (1, 1, 1))[:3]  # type: ignore[return-value]


def random_values(dtype: str, block: int | tuple[int, ...], grid: int, seed: int = 0) -> np.ndarray:
    """Inputs of layout ``(bz, by, grid * bx)``: full-range integers (sums wrap), floats."""
    bx, by, bz = dims(block)
    shape = (bz, by, grid * bx)
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def block_values(arr: np.ndarray, b: int, block: int | tuple[int, ...]) -> np.ndarray:
    """Block ``b``'s elements in linear thread order."""
    bx, _, _ = dims(block)
    return arr[:, :, b * bx : (b + 1) * bx].reshape(-1)


def _put(out: np.ndarray, b: int, block: int | tuple[int, ...], linear: np.ndarray) -> None:
    bx, by, bz = dims(block)
    out[:, :, b * bx : (b + 1) * bx] = linear.reshape(bz, by, bx)


def _segment_results(seg: np.ndarray, is_float: bool) -> dict[str, np.ndarray]:
    dt = seg.dtype
    n = len(seg)
    total = np.add.reduce(seg, dtype=dt)
    opx = seg.max() if is_float else np.bitwise_xor.reduce(seg)
    incl = np.cumsum(seg, dtype=dt)
    excl = np.concatenate([np.zeros(1, dt), incl[:-1]]).astype(dt)
    return {
        "o_sum": np.full(n, total, dt),
        "o_max": np.full(n, seg.max(), dt),
        "o_min": np.full(n, seg.min(), dt),
        "o_red": np.full(n, total, dt),
        "o_opx": np.full(n, opx, dt),
        "o_incl": incl,
        "o_excl": excl,
        "o_bc": np.full(n, seg[0], dt),
    }


def expected(
    a: np.ndarray, scope: str, block: int | tuple[int, ...], grid: int
) -> dict[str, np.ndarray]:
    """numpy's result for every output: per block, or per warp of 32 linear threads."""
    is_float = a.dtype.kind == "f"
    out = {name: np.zeros_like(a) for name in OUTPUTS}
    with np.errstate(over="ignore"):
        for b in range(grid):
            vals = block_values(a, b, block)
            step = 32 if scope == "warp" else len(vals)
            parts = [
                _segment_results(vals[s : s + step], is_float) for s in range(0, len(vals), step)
            ]
            for name in OUTPUTS:
                _put(out[name], b, block, np.concatenate([p[name] for p in parts]))
    return out


def tolerance(
    a: np.ndarray, block: int | tuple[int, ...]
) -> Callable[[np.ndarray, np.ndarray], None]:
    """An assertion: exact for integers, float error bounded by n * eps * sum|x|."""
    bx, by, bz = dims(block)
    n = bx * by * bz

    def check(got: np.ndarray, want: np.ndarray) -> None:
        if a.dtype.kind != "f":
            np.testing.assert_array_equal(got, want)
            return
        eps = float(np.finfo(a.dtype).eps)
        atol = 2 * n * eps * float(np.abs(a).max()) * 4
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)

    return check


#: A kernel running block collectives in a loop under an exact-block contract: on the
#: GPU its collectives alternate two buffers with one barrier each (the reuse path).
LOOPED_SOURCE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=({block}, 1, 1)))
def looped(out: DisjointSlice[np.int64], a: In[np.int64]) -> None:
    i = thread.index_1d()
    v = a[i]
    acc = np.int64(0)
    for r in range(7):
        s = ss.block.sum(v)
        p = ss.block.scan(v, inclusive=False)
        b = ss.block.broadcast(v + r)
        acc += s * 3 + p + b
        v = v + p % 5
    out[i] = acc
"""


def looped_expected(a: np.ndarray, block: int) -> np.ndarray:
    """numpy's result of ``LOOPED_SOURCE`` (``a.size`` a multiple of ``block``)."""
    out = np.zeros_like(a)
    for start in range(0, a.size, block):
        v = a[start : start + block].copy()
        acc = np.zeros_like(v)
        for r in range(7):
            s = v.sum()
            p = np.concatenate([[0], np.cumsum(v)[:-1]]).astype(v.dtype)
            b = v[0] + r
            acc += s * 3 + p + b
            v = v + p % 5
        out[start : start + block] = acc
    return out
