"""Record field stores through a witness: PTX, the NVVM that made it, and one launch.

python scripts/diag_record_store.py
"""

import numpy as np
from numba import cuda

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
    w = thread.index_1d()
    out[w].x = a[w]["x"] * 2
    out[w].n = a[w][1]


def main() -> None:
    from numba.cuda.cudadrv import nvvm

    print("NVVM", nvvm.NVVM().get_version(), "IR", nvvm.NVVM().get_ir_version())
    ptx = k.ptx()
    print("\n".join(x for x in ptx.splitlines() if "st." in x or "ld." in x or "release" in x))
    if "st." not in ptx.split(".entry", 1)[-1]:
        print(ptx)
    if cuda.is_available():
        a = np.zeros(64, Rec)
        a["x"] = np.arange(64)
        a["n"] = np.arange(64) + 100
        out = cuda.to_device(np.zeros(64, Rec))
        k.prepare(grid=2, block=32)(out, cuda.to_device(a))
        got = out.copy_to_host()
        print(
            "launch: x ok",
            bool((got["x"] == a["x"] * 2).all()),
            "n ok",
            bool((got["n"] == a["n"]).all()),
        )


if __name__ == "__main__":
    main()
