"""``simtsafe.wgmma``: warpgroup tensor-core multiply-accumulate from swizzled shared tiles.

The accepted kernel ``k(out, a, b)`` is a small bf16 GEMM ``out = a @ b`` (fp32 out): one
warpgroup (a block of 128 threads) owns a 64 x 64 tile of ``out``; K is walked 64 at a time
through a swizzled tile pair filled by ``shared.fill_async``, read by ``wgmma.mma_async`` and
waited for (``wgmma.wait(acc, 0)``) before the next fill. Each refused kernel changes one
thing, at the line marked ``# BAD``; ``ACCEPTED_TWINS`` are the changes that stay safe.
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "ACCEPTED_TWINS", "GROUPS_COUNTED_APART", "REFUSED"]

_HEAD = (
    "@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1)))\n"
    "def k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[ss.bfloat16]) -> None:\n"
)

_TILES = (
    "ta = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)",
    "tb = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)",
)

_BODY = """
o = ss.wgmma.out_tile(out, 64, 64)
r0 = cuda.blockIdx.y * 64
c0 = cuda.blockIdx.x * 64
acc = ss.wgmma.zeros(64)
for k0 in range(0, a.shape[1], 64):
    ss.shared.fill_async(ta, a, (r0, k0))
    ss.shared.fill_async(tb, b, (k0, c0))
    ss.shared.commit_group()
    ss.shared.wait_group(0)
    ss.block.sync()
    acc = ss.wgmma.mma_async(ta, tb, acc)
    acc = ss.wgmma.wait(acc, 0)
    ss.block.sync()
done = ss.wgmma.wait(acc, 0)
ss.wgmma.store(o, done)
"""


def _k(body: str = _BODY, tiles: tuple[str, ...] = _TILES, head: str = _HEAD) -> str:
    lines = [*tiles, *body.strip("\n").splitlines()]
    return head + "".join(f"    {line}\n" for line in lines)


def _swap(old: str, new: str, body: str = _BODY) -> str:
    assert old in body, old
    return _k(body.replace(old, new, 1))


ACCEPTED = _k()

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    # the group may still read ta/tb when the next iteration refills them
    "refill_in_flight": (
        _swap("acc = ss.wgmma.wait(acc, 0)", "acc = ss.wgmma.wait(acc, 1)  # BAD"),
        "is read by a wgmma group still in flight (wgmma.mma_async)",
    ),
    # no wait at all in the loop: every group in flight at the next fill
    "never_waited": (
        _swap("    acc = ss.wgmma.wait(acc, 0)\n", "    pass  # BAD\n"),
        "is read by a wgmma group still in flight (wgmma.mma_async)",
    ),
    # read before the copies have landed
    "read_before_wait": (
        _swap("    ss.shared.wait_group(0)\n", "    pass  # BAD\n"),
        "filled asynchronously",
    ),
    # the warpgroup's instruction under a thread-dependent branch
    "divergent": (
        _swap(
            "acc = ss.wgmma.mma_async(ta, tb, acc)",
            "if cuda.threadIdx.x < 64:  # BAD\n        acc = ss.wgmma.mma_async(ta, tb, acc)",
        ),
        "wgmma.mma_async",
    ),
    "element_read": (
        _swap("ss.block.sync()\n    acc", "ss.block.sync()\n    x = ta[0, 0]  # BAD\n    acc"),
        "an element read on a swizzled shared tile",
    ),
    "element_store": (
        _swap(
            "ss.shared.fill_async(ta, a, (r0, k0))",
            "for w in thread.block_stride(ta):  # BAD\n        ta[w] = a[0, 0]",
        ),
        "on a swizzled shared tile",
    ),
    "fragment_load": (
        _swap(
            "acc = ss.wgmma.mma_async(ta, tb, acc)",
            "f = ss.mma.load_a(ta, (0, 0))  # BAD\n    acc = ss.wgmma.mma_async(ta, tb, acc)",
        ),
        "mma.load_a on a swizzled shared tile",
    ),
    "columns_not_64": (
        _k(tiles=("ta = ss.shared.tile((64, 32), ss.bfloat16, swizzle=128)  # BAD", _TILES[1])),
        "columns a multiple of 64",
    ),
    "no_exact_block": (
        _k(head=_HEAD.replace(", block=(128, 1, 1)", "")),
        "needs the contract's exact block",
    ),
    "more_warpgroups_than_rows": (
        _k(head=_HEAD.replace("block=(128, 1, 1)", "block=(256, 1, 1)")),
        "at most 1 of them",
    ),
    "store_pending": (
        _swap(
            "ss.wgmma.store(o, done)",
            "pending = ss.wgmma.mma_async(ta, tb, done)\nss.wgmma.store(o, pending)  # BAD",
        ),
        "wgmma.store(o, acc): acc is the thread's part of a 64 x 64 accumulator",
    ),
    "tile_to_helper": (
        "@ss.device\ndef peek(t: ss.SharedTile[ss.bfloat16, ss.Local2D]) -> None:\n    pass\n\n\n"
        + _swap("ss.block.sync()\n    acc", "ss.block.sync()\n    peek(ta)  # BAD\n    acc"),
        "a swizzled shared tile",
    ),
    "vec_load": (
        _swap(
            "ss.block.sync()\n    acc",
            "ss.block.sync()\n    v = ss.vec.load(ta, (0, 0), 8)  # BAD\n    acc",
        ),
        "vec.load on a swizzled shared tile",
    ),
    "len": (
        _swap("ss.block.sync()\n    acc", "ss.block.sync()\n    n = len(ta)  # BAD\n    acc"),
        "len() on a swizzled shared tile",
    ),
    "pending_read": (
        _swap(
            "acc = ss.wgmma.wait(acc, 0)\n",
            "x = acc[0]  # BAD\n    acc = ss.wgmma.wait(acc, 0)\n",
        ),
        "take its values with acc = wgmma.wait(acc, 0) first",
    ),
    "zeros_odd_width": (
        _swap("acc = ss.wgmma.zeros(64)", "acc = ss.wgmma.zeros(96)  # BAD"),
        "one of (64, 128, 192, 256)",
    ),
}

#: case -> a kernel that changes what a refused case changes, and stays safe
ACCEPTED_TWINS: dict[str, str] = {
    # one group left in flight, refilling only after it is waited for (wait 1 then 0)
    "refill_in_flight": _swap(
        "acc = ss.wgmma.wait(acc, 0)",
        "acc = ss.wgmma.wait(acc, 1)\n    acc = ss.wgmma.wait(acc, 0)",
    ),
    # a block-uniform branch
    "divergent": _swap(
        "acc = ss.wgmma.mma_async(ta, tb, acc)",
        "if a.shape[1] > 0:\n        acc = ss.wgmma.mma_async(ta, tb, acc)",
    ),
    # the synchronous form needs no wait
    "never_waited": _swap(
        "acc = ss.wgmma.mma_async(ta, tb, acc)\n    acc = ss.wgmma.wait(acc, 0)",
        "acc = ss.wgmma.mma(ta, tb, acc)",
    ),
    # element access of a tile without swizzle=
    "element_read": _swap(
        "ss.block.sync()\n    acc",
        "ss.block.sync()\n    x = tc[0, 0]\n    acc",
    ).replace(
        "    ta = ss.shared.tile",
        "    tc = ss.shared.tile((8, 8), np.float32)\n    ta = ss.shared.tile",
        1,
    ),
}


#: Found by an outside attack round: a commit of one kind of group aged the other kind's, so
#: a wgmma group looked done one wait early (and a copy looked landed one wait early). Each
#: refused, by the compiled form alone too (tests/ptx/test_wgmma_ptx.py).
GROUPS_COUNTED_APART: dict[str, tuple[str, str]] = {
    # an empty copy group closed between a wgmma issue and wait(p, 1): the group is pending
    "copy_commit_between_issue_and_wait": (
        "@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1)))\ndef k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[ss.bfloat16]) -> None:\n    ta = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    tb = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    tc = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    td = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    o = ss.wgmma.out_tile(out, 64, 64)\n    r0 = cuda.blockIdx.y * 64\n    c0 = cuda.blockIdx.x * 64\n\n    ss.shared.fill_async(ta, a, (r0, 0))\n    ss.shared.fill_async(tb, b, (0, c0))\n    ss.shared.fill_async(tc, a, (r0, 64))\n    ss.shared.fill_async(td, b, (64, c0))\n    ss.shared.commit_group()\n    ss.shared.wait_group(0)\n    ss.block.sync()\n\n    p = ss.wgmma.mma_async(ta, tb, ss.wgmma.zeros(64))\n    ss.shared.commit_group()\n    p = ss.wgmma.wait(p, 1)\n    ss.block.sync()\n    ss.shared.fill_async(ta, a, (r0, 64))\n    ss.shared.commit_group()\n    acc = ss.wgmma.wait(p, 0)\n    ss.shared.wait_all()\n    ss.wgmma.store(o, acc)\n",
        "is read by a wgmma group still in flight (wgmma.mma_async)",
    ),
    # double buffering with the group issued before the step's fills, one left in flight
    "double_buffer_issue_first": (
        "@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1)))\ndef k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[ss.bfloat16]) -> None:\n    ta = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    tb = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    tc = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    td = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    o = ss.wgmma.out_tile(out, 64, 64)\n    r0 = cuda.blockIdx.y * 64\n    c0 = cuda.blockIdx.x * 64\n\n    acc = ss.wgmma.zeros(64)\n    ss.shared.fill_async(ta, a, (r0, 0))\n    ss.shared.fill_async(tb, b, (0, c0))\n    ss.shared.commit_group()\n    for k0 in range(0, a.shape[1], 128):\n        ss.shared.wait_group(0)\n        ss.block.sync()\n        acc = ss.wgmma.mma_async(ta, tb, acc)\n        ss.shared.fill_async(tc, a, (r0, k0 + 64))\n        ss.shared.fill_async(td, b, (k0 + 64, c0))\n        ss.shared.commit_group()\n        acc = ss.wgmma.wait(acc, 1)\n        ss.shared.wait_group(0)\n        ss.block.sync()\n        acc = ss.wgmma.mma_async(tc, td, acc)\n        ss.shared.fill_async(ta, a, (r0, k0 + 128))\n        ss.shared.fill_async(tb, b, (k0 + 128, c0))\n        ss.shared.commit_group()\n        acc = ss.wgmma.wait(acc, 1)\n\n    done = ss.wgmma.wait(acc, 0)\n    ss.shared.wait_all()\n    ss.wgmma.store(o, done)\n",
        "is read by a wgmma group still in flight (wgmma.mma_async)",
    ),
    # a wgmma issue between a fill's commit and wait_group(1): the fill's copies are pending
    "wgmma_issue_between_commit_and_wait": (
        "@ss.kernel(contract=ss.LaunchContract(domain=2, block=(128, 1, 1)))\ndef k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[ss.bfloat16]) -> None:\n    ta = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    tb = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    tc = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    td = ss.shared.tile((64, 64), ss.bfloat16, swizzle=128)\n    o = ss.wgmma.out_tile(out, 64, 64)\n    r0 = cuda.blockIdx.y * 64\n    c0 = cuda.blockIdx.x * 64\n\n    ss.shared.fill_async(tc, a, (r0, 64))\n    ss.shared.fill_async(td, b, (64, c0))\n    ss.shared.commit_group()\n    ss.shared.wait_group(0)\n    ss.block.sync()\n    ss.shared.fill_async(ta, a, (r0, 0))\n    ss.shared.fill_async(tb, b, (0, c0))\n    ss.shared.commit_group()\n    p = ss.wgmma.mma_async(tc, td, ss.wgmma.zeros(64))\n    ss.shared.wait_group(1)\n    ss.block.sync()\n    acc = ss.wgmma.mma(ta, tb, ss.wgmma.wait(p, 0))\n    ss.wgmma.store(o, acc)\n",
        "filled asynchronously",
    ),
}
