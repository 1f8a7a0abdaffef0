"""bf16/fp16 kernels and inputs shared by the simulator, PTX and GPU tests."""

from __future__ import annotations

import ml_dtypes
import numpy as np

#: Kernel module source (after tests.kernels.HEADER).
SOURCE = """
import ml_dtypes

BF16 = ss.bfloat16  # ml_dtypes.bfloat16 itself


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def narrow(out: DisjointSlice[BF16], a: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w] = a[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def widen(out: DisjointSlice[np.float32], x: In[BF16]) -> None:
    w = thread.index_1d()
    out[w] = x[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def axpy(out: DisjointSlice[BF16], x: In[BF16], y: In[BF16], alpha: np.float32) -> None:
    w = thread.index_1d()
    out[w] = alpha * x[w] + y[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def bump(out: DisjointSlice[BF16]) -> None:
    w = thread.index_1d()
    out[w] = out[w] + 1


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def half(out: DisjointSlice[np.float16], x: In[np.float16]) -> None:
    w = thread.index_1d()
    out[w] = np.float32(x[w]) * np.float32(0.5)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["x.size == out.size"]))
def block_total(out: DisjointSlice[np.float32], x: In[BF16], h: In[np.float16]) -> None:
    w = thread.index_1d()
    v = x[w] + np.float32(h[w])  # bf16 reads are float32; np.float32 widens float16
    out[w] = ss.block.sum(v) + ss.warp.sum(v)


@ss.device
def scaled(x, w, k):  # type: ignore[no-untyped-def]
    return x[w] * k  # a witness read inside a helper is a float32 too


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 4, 1)))
def scale2d(out: DisjointSlice2D[BF16], x: In2D[BF16]) -> None:
    w = thread.index_2d()
    out[w] = scaled(x, w, np.float32(0.5)) + out[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def rowsum(out: DisjointSlice[BF16], x: In2D[BF16]) -> None:
    w = thread.index_1d()
    if w.in_bounds(out):
        acc = np.float32(0)
        for j in range(x.shape[1]):
            acc += np.float32(x[w.index, j])  # an int-index read: widen it explicitly
        out[w] = acc
"""


def rounding_cases() -> np.ndarray:
    """float32 values that exercise bf16 rounding: ties both ways, carries, NaN, inf, subnormals."""
    bits = [
        0x3F808000,  # tie, kept lsb 0: rounds down
        0x3F818000,  # tie, kept lsb 1: rounds up
        0x3F808001,  # just above a tie: up
        0x3F807FFF,  # just below a tie: down
        0xBF818000,  # negative tie, up in magnitude
        0x3F7FFFFF,  # carries into the exponent
        0x7F7FFFFF,  # the largest float rounds to inf
        0x7F800000,  # inf
        0xFF800000,  # -inf
        0x7FC00000,  # quiet NaN
        0x7F800001,  # signalling NaN (would round to inf without the NaN rule)
        0xFFFFFFFF,  # negative NaN with payload
        0x80000000,  # -0
        0x00008000,  # subnormal tie
        0x00018000,  # subnormal tie, lsb 1
        0x00000001,  # smallest subnormal: 0
    ]
    rng = np.random.default_rng(7)
    more = rng.integers(0, 2**32, size=64 - len(bits), dtype=np.uint64).astype(np.uint32)
    return np.concatenate([np.array(bits, np.uint32), more]).view(np.float32)


def bf16_of(values: np.ndarray) -> np.ndarray:
    """ml_dtypes' round-to-nearest-even cast of float32 values, as uint16 bits."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(values, np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
