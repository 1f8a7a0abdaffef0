"""Shared tiles in a ``tile_shared`` window (the launch's dynamic shared memory, opted in
above 48 KiB), the contract field that declares it, and ``mma.load_b2``.

* ``WINDOW``: the small bf16 GEMM of ``mma_rules`` (a block of 64 threads, a 32 x 16 tile of
  ``out``) with its tiles in a window of exactly their bytes (A 32 x (16 + 8) and
  B 16 x (16 + 8) bf16: 1536 + 768 B) and its two B fragments read by one ``load_b2``.
* ``TOO_SMALL``: the same kernel with a window 16 bytes short: refused where the second
  tile is made (``# BAD``).
* ``BIG``: two float32 tiles of 16384 elements, 128 KiB, over the 48 KiB a block may have
  statically: ``out[i] = t0[255 - tid] + t1[tid]`` with ``t0 = a``, ``t1 = 2 a``.
"""

from __future__ import annotations

__all__ = ["BIG", "BIG_N", "TOO_SMALL", "WINDOW", "WINDOW_BYTES"]

WINDOW_BYTES = 32 * 24 * 2 + 16 * 24 * 2
BIG_N = 16384

WINDOW = f"""BM = 32
BN = 16
BK = 16


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(64, 1, 1), tile_shared={WINDOW_BYTES}))
def k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[ss.bfloat16]) -> None:
    ta = ss.shared.tile((BM, BK), ss.bfloat16, pad=8)
    tb = ss.shared.tile((BK, BN), ss.bfloat16, pad=8)  # BAD
    o = ss.mma.out_tile(out, BM, BN, 16, 16)
    warp = cuda.threadIdx.x // 32
    r0 = cuda.blockIdx.y * BM
    c0 = cuda.blockIdx.x * BN
    acc0 = ss.mma.zeros()
    acc1 = ss.mma.zeros()
    for k0 in range(0, a.shape[1], BK):
        ss.shared.fill_async(ta, a, (r0, k0))
        ss.shared.fill_async(tb, b, (k0, c0))
        ss.shared.wait_all()
        ss.block.sync()
        fa = ss.mma.load_a(ta, (warp * 16, 0))
        fb0, fb1 = ss.mma.load_b2(tb, (0, 0))
        acc0 = ss.mma.mma(fa, fb0, acc0)
        acc1 = ss.mma.mma(fa, fb1, acc1)
        ss.block.sync()
    ss.mma.store(o, 0, 0, acc0)
    ss.mma.store(o, 0, 1, acc1)
"""

TOO_SMALL = WINDOW.replace(f"tile_shared={WINDOW_BYTES}", f"tile_shared={WINDOW_BYTES - 16}")

BIG = f"""N = {BIG_N}


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256, tile_shared=2 * N * 4))
def big(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    t0 = ss.shared.tile(N, np.float32)
    t1 = ss.shared.tile(N, np.float32)
    for w in thread.block_stride(t0):
        t0[w] = a[w.index]
    for w in thread.block_stride(t1):
        t1[w] = a[w.index] * np.float32(2.0)
    ss.block.sync()
    i = thread.index_1d()
    j = cuda.threadIdx.x
    out[i] = t0[255 - j] + t1[j]
"""

#: A raw dynamic shared array (Tier 2) in a tile_shared kernel would start at the first
#: tile's address: refused. Its twin keeps the scratch as a tile of the window.
RAW_DYNAMIC = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=256, tile_shared=256 * 4 * 2))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    t = ss.shared.tile(256, np.float32)
    for w in thread.block_stride(t):
        t[w] = a[w.index]
    ss.block.sync()
    j = cuda.threadIdx.x
    with ss.unsafe("SAFETY: scratch[j] is this thread's own slot"):
        scratch = cuda.shared.array(0, np.float32)
        scratch[j] = np.float32(-1.0)
    out[thread.index_1d()] = t[255 - j]
"""
WINDOW_SCRATCH = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=256, tile_shared=256 * 4 * 2))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    t = ss.shared.tile(256, np.float32)
    scratch = ss.shared.tile(256, np.float32)
    for w in thread.block_stride(t):
        t[w] = a[w.index]
    for w in thread.block_stride(scratch):
        scratch[w] = np.float32(-1.0)
    ss.block.sync()
    j = cuda.threadIdx.x
    out[thread.index_1d()] = t[255 - j] + scratch[j]
"""
