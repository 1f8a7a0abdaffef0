"""What a fused volume must satisfy: against the numpy reference, against the analytic scene.

Shared by ``run.py --check``, ``tsdf.run()`` (examples/run_all.py), the tests and
``benchmarks/irregular.py``. (Not in ``run.py``: importing ``tsdf.run`` would rebind the
package's ``run`` entry to that module.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["GPU_BLOCKS", "GPU_FAR", "GPU_VOXELS", "RAY_HITS", "RAY_MEDIAN", "RAY_WITHIN",
           "TSDF_TOL", "compare", "ray_ok"]  # fmt: skip

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


def ray_ok(got: Any, truth: Any, voxel: float) -> tuple[bool, str]:
    """Whether a raycast depth image matches the analytic one (RAY_*); and the numbers."""
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


def compare(fusion: Any, ref: Any, exact: bool, show: bool = True) -> bool:
    """The device volume against the reference: exact (the simulator: ``TSDF_TOL``), or
    within the GPU's bounds (``GPU_*``)."""
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
    say = print if show else (lambda *_: None)
    say(
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
    say(
        f"  GPU vs reference: {frac_blocks:.3%} of blocks differ; of {n} seen voxels "
        f"{frac_vox:.3%} differ (TSDF by > 1e-4, or weight), {frac_far:.3%} by > 0.5"
    )
    return frac_blocks <= GPU_BLOCKS and frac_vox <= GPU_VOXELS and frac_far <= GPU_FAR
