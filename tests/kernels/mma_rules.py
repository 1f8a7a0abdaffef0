"""``simtsafe.mma``: tensor-core fragments from shared tiles, a warp's multiply-accumulate.

The accepted kernel ``k(out, a, b)`` is a small bf16 GEMM ``out = a @ b`` (fp32 out):
a block of 64 threads (2 warps) owns a 32 x 16 tile of ``out``, each warp 16 x 16 (two
16 x 8 accumulators); the K axis is walked 16 at a time through two padded shared tiles
(A rows m, B rows k). Refused kernels fail at decoration (tile phases), when compiled
(the uniformity of the warp's operations on the compiled form; typing) or when run on
the simulator, with the fragment given, at the line marked ``# BAD``.
"""

from __future__ import annotations

__all__ = [
    "ACCEPTED",
    "ACCEPTED_TWINS",
    "REFUSED",
    "SIM_ORDERS",
    "SIM_ORDERS_SYNCWARP",
    "SIM_TERNARY",
    "SIM_TERNARY_UNIFORM",
    "UNIFORMITY",
]

_CONSTS = "BM = 32\nBN = 16\nBK = 16\n\n\n"

_HEAD = (
    "@ss.kernel(contract=ss.LaunchContract(domain=2, block=(64, 1, 1)))\n"
    "def k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[ss.bfloat16]) -> None:\n"
)


def _k(body: str) -> str:
    return _CONSTS + _HEAD + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


_SETUP = """
ta = ss.shared.tile((BM, BK), ss.bfloat16, pad=8)
tb = ss.shared.tile((BK, BN), ss.bfloat16, pad=8)
o = ss.mma.out_tile(out, BM, BN, 16, 16)
warp = cuda.threadIdx.x // 32
r0 = cuda.blockIdx.y * BM
c0 = cuda.blockIdx.x * BN
acc0 = ss.mma.zeros()
acc1 = ss.mma.zeros()
"""

_FILL = """
    for w in thread.block_stride(ta):
        if r0 + w.row < a.shape[0] and k0 + w.col < a.shape[1]:
            ta[w] = a[r0 + w.row, k0 + w.col]
        else:
            ta[w] = 0
    for w in thread.block_stride(tb):
        if k0 + w.row < b.shape[0] and c0 + w.col < b.shape[1]:
            tb[w] = b[k0 + w.row, c0 + w.col]
        else:
            tb[w] = 0
"""

_COMPUTE = """
    fa = ss.mma.load_a(ta, (warp * 16, 0))
    fb0 = ss.mma.load_b(tb, (0, 0))
    fb1 = ss.mma.load_b(tb, (0, 8))
    acc0 = ss.mma.mma(fa, fb0, acc0)
    acc1 = ss.mma.mma(fa, fb1, acc1)
"""

_STORE = """
ss.mma.store(o, 0, 0, acc0)
ss.mma.store(o, 0, 1, acc1)
"""


def _gemm(
    fill: str = _FILL,
    compute: str = _COMPUTE,
    between: str = "    ss.block.sync()\n",
    after: str = "    ss.block.sync()\n",
    store: str = _STORE,
) -> str:
    loop = "for k0 in range(0, a.shape[1], BK):\n" + fill.strip("\n") + "\n" + between
    loop += compute.strip("\n") + "\n" + after
    return _k(_SETUP.strip("\n") + "\n" + loop + store.strip("\n"))


ACCEPTED = _gemm()

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "load-in-the-fill-phase": (
        _gemm(
            between="",
            compute=_COMPUTE.replace(
                "fa = ss.mma.load_a(ta, (warp * 16, 0))",
                "fa = ss.mma.load_a(ta, (warp * 16, 0))  # BAD",
            ),
        ),
        "shared tile `ta` is read by index at line",
    ),
    "fill-after-the-load-without-a-barrier": (
        _gemm(
            after="",
            fill=_FILL.replace(
                "ta[w] = a[r0 + w.row, k0 + w.col]", "ta[w] = a[r0 + w.row, k0 + w.col]  # BAD"
            ),
        ),
        "shared tile `ta` is read by index at line",
    ),
    "a-thread-private-array": (
        _k("p = cuda.local.array((16, 16), ss.bfloat16)\nf = ss.mma.load_a(p, (0, 0))  # BAD"),
        "mma.load_a reads a fragment from a 2D shared tile",
    ),
    "a-float32-tile": (
        _k(
            "t = ss.shared.tile((16, 16), np.float32)\n"
            "for w in thread.block_stride(t):\n"
            "    t[w] = a[w.row, w.col]\n"
            "ss.block.sync()\n"
            "f = ss.mma.load_a(t, (0, 0))  # BAD"
        ),
        "mma.load_a reads a 2D shared tile of ss.bfloat16 or np.float16",
    ),
    "an-unaligned-row-pitch": (
        _k(
            "t = ss.shared.tile((16, 16), ss.bfloat16, pad=1)\n"
            "for w in thread.block_stride(t):\n"
            "    t[w] = a[w.row, w.col]\n"
            "ss.block.sync()\n"
            "f = ss.mma.load_a(t, (0, 0))  # BAD"
        ),
        "a row pitch (columns + pad) that is a multiple of 8 elements",
    ),
    "b-given-as-a": (
        _gemm(
            compute=_COMPUTE.replace(
                "acc0 = ss.mma.mma(fa, fb0, acc0)", "acc0 = ss.mma.mma(fb0, fa, acc0)  # BAD"
            )
        ),
        "mma.mma(a, b, acc): a is an A fragment (mma.load_a)",
    ),
    "a-warp-tile-not-made-of-accumulators": (
        _gemm().replace(
            "o = ss.mma.out_tile(out, BM, BN, 16, 16)",
            "o = ss.mma.out_tile(out, BM, BN, 8, 16)  # BAD",
        ),
        "a warp's WM x WN tile is made of 16 x 8 accumulators",
    ),
    "a-second-route-to-the-output": (
        _gemm(store=_STORE + "\nout[thread.index_2d()] = np.float32(0)  # BAD"),
        "is also written by index here",
    ),
}

#: Uniformity (the compiled form decides): case -> (kernel source, fragment or None).
UNIFORMITY: dict[str, tuple[str, str | None]] = {
    "mma-under-a-lane-dependent-branch": (
        _gemm(
            compute=_COMPUTE.replace(
                "    acc0 = ss.mma.mma(fa, fb0, acc0)\n",
                "    if cuda.threadIdx.x % 32 < 16:\n"
                "        acc0 = ss.mma.mma(fa, fb0, acc0)  # BAD\n",
            )
        ),
        "`mma.mma` needs every thread of the warp to reach it",
    ),
    "load-under-a-lane-dependent-branch": (
        _gemm(
            compute=_COMPUTE.replace(
                "    fb0 = ss.mma.load_b(tb, (0, 0))\n",
                "    fb0 = ss.mma.load_b(tb, (0, 8))\n"
                "    if cuda.threadIdx.x % 2 == 0:\n"
                "        fb0 = ss.mma.load_b(tb, (0, 0))  # BAD\n",
            )
        ),
        "`mma.load_b` needs every thread of the warp to reach it",
    ),
    "mma-after-some-lanes-returned": (
        _gemm(
            store="if cuda.threadIdx.x == 3:\n"
            "    return\n"
            "acc1 = ss.mma.mma(fa, fb1, acc1)  # BAD\n" + _STORE
        ),
        "`mma.mma` needs every thread of the warp to reach it",
    ),
}

#: Accepted twins of the uniformity cases: the branch is uniform (a parameter, the shape).
ACCEPTED_TWINS: dict[str, str] = {
    "mma-under-a-uniform-branch": _gemm(
        compute=_COMPUTE.replace(
            "    acc0 = ss.mma.mma(fa, fb0, acc0)\n",
            "    if a.shape[1] > 0:\n        acc0 = ss.mma.mma(fa, fb0, acc0)\n",
        )
    ),
    "lane-dependent-values-not-control": _gemm(
        compute=_COMPUTE.replace(
            "fa = ss.mma.load_a(ta, (warp * 16, 0))",
            "fa = ss.mma.load_a(ta, (warp * 16 + (cuda.threadIdx.x % 2) * 0, 0))",
        )
    ),
}


# --------------------------------------------------------------- sim.check's meeting of lanes
# (tests/sim/test_mma_sim.py): the replay meets the lanes of one call, at its instruction,
# and that meeting orders no memory -- ldmatrix and mma.sync exchange registers.

#: Even lanes at one mma, odd lanes at the other, on one line: two calls, as on the GPU.
#: Expected: warp_mask (the replay met them as one exchange, each given the other's operands).
SIM_TERNARY = _gemm(
    compute=_COMPUTE.replace(
        "    acc0 = ss.mma.mma(fa, fb0, acc0)\n",
        "    acc0 = ss.mma.mma(fa, fb0, acc0) if cuda.threadIdx.x % 2 == 0 else "
        "ss.mma.mma(fa, fb1, acc0)\n",
    )
)
#: Its twin: the choice is the same in every lane. Expected: clean.
SIM_TERNARY_UNIFORM = SIM_TERNARY.replace("cuda.threadIdx.x % 2 == 0", "k0 >= 0")
#: A lane writes its element of a raw shared array, the warp meets at mma, the lane reads
#: its neighbour's. Expected: race (the replay met them at a syncwarp, which orders them).
SIM_ORDERS = _gemm(
    compute=_COMPUTE.replace(
        "    acc0 = ss.mma.mma(fa, fb0, acc0)\n",
        '    with ss.unsafe("SAFETY: each thread writes its own element of s"):\n'
        "        s = cuda.shared.array(64, np.int32)\n"
        "        s[cuda.threadIdx.x] = np.int32(k0)\n"
        "    acc0 = ss.mma.mma(fa, fb0, acc0)\n"
        '    with ss.unsafe("SAFETY: the neighbour\'s element, written before the mma"):\n'
        "        acc1 = (acc1[0] + np.float32(s[cuda.threadIdx.x ^ 1]),) + acc1[1:]\n",
    )
)
#: Its twin: a syncwarp orders the lanes' accesses. Expected: clean.
SIM_ORDERS_SYNCWARP = SIM_ORDERS.replace(
    "\n        acc0 = ss.mma.mma(fa, fb0, acc0)\n",
    "\n        acc0 = ss.mma.mma(fa, fb0, acc0)\n"
    '        with ss.unsafe("SAFETY: every lane of the warp meets"):\n'
    "            cuda.syncwarp()\n",
)
