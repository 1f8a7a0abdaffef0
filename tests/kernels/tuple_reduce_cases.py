"""Tuple states in ``block.reduce`` / ``warp.reduce``: kernels and numpy references shared by
tests/sim, tests/ptx and tests/gpu.

``each_source(scope, block)`` is a kernel in which every thread reduces three states over its
block (warp) and writes the result at its own index, so a test sees every thread's copy:

* Welford ``(count, mean, M2)`` (float32 x 3) of one element per thread (threads past the
  data hold the empty state ``(0, 0, 0)``, which the combine returns unchanged);
* argmax ``(value, index)`` (float32, int64): the larger value, and among equal values the
  smaller index -- the first occurrence, as ``np.argmax`` -- whatever order the tree
  combines them in (the op is commutative and associative on such pairs);
* ``(min, max)`` (int32 x 2) together with a bool ``any negative`` flag: a heterogeneous
  state of three fields.

``rows_source(block)`` is the row form: a block per row of a 2D input whose width is not a
multiple of the block, each thread running Welford over its columns before one
``block.reduce`` of the states (Chan's parallel combine).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = [
    "EACH_OUTPUTS",
    "each_expected",
    "each_inputs",
    "each_source",
    "groups",
    "rows_expected",
    "rows_source",
    "welford_order",
]

HELPERS = """
@ss.device
def welford(a, b):
    na, ma, qa = a
    nb, mb, qb = b
    n = na + nb
    if n == 0:
        return a
    d = mb - ma
    # each product feeds a division, never an addition: nothing for NVVM to fuse into an
    # fma, so the simulator's float32 steps are the GPU's bit for bit
    return (n, ma + d * nb / n, qa + qb + d * d * na * nb / n)


@ss.device
def argmax(a, b):
    # the larger value; among equal values the smaller index (np.argmax's first occurrence)
    if b[0] > a[0] or (b[0] == a[0] and b[1] < a[1]):
        return b
    return a


@ss.device
def span(a, b):
    return (min(a[0], b[0]), max(a[1], b[1]), a[2] or b[2])
"""

#: The outputs of ``each_source``'s kernel, in parameter order (inputs ``x``, ``k`` follow).
EACH_OUTPUTS = ("wn", "wm", "wq", "av", "ai", "lo", "hi", "neg")
_EACH_TYPES = ("float32",) * 3 + ("float32", "int64", "int32", "int32", "bool_")
#: The index an empty argmax state holds: larger than any real index, so it never wins a tie.
NO_INDEX = 2**40


def each_source(scope: str, block: int) -> str:
    """The per-thread kernel ``each`` for ``simtsafe.<scope>.reduce`` with tuple states."""
    params = ", ".join(
        f"{o}: DisjointSlice[np.{t}]" for o, t in zip(EACH_OUTPUTS, _EACH_TYPES, strict=True)
    )
    return f"""
B = {block}
{HELPERS}

@ss.kernel(contract=ss.LaunchContract(domain=1, block=B))
def each({params}, x: In[np.float32], k: In[np.int32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(x):
        w = (np.float32(1), x[i], np.float32(0))
        a = (x[i], i.index)
        s = (k[i], k[i], k[i] < 0)
    else:
        w = (np.float32(0), np.float32(0), np.float32(0))
        a = (np.float32(-np.inf), np.int64({NO_INDEX}))
        s = (np.int32(2**31 - 1), np.int32(-(2**31)), False)
    wn[i], wm[i], wq[i] = ss.{scope}.reduce(w, welford)
    av[i], ai[i] = ss.{scope}.reduce(a, argmax)
    lo[i], hi[i], neg[i] = ss.{scope}.reduce(s, span)
"""


def each_inputs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, k): floats with many ties (small integers, so argmax has to break them) and ints."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, n).astype(np.float32)
    k = rng.integers(-1000, 1000, n).astype(np.int32)
    return x, k


def groups(total: int, size: int) -> Iterator[slice]:
    """The threads of each block (size = block) or warp (size = 32 within blocks) in order."""
    for start in range(0, total, size):
        yield slice(start, min(start + size, total))


def _group_slices(scope: str, block: int, grid: int) -> Iterator[slice]:
    for b in range(grid):
        if scope == "block":
            yield slice(b * block, (b + 1) * block)
        else:
            for g in groups(block, 32):
                yield slice(b * block + g.start, b * block + g.stop)


def each_expected(
    scope: str, block: int, grid: int, x: np.ndarray, k: np.ndarray
) -> dict[str, np.ndarray]:
    """Every thread's expected outputs (count, mean, M2 in float64; the rest exact)."""
    total = block * grid
    out = {name: np.zeros(total, np.float64) for name in ("wn", "wm", "wq", "av")}
    out["ai"] = np.zeros(total, np.int64)
    out["lo"] = np.zeros(total, np.int32)
    out["hi"] = np.zeros(total, np.int32)
    out["neg"] = np.zeros(total, np.bool_)
    n = x.size
    for g in _group_slices(scope, block, grid):
        lo, hi = min(g.start, n), min(g.stop, n)
        xs = x[lo:hi].astype(np.float64)
        ks = k[lo:hi]
        if xs.size:
            mean = xs.mean()
            out["wn"][g], out["wm"][g] = xs.size, mean
            out["wq"][g] = ((xs - mean) ** 2).sum()
            out["av"][g], out["ai"][g] = xs.max(), lo + int(np.argmax(xs))
            out["lo"][g], out["hi"][g], out["neg"][g] = ks.min(), ks.max(), (ks < 0).any()
        else:
            out["av"][g], out["ai"][g] = -np.inf, NO_INDEX
            out["lo"][g], out["hi"][g] = 2**31 - 1, -(2**31)
    return out


def welford_order(values: np.ndarray, threads: int, scope: str) -> tuple[float, float, float]:
    """The Welford state the GPU code computes for one group of ``threads`` threads, the first
    holding ``values`` (one each), the rest the empty state, in the GPU code's order: the down
    tree of each warp (lane ``l`` takes lane ``l + off`` where present), then the warp totals
    folded left to right (block), every operation in float32."""
    f = np.float32

    def combine(a: tuple[f, f, f], b: tuple[f, f, f]) -> tuple[f, f, f]:
        na, ma, qa = a
        nb, mb, qb = b
        n = f(na + nb)
        if n == 0:
            return a
        d = f(mb - ma)
        return (n, f(ma + f(f(d * nb) / n)), f(f(qa + qb) + f(f(f(f(d * d) * na) * nb) / n)))

    def tree(vals: list[tuple[f, f, f]]) -> tuple[f, f, f]:
        v = list(vals)
        for off in (16, 8, 4, 2, 1):
            v = [combine(v[j], v[j + off]) if j + off < len(v) else v[j] for j in range(len(v))]
        return v[0]

    states = [(f(1), f(x), f(0)) for x in values] + [(f(0), f(0), f(0))] * (threads - len(values))
    if scope == "warp":
        return tree(states)
    totals = [tree(states[g]) for g in groups(len(states), 32)]
    acc = totals[0]
    for t in totals[1:]:
        acc = combine(acc, t)
    return acc


def rows_source(block: int) -> str:
    """A block per row: per-thread Welford over the row's columns, one tuple block.reduce."""
    return f"""
B = {block}
{HELPERS}

@ss.kernel(contract=ss.LaunchContract(domain=1, block=B, covers="mean",
           requires=["mean.size == x.shape[0]", "var.size == x.shape[0]",
                     "count.size == x.shape[0]"]))
def welford_rows(mean: DisjointSlice[np.float32, PerBlock],
                 var: DisjointSlice[np.float32, PerBlock],
                 count: DisjointSlice[np.float32, PerBlock], x: In2D[np.float32]) -> None:
    n = np.float32(0)
    mu = np.float32(0)
    q = np.float32(0)
    for w in thread.block_row(x):
        v = x[w]
        n += np.float32(1)
        d = v - mu
        mu += d / n
        q += d * (v - mu)
    n, mu, q = ss.block.reduce((n, mu, q), welford)
    lead = thread.block_leader()
    mean[lead] = mu
    var[lead] = q / n
    count[lead] = n
"""


def rows_expected(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, population variance) of each row, in float64."""
    x64 = x.astype(np.float64)
    return x64.mean(1), x64.var(1)
