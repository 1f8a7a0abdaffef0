"""The single-pass inclusive scan: decoupled look-back (Merrill & Garland), in simtsafe's Tier 2.

One block per tile of ``TILE = BLOCK x RUNS x 4 = 256 x 8 x 4 = 8192`` elements, in the order
blocks *start*: thread 0 takes the tile number from an atomic counter (``ctl[0]``), so tile
``t``'s block started after the blocks of tiles ``0 .. t-1`` took theirs. A block waits only
for tiles below its own, which are held by running blocks that wait only for tiles below
theirs: whatever order the hardware schedules blocks in, the waits end (tile 0 waits for
nothing).

The library's schedule (``_make_scan_staged``; its docstring says why), per tile:

1. ``shared.fill_async`` copies the tile into a shared tile (32 KB): 16-byte ``cp.async``
   runs, each warp instruction 512 bytes in a row; no register holds a value in flight.
2. After ``wait_all`` and a barrier, lane ``l`` of warp ``w`` reads runs ``w*32*RUNS + 32*j
   + l`` of the shared tile (``ld.shared.v4``) and keeps, per run, the sum of its warp's
   chunk before it (``warp.scan``, ``warp.sum``); ``block.scan`` of the warps' totals gives
   each warp its offset and the last thread the tile's aggregate.
3. The last warp alone: its lane 31 publishes the aggregate in the tile's status word,
   ``status[t] = flag << 32 | bits(value)`` with flag ``AGGREGATE`` (``PREFIX`` for tile 0),
   one 64-bit atomic exchange, so flag and value travel together and no fence is needed;
   the warp reads the 32 status words below the window's end (one 64-bit atomic read per
   lane), ``warp.max`` of a key per lane finds the nearest inclusive prefix and whether a
   tile above it has published nothing yet (then only those words are read again),
   ``warp.sum`` adds the values from the prefix up; without a prefix in the window, the
   window moves 32 tiles down (below tile 0: a prefix of 0). Lane 31 publishes the tile's
   inclusive prefix and hands the exclusive one to the block through one shared word.
4. After a barrier, each lane reads its runs from the shared tile again and writes the
   running sums (``vec.store_at``: one 16-byte store per run when aligned).

Status values are 32-bit: float32 values cross into the word's low half by their bits,
punned through the block's dynamic shared memory (one 4-byte slot per lane of the look-back
warp, written and read by that lane only). int64/float64 would need a 128-bit word or
separate words with fences: not built.

The scratch (``status`` zeroed for the tiles of the launch, ``ctl[0] = 0``) is reset by
``reset_scratch`` on the same stream before every scan (``simtsafe.lib._scan``).

Another schedule, kept for benchmarks/primitives.py to measure beside the library's:

- ``_make_scan`` (the library's until issue 20's tuning; ``OLD_TILE = 256 x 16``): each
  lane loads four 16-byte runs into registers, the look-back by threads 0..31 with
  block-wide reductions (two barriers per window read); ``persistent=True``: a fixed grid
  whose blocks take tile after tile, each taking its next tile number while it works on the
  current one. Waits still end: a block finishes its current tile, which waits only for
  smaller numbers, before it starts the next.

A third, the runs in registers with the look-back by one warp (as the library's), measured
87.4% / 92.8% of the copy ceiling for int32 on an H100 (256 x 4 / 128 x 8;
benchmarks/results/primitives_scan_h100.md) and was removed.
"""

from functools import cache
from typing import Any, Final, NamedTuple

import numpy as np
from numba import cuda

from .. import block, shared, thread, vec, warp
from .._compose import device, kernel
from .._unsafe import unsafe
from .._views import DisjointSlice, In
from ..host._contract import LaunchContract
from ..lowering._compat import SIMULATOR

#: The library's schedule (``_make_scan_staged``): threads per block (a multiple of 32),
#: 16-byte runs per lane. On Numba's simulator, which runs a Python thread per CUDA thread
#: and polls them all while any is waiting, a block of 64 (two warps: the look-back warp
#: and another, so the hand-off and ``block.scan`` still cross warps): the same code, a
#: scan 4 times cheaper to simulate (the PTX and GPU tests take the 256 threads).
BLOCK = 64 if SIMULATOR else 256
RUNS = 8
RUN: Final = 4  # elements per run (4-byte elements)
TILE = BLOCK * RUNS * RUN  # elements per tile: 8192
WINDOW = 32  # predecessors read per look-back step (one warp)
LOOK_SLOTS = WINDOW  # punning slots: one per lane of the look-back warp
SLOT_BYTES = LOOK_SLOTS * 4  # the library kernel's dynamic shared memory
#: The library kernel's register cap: 48 x 256 threads leaves 5 blocks (160 KB of tiles) per
#: multiprocessor of 64K registers; nvJitLink (CUDA 13, sm_90) fits int32 and float32 in 48
#: without a spill (uncapped, int32 takes 56: 4 blocks).
MAX_REGISTERS = 48

#: The old schedule (``_make_scan``), measured by benchmarks/primitives.py.
OLD_BLOCK = 64 if SIMULATOR else 256  # as BLOCK: 64 on the simulator
OLD_RUNS = 4
OLD_TILE = OLD_BLOCK * OLD_RUNS * RUN  # 4096 (1024 on the simulator)
OLD_SLOT_BYTES = OLD_BLOCK * 4  # one 4-byte punning slot per thread

#: Flags of a tile's status word (its high 32 bits).
INVALID = 0  # nothing published yet
AGGREGATE = 1  # the low half is the tile's own sum
PREFIX = 2  # the low half is the sum of tiles 0..t (the inclusive prefix)

LOW = 0xFFFFFFFF
U32 = np.dtype(np.uint32)

#: Element types the scan supports (their values fit the status word's low half).
DTYPES = (np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.float32))


@device
def load_run(x: In[Any], r: int) -> tuple[Any, ...]:
    """Run ``r`` of ``x`` (4 elements; 0 past the end).

    Read in a helper, not in the kernel: the launch's alignment check (a
    speed check on runs read by the kernel itself) would refuse a valid
    misaligned view, which the library accepts and reads element by element.
    """
    return vec.load(x, r, RUN)


@device
def store_run(raw: Any, r: int, p: Any, v: tuple[Any, ...]) -> None:
    """Write the running sums ``p + v[0]``, ``p + v[0] + v[1]``, ... into run ``r`` of ``raw``."""
    v0 = p + v[0]
    v1 = v0 + v[1]
    v2 = v1 + v[2]
    with unsafe(
        "SAFETY: run r of out belongs to this thread alone: every caller passes a run of "
        "the tile its block won from the atomic counter (tile numbers are distinct), the "
        "same run of the tile the lane read its values from, and the lanes and warps of a "
        "block are given distinct runs of the tile (run w * 32 * runs + 32 * j + lane of "
        "tile t, in out: t * runs per tile + that). vec.store_at writes nothing outside out."
    ):
        vec.store_at(raw, r, (v0, v1, v2, v2 + v[3]))


def _make_scan(dt: np.dtype[Any], *, persistent: bool = False, **options: Any) -> Any:
    """The old scan kernel for element type ``dt`` (int32, uint32 or float32): benchmarks.

    ``OLD_BLOCK`` threads, ``OLD_TILE`` elements per tile, ``OLD_SLOT_BYTES`` of dynamic
    shared memory. One tile per block (the library's until issue 20's tuning), or, ``persistent=True``, a fixed grid whose
    blocks take tile after tile until none is left, each block taking its next tile
    number while it works on the current one (the atomic's latency hidden). ``options``
    are ``@simtsafe.kernel``'s compile options (``max_registers=48``...).
    benchmarks/primitives.py builds variants with these.
    """
    DT = dt.type  # noqa: N806 - the element type, a constructor
    DTYPE = dt  # noqa: N806 - for shared-array declarations
    PERSISTENT = persistent  # noqa: N806 - a compile-time constant
    requires = ["out.size == x.size", "ctl.size >= 1", f"status.size * {OLD_TILE} >= x.size"]
    if not persistent:
        requires.append(f"grid.x * {OLD_TILE} >= x.size")  # a block per tile

    @kernel(
        contract=LaunchContract(
            domain=1,
            block=OLD_BLOCK,
            dynamic_shared=OLD_SLOT_BYTES,
            requires=requires,
        ),
        **options,
    )
    def scan_tiles(
        out: DisjointSlice[DT],  # type: ignore[valid-type]  # the factory's element type
        x: In[DT],  # type: ignore[valid-type]
        status: DisjointSlice[np.uint64],
        ctl: DisjointSlice[np.int32],
    ) -> None:
        tid = cuda.threadIdx.x
        lane = tid % 32
        wid = tid // 32  # the warp
        taken = np.int32(0)
        with unsafe(
            "SAFETY: thread 0 of each block alone adds 1 to ctl[0] (ctl.size >= 1 by the "
            "contract) and keeps the old value: an atomic, so the blocks get the tile numbers "
            "0, 1, 2, ... once each, in the order they reach this line"
        ):
            if tid == 0:
                taken = cuda.atomic.add(ctl.unchecked, 0, 1)
        tile = block.broadcast(taken)
        # Tiles past the data or the status words (more blocks than tiles, a counter not
        # reset, or one started below 0) are not processed: every index below stays inside
        # x, out and status.
        limit = min((x.size + OLD_TILE - 1) // OLD_TILE, status.size)
        while tile >= 0 and tile < limit:  # a counter started below 0: nothing either
            nxt = np.int32(0)
            if PERSISTENT:
                with unsafe(
                    "SAFETY: as above, thread 0 alone takes the block's next tile number now. "
                    "Waits still end: every tile number taken belongs to a running block, "
                    "which finishes its current tile (waiting only for smaller numbers) "
                    "before it starts the next; so the smallest unfinished tile is always "
                    "being worked on and finishes"
                ):
                    if tid == 0:
                        nxt = cuda.atomic.add(ctl.unchecked, 0, 1)
            # 1. Four runs per lane, warp-striped: each warp instruction reads 512 bytes in a row.
            r = tile * (OLD_BLOCK * OLD_RUNS) + wid * (32 * OLD_RUNS) + lane
            a: tuple[Any, ...] = load_run(x, r)
            b = load_run(x, r + 32)
            c = load_run(x, r + 64)
            d = load_run(x, r + 96)
            # 2. Scans: runs in the warp (inclusive), run totals, the warp's offset in the tile.
            sa = DT(DT(a[0] + a[1]) + DT(a[2] + a[3]))
            sb = DT(DT(b[0] + b[1]) + DT(b[2] + b[3]))
            sc = DT(DT(c[0] + c[1]) + DT(c[2] + c[3]))
            sd = DT(DT(d[0] + d[1]) + DT(d[2] + d[3]))
            ia = warp.scan(sa)
            ib = warp.scan(sb)
            ic = warp.scan(sc)
            id_ = warp.scan(sd)
            ob = warp.sum(sa)  # offset of run b in the warp's chunk
            oc = DT(ob + warp.sum(sb))
            od = DT(oc + warp.sum(sc))
            wsum = DT(od + warp.sum(sd))
            upto = block.scan(
                wsum if lane == 0 else DT(0)
            )  # warps 0..wid; the tile's sum in the last
            # 3. Publish the aggregate (tile 0: its inclusive prefix).
            with unsafe(
                "SAFETY: vals and bits are the same dynamic shared memory (the contract's "
                "OLD_BLOCK * 4 bytes, one 4-byte slot per thread); thread t writes and reads only "
                "slot t, so no other thread touches it. The last thread alone writes status[tile] "
                "(0 <= tile < status.size, checked above; no other block has this tile number) "
                "with one 64-bit atomic exchange: flag and value are one word, readers see both or neither."
            ):
                vals = cuda.shared.array(0, DTYPE)
                bits = cuda.shared.array(0, U32)
                if tid == OLD_BLOCK - 1:
                    vals[tid] = upto
                    flag = AGGREGATE if tile > 0 else PREFIX
                    word = (np.uint64(flag) << np.uint64(32)) | np.uint64(bits[tid])
                    cuda.atomic.exch(status.unchecked, tile, word)
            # 4. Look back over the tiles before this one, 32 at a time.
            excl = DT(0)
            end = tile  # the window is tiles end - 32 .. end - 1
            while end > 0:
                key = 0  # 0: an aggregate; 2k+1: a prefix at lane k; 2k+2: nothing yet at lane k
                val = DT(0)
                with unsafe(
                    "SAFETY: threads 0..31 each read one status word, j = end - 32 + tid < tile "
                    "<= status.size, with an atomic (a relaxed read that sees each 64-bit word "
                    "whole; two atomics never race); j < 0 stands for a prefix of 0 before tile 0. "
                    "Slot tid of vals/bits is this thread's own (see above)."
                ):
                    if tid < WINDOW:
                        j = end - WINDOW + tid
                        word = np.uint64(PREFIX) << np.uint64(32)
                        if j >= 0:
                            word = cuda.atomic.or_(status.unchecked, j, np.uint64(0))
                        state = word >> np.uint64(32)
                        bits[tid] = np.uint32(word & np.uint64(LOW))
                        val = vals[tid]
                        if state == PREFIX:
                            key = 2 * tid + 1
                        elif state == INVALID:
                            key = 2 * tid + 2
                top = block.max(key)
                if top == 0 or top % 2 == 1:  # no tile above the nearest prefix is missing
                    first = (top - 1) // 2 if top > 0 else 0
                    part = val if tid < WINDOW and tid >= first else DT(0)
                    excl = DT(excl + block.sum(part))
                    if top > 0:
                        break  # reached an inclusive prefix
                    end -= WINDOW
                # else: a tile above the nearest prefix has published nothing yet: read again
            # 5. Publish the inclusive prefix.
            with unsafe(
                "SAFETY: as in step 3: the last thread alone writes status[tile] (tile > 0 here; "
                "tile 0 published its prefix in step 3), through its own punning slot"
            ):
                if tid == OLD_BLOCK - 1 and tile > 0:
                    vals[tid] = DT(excl + upto)
                    word = (np.uint64(PREFIX) << np.uint64(32)) | np.uint64(bits[tid])
                    cuda.atomic.exch(status.unchecked, tile, word)
            # 6. This lane's four runs: the tile's prefix + the warp's + the run's in the warp.
            pre = DT(excl + DT(upto - wsum))
            with unsafe("SAFETY: out.unchecked is passed to store_run, whose reason applies"):
                store_run(out.unchecked, r, DT(pre + DT(ia - sa)), a)
                store_run(out.unchecked, r + 32, DT(pre + DT(ob + DT(ib - sb))), b)
                store_run(out.unchecked, r + 64, DT(pre + DT(oc + DT(ic - sc))), c)
                store_run(out.unchecked, r + 96, DT(pre + DT(od + DT(id_ - sd))), d)
            if not PERSISTENT:
                break  # one tile per block
            tile = block.broadcast(nxt)

    return scan_tiles


class Schedule(NamedTuple):
    """A scan kernel and the launch it needs: ``grid = ceil(n / tile)`` blocks of ``block``."""

    kernel: Any
    block: int
    tile: int  # elements per tile (per block)
    shared: int  # dynamic shared memory bytes


def _make_scan_staged(
    dt: np.dtype[Any], *, threads: int = 256, runs: int = 8, **options: Any
) -> Schedule:
    """The single-pass scan with the tile staged in shared memory by ``cp.async`` (the library's).

    What limits a decoupled look-back scan is not the bytes a block moves but how long its
    tile lives: the tile number's atomic, the loads, the barriers, the look-back's round
    trips. The throughput is the bytes of the tiles resident on a multiprocessor over that
    life, so the schedule keeps tiles large and resident without registers holding them:

    1. thread 0 takes the tile number from the counter (as ``_make_scan``);
    2. ``shared.fill_async`` copies the whole tile (``threads * runs * 4`` elements) into a
       shared tile: 16-byte ``cp.async.cg`` runs, thread ``tid`` copying runs ``tid, tid +
       threads, ...`` (a warp's copy instruction covers 512 bytes in a row), in flight with
       no register waiting for them; ``wait_all`` and a barrier;
    3. lane ``l`` of warp ``w`` reads runs ``w * 32 * runs + 32 * j + l`` of the tile
       (``ld.shared.v4``, no bank conflict) and keeps only, per run, the sum of the warp's
       chunk before it (``warp.scan``, ``warp.sum``); the warps' totals by ``block.scan``;
    4. the last warp publishes the tile's aggregate (lane 31), looks back 32 tiles at a time
       and publishes the inclusive prefix: the 32 status words read at once, ``warp.max``
       and ``warp.sum`` in place of block-wide reductions (no block barrier per retry), a
       retry reading again only the words that had nothing published (a published word is
       final or only changes from a tile's aggregate to its prefix; each read is an atomic
       read-modify-write, which the L2 serializes with every other access to the word, so
       a spinning warp does not hammer its 32 predecessors); the exclusive prefix
       reaches the other warps through one shared word and a barrier;
    5. each lane reads its runs from the shared tile again and writes the running sums
       (``st.global.v4`` per run when ``out`` is 16-byte aligned).

    Registers hold a run at a time and ``runs`` partial sums, so a tile of 8192 elements
    (256 threads x 8 runs, 32 KB of shared memory) leaves room for several blocks per
    multiprocessor. The waits end for the reasons ``_make_scan`` gives (tile numbers in
    start order). ``options`` are ``@simtsafe.kernel``'s compile options.
    """
    DT = dt.type  # noqa: N806 - the element type, a constructor
    DTYPE = dt  # noqa: N806 - for shared-array declarations
    if threads % 32 or not 64 <= threads <= 1024 or runs < 1 or threads * runs * 16 > 40 * 1024:
        raise ValueError(
            f"threads {threads} (a multiple of 32, 64..1024), runs {runs} (>= 1), "
            "threads * runs * 16 bytes <= 40 KiB (a static shared tile, under the 48 KiB limit)"
        )
    BLK = threads  # noqa: N806 - compile-time constants
    RNS = runs  # noqa: N806
    TL = threads * runs * RUN  # noqa: N806 - elements per tile
    TR = threads * runs  # noqa: N806 - 16-byte runs per tile
    LAST = threads - 1  # noqa: N806 - the look-back warp's lane 31
    LOOKER = threads // 32 - 1  # noqa: N806 - the look-back warp
    requires = [
        "out.size == x.size",
        "ctl.size >= 1",
        f"status.size * {TL} >= x.size",
        f"grid.x * {TL} >= x.size",
    ]

    @kernel(
        contract=LaunchContract(
            domain=1,
            block=BLK,
            dynamic_shared=LOOK_SLOTS * 4,
            min_compute_capability=(8, 0),  # cp.async
            requires=requires,
        ),
        **options,
    )
    def scan_tiles_staged(
        out: DisjointSlice[DT],  # type: ignore[valid-type]  # the factory's element type
        x: In[DT],  # type: ignore[valid-type]
        status: DisjointSlice[np.uint64],
        ctl: DisjointSlice[np.int32],
    ) -> None:
        tid = cuda.threadIdx.x
        lane = tid % 32
        wid = tid // 32
        taken = np.int32(0)
        with unsafe(
            "SAFETY: thread 0 of each block alone adds 1 to ctl[0] (ctl.size >= 1 by the "
            "contract) and keeps the old value: an atomic, so the blocks get the tile numbers "
            "0, 1, 2, ... once each, in the order they reach this line"
        ):
            if tid == 0:
                taken = cuda.atomic.add(ctl.unchecked, 0, 1)
        tile: Any = block.broadcast(taken)
        limit = min((x.size + TL - 1) // TL, status.size)
        # Tiles past the data or the status words, or below 0 (a counter that did not start at
        # 0: the contract cannot require its value): nothing to do.
        if tile >= 0 and tile < limit:
            # 2. The whole tile into shared memory, 16-byte cp.async runs (0 past x's end).
            t = shared.tile(TL, DT)
            shared.fill_async(t, x, tile * TL)
            shared.wait_all()
            block.sync()
            # 3. pre[j]: the sum of the warp's chunk before run j of this lane.
            r = wid * (32 * RNS) + lane  # this lane's first run in the tile
            pre = cuda.local.array(RNS, DTYPE)
            wsum = DT(0)
            for j in range(RNS):
                v: tuple[Any, ...] = vec.load(t, r + 32 * j, 4)
                s = DT(DT(v[0] + v[1]) + DT(v[2] + v[3]))
                pre[j] = DT(wsum + DT(warp.scan(s) - s))
                wsum = DT(wsum + warp.sum(s))
            upto = block.scan(wsum if lane == 0 else DT(0))  # warps 0..wid; the tile's in LAST
            excl = DT(0)
            with unsafe(
                "SAFETY: vals and bits are the same dynamic shared memory (the contract's "
                "32 4-byte slots); only the look-back warp (the last) touches them, lane l "
                "slot l alone. It reads status words j = end - 32 + lane < tile <= "
                "status.size, each with an atomic (a relaxed read that sees each 64-bit word "
                "whole; two atomics never race); j < 0 stands for a prefix of 0 before tile 0. "
                "Thread LAST alone writes status[tile] (0 <= tile < status.size, checked above; no "
                "other block has this tile number), each time with one 64-bit atomic exchange: "
                "flag and value are one word, readers see both or neither. Thread LAST alone "
                "writes xs[0] before the barrier below; every thread reads it after."
            ):
                vals = cuda.shared.array(0, DTYPE)
                bits = cuda.shared.array(0, U32)
                xs = cuda.shared.array(1, DTYPE)
                if (
                    warp.broadcast(wid) == LOOKER
                ):  # (a warp collective: warp-uniform to the analysis)
                    # 4. Publish the aggregate (tile 0: its inclusive prefix).
                    if tid == LAST:
                        vals[lane] = upto
                        flag = AGGREGATE if tile > 0 else PREFIX
                        word = (np.uint64(flag) << np.uint64(32)) | np.uint64(bits[lane])
                        cuda.atomic.exch(status.unchecked, tile, word)
                    # Look back, 32 tiles at a time, this warp alone.
                    end = tile
                    word = np.uint64(0)
                    again = True  # this lane's word is read (again): new window, or unpublished
                    while end > 0:
                        j = end - WINDOW + lane
                        if again:
                            word = np.uint64(PREFIX) << np.uint64(32)
                            if j >= 0:
                                word = cuda.atomic.or_(status.unchecked, j, np.uint64(0))
                        state = word >> np.uint64(32)
                        again = state == INVALID
                        bits[lane] = np.uint32(word & np.uint64(LOW))
                        val = vals[lane]
                        key = 0  # 0: an aggregate; 2k+1: a prefix at lane k; 2k+2: nothing yet
                        if state == PREFIX:
                            key = 2 * lane + 1
                        elif state == INVALID:
                            key = 2 * lane + 2
                        top = warp.max(key)
                        if top == 0 or top % 2 == 1:  # nothing missing above the nearest prefix
                            first = (top - 1) // 2 if top > 0 else 0
                            excl = DT(excl + warp.sum(val if lane >= first else DT(0)))
                            if top > 0:
                                break  # reached an inclusive prefix
                            end -= WINDOW
                            again = True
                    # Publish the inclusive prefix; hand the exclusive one to the block.
                    if tid == LAST:
                        xs[0] = excl
                        if tile > 0:
                            vals[lane] = DT(excl + upto)
                            word = (np.uint64(PREFIX) << np.uint64(32)) | np.uint64(bits[lane])
                            cuda.atomic.exch(status.unchecked, tile, word)
            block.sync()
            with unsafe("SAFETY: xs[0] was written by thread LAST before the barrier above"):
                excl = xs[0]
            # 5. This lane's runs again: the tile's prefix + the warp's + the run's in the warp.
            base = DT(excl + DT(upto - wsum))
            first_run = tile * TR + r  # this lane's first run in out
            for j in range(RNS):
                v = vec.load(t, r + 32 * j, 4)
                with unsafe("SAFETY: out.unchecked is passed to store_run, whose reason applies"):
                    store_run(out.unchecked, first_run + 32 * j, DT(base + pre[j]), v)

    return Schedule(scan_tiles_staged, threads, TL, LOOK_SLOTS * 4)


#: dtype -> the library's scan kernel of that element type (``BLOCK`` threads, ``TILE``
#: elements per block, ``SLOT_BYTES`` of dynamic shared memory).
SCAN = {
    dt: _make_scan_staged(dt, threads=BLOCK, runs=RUNS, max_registers=MAX_REGISTERS).kernel
    for dt in DTYPES
}


@cache
def scan_before_sm80(dt: np.dtype[Any]) -> Schedule:
    """The library's schedule on a GPU older than compute capability 8.0 (no ``cp.async``):
    the old one (``_make_scan``, its runs in registers), made on first use."""
    return Schedule(_make_scan(dt), OLD_BLOCK, OLD_TILE, OLD_SLOT_BYTES)


@kernel(contract=LaunchContract(domain=1, block=BLOCK, requires=["ctl.size >= 1"]))
def reset_scratch(
    status: DisjointSlice[np.uint64], ctl: DisjointSlice[np.int32], tiles: np.int64
) -> None:
    """Zero ``status[:tiles]`` (every tile: nothing published) and ``ctl[0]`` (the counter)."""
    i = thread.index_1d()
    if i.index < tiles:
        status[i] = np.uint64(0)
    ctl[i] = np.int32(0)  # thread 0 only: ctl has one element
