"""mma.load_a/load_b: every tile ldmatrix reads starts at a multiple of 16 bytes?

Odd-sized tiles of other dtypes declared before the bf16/fp16 tile, a dynamic tile, a tile
made in a helper and read there through mma; print each .shared declaration's alignment."""
import re
from _util import compiled, load, body

SRC = '''
@ss.device
def hload(t) -> float:
    fa = ss.mma.load_a(t, (0, 8))
    fb = ss.mma.load_b(t, (0, 0))
    acc = ss.mma.mma(fa, fb, ss.mma.zeros())
    return acc[0]

@ss.kernel(contract=ss.LaunchContract(domain=2, block=(64, 1, 1), dynamic_shared=(0, 4096)))
def k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[np.int8]) -> None:
    t0 = ss.shared.tile(3, np.int8)
    t1 = ss.shared.tile((1, 5), np.float16)
    d = ss.shared.dynamic_tile(np.int8)
    t2 = ss.shared.tile((7,), np.float64)
    ta = ss.shared.tile((16, 24), ss.bfloat16, pad=8)
    t3 = ss.shared.tile(1, np.int8)
    tb = ss.shared.tile((16, 8), ss.bfloat16, pad=0)
    for w in thread.block_stride(t0):
        t0[w] = b[0, 0]
    for w in thread.block_stride(t1):
        t1[w] = 1.0
    for w in thread.block_stride(d):
        d[w] = 1
    for w in thread.block_stride(t2):
        t2[w] = 1.0
    for w in thread.block_stride(t3):
        t3[w] = 1
    for w in thread.block_stride(ta):
        ta[w] = a[w.row, w.col]
    for w in thread.block_stride(tb):
        tb[w] = 1.0
    ss.block.sync()
    o = ss.mma.out_tile(out, 16, 16, 16, 16)
    fa = ss.mma.load_a(ta, (cuda.threadIdx.x // 32 * 0, 8))
    fb = ss.mma.load_b(tb, (0, 0))
    acc = ss.mma.mma(fa, fb, ss.mma.zeros())
    x = hload(ta) + t0[0] + t1[0, 0] + d[0] + t2[0] + t3[0]
    acc = (np.float32(acc[0] + x), acc[1], acc[2], acc[3])
    ss.mma.store(o, 0, 0, acc)
'''
m = load(SRC)
ptx, texts, entry = compiled(m.k)
for l in ptx.splitlines():
    if ".shared" in l and (".align" in l or ".extern" in l):
        print(l.strip())
print([l.strip() for l in ptx.splitlines() if "ldmatrix" in l])
