"""A Tier-1 kernel whose tile store's bounds check is folded away by the !range of .reqntid
(8, 4, 1): with any block whose tid.x can reach 8 or more (e.g. (32, 1, 1), same thread
count) the store writes outside the tile. Safe only if the driver refuses every block
shape other than (8, 4, 1) -- run a3_driver_reqntid.py on a GPU to check that premise."""
import re
from _util import compiled, load, body

SRC = '''
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 4, 1)))
def k(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
    i = thread.index_2d()
    t = ss.shared.tile((4, 8), np.float32)
    w = thread.local_index_2d()
    t[w] = a[i.row, i.col]
    ss.block.sync()
    out[i] = t[cuda.threadIdx.y, cuda.threadIdx.x]
'''
m = load(SRC)
ptx, texts, entry = compiled(m.k)
b = body(ptx)
print(re.findall(r"\.reqntid[^\n]*", ptx))
print("\n".join(l.strip() for l in b.splitlines() if re.search(r"st\.shared|ld\.shared|setp|tid|bra", l)))
