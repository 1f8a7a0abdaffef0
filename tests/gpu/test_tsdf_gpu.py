"""examples/tsdf on a real GPU: 640x480 frames, the reference, the raw twins, nothing lost.

On a GPU, NVVM contracts ``a * b + c`` into fused multiply-adds, so a value the
reference computes with two roundings may differ in its last bit: a segment's crossing
parameter then moves a block face, or a voxel's projection a pixel boundary, only
where the value lies within a few ulps of it. The tests bound how rarely (``checks.GPU_*``:
the fractions of blocks and of seen voxels that differ, printed by ``checks.compare``) and
demand exactness where no arithmetic differs: nothing lost, and every capacity property
of the simulator tests (tests/examples/test_tsdf.py) at full size, where thousands of
threads insert one key at the same time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from tests.tsdf_checks import assert_present_or_counted

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from tsdf.checks import GPU_BLOCKS, GPU_VOXELS, compare, ray_ok  # noqa: E402
from tsdf.fusion import Fusion, pose_arrays  # noqa: E402
from tsdf.reference import Reference  # noqa: E402
from tsdf.scene import SCENE, Intrinsics, depth_frame, orbit  # noqa: E402
from tsdf.volume import Params  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]

CAM = Intrinsics.kinect(640, 480)
PARAMS = Params()  # 1 cm voxels, mu 4 cm, 2^16 slots, 2^15 blocks


def _frames(n: int) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    return [(depth_frame(SCENE, CAM, p, max_depth=PARAMS.max_depth), p) for p in orbit(n)]


def test_fusion_matches_the_reference_on_the_gpu() -> None:
    frames = _frames(6)
    fusion = Fusion(PARAMS, CAM)
    ref = Reference(PARAMS, CAM, int(fusion.max_cells))
    for depth, pose in frames:
        fusion.fuse(depth, pose)
        ref.fuse(depth, *pose_arrays(pose))
    assert fusion.status().lost == 0
    assert compare(fusion, ref, exact=False)
    good, text = ray_ok(fusion.raycast(frames[0][1]), frames[0][0], PARAMS.voxel)
    assert good, text


def test_the_raw_twins_agree_on_the_gpu() -> None:
    frames = _frames(3)
    safe, raw = Fusion(PARAMS, CAM), Fusion(PARAMS, CAM, "raw")
    for depth, pose in frames:
        safe.fuse(depth, pose)
        raw.fuse(depth, pose)
    a, b = safe.volume(), raw.volume()
    assert len(set(a) ^ set(b)) <= GPU_BLOCKS * len(a)
    common = sorted(set(a) & set(b))
    dt = np.stack([np.abs(a[k][0] - b[k][0]) for k in common])
    dw = np.stack([np.abs(a[k][1] - b[k][1]) for k in common])
    seen = np.stack([(a[k][1] > 0) | (b[k][1] > 0) for k in common])
    assert ((dt > 1e-4) | (dw > 0))[seen].mean() <= GPU_VOXELS
    img = safe.raycast(frames[0][1])
    other = safe.raycast(frames[0][1], backend="raw")
    assert np.mean(np.abs(img - other) > 1e-3) < 1e-3


def _need(
    depth: np.ndarray[Any, Any], pose: np.ndarray[Any, Any], backend: str
) -> np.ndarray[Any, Any]:
    """The blocks ``backend``'s allocation finds with room to spare (each twin its own: their
    fused multiply-adds may differ)."""
    fusion = Fusion(PARAMS, CAM, backend)  # type: ignore[arg-type]
    fusion.allocate(cuda.to_device(depth), cuda.to_device(pose_arrays(pose)[0]))
    assert fusion.status().lost == 0
    return np.sort(ss.to_host(fusion.blocks)[: fusion.stored()])


@pytest.mark.parametrize(
    ("load", "pool"),
    [
        (0.071, 1.0),
        (0.5, 1.0),
        (0.9, 1.0),
        (0.95, 1.0),
        (1.0, 1.0),
        (1.5, 1.0),
        (0.5, -1),
        (0.9, 0.5),
    ],
)
@pytest.mark.parametrize("backend", ["safe", "raw"])
def test_every_block_is_present_or_counted_on_the_gpu(
    load: float, pool: float, backend: str
) -> None:
    depth, pose = _frames(1)[0]
    need = _need(depth, pose, backend)
    table = max(1, round(need.size / load))
    slots = need.size - 1 if pool < 0 else max(1, round(pool * need.size))
    fusion = Fusion(Params(table=table, pool=slots), CAM, backend)  # type: ignore[arg-type]
    fusion.allocate(cuda.to_device(depth), cuda.to_device(pose_arrays(pose)[0]))
    assert_present_or_counted(fusion, need)
    s = fusion.status()
    assert (s.failed > 0) == (table < need.size)
    assert s.dropped == max(0, min(need.size, table) - slots)
