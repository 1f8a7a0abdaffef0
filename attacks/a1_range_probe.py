"""Where does !range land? Numba's threadIdx/blockDim, helper functions, int vs tuple blocks."""
from _util import compiled, load, sreg_lines

SRC = '''
@ss.device
def helper(x: int) -> int:
    return x + cuda.threadIdx.x + cuda.blockDim.x * cuda.threadIdx.y

@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k64(out: DisjointSlice[np.int32], a: In[np.int32]) -> None:
    i = thread.index_1d()
    out[i] = helper(a[i]) + cuda.threadIdx.x + cuda.blockDim.x + cuda.laneid + cuda.blockIdx.x + cuda.gridDim.x

@ss.kernel(contract=ss.LaunchContract(domain=2, block=(16, 8)))
def k168(out: DisjointSlice2D[np.int32], a: In2D[np.int32]) -> None:
    i = thread.index_2d()
    out[i] = helper(a[i.row, i.col]) + cuda.threadIdx.y + cuda.blockDim.y + cuda.threadIdx.z + cuda.blockDim.z

@ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=256))
def kmax(out: DisjointSlice[np.int32], a: In[np.int32]) -> None:
    i = thread.index_1d()
    out[i] = helper(a[i]) + cuda.threadIdx.x + cuda.blockDim.x
'''
import re
m = load(SRC)
for name in ("k64", "k168", "kmax"):
    ptx, texts, entry = compiled(getattr(m, name))
    print("=====", name, re.findall(r"\.reqntid[^\n]*|\.maxntid[^\n]*", ptx))
    for n, t in enumerate(texts):
        fns = re.findall(r"^define [^@]*@(\S+)\(", t, re.M)
        print(f"-- module {n}: {[f[:60] for f in fns]}")
        ranges = dict(re.findall(r"^(!\d+) = !\{\s*(i32 \d+, i32 \d+)\s*\}", t, re.M))
        for l in sreg_lines(t):
            md = re.search(r"!range (!\d+)", l)
            print("   ", l.split("sreg.")[1].split("\"")[0], "range", ranges.get(md.group(1)) if md else None)
