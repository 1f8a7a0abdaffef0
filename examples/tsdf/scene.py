"""The known scene, camera and camera path, and the synthetic depth frames (numpy, host).

The scene is a signed-distance function made of axis-aligned boxes (a floor
slab and a cube) and spheres, in metres, world y pointing up. Its depth
frames are ray-cast *analytically* (ray against sphere, ray against box by
slabs), in float64, so a frame holds the exact depth of the first surface
along each pixel's ray: the distance along the camera's optical axis (the
camera-space z), 0 where the ray hits nothing. Seeded noise is optional.

Cameras are pinhole (``Intrinsics``), x right, y down, z forward; a pose is
the 4x4 camera-to-world matrix. ``orbit(n)`` gives ``n`` poses on a circle
around the scene, all looking at its middle.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SCENE", "Intrinsics", "Scene", "depth_frame", "look_at", "orbit"]

F64 = np.ndarray[Any, np.dtype[np.float64]]
F32 = np.ndarray[Any, np.dtype[np.float32]]


@dataclass(frozen=True)
class Intrinsics:
    """A pinhole camera: focal lengths and principal point in pixels, image size."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    @classmethod
    def kinect(cls, width: int = 640, height: int = 480) -> Intrinsics:
        """The Kinect v1 camera (fx = fy = 525 at 640x480), scaled to ``width`` x ``height``."""
        if width < 2 or height < 2:
            raise ValueError(f"image size {width}x{height}: expected at least 2x2 pixels")
        s = width / 640.0
        return cls(
            width, height, 525.0 * s, 525.0 * height / 480.0, (width - 1) / 2, (height - 1) / 2
        )

    def rays(self) -> F64:
        """(height, width, 3) camera-space ray directions with z = 1 (a point at depth d: d * ray)."""
        v, u = np.mgrid[0 : self.height, 0 : self.width].astype(np.float64)
        return np.stack(
            [(u - self.cx) / self.fx, (v - self.cy) / self.fy, np.ones_like(u)], axis=-1
        )


@dataclass(frozen=True)
class Scene:
    """Axis-aligned boxes (centre, half extents) and spheres (centre, radius), in metres."""

    boxes: tuple[tuple[tuple[float, float, float], tuple[float, float, float]], ...]
    spheres: tuple[tuple[tuple[float, float, float], float], ...]

    def sdf(self, p: F64) -> F64:
        """The signed distance of points ``p`` (..., 3) to the surface (negative inside)."""
        d = np.full(p.shape[:-1], np.inf)
        for centre, half in self.boxes:
            q = np.abs(p - np.asarray(centre)) - np.asarray(half)
            outside = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
            inside = np.minimum(q.max(axis=-1), 0.0)
            d = np.minimum(d, outside + inside)
        for centre, radius in self.spheres:
            d = np.minimum(d, np.linalg.norm(p - np.asarray(centre), axis=-1) - radius)
        return d

    def bounds(self) -> tuple[F64, F64]:
        """The smallest axis-aligned box holding every primitive: (low, high) corners."""
        lo = [np.asarray(c) - np.asarray(h) for c, h in self.boxes]
        lo += [np.asarray(c) - r for c, r in self.spheres]
        hi = [np.asarray(c) + np.asarray(h) for c, h in self.boxes]
        hi += [np.asarray(c) + r for c, r in self.spheres]
        return np.min(lo, axis=0), np.max(hi, axis=0)

    def intersect(self, origin: F64, dirs: F64) -> F64:
        """The ray parameter t of the first hit of ``origin + t * dirs`` (t > 0), inf if none."""
        t_hit = np.full(dirs.shape[:-1], np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            for centre, half in self.boxes:
                lo = (np.asarray(centre) - np.asarray(half) - origin) / dirs
                hi = (np.asarray(centre) + np.asarray(half) - origin) / dirs
                t_in = np.nanmax(np.minimum(lo, hi), axis=-1)
                t_out = np.nanmin(np.maximum(lo, hi), axis=-1)
                hit = (t_in <= t_out) & (t_in > 0)
                t_hit = np.where(hit & (t_in < t_hit), t_in, t_hit)
            for centre, radius in self.spheres:
                oc = origin - np.asarray(centre)
                a = np.sum(dirs * dirs, axis=-1)
                b = np.sum(dirs * oc, axis=-1)
                c = np.dot(oc, oc) - radius * radius
                disc = b * b - a * c
                t_in = (-b - np.sqrt(np.maximum(disc, 0.0))) / a
                hit = (disc >= 0) & (t_in > 0)
                t_hit = np.where(hit & (t_in < t_hit), t_in, t_hit)
        return t_hit


#: A floor slab 3 m x 3 m, a 0.4 m cube and three spheres.
SCENE = Scene(
    boxes=(
        ((0.0, -0.05, 0.0), (1.5, 0.05, 1.5)),
        ((-0.45, 0.2, -0.35), (0.2, 0.2, 0.2)),
    ),
    spheres=(
        ((0.0, 0.3, 0.1), 0.3),
        ((0.55, 0.18, 0.35), 0.18),
        ((-0.2, 0.12, 0.55), 0.12),
    ),
)


def look_at(eye: F64, target: F64, up: F64 | None = None) -> F64:
    """The camera-to-world pose of a camera at ``eye`` looking at ``target`` (world y up)."""
    up = np.array([0.0, 1.0, 0.0]) if up is None else up
    f = target - eye
    f = f / np.linalg.norm(f)
    r = np.cross(f, up)
    r = r / np.linalg.norm(r)
    d = np.cross(f, r)  # camera y points down
    pose = np.eye(4)
    pose[:3, 0], pose[:3, 1], pose[:3, 2], pose[:3, 3] = r, d, f, eye
    return pose


def orbit(
    n: int,
    radius: float = 2.0,
    height: float = 1.1,
    target: tuple[float, float, float] = (0, 0.2, 0),
) -> list[F64]:
    """``n`` camera-to-world poses evenly spaced on a horizontal circle, looking at ``target``."""
    if n < 1:
        raise ValueError(f"orbit(n={n}): expected at least one pose")
    poses = []
    for k in range(n):
        a = 2.0 * np.pi * k / n + 0.3
        eye = np.array([radius * np.sin(a), height, radius * np.cos(a)])
        poses.append(look_at(eye, np.asarray(target, np.float64)))
    return poses


def depth_frame(
    scene: Scene,
    cam: Intrinsics,
    pose: F64,
    noise: float = 0.0,
    seed: int = 0,
    max_depth: float = np.inf,
) -> F32:
    """The depth image (float32, metres along the optical axis) of ``scene`` seen from ``pose``.

    Pixels whose ray hits nothing, or hits farther than ``max_depth``, hold 0.
    ``noise`` > 0 adds seeded Gaussian noise of standard deviation ``noise * depth**2``
    (the quadratic growth of structured-light sensors).
    """
    dirs = cam.rays() @ pose[:3, :3].T  # world directions whose camera z is 1
    t = scene.intersect(pose[:3, 3], dirs)  # t is the camera z: the depth
    depth = np.where(np.isfinite(t) & (t <= max_depth), t, 0.0)
    if noise > 0:
        rng = np.random.default_rng(seed)
        depth = np.where(depth > 0, depth + rng.standard_normal(depth.shape) * noise * depth**2, 0)
    return depth.astype(np.float32)


def scaled(scene: Scene, factor: float) -> Scene:
    """``scene`` with every length multiplied by ``factor`` (tests: key-range refusals)."""
    return dataclasses.replace(
        scene,
        boxes=tuple(
            (tuple(factor * x for x in c), tuple(factor * x for x in h))  # type: ignore[misc]
            for c, h in scene.boxes
        ),
        spheres=tuple((tuple(factor * x for x in c), factor * r) for c, r in scene.spheres),  # type: ignore[misc]
    )
