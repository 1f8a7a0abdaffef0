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
  the same weights, TSDF values within ``checks.TSDF_TOL``, and the raycast within the
  analytic scene's depth (``checks.ray_ok``). Exit status 1 on any mismatch or loss.
* ``--reference``: compare a GPU run with the numpy reference too (block sets and TSDF
  values may differ where NVVM's fused multiply-adds move a value across a block face
  or a pixel boundary: the fractions are printed, and must stay below ``checks.GPU_*``).
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
from typing import Literal

HERE = Path(__file__).resolve().parent


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
    from tsdf.checks import compare, ray_ok
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
        ok = compare(fusion, ref, exact=ss.SIMULATOR) and ok
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
