"""Kernels of attack round 7 (grid cooperation, append buffers), as module sources for
``tests.kernels.load_kernel_module``. Every grid kernel is 1D, 32 threads per block,
cooperative, and takes float outputs ``a`` and ``b`` and an int32 ``steps``."""

from __future__ import annotations

GRID, BLOCK, N = 2, 32, 64


def _grid_kernel(dtype: str, body: str, helpers: str = "") -> str:
    head = (
        helpers + "@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, cooperative=True))\n"
        f"def k(a: DisjointSlice[np.{dtype}], b: DisjointSlice[np.{dtype}], steps: np.int32)"
        " -> None:\n"
        "    w = thread.index_1d()\n"
        "    i = w.index\n"
    )
    return head + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


# 1. grid.read whose value only feeds warp.broadcast (a bitcast to i32/i64): instcombine
#    rewrites the load to the integer type and drops the !ss.gridread tag, so the
#    compiled-form check sees no grid.read at all. The write of `a` by thread i + 32
#    (another block) races with the read of a[i + 32] in the same phase.
BROADCAST_F32 = _grid_kernel(
    "float32",
    """
a[w] = np.float32(1)
b[w] = ss.warp.broadcast(ss.grid.read(a, i + 32))  # BAD
""",
)
BROADCAST_F64 = _grid_kernel(
    "float64",
    """
a[w] = np.float64(1)
b[w] = ss.warp.broadcast(ss.grid.read(a, i + 32))  # BAD
""",
)
# The value may also be stored (a store is an allowed user of the rewritten phi).
BROADCAST_AND_STORE = _grid_kernel(
    "float32",
    """
a[w] = np.float32(1)
v = ss.grid.read(a, i + 32)  # BAD
b[w] = v
b[w] = ss.warp.broadcast(v)
""",
)
# Twin: the same read with an arithmetic use keeps its tag and is refused today.
PLAIN_USE = _grid_kernel(
    "float32",
    """
a[w] = np.float32(1)
b[w] = ss.grid.read(a, i + 32) * np.float32(2)  # BAD
""",
)
# Accepted twin of the broadcast: a sync between the write and the read.
BROADCAST_AFTER_SYNC = _grid_kernel(
    "float32",
    """
a[w] = np.float32(i)
ss.grid.sync()
b[w] = ss.warp.broadcast(ss.grid.read(a, i + 32))
""",
)

# 2. A raw grid barrier (in unsafe regions, each reached by some blocks only) shifts which
#    Tier-1 sync pairs with which: block 0 passes raw, write, S1, read, S2; the other
#    blocks pass write, S1, read, S2, raw. Every block passes three grid barriers (no
#    hang), but the first barrier pairs block 0's raw sync with the others' S1: block 0
#    writes `a` while the other blocks grid.read it. The grid-phase check counts only
#    Tier-1 syncs and assumes the k-th barrier is the same instruction in every thread.
RAW_SYNC_SHIFT = _grid_kernel(
    "float32",
    """
with ss.unsafe("SAFETY: every block passes three grid barriers in all"):
    if cuda.blockIdx.x == 0:
        cuda.cg.this_grid().sync()
a[w] = np.float32(1)
ss.grid.sync()
b[w] = ss.grid.read(a, (i + 32) % 64)  # BAD
ss.grid.sync()
with ss.unsafe("SAFETY: every block passes three grid barriers in all"):
    if cuda.blockIdx.x != 0:
        cuda.cg.this_grid().sync()
""",
)

# 3. False refusal: each thread fills its output tile, a grid sync, then reads a
#    neighbour's element with grid.read (no thread writes `a` in that phase).
TILE_THEN_GRID_READ = _grid_kernel(
    "float32",
    """
o = thread.tile_1d(a, 2)
o[0] = np.float32(2 * i)
o[1] = np.float32(2 * i + 1)
ss.grid.sync()
b[w] = ss.grid.read(a, 2 * i + 2)
""",
)

# 4. An append buffer whose counter starts near 2**64: the 64-bit fetch-add wraps within
#    the launch, the first claims get slots 2**64 - 4 ... (dropped) and the later ones
#    0, 1, ... (stored); afterwards the counter reads 28, and the 4 dropped items are
#    reported nowhere.
COMPACT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, appends={"out": "count"}))
def k(out: ss.AppendBuffer[np.float32], count: ss.Counter, x: In[np.float32]) -> None:
    for w in thread.grid_stride(x):
        s = out.claim()
        out[s] = x[w]
"""

# 2b. The same shift at block scope (older code, same root cause): raw syncthreads() under
#     warp-dependent branches pair warp 0's raw barrier with warp 1's first block.sync(),
#     so warp 1 reads the tile while warp 0 fills it.
RAW_SYNCTHREADS_SHIFT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(a: DisjointSlice[np.float32], b: DisjointSlice[np.float32], steps: np.int32) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(64, np.float32)
    me = thread.local_index()
    with ss.unsafe("SAFETY: every warp passes three block barriers in all"):
        if cuda.threadIdx.x < 32:
            cuda.syncthreads()
    t[me] = np.float32(w.index)
    ss.block.sync()
    a[w] = t[(cuda.threadIdx.x + 32) % 64]  # BAD
    ss.block.sync()
    with ss.unsafe("SAFETY: every warp passes three block barriers in all"):
        if cuda.threadIdx.x >= 32:
            cuda.syncthreads()
"""
