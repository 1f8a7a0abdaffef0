"""Porting round 21's kernels on the GPU (tests/kernels/port21.py): numpy's values, as on the
simulator (tests/sim/test_port21_sim.py, which also replays them under sim.check); the complex
tiles stored and loaded as one integer of their size (lowering/_tilebase) run here first.
Skipped without a device."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.kernels import load_kernel_module, port21
from tests.kernels.porting import to_device, to_host

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


@pytest.mark.parametrize("name", sorted(port21.ACCEPTED))
def test_a_ported_kernel_matches_numpy_on_device(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(port21, "_clean", lambda *a: True)  # the replay is the simulator's test
    mod = port21.load(name, tmp_path)
    assert port21.CHECKS[name](mod, np.random.default_rng(21))


def test_a_complex_tiles_read_modify_write_on_device(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, port21.EXTRA_HEADER + port21.COMPLEX_TILE_OWN_READ)
    rng = np.random.default_rng(21)
    x = (rng.standard_normal((3, 64)) + 1j * rng.standard_normal((3, 64))).astype(np.complex64)
    out = to_device(np.zeros((3, 64), np.complex64))
    mod.twiddle.prepare(grid=3, block=64)(out, to_device(x))  # type: ignore[attr-defined]
    want = (x * np.exp(-2j * np.pi * np.arange(64) / 64))[:, ::-1]
    assert np.allclose(to_host(out), want, atol=1e-5)
