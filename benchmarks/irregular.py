"""Irregular work: ownership won by atomics (issue 19), simtsafe next to raw Numba and CuPy.

    python benchmarks/irregular.py [--reps 20] [--size full|tiny] [--parts compaction,hash,tsdf]

Parts (side by side in one run, each row checked against numpy first):

| part | problem | simtsafe | against |
|---|---|---|---|
| compaction | keep ``x > t`` of 2^26 float32 normals (t = 0: half kept, t = 1.28: a tenth) | ``examples/compact.py``: ``compact`` (``out.block_claim(keep)``: one atomic per block and round), and ``compact_warp`` (``out.claim()``: one per warp) | raw Numba, same schedules (``compact_block_raw``: ballot, shared exchange, two barriers by hand; ``compact_aggregated_raw``: ``activemask``/``shfl_sync`` by hand); CuPy ``x[x > t]`` |
| hash insert | 2^24 slots of uint32 keys + float32 values, load factor 0.5 and 0.9 (distinct random keys) | ``keys.insert(k)``, ``vals[w] = v`` | raw Numba, same probe (a load, then ``cuda.atomic.cas`` at an empty slot) |
| hash find | every inserted key looked up in the filled table | ``simtsafe.hashing.find`` | raw Numba, same probe |
| tsdf alloc | hash-blocked TSDF fusion (``examples/tsdf``), 640x480 depth frames, 5 mm voxels: the blocks of one frame inserted into an empty table sized for load 0.071, 0.5 and 0.9; and one frame into the table that already holds every frame's blocks (steady state: all found) | ``kernels.allocate`` (``keys.insert``, then ``blocks.claim()`` by the inserting call) | ``raw.allocate_raw``: the same DDA and probe, ``cuda.atomic.cas``, one ``cuda.atomic.add`` per new block |
| tsdf integrate | one frame into every allocated block | ``kernels.integrate`` (``thread.column()``: 8 voxels per thread) | ``raw.integrate_raw`` |
| tsdf fuse | every frame from an empty volume: allocate, read the block counter, integrate | the two above | the two raw twins |

Order: CuPy's ``x[x > t]`` keeps the input order; an append buffer does not
promise any (the slots go to blocks in the order they reach the atomic), so
the compaction rows are checked as sorted multisets.

Rates: compaction in GB/s of the bytes it must move (x read once, the kept
elements written once) and in elements per second; hash inserts and lookups
in millions per second; TSDF in frames per second (one frame's allocation or
integration alone, or the whole fusion). Every TSDF row is checked first: the
block set against the numpy reference (``examples/tsdf/reference.py``: on a
GPU, where fused multiply-adds move values that sit within a few ulps of a
block face or pixel edge, at most ``checks.GPU_BLOCKS`` of the blocks may differ;
``checks.compare`` bounds the TSDF values too) and nothing lost (``lost`` in the table: failed inserts + dropped pool
indices, 0 at every load factor). Every timed launch waits behind a short busy kernel,
so the host's launch path (checked launches included) is not in the time;
an insert's table is reset before its start event. ``safe/raw`` is the
simtsafe time over the raw same-schedule twin's, inverted (>= 1: as fast).

Targets (issue 19, H200): safe/raw >= 0.99 for compaction and TSDF
integration, >= 0.95 for hash insert and TSDF allocation; compaction at least
as fast as CuPy; 0 lost blocks at every load factor. Results: $OUT (or
benchmarks/results)/irregular.{json,md,png}. ``--size tiny`` (the default
under ``NUMBA_ENABLE_CUDASIM=1``) runs every part at a tiny size to check
this script: the simulator has no warp shuffles, so the hand-aggregated twin
is reported as an error there, and the times mean nothing (so a simulator
run writes no result files unless ``OUT`` is set).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numba import cuda

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import device_name, write_results  # noqa: E402

import simtsafe as ss  # noqa: E402
from simtsafe import DisjointSlice, In, thread  # noqa: E402

try:
    import cupy as cp
except ImportError:  # the CuPy column is left out
    cp = None

import compact as example  # noqa: E402  (examples/compact.py)
from tsdf.checks import GPU_BLOCKS, compare  # noqa: E402
from tsdf.fusion import Fusion, pose_arrays  # noqa: E402  (examples/tsdf/)
from tsdf.reference import Reference  # noqa: E402
from tsdf.scene import SCENE, Intrinsics, depth_frame, orbit  # noqa: E402
from tsdf.volume import Params  # noqa: E402

BLOCK = example.BLOCK
EMPTY32 = np.uint32(0xFFFFFFFF)


# ----------------------------------------------------------------------------- raw twins


@cuda.jit
def compact_aggregated_raw(out, count, x, threshold):  # type: ignore[no-untyped-def]
    """``compact_warp``'s schedule by hand: one atomic per group of lanes that keep an element."""
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    capacity = np.uint64(out.size)
    for i in range(start, x.size, step):
        v = x[i]
        if v > threshold:
            mask = cuda.activemask()
            rank = cuda.popc(mask & cuda.lanemask_lt())
            leader = cuda.ffs(mask) - 1
            base = np.int64(0)  # (shfl_sync takes signed 64-bit ints, not uint64)
            if rank == 0:
                base = np.int64(cuda.atomic.add(count, 0, np.uint64(cuda.popc(mask))))
            base = cuda.shfl_sync(mask, base, leader)
            slot = np.uint64(base) + np.uint64(rank)
            if slot < capacity:
                out[slot] = v


@ss.kernel(
    contract=ss.LaunchContract(
        domain=1, block=(BLOCK, 1, 1), tables={"keys": {"values": ["vals"], "failed": "nf"}}
    )
)
def hash_insert(
    keys: ss.HashTable[np.uint32],
    vals: ss.HashValues[np.float32],
    nf: ss.Counter,
    q: In[np.uint32],
    v: In[np.float32],
) -> None:
    for w in thread.grid_stride(q):
        s = keys.insert(q[w])
        vals[s] = v[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(BLOCK, 1, 1)))
def hash_find(
    out: DisjointSlice[np.float32], keys: In[np.uint32], vals: In[np.float32], q: In[np.uint32]
) -> None:
    for w in thread.grid_stride(q):
        out[w] = vals[ss.hashing.find(keys, q[w])]


@cuda.jit(device=True)
def _home(k, cap):  # type: ignore[no-untyped-def]
    # Numba widens uint32 arithmetic to 64 bits: each product is cut back to 32 bits,
    # as simtsafe's probe (32-bit multiplies) does, so both probes start at one slot.
    h = np.uint32(k)
    h = np.uint32(h ^ (h >> np.uint32(16)))
    h = np.uint32((h * np.uint32(0x85EBCA6B)) & np.uint32(0xFFFFFFFF))
    h = np.uint32(h ^ (h >> np.uint32(13)))
    h = np.uint32((h * np.uint32(0xC2B2AE35)) & np.uint32(0xFFFFFFFF))
    h = np.uint32(h ^ (h >> np.uint32(16)))
    return np.uint64(h) % np.uint64(cap)


@cuda.jit
def hash_insert_raw(keys, vals, nf, q, v):  # type: ignore[no-untyped-def]
    """The same probe in raw Numba: a plain load, ``cuda.atomic.cas`` at an empty slot."""
    cap = np.uint64(keys.size)
    for i in range(cuda.grid(1), q.size, cuda.gridsize(1)):
        k = q[i]
        s = _home(k, cap)
        done = False
        for _ in range(cap):
            cur = keys[s]
            if cur == k:
                done = True
                break
            if cur == EMPTY32:
                old = cuda.atomic.cas(keys, s, EMPTY32, k)
                if old == EMPTY32:
                    vals[s] = v[i]
                    done = True
                    break
                if old == k:
                    done = True
                    break
            s = s + np.uint64(1)
            if s == cap:
                s = np.uint64(0)
        if not done:
            cuda.atomic.add(nf, 0, np.uint64(1))


@cuda.jit
def hash_find_raw(out, keys, vals, q):  # type: ignore[no-untyped-def]
    cap = np.uint64(keys.size)
    for i in range(cuda.grid(1), q.size, cuda.gridsize(1)):
        k = q[i]
        s = _home(k, cap)
        r = np.float32(0)
        for _ in range(cap):
            cur = keys[s]
            if cur == k:
                r = vals[s]
                break
            if cur == EMPTY32:
                break
            s = s + np.uint64(1)
            if s == cap:
                s = np.uint64(0)
        out[i] = r


# ----------------------------------------------------------------------------- timing


@cuda.jit
def _busy(ns):  # type: ignore[no-untyped-def]
    """One thread sleeping ~ns nanoseconds: the GPU stays busy while the host enqueues."""
    for _ in range(ns // 1000):
        cuda.nanosleep(1000)


def time_gpu(
    fn: Callable[[], None], reps: int, reset: Callable[[], None] | None = None, warmup: int = 2
) -> float:
    """Median GPU seconds of ``fn``; ``reset`` runs before each call, outside the timed span."""
    for _ in range(warmup):
        if reset is not None:
            reset()
        fn()
    cuda.synchronize()
    times = []
    for _ in range(reps):
        if reset is not None:
            reset()
        if not ss.SIMULATOR:  # (no nanosleep on the simulator)
            _busy[1, 1](2_000_000)
        start, stop = cuda.event(), cuda.event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def _grid(n: int) -> int:
    if ss.SIMULATOR:
        return 2
    sms = int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    return max(1, min(-(-n // BLOCK), 8 * sms))


class Bench:
    """Rows of one run: each measured only after its result matched numpy."""

    def __init__(self, reps: int) -> None:
        self.reps = reps
        self.rows: list[dict[str, Any]] = []

    def measure(
        self,
        part: str,
        case: str,
        impl: str,
        run: Callable[[], None],
        check: Callable[[], bool],
        work: dict[str, float],
        reset: Callable[[], None] | None = None,
    ) -> None:
        row: dict[str, Any] = {"part": part, "case": case, "impl": impl}
        try:
            if reset is not None:
                reset()
            run()
            cuda.synchronize()
            row["correct"] = bool(check())
            t = time_gpu(run, self.reps, reset)
            row["seconds"] = t
            for unit, amount in work.items():
                row[unit] = amount / t
        except Exception as exc:  # a missing piece (e.g. no shuffles on the simulator)
            if not ss.SIMULATOR:
                traceback.print_exc()
            row["error"] = f"{type(exc).__name__}: {exc}"[:160]
        self.rows.append(row)
        shown = f"{row['seconds'] * 1e3:.3f} ms" if "seconds" in row else row["error"]
        print(f"  {part:10s} {case:22s} {impl:30s} {shown}", flush=True)

    def time_of(self, part: str, case: str, impl: str) -> float | None:
        for r in self.rows:
            if (r["part"], r["case"], r["impl"]) == (part, case, impl) and "seconds" in r:
                return float(r["seconds"])
        return None


# ----------------------------------------------------------------------------- parts


SAFE = "simtsafe"
RAW = "numba raw (same schedule)"
WARP = "simtsafe per-warp claim()"
WARP_RAW = "numba raw per-warp (same schedule)"
CUPY = "cupy x[x > t]"


def bench_compaction(b: Bench, n: int) -> None:
    rng = np.random.default_rng(19)
    x = rng.standard_normal(n).astype(np.float32)
    d_x = cuda.to_device(x)
    for t in (0.0, 1.28):
        _compaction_case(b, x, d_x, np.float32(t))


def _compaction_case(b: Bench, x: np.ndarray[Any, Any], d_x: Any, threshold: np.float32) -> None:
    n = x.size
    grid = _grid(n)
    safe = example.compact.prepare(grid=grid, block=BLOCK)
    per_warp = example.compact_warp.prepare(grid=grid, block=BLOCK)
    want = np.sort(x[x > threshold])
    case = f"2^{int(np.log2(n))} f32, keep {want.size / n:.0%}"
    work = {"gbps": (n * 4 + want.size * 4) / 1e9, "gelems_per_s": n / 1e9}
    out = cuda.device_array(n, np.float32)
    count = cuda.to_device(np.zeros(1, np.uint64))
    zero = np.zeros(1, np.uint64)

    def reset() -> None:  # an append buffer's counter keeps counting otherwise
        count.copy_to_device(zero)

    def check() -> bool:
        got = int(count.copy_to_host()[0])
        return got == want.size and np.array_equal(np.sort(out.copy_to_host()[:got]), want)

    def run_safe() -> None:
        safe(out, count, d_x, threshold)

    def run_raw() -> None:
        example.compact_block_raw[grid, BLOCK](out, count, d_x, threshold)

    def run_warp() -> None:
        per_warp(out, count, d_x, threshold)

    def run_warp_raw() -> None:
        compact_aggregated_raw[grid, BLOCK](out, count, d_x, threshold)

    b.measure("compaction", case, SAFE, run_safe, check, work, reset)
    b.measure("compaction", case, RAW, run_raw, check, work, reset)
    b.measure("compaction", case, WARP, run_warp, check, work, reset)
    b.measure("compaction", case, WARP_RAW, run_warp_raw, check, work, reset)
    if cp is None or ss.SIMULATOR:
        return
    cx = cp.asarray(d_x)
    kept: dict[str, Any] = {}

    def run_cupy() -> None:
        kept["y"] = cx[cx > threshold]

    def check_cupy() -> bool:
        return bool(np.array_equal(np.sort(cp.asnumpy(kept["y"])), want))

    b.measure("compaction", case, CUPY, run_cupy, check_cupy, work)


def bench_hash(b: Bench, cap: int) -> None:
    for load in (0.5, 0.9):
        _hash_case(b, cap, load)


def _hash_case(b: Bench, cap: int, load: float) -> None:
    rng = np.random.default_rng(int(load * 10))
    n = int(load * cap)
    draws = rng.integers(0, 2**32 - 1, n + n // 8 + 8, dtype=np.uint32)
    q = rng.permutation(np.unique(draws))[:n]  # distinct keys, never EMPTY
    v = (q % 1000).astype(np.float32)
    d_q, d_v = cuda.to_device(q), cuda.to_device(v)
    grid = _grid(n)
    empty = cuda.to_device(np.full(cap, EMPTY32, np.uint32))
    keys = cuda.device_array(cap, np.uint32)
    vals = cuda.to_device(np.zeros(cap, np.float32))
    nf = cuda.to_device(np.zeros(1, np.uint64))
    zero = np.zeros(1, np.uint64)
    case = f"2^{int(np.log2(cap))} slots, load {load}"
    work = {"mops": n / 1e6}

    def reset() -> None:
        keys.copy_to_device(empty)
        nf.copy_to_device(zero)

    def check_insert() -> bool:
        k = keys.copy_to_host()
        stored = k[k != EMPTY32]
        if stored.size != n or int(nf.copy_to_host()[0]) != 0:
            return False
        if not np.array_equal(np.sort(stored), np.sort(q)):
            return False
        vv = vals.copy_to_host()
        return bool(np.array_equal(vv[k != EMPTY32], (stored % 1000).astype(np.float32)))

    safe = hash_insert.prepare(grid=grid, block=BLOCK)

    def insert_safe() -> None:
        safe(keys, vals, nf, d_q, d_v)

    def insert_raw() -> None:
        hash_insert_raw[grid, BLOCK](keys, vals, nf, d_q, d_v)

    b.measure("hash insert", case, SAFE, insert_safe, check_insert, work, reset)
    b.measure("hash insert", case, RAW, insert_raw, check_insert, work, reset)
    # Lookups in the table the raw twin just built (the same probe, the same table).
    out = cuda.device_array(n, np.float32)
    finder = hash_find.prepare(grid=grid, block=BLOCK)

    def check_find() -> bool:
        return bool(np.array_equal(out.copy_to_host(), v))

    def find_safe() -> None:
        finder(out, keys, vals, d_q)

    def find_raw() -> None:
        hash_find_raw[grid, BLOCK](out, keys, vals, d_q)

    b.measure("hash find", case, SAFE, find_safe, check_find, work)
    b.measure("hash find", case, RAW, find_raw, check_find, work)


# ----------------------------------------------------------------------------- tsdf


def bench_tsdf(b: Bench, full: bool) -> None:
    """TSDF allocation and integration at 640x480, safe vs raw twin, each checked first."""
    if full:
        cam, voxel, n_frames = Intrinsics.kinect(640, 480), 0.005, 8
    else:
        cam, voxel, n_frames = Intrinsics.kinect(32, 24), 0.08, 2
    base = Params(voxel=voxel, mu=4 * voxel)
    poses = orbit(n_frames)
    frames = [depth_frame(SCENE, cam, p, max_depth=base.max_depth) for p in poses]
    ref = Reference(base, cam, int(Fusion(base, cam).max_cells))
    first: set[int] = set()
    for k, (depth, pose) in enumerate(zip(frames, poses, strict=True)):
        ref.fuse(depth, *pose_arrays(pose))
        if k == 0:
            first = set(ref.keys)
    need = len(ref.keys)
    d_frames = [cuda.to_device(f) for f in frames]
    d_poses = [tuple(cuda.to_device(a) for a in pose_arrays(p)) for p in poses]
    size = f"{cam.width}x{cam.height}"
    print(f"  tsdf: {n_frames} frames of {size}, voxel {voxel * 1e3:.0f} mm: {len(first)} blocks "
          f"in frame 0, {need} in all")  # fmt: skip
    for impl, backend in ((SAFE, "safe"), (RAW, "raw")):
        for load in (0.071, 0.5, 0.9):
            _tsdf_alloc_empty(b, impl, backend, base, cam, d_frames[0], d_poses[0][0], first, load)
        _tsdf_steady(b, impl, backend, base, cam, d_frames, d_poses, ref, size)


def _same_blocks(got: set[int], want: set[int]) -> bool:
    """The reference's block set; on a GPU a few may differ (fused multiply-adds: checks.GPU_BLOCKS)."""
    if ss.SIMULATOR:
        return got == want
    return len(got ^ want) <= GPU_BLOCKS * len(want)


def _tsdf_alloc_empty(
    b: Bench,
    impl: str,
    backend: Any,
    base: Params,
    cam: Intrinsics,
    d_depth: Any,
    d_c2w: Any,
    want: set[int],
    load: float,
) -> None:
    table = max(1, round(len(want) / load))
    fusion = Fusion(Params(voxel=base.voxel, mu=base.mu, table=table, pool=base.pool), cam, backend)
    empty = cuda.to_device(np.full(table, np.uint64(0xFFFF_FFFF_FFFF_FFFF), np.uint64))
    zero = np.zeros(1, np.uint64)

    def reset() -> None:
        fusion.keys.copy_to_device(empty)
        fusion.nfail.copy_to_device(zero)
        fusion.nblocks.copy_to_device(zero)

    def run() -> None:
        fusion.allocate(d_depth, d_c2w)

    def check() -> bool:
        s = fusion.status()
        lost[0] = s.lost
        return s.lost == 0 and _same_blocks(fusion.block_keys(), want)

    lost = [-1]
    case = f"frame 0, empty table, load {load}"
    b.measure("tsdf alloc", case, impl, run, check, {"fps": 1.0}, reset)
    b.rows[-1]["lost_blocks"] = lost[0]


def _tsdf_steady(
    b: Bench,
    impl: str,
    backend: Any,
    base: Params,
    cam: Intrinsics,
    d_frames: list[Any],
    d_poses: list[Any],
    ref: Reference,
    size: str,
) -> None:
    fusion = Fusion(base, cam, backend)
    zero = np.zeros(1, np.uint64)
    pool_zeros = cuda.to_device(np.zeros(fusion.tsdf.shape, np.float32))  # device to device
    empty = cuda.to_device(np.full(base.table, np.uint64(0xFFFF_FFFF_FFFF_FFFF), np.uint64))
    n = len(d_frames)
    lost = [-1]

    def reset_all() -> None:
        fusion.keys.copy_to_device(empty)
        fusion.nfail.copy_to_device(zero)
        fusion.nblocks.copy_to_device(zero)
        fusion.tsdf.copy_to_device(pool_zeros)
        fusion.weight.copy_to_device(pool_zeros)

    def fuse_all() -> None:
        for d_depth, (d_c2w, d_w2c) in zip(d_frames, d_poses, strict=True):
            fusion.allocate(d_depth, d_c2w)
            fusion.integrate(d_depth, d_w2c, fusion.stored())

    def check_all() -> bool:
        s = fusion.status()
        lost[0] = s.lost
        return s.lost == 0 and compare(fusion, ref, exact=ss.SIMULATOR)

    b.measure("tsdf fuse", f"{n} frames {size} from empty", impl, fuse_all, check_all,
              {"fps": float(n)}, reset_all)  # fmt: skip
    b.rows[-1]["lost_blocks"] = lost[0]
    # The volume now holds every frame's blocks (the last timed call fused them all).
    blocks = fusion.stored()
    print(f"  tsdf {backend}: {blocks} blocks after {n} frames")
    last_depth, (last_c2w, last_w2c) = d_frames[-1], d_poses[-1]

    def alloc_steady() -> None:
        fusion.allocate(last_depth, last_c2w)

    def check_steady() -> bool:
        s = fusion.status()
        lost[0] = s.lost
        return s.lost == 0 and s.blocks == blocks  # every block found: nothing new

    b.measure("tsdf alloc", f"frame {n - 1}, all blocks known", impl, alloc_steady,
              check_steady, {"fps": 1.0})  # fmt: skip
    b.rows[-1]["lost_blocks"] = lost[0]

    def integrate() -> None:
        fusion.integrate(last_depth, last_w2c, blocks)

    def check_integrate() -> bool:
        return _same_blocks(fusion.block_keys(), set(ref.keys))

    b.measure("tsdf integrate", f"frame {n - 1} into all blocks", impl, integrate,
              check_integrate, {"fps": 1.0})  # fmt: skip


# ----------------------------------------------------------------------------- report


def _report(b: Bench, device: str) -> None:
    lines = [
        f"Irregular work on {device}: ownership won by atomics (issue 19); median of {b.reps} "
        "calls, each behind a busy kernel",
        "",
        "| part | case | impl | ms | rate | safe/raw | matches numpy |",
        "|---|---|---|---|---|---|---|",
    ]
    bars: dict[str, float] = {}
    for r in b.rows:
        if "seconds" not in r:
            lines.append(f"| {r['part']} | {r['case']} | {r['impl']} | {r['error']} | | | |")
            continue
        if "gbps" in r:
            rate = f"{r['gbps']:.0f} GB/s, {r['gelems_per_s']:.1f} G elem/s"
        elif "fps" in r:
            rate = f"{r['fps']:.0f} frames/s"
        else:
            rate = f"{r['mops']:.0f} M/s"
        ratio = ""
        if r["impl"] == SAFE:
            raw = b.time_of(r["part"], r["case"], RAW)
            if raw is not None:
                r["safe_over_raw"] = raw / r["seconds"]
                ratio = f"{r['safe_over_raw']:.3f}"
            lib = b.time_of(r["part"], r["case"], CUPY)
            if lib is not None:
                r["safe_over_cupy"] = lib / r["seconds"]
                ratio += f" (vs CuPy {r['safe_over_cupy']:.2f})"
        elif r["impl"] == WARP:
            raw = b.time_of(r["part"], r["case"], WARP_RAW)
            if raw is not None:
                r["safe_over_raw"] = raw / r["seconds"]
                ratio = f"{r['safe_over_raw']:.3f}"
        lines.append(
            f"| {r['part']} | {r['case']} | {r['impl']} | {r['seconds'] * 1e3:.3f} | {rate} | "
            f"{ratio} | {r['correct']}"
            + (f", lost {r['lost_blocks']}" if "lost_blocks" in r else "")
            + " |"
        )
        bars[f"{r['part']} {r['case']} {r['impl']}"] = 1e3 * r["seconds"]
    if ss.SIMULATOR and not os.environ.get("OUT"):
        # A check of this script, not a measurement: keep benchmarks/results (the GPU's) as is.
        print("\n".join(lines))
        print("simulator run: results not written (set OUT=DIR to write them there)")
        return
    write_results(
        "irregular",
        {"device": device, "reps": b.reps, "rows": b.rows},
        "\n".join(lines),
        bars,
        "ms (lower is better)",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument(
        "--size", choices=("full", "tiny"), default="tiny" if ss.SIMULATOR else "full"
    )
    parser.add_argument("--parts", default="compaction,hash,tsdf")
    args = parser.parse_args(argv)
    full = args.size == "full"
    b = Bench(args.reps if full else 1)
    if ss.SIMULATOR:  # the raw twins' hash multiplies wrap uint64 on purpose; numpy warns
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
    device = "the CUDA simulator" if ss.SIMULATOR else device_name()
    print(f"irregular on {device}")
    parts = {p for p in args.parts.split(",") if p}
    if "compaction" in parts:
        bench_compaction(b, 2**26 if full else 2**9)
    if "hash" in parts:
        bench_hash(b, 2**24 if full else 2**8)
    if "tsdf" in parts:
        bench_tsdf(b, full)
    _report(b, device)


if __name__ == "__main__":
    main()
