"""The library's kernels on the real target (NVVM, no GPU): what the hot path compiles to, and
that they pass the same gate as user code (``simtsafe.check_kernel``, ``audit``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.lib import _scan_kernels as sk

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx, re.MULTILINE))


@pytest.mark.parametrize("dtype", sk.DTYPES, ids=str)
def test_scan_reads_and_writes_16_byte_runs(dtype: np.dtype) -> None:
    ptx = sk.SCAN[dtype].ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert ".reqntid 256, 1, 1" in ptx
    # Four runs per lane: one 16-byte load and one 16-byte store each on the aligned path.
    assert _count(body, r"^\s*ld\.global\.v4\.") == 4
    assert _count(body, r"^\s*st\.global\.v4\.") == 4
    # No spills: everything lives in registers.
    assert "ld.local" not in body and "st.local" not in body


@pytest.mark.parametrize("dtype", sk.DTYPES, ids=str)
def test_scan_protocol_atomics(dtype: np.dtype) -> None:
    body = sk.SCAN[dtype].ptx(cc=CC).split(".entry", 1)[1]
    assert _count(body, r"atom\.global\.add\.u32") == 1  # the tile counter
    assert _count(body, r"atom\.global\.exch\.b64") == 2  # aggregate, then inclusive prefix
    assert _count(body, r"atom\.global\.or\.b64") == 1  # the look-back's reads
    assert "membar" not in body and "fence" not in body  # one word per status: no fence


def test_reset_kernel_compiles() -> None:
    assert "st.global.u64" in sk.reset_scratch.ptx(cc=CC)


@pytest.mark.parametrize("kernel", [*sk.SCAN.values(), sk.reset_scratch])
def test_library_kernels_pass_the_gate(kernel: ss.Kernel) -> None:  # type: ignore[type-arg]
    assert ss.check_kernel(kernel) == []


def test_every_unsafe_region_states_a_reason() -> None:
    regions = [r for k in sk.SCAN.values() for r in k.unsafe_regions]
    regions += sk.store_run.unsafe_regions
    assert regions
    for region in regions:
        assert region.reason.startswith("SAFETY: ") and len(region.reason) > 60, region


#: (schedule options, 16-byte runs per lane): the candidates benchmarks/primitives.py measures.
SCHEDULES = [({"threads": 256, "runs": 4}, 4), ({"threads": 128, "runs": 8}, 8)]


@pytest.mark.parametrize(("cfg", "runs"), SCHEDULES, ids=str)
def test_warp_lookback_schedules_keep_runs_in_registers(cfg: dict[str, int], runs: int) -> None:
    """The candidate schedules: one 16-byte load and store per run, the thread-private array
    of runs in registers (no local memory), the protocol's atomics, one block barrier after
    the look-back besides the tile number's broadcast and the warps' scan."""
    s = sk._make_scan_warp(np.dtype(np.float32), **cfg)
    ptx = s.kernel.ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert f".reqntid {cfg['threads']}, 1, 1" in ptx
    assert _count(body, r"^\s*ld\.global\.v4\.") == runs
    assert _count(body, r"^\s*st\.global\.v4\.") == runs
    assert "ld.local" not in body and "st.local" not in body
    assert _count(body, r"atom\.global\.add\.u32") == 1
    assert _count(body, r"atom\.global\.exch\.b64") == 2
    assert _count(body, r"atom\.global\.or\.b64") == 1
    assert "membar" not in body and "fence" not in body
    assert s.tile == cfg["threads"] * runs * 4


def test_warp_lookback_schedule_passes_the_gate() -> None:
    s = sk._make_scan_warp(np.dtype(np.int32), threads=128, runs=8)
    assert ss.check_kernel(s.kernel) == []
    for region in s.kernel.unsafe_regions:
        assert region.reason.startswith("SAFETY: ") and len(region.reason) > 60, region
