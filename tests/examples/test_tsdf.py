"""examples/tsdf: hash-blocked TSDF fusion against its numpy reference, and nothing lost.

Runs in the simulator layer (``NUMBA_ENABLE_CUDASIM=1``), at tiny sizes (the simulator
runs one Python thread per CUDA thread): 32x24 frames with 8 cm voxels, 40x30 with 6 cm
for the command line. On the simulator the kernels run the reference's float32
operations in order, so the block set and the weights are identical and TSDF values
agree to ``checks.TSDF_TOL`` (0 is seen); the exact comparisons are skipped on a GPU, where
NVVM's fused multiply-adds move rare values across a boundary (tests/gpu/test_tsdf_gpu.py
bounds how rarely).

Nothing lost: at hash-table capacities from load factor 0.01 to 0.95 of the blocks a
frame needs, at exactly the need and below it, and at pool capacities at and below the
need, every block is in the table with its pool index, or its insert was counted as
failed, or its pool index as dropped -- and ``simtsafe.inserted``/``appended`` (and
``Fusion.check``) raise ``CapacityExceeded`` exactly when something was. The need is
the block set the same kernels allocate with room to spare (on the simulator, also the
reference's).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda
from tsdf import kernels as K
from tsdf.checks import TSDF_TOL, compare, ray_ok
from tsdf.fusion import Fusion, pose_arrays
from tsdf.reference import Reference, segment_blocks, segment_walk
from tsdf.scene import SCENE, Intrinsics, depth_frame, look_at, orbit
from tsdf.volume import EMPTY, KEY_OFFSET, KeyRangeError, Params, pack, unpack

import simtsafe as ss
from tests.tsdf_checks import assert_present_or_counted

RUN = Path(__file__).resolve().parents[2] / "examples" / "tsdf" / "run.py"


def _load_cli() -> Any:
    """run.py as a module of its own name: importing ``tsdf.run`` would rebind the
    package's ``run`` entry (examples/run_all.py calls ``tsdf.run(...)``) to the module."""
    spec = importlib.util.spec_from_file_location("tsdf_cli", RUN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


main = _load_cli().main
CAM = Intrinsics.kinect(32, 24)
VOXEL = 0.08
PARAMS = Params(voxel=VOXEL, mu=3 * VOXEL, table=1024, pool=512)

exact = pytest.mark.skipif(
    not ss.SIMULATOR, reason="bit-exact on the simulator; tests/gpu/test_tsdf_gpu.py on a GPU"
)


def _frames(n: int) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    return [(depth_frame(SCENE, CAM, p, max_depth=PARAMS.max_depth), p) for p in orbit(n)]


def _volume_vs_reference(fusion: Fusion, ref: Reference) -> None:
    vol = fusion.volume()
    assert sorted(vol) == sorted(ref.keys)
    for i, key in enumerate(ref.keys):
        tsdf, weight = vol[key]
        np.testing.assert_array_equal(weight, ref.weight[i])
        np.testing.assert_allclose(tsdf, ref.tsdf[i], rtol=0, atol=TSDF_TOL)


# ----------------------------------------------------------------------------- keys


def test_keys_pack_every_coordinate_of_the_range_and_never_empty() -> None:
    lo, hi = -KEY_OFFSET, KEY_OFFSET - 1
    b = np.array([[lo, lo, lo], [hi, hi, hi], [0, 0, 0], [-1, 5, hi], [7, lo, -3]])
    keys = pack(b)
    np.testing.assert_array_equal(unpack(keys), b)
    assert len(set(keys.tolist())) == len(b)
    assert keys.max() < np.uint64(2**63) and EMPTY not in keys
    for bad in ([lo - 1, 0, 0], [0, hi + 1, 0]):
        with pytest.raises(KeyRangeError, match=r"do not fit a key: each axis must lie in"):
            pack(np.array([bad]))


def test_a_camera_path_outside_the_key_range_is_refused() -> None:
    fusion = Fusion(PARAMS, CAM)
    far = 2**20 * 8 * VOXEL  # the key range's edge, in metres
    pose = look_at(np.array([far, 1.0, 0.0]), np.array([far - 1, 0.0, 0.0]))
    with pytest.raises(KeyRangeError, match=r"the camera path reaches block coordinates"):
        fusion.fuse(np.zeros((CAM.height, CAM.width), np.float32), pose)
    with pytest.raises(KeyRangeError):
        fusion.raycast(pose)


def test_blocks_past_the_key_range_are_counted_on_the_device() -> None:
    # The host check bypassed: a camera beyond the range. Every block's key is EMPTY, which
    # the table refuses and counts: nothing stored, nothing lost silently.
    fusion = Fusion(PARAMS, CAM)
    depth, pose = _frames(1)[0]
    pose = pose.copy()
    pose[0, 3] += 2**21 * 8 * VOXEL  # every block the rays reach is past 2**20
    c2w, _ = pose_arrays(pose)
    fusion.allocate(cuda.to_device(depth), cuda.to_device(c2w))
    status = fusion.status()
    assert (status.blocks, status.occupied) == (0, 0)
    assert status.failed >= int((depth > 0).sum())  # at least one insert per valid pixel
    with pytest.raises(ss.CapacityExceeded, match=r"inserts into the hash table failed"):
        fusion.check()


def test_a_segment_longer_than_the_loop_bound_is_counted() -> None:
    # Params.max_cells bounds every segment (the reference proves it for each frame it
    # walks); with the bound forced to 1, every segment longer than one block is counted.
    depth, pose = _frames(1)[0]
    c2w, _ = pose_arrays(pose)
    _, _, unfinished = segment_walk(depth, c2w, CAM, PARAMS, 1)
    assert unfinished.sum() > 0
    for backend in ("safe", "raw"):
        fusion = Fusion(PARAMS, CAM, backend)  # type: ignore[arg-type]
        fusion.max_cells = np.int32(1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # the raw hash wraps uint64
            fusion.allocate(cuda.to_device(depth), cuda.to_device(c2w))
        failed = fusion.status().failed
        assert failed > 0, backend
        if ss.SIMULATOR:  # the reference's walk, exactly
            assert failed == int(unfinished.sum()), backend


# ----------------------------------------------------------------------------- fusion


def test_the_kernels_are_tier_1() -> None:
    made = [v for v in vars(K).values() if isinstance(v, ss.Kernel | ss.DeviceFunction)]
    assert {k.name for k in made if isinstance(k, ss.Kernel)} == {
        "allocate",
        "integrate",
        "raycast",
    }
    assert all(k.unsafe_regions == [] for k in made)


@exact
def test_fusion_matches_the_reference() -> None:
    fusion = Fusion(PARAMS, CAM)
    ref = Reference(PARAMS, CAM, int(fusion.max_cells))
    frames = _frames(2)
    for depth, pose in frames:
        n = fusion.fuse(depth, pose)
        new = ref.fuse(depth, *pose_arrays(pose))
        assert new.size > 0 and n == len(ref.keys)  # every frame adds blocks
    _volume_vs_reference(fusion, ref)
    assert fusion.status() == (len(ref.keys), len(ref.keys), 0, 0)
    # The fused TSDF against the scene: a voxel's sign is the side of the surface it is on
    # (away from silhouettes, where a pixel's depth jumps), and seen voxels lie in the band.
    vol = fusion.volume()
    keys = np.array(list(vol), np.uint64)
    tsdf = np.stack([vol[int(k)][0] for k in keys])  # (N, 8, 64)
    weight = np.stack([vol[int(k)][1] for k in keys])
    z, xy = np.mgrid[0:8, 0:64]
    vox = unpack(keys)[:, None, None, :] * 8 + np.stack([xy & 7, xy >> 3, z], -1)[None]
    sdf = SCENE.sdf((vox + 0.5) * VOXEL)
    seen = weight > 0
    assert seen.mean() > 0.2
    assert (sdf[seen] > -PARAMS.mu - VOXEL).all()  # nothing integrated behind the band
    clear = seen & (np.abs(sdf) > 1.5 * VOXEL)
    assert (np.sign(tsdf[clear]) == np.sign(sdf[clear])).mean() > 0.97
    good, text = ray_ok(fusion.raycast(frames[0][1]), frames[0][0], VOXEL)
    assert good, text
    # The GPU's looser comparison passes too, and still catches a shifted volume.
    assert compare(fusion, ref, exact=False)
    ref.tsdf[:, 3] += np.float32(0.6)
    assert not compare(fusion, ref, exact=True) and not compare(fusion, ref, exact=False)


@exact
def test_the_raw_twins_agree() -> None:
    depth, pose = _frames(1)[0]
    safe, raw = Fusion(PARAMS, CAM), Fusion(PARAMS, CAM, "raw")
    with warnings.catch_warnings():  # the raw hash wraps uint64 on purpose (numpy warns)
        warnings.simplefilter("ignore", RuntimeWarning)
        safe.fuse(depth, pose)
        raw.fuse(depth, pose)
        a, b = safe.volume(), raw.volume()
        assert sorted(a) == sorted(b) and raw.status() == safe.status()
        for key, (tsdf, weight) in a.items():
            np.testing.assert_array_equal(tsdf, b[key][0])
            np.testing.assert_array_equal(weight, b[key][1])
        # The same tables probed by the same hash: the raw raycast reads the safe volume.
        np.testing.assert_array_equal(safe.raycast(pose), safe.raycast(pose, backend="raw"))


def test_a_frame_without_valid_depth_allocates_nothing() -> None:
    fusion = Fusion(PARAMS, CAM)
    depth = np.full((CAM.height, CAM.width), np.nan, np.float32)
    depth[::2] = 0.0
    depth[1, :4] = PARAMS.max_depth * 2  # beyond max_depth: invalid too
    assert fusion.fuse(depth, orbit(1)[0]) == 0
    assert fusion.status() == (0, 0, 0, 0)
    assert not fusion.raycast(orbit(1)[0]).any()


# ----------------------------------------------------------------------------- nothing lost

_NEED: dict[int, np.ndarray[Any, Any]] = {}


def _frame(seed: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """A seeded camera on the orbit (random angle and height)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 2 * np.pi)
    eye = np.array([2.0 * np.sin(a), rng.uniform(0.6, 1.6), 2.0 * np.cos(a)])
    pose = look_at(eye, np.array([0.0, 0.2, 0.0]))
    return depth_frame(SCENE, CAM, pose, max_depth=PARAMS.max_depth), pose


def _allocate(seed: int, table: int, pool: int) -> Fusion:
    depth, pose = _frame(seed)
    fusion = Fusion(Params(voxel=VOXEL, mu=3 * VOXEL, table=table, pool=pool), CAM)
    c2w, _ = pose_arrays(pose)
    fusion.allocate(cuda.to_device(depth), cuda.to_device(c2w))
    return fusion


def _need(seed: int) -> np.ndarray[Any, Any]:
    """The blocks of frame ``seed``, allocated with room to spare (sorted keys)."""
    if seed not in _NEED:
        fusion = _allocate(seed, 4096, 4096)
        assert fusion.status().lost == 0
        keys = np.sort(ss.to_host(fusion.blocks)[: fusion.stored()])
        if ss.SIMULATOR:  # the reference's set, exactly
            depth, pose = _frame(seed)
            want = segment_blocks(depth, pose_arrays(pose)[0], CAM, PARAMS, int(fusion.max_cells))
            np.testing.assert_array_equal(keys, want)
        _NEED[seed] = keys
    return _NEED[seed]


@pytest.mark.parametrize(
    ("seed", "load", "pool"),
    [
        (0, 0.01, 1.0),
        (1, 0.1, 1.0),
        (2, 0.5, 1.0),
        (3, 0.9, 1.0),
        (4, 0.95, 1.0),
        (5, 1.0, 1.0),  # the table exactly full
        (6, 1.6, 1.0),  # the table smaller than the need: inserts fail, counted
        (7, 0.5, -1),  # the pool one block short: one pool index dropped
        (8, 0.75, 0.5),  # the pool for half the blocks
        (9, 1.3, 0.5),  # both short
    ],
)
def test_every_block_is_present_or_counted(seed: int, load: float, pool: float) -> None:
    need = _need(seed)
    table = max(1, round(need.size / load))
    slots = need.size - 1 if pool < 0 else max(1, round(pool * need.size))
    fusion = _allocate(seed, table, slots)
    assert_present_or_counted(fusion, need)
    s = fusion.status()
    assert (s.failed > 0) == (table < need.size)
    assert s.dropped == max(0, min(need.size, table) - slots)


def test_capacity_runs_out_in_a_later_frame() -> None:
    # Two frames into a pool sized for the first: the second frame's new blocks are counted
    # as dropped, the first frame's are all there.
    (d0, p0), (d1, p1) = _frames(2)
    (c0, _), (c1, _) = pose_arrays(p0), pose_arrays(p1)
    both = Fusion(PARAMS, CAM)  # the blocks of each frame, with room to spare
    both.allocate(cuda.to_device(d0), cuda.to_device(c0))
    n0 = both.stored()
    both.allocate(cuda.to_device(d1), cuda.to_device(c1))
    total = both.stored()
    assert 0 < n0 < total
    fusion = Fusion(Params(voxel=VOXEL, mu=3 * VOXEL, table=1024, pool=n0), CAM)
    assert fusion.fuse(d0, p0) == n0
    assert fusion.fuse(d1, p1) == n0
    s = fusion.status()
    assert (s.blocks, s.occupied, s.failed, s.dropped) == (n0, total, 0, total - n0)
    assert sorted(fusion.volume()) == sorted(ss.to_host(both.blocks)[:n0].tolist())
    with pytest.raises(ss.CapacityExceeded, match=r"items were dropped") as info:
        fusion.check()
    assert (info.value.dropped, info.value.limit) == (total - n0, n0)


# ----------------------------------------------------------------------------- command line


def test_check_command_passes() -> None:
    args = ["--check", "--frames", "1", "--width", "40", "--height", "30", "--voxel", "0.06"]
    r = subprocess.run([sys.executable, str(RUN), *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "TSDF fusion on the CUDA simulator (CPU)" in r.stdout
    assert "lost: 0 failed table inserts, 0 blocks without a pool index" in r.stdout
    assert "0 missing on the device, 0 extra" in r.stdout
    assert r.stdout.rstrip().endswith("ok")


def test_check_command_fails_when_blocks_are_lost(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--check", "--frames", "1", "--width", "32", "--height", "24", "--voxel", "0.08"]
    assert main([*args, "--pool", "8"]) == 1
    out = capsys.readouterr().out
    assert "blocks without a pool index  <-- capacities too small" in out
    assert out.rstrip().endswith("FAILED")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--frames", "0"], "--frames 0: expected >= 1"),
        (["--voxel", "-1"], "--voxel -1.0: expected > 0"),
        (["--noise", "-0.1"], "--noise -0.1: expected >= 0"),
    ],
)
def test_bad_arguments_are_refused(
    args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    assert fragment in capsys.readouterr().err
