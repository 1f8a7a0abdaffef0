"""Hash-blocked TSDF fusion on simtsafe, every kernel Tier 1 (issue 19).

Modules: ``scene`` (the analytic scene, the camera path, synthetic depth frames),
``volume`` (blocks, 64-bit keys, parameters), ``kernels`` (the Tier-1 kernels:
allocate, integrate, raycast), ``raw`` (their raw ``numba.cuda.jit`` twins),
``reference`` (the numpy reference), ``fusion`` (the device volume and its launches),
``checks`` (the criteria a fused volume must meet), ``run`` (the command line). ``run()`` below is the entry of ``examples/run_all.py``.
"""

from __future__ import annotations


def run(width: int = 640, height: int = 480, frames: int = 4, voxel_mm: int = 10) -> bool:
    """Fuse ``frames`` synthetic depth frames (voxels of ``voxel_mm`` millimetres) and
    compare with the numpy reference.

    On the simulator the block set and the weights must be identical and the TSDF values
    within ``checks.TSDF_TOL``; on a GPU (fused multiply-adds) nearly so (``checks.compare``).
    Nothing may be lost, and the raycast must match the analytic scene (``checks.ray_ok``).
    """
    import simtsafe as ss

    from .checks import compare, ray_ok
    from .fusion import Fusion, pose_arrays
    from .reference import Reference
    from .scene import SCENE, Intrinsics, depth_frame, orbit
    from .volume import Params

    voxel = voxel_mm / 1000
    params = Params(voxel=voxel, mu=(3 if ss.SIMULATOR else 4) * voxel)
    cam = Intrinsics.kinect(width, height)
    fusion = Fusion(params, cam)
    ref = Reference(params, cam, int(fusion.max_cells))
    poses = orbit(frames)
    depths = [depth_frame(SCENE, cam, pose, max_depth=params.max_depth) for pose in poses]
    for depth, pose in zip(depths, poses, strict=True):
        fusion.fuse(depth, pose)
        ref.fuse(depth, *pose_arrays(pose))
    good, _ = ray_ok(fusion.raycast(poses[0]), depths[0], voxel)
    return bool(
        fusion.status().lost == 0 and good and compare(fusion, ref, ss.SIMULATOR, show=False)
    )
