"""Hash-blocked TSDF fusion of synthetic depth frames on simtsafe (every kernel Tier 1).

    python examples/tsdf/run.py --frames N [--check] [--raw] [--reference]
                                [--width W --height H] [--voxel M] [--mu M] [--noise S]
                                [--table SLOTS] [--pool BLOCKS]

Renders ``N`` depth frames of the analytic scene (``scene.py``) from ``N`` cameras on a
circle around it, fuses them (allocate, then integrate, per frame), raycasts the fused
surface from the first camera and compares that depth with the analytic scene's.
Prints where it ran, the blocks allocated, what was lost (table inserts that failed,
pool indices dropped: 0 unless the capacities are too small) and, on a GPU, the
device time of each kernel and the frames per second.

* ``--check``: on the CUDA simulator, at a small size (80x60, 6 cm voxels, 3 frames
  unless given), against the numpy reference (``reference.py``): the same block set,
  the same weights, TSDF values within ``TSDF_TOL``, and the raycast within the
  analytic scene's depth (``ray_ok``). Exit status 1 on any mismatch or loss.
* ``--reference``: compare a GPU run with the numpy reference too (block sets and TSDF
  values may differ where NVVM's fused multiply-adds move a value across a block face
  or a pixel boundary: the fractions are printed, and must stay below ``GPU_*``).
* ``--raw``: fuse with the raw ``numba.cuda.jit`` twins instead (``raw.py``).

Without a GPU the run uses Numba's CUDA simulator (slow: keep the size small).
Exit status: 0 when nothing was lost (and, with ``--check``, everything matched).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

HERE = Path(__file__).resolve().parent

#: --check: TSDF values of the device and the reference may differ by this much. On the
#: simulator the kernels run the reference's float32 operations in the same order (numpy
#: scalars, IEEE round-to-nearest), so they agree to the bit (the tests see 0); the bound
#: is 8 float32 ulps at 1.0, far below what a wrong voxel, pixel or weight would give
#: (one pixel's depth difference / mu, typically 1e-2 .. 1).
TSDF_TOL = 1e-6
#: --check / every run: the raycast depth against the analytic scene's, on the pixels the
#: analytic frame sees. A fused surface is the zero crossing of trilinearly interpolated
#: TSDF values; on smooth surfaces it is within a fraction of a voxel (the tests see a
#: median of ~0.1 voxel), but a pixel on a silhouette may see the object in one and the
#: background in the other (an error of metres). So: at least RAY_HITS of the pixels
#: hit, at least RAY_WITHIN of those within one voxel, the median within RAY_MEDIAN voxel.
RAY_HITS, RAY_WITHIN, RAY_MEDIAN = 0.95, 0.90, 0.25


def gpu_present() -> bool:
    """Whether numba-cuda sees a CUDA GPU (asked in a child process, without the simulator)."""
    probe = "from numba import cuda; import sys; sys.exit(0 if cuda.is_available() else 1)"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.call([sys.executable, "-c", probe], env=env, stderr=subprocess.DEVNULL) == 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument(
        "--frames", type=int, default=None, help="depth frames fused (default 8; 3 with --check)"
    )
    ap.add_argument(
        "--check", action="store_true", help="simulator run against the numpy reference"
    )
    ap.add_argument("--reference", action="store_true", help="compare a GPU run with the reference")
    ap.add_argument("--raw", action="store_true", help="fuse with the raw numba.cuda.jit twins")
    ap.add_argument(
        "--width", type=int, default=None, help="image width (640; 80 on the simulator)"
    )
    ap.add_argument(
        "--height", type=int, default=None, help="image height (480; 60 on the simulator)"
    )
    ap.add_argument(
        "--voxel", type=float, default=None, help="voxel edge in m (0.01; 0.06 on the simulator)"
    )
    ap.add_argument(
        "--mu",
        type=float,
        default=None,
        help="truncation distance in m (default 3 voxels; 4 on the GPU)",
    )
    ap.add_argument(
        "--noise", type=float, default=0.0, help="depth noise: std = NOISE * depth^2 (m)"
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of the depth noise")
    ap.add_argument("--table", type=int, default=None, help="hash table slots (default 2^16)")
    ap.add_argument(
        "--pool", type=int, default=None, help="voxel blocks in the pool (default 2^15)"
    )
    args = ap.parse_args(argv)
    for name in ("frames", "width", "height", "table", "pool"):
        value = getattr(args, name)
        if value is not None and value < 1:
            ap.error(f"--{name} {value}: expected >= 1")
    for name in ("voxel", "mu"):
        value = getattr(args, name)
        if value is not None and not value > 0:
            ap.error(f"--{name} {value}: expected > 0")
    if args.noise < 0:
        ap.error(f"--noise {args.noise}: expected >= 0")
    return args


def _sizes(args: argparse.Namespace, simulator: bool) -> None:
    small = simulator or args.check
    args.frames = args.frames or (3 if args.check else 8)
    args.width = args.width or (80 if small else 640)
    args.height = args.height or (60 if small else 480)
    args.voxel = args.voxel or (0.06 if small else 0.01)
    args.mu = args.mu or args.voxel * (3 if small else 4)


def ray_ok(got: Any, truth: Any, voxel: float) -> tuple[bool, str]:
    """Whether a raycast depth image matches the analytic one (RAY_*); and the numbers."""
    import numpy as np

    seen = truth > 0
    hit = seen & (got > 0)
    hits = hit.sum() / max(1, seen.sum())
    err = np.abs(got - truth)[hit] / voxel
    within = float((err <= 1).mean()) if err.size else 0.0
    median = float(np.median(err)) if err.size else np.inf
    ok = hits >= RAY_HITS and within >= RAY_WITHIN and median <= RAY_MEDIAN
    text = (
        f"{hits:.1%} of the scene's pixels hit, {within:.1%} of them within one voxel, "
        f"median error {median:.3f} voxel"
    )
    return bool(ok), text


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The simulator is chosen before numba is imported: --check always, else without a GPU.
    if args.check:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    elif "NUMBA_ENABLE_CUDASIM" not in os.environ and not gpu_present():
        print("no CUDA GPU found: running on the CUDA simulator (slow: small sizes)", flush=True)
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    import warnings

    import numpy as np
    from numba import cuda

    import simtsafe as ss
    from tsdf.fusion import Fusion, pose_arrays
    from tsdf.reference import Reference
    from tsdf.scene import SCENE, Intrinsics, depth_frame, orbit
    from tsdf.volume import KeyRangeError, Params

    if ss.SIMULATOR:
        # The raw twins' hash multiplies wrap uint64 on purpose; numpy scalars warn about it.
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
    _sizes(args, ss.SIMULATOR)
    defaults = Params()
    try:
        params = Params(
            voxel=args.voxel,
            mu=args.mu,
            table=args.table or defaults.table,
            pool=args.pool or defaults.pool,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cam = Intrinsics.kinect(args.width, args.height)
    if ss.SIMULATOR:
        where = "the CUDA simulator (CPU)"
    else:
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
        where = f"GPU {name} (compute capability {'.'.join(map(str, dev.compute_capability))})"
    backend: Literal["safe", "raw"] = "raw" if args.raw else "safe"
    kind = "raw numba.cuda.jit twins" if args.raw else "simtsafe Tier-1 kernels"
    print(
        f"TSDF fusion on {where}: {kind}; {args.frames} frames of {cam.width}x{cam.height}, "
        f"voxel {params.voxel * 100:.3g} cm, mu {params.mu * 100:.3g} cm, blocks of 8^3, "
        f"table {params.table} slots, pool {params.pool} blocks",
        flush=True,
    )
    poses = orbit(args.frames)
    t0 = time.perf_counter()
    frames = [
        depth_frame(SCENE, cam, pose, args.noise, args.seed + k, params.max_depth)
        for k, pose in enumerate(poses)
    ]
    print(f"  {len(frames)} depth frames ray-cast on the host in {time.perf_counter() - t0:.2f} s")

    fusion = Fusion(params, cam, backend)
    ref = Reference(params, cam, int(fusion.max_cells)) if (args.check or args.reference) else None
    alloc_ms: list[float] = []
    integ_ms: list[float] = []
    wall = 0.0
    try:
        d_frames = [cuda.to_device(f) for f in frames]
        d_poses = [tuple(cuda.to_device(a) for a in pose_arrays(p)) for p in poses]
        for k, (d_depth, (d_c2w, d_w2c)) in enumerate(zip(d_frames, d_poses, strict=True)):
            fusion.check_pose(poses[k])
            cuda.synchronize()
            t = time.perf_counter()
            e0, e1, e2, e3 = (cuda.event() for _ in range(4))
            e0.record()
            fusion.allocate(d_depth, d_c2w)
            e1.record()
            n = fusion.stored()  # the integration covers exactly the allocated blocks
            e2.record()
            fusion.integrate(d_depth, d_w2c, n)
            e3.record()
            e3.synchronize()
            wall += time.perf_counter() - t
            alloc_ms.append(e0.elapsed_time(e1) if not ss.SIMULATOR else 0.0)
            integ_ms.append(e2.elapsed_time(e3) if not ss.SIMULATOR else 0.0)
            if ref is not None:
                c2w, w2c = pose_arrays(poses[k])
                ref.fuse(frames[k], c2w, w2c)
    except KeyRangeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    status = fusion.status()
    print(
        f"  blocks allocated: {status.blocks} (table load {status.occupied / params.table:.3f}, "
        f"pool {status.blocks / params.pool:.1%} full)"
    )
    print(
        f"  lost: {status.failed} failed table inserts, {status.dropped} blocks without a pool "
        f"index{'' if status.lost == 0 else '  <-- capacities too small: raise --table / --pool'}"
    )
    if not ss.SIMULATOR:
        a, i = np.asarray(alloc_ms[1:] or alloc_ms), np.asarray(integ_ms[1:] or integ_ms)
        per = float(np.median(a + i))
        print(
            f"  device time per frame (median{' after the first' if len(alloc_ms) > 1 else ''}): "
            f"allocate {np.median(a):.3f} ms, integrate {np.median(i):.3f} ms; "
            f"{1e3 / per:.0f} frames/s on the device, {args.frames / wall:.0f} frames/s "
            "with the host's counter read between the two"
        )
    else:
        print(f"  fused in {wall:.1f} s on the simulator")
    ok = status.lost == 0

    t = time.perf_counter()
    got = fusion.raycast(poses[0])
    dt = time.perf_counter() - t
    truth = (
        frames[0] if args.noise == 0 else depth_frame(SCENE, cam, poses[0], 0, 0, params.max_depth)
    )
    good, text = ray_ok(got, truth, params.voxel)
    print(
        f"  raycast from camera 0 ({dt * 1e3:.1f} ms host time): {text} -- {'ok' if good else 'FAILED'}"
    )
    if args.check or not ss.SIMULATOR:
        ok = ok and good

    if ref is not None:
        ok = _compare(fusion, ref, exact=ss.SIMULATOR) and ok
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


#: A GPU run against the reference (``--reference``, tests/gpu/test_tsdf_gpu.py). NVVM
#: contracts ``a * b + c`` into fused multiply-adds, so a value within a few ulps of a block
#: face or of a pixel boundary may fall the other way: a block touched only by a sliver of
#: one segment may come or go (neighbouring rays cover almost every block many times), and
#: a voxel whose projection lies within a few ulps of a pixel edge (about 1e-4 of a pixel
#: at 640 pixels, per voxel and frame) reads the neighbouring pixel's depth, which moves its
#: TSDF by that depth difference over mu. Bounds: at most GPU_BLOCKS of the blocks differ;
#: of the voxels either side has seen, at most GPU_VOXELS differ by more than 1e-4 in TSDF
#: or at all in weight, and at most GPU_FAR by more than 0.5. A wrong pose, projection,
#: weight or order of operations moves most voxels (the simulator's comparison is exact).
GPU_BLOCKS, GPU_VOXELS, GPU_FAR = 5e-3, 5e-2, 5e-3


def _compare(fusion: Any, ref: Any, exact: bool) -> bool:
    """The device volume against the reference: exact (the simulator: ``TSDF_TOL``), or
    within the GPU's bounds (``GPU_*``)."""
    import numpy as np

    vol = fusion.volume()
    got, want = set(vol), set(ref.keys)
    missing, extra = want - got, got - want
    common = [k for k in ref.keys if k in vol]
    index = {k: i for i, k in enumerate(ref.keys)}
    empty = np.zeros((0, 8, 64), np.float32)
    t_dev = np.stack([vol[k][0] for k in common]) if common else empty
    w_dev = np.stack([vol[k][1] for k in common]) if common else empty
    rows = [index[k] for k in common]
    dt = np.abs(t_dev - ref.tsdf[rows])
    dw = np.abs(w_dev - ref.weight[rows])
    print(
        f"  reference: {len(want)} blocks, {len(missing)} missing on the device, {len(extra)} "
        f"extra; TSDF max |diff| {dt.max(initial=0):.2g}, weights max |diff| "
        f"{dw.max(initial=0):.2g}"
    )
    if exact:
        return not missing and not extra and dt.max(initial=0) <= TSDF_TOL and not dw.any()
    seen = (w_dev > 0) | (ref.weight[rows] > 0)
    n = max(1, int(seen.sum()))
    frac_blocks = (len(missing) + len(extra)) / max(1, len(want))
    frac_vox = float(((dt > 1e-4) | (dw > 0))[seen].sum()) / n
    frac_far = float((dt > 0.5)[seen].sum()) / n
    print(
        f"  GPU vs reference: {frac_blocks:.3%} of blocks differ; of {n} seen voxels "
        f"{frac_vox:.3%} differ (TSDF by > 1e-4, or weight), {frac_far:.3%} by > 0.5"
    )
    return frac_blocks <= GPU_BLOCKS and frac_vox <= GPU_VOXELS and frac_far <= GPU_FAR


if __name__ == "__main__":
    sys.exit(main())
