"""Kernel sources of attack round 6 (Columns and vec.store), shared by the PTX, simulator and
GPU tests (test_attacks6_*.py). Each is a module body for ``tests.kernels.load_kernel_module``.
None was an accepted unsound kernel; each was a crash, a simulator value the device does not
give, or a false refusal, fixed in the commit that added these tests."""

from __future__ import annotations

__all__ = [
    "BF16_DOUBLE_ROUNDING",
    "COLUMN_IN_BOUNDS_OF_AN_INPUT",
    "VEC_STORE_OF_BF16_SCALARS",
    "TILE_STORE_OF_BF16_SCALARS",
]

#: A Columns witness guards a read of a 1D input with ``w.in_bounds(x)``: the input may
#: have fewer elements than the output has columns. Accepted by typing; its lowering
#: treats every Columns ``in_bounds`` target as 2D.
COLUMN_IN_BOUNDS_OF_AN_INPUT = """
from simtsafe import Columns


@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[np.float32, Columns], x: In[np.float32], pos: In[np.int32]) -> None:
    w = thread.column()
    if w.in_bounds(x):
        out[pos[0], w] = x[w] + np.float32(1)
"""

#: The same float64 value stored into a bf16 output through three routes: an output
#: tile's element store, a vec.store of the tile, a witness store. docs/cooperation.md:
#: each is converted "as t[k] = v would (bf16: via float32, rounded to nearest even)".
BF16_DOUBLE_ROUNDING = """
@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(
    tile_out: DisjointSlice[ss.bfloat16],
    vec_out: DisjointSlice[ss.bfloat16],
    wit_out: DisjointSlice[ss.bfloat16],
    a: In[np.float64],
) -> None:
    w = thread.index_1d()
    t = thread.tile_1d(tile_out, 2)
    t[0] = a[0]
    t[1] = a[0]
    v = thread.tile_1d(vec_out, 2)
    ss.vec.store(v, (a[0], a[0]))
    wit_out[w] = a[0]
"""

#: vec.store of values read by plain int from a bf16 input (numba-cuda's own bf16
#: scalar type), and its element-store twin, which is accepted.
VEC_STORE_OF_BF16_SCALARS = """
@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[ss.bfloat16], a: In[ss.bfloat16]) -> None:
    t = thread.tile_1d(out, 2)
    ss.vec.store(t, (a[0], a[1]))
"""

TILE_STORE_OF_BF16_SCALARS = """
@ss.kernel(contract=ss.LaunchContract(domain=1))
def k(out: DisjointSlice[ss.bfloat16], a: In[ss.bfloat16]) -> None:
    t = thread.tile_1d(out, 2)
    t[0] = a[0]
    t[1] = a[1]
"""
