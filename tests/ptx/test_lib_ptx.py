"""The library's kernels on the real target (NVVM, no GPU): what the hot path compiles to, and
that they pass the same gate as user code (``simtsafe.check_kernel``, ``audit``)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import simtsafe as ss
from simtsafe.lib import _scan_kernels as sk
from tests.ptx.ptx_text import basic_blocks

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx, re.MULTILINE))


@pytest.mark.parametrize("dtype", sk.DTYPES, ids=str)
def test_scan_copies_and_writes_16_byte_runs(dtype: np.dtype) -> None:
    """The library's schedule: the tile reaches shared memory by 16-byte cp.async copies (a
    thread's runs straight-line where the tile lies inside x, else the fill loop's, with its
    src-size operand: zero-fill past x's end), each lane reads its
    runs from the shared tile as 16-byte loads twice (scan, then store), and writes them as
    16-byte stores; nothing in local memory."""
    ptx = sk.SCAN[dtype].ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert f".reqntid {sk.BLOCK}, 1, 1" in ptx
    assert re.findall(r"cp\.async\.cg\.shared\.global \[%\w+\], \[%\w+\], 16, %r\d+;", body)
    # the whole-tile path's copies (a thread's RUNS runs one after another: the block is
    # pinned), the per-run loop's copy, and wait_all
    assert _count(body, r"cp\.async\.") == sk.RUNS + 2
    assert body.index("cp.async.wait_all;") < body.index("ld.shared.v4")
    assert _count(body, r"^\s*ld\.shared\.v4\.") == 2 * sk.RUNS
    assert _count(body, r"^\s*st\.global\.v4\.") == sk.RUNS
    # No data load other than the copy's element path (x misaligned or its last partial run).
    assert _count(body, r"^\s*ld\.global\.v") == 0
    assert ".local" not in body


@pytest.mark.parametrize("dtype", sk.DTYPES, ids=str)
def test_scan_protocol_atomics(dtype: np.dtype) -> None:
    """The tile counter, the two publications and the look-back's read are 64-bit atomics on the
    status word (flag and value in one access, no fence); the look-back loop holds one read
    and no block barrier: the four barriers are the tile number's broadcast, the copy's, the
    warps' scan and the exclusive prefix's hand-off."""
    ptx = sk.SCAN[dtype].ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    assert _count(body, r"atom\.global\.add\.u32") == 1  # the tile counter
    assert _count(body, r"atom\.global\.exch\.b64") == 2  # aggregate, then inclusive prefix
    assert _count(body, r"atom\.global\.or\.b64") == 1  # the look-back's read: flag + value
    assert _count(body, r"ld\.global\.\S*(u64|b64|s64)") == 0  # no other read of a status word
    assert "membar" not in body and "fence" not in body  # one word per status: no fence
    assert _count(body, r"^\s*bar\.sync") == 4
    blocks = basic_blocks(ptx)
    (look,) = [i for i, b in enumerate(blocks) if any("atom.global.or.b64" in x for x in b)]
    # The retry loop: from the read back to it, warp collectives (shfl), no barrier.
    after = [x for b in blocks[look:] for x in b]
    back = next(i for i, x in enumerate(after) if "atom.global.exch.b64" in x)
    assert not any(x.startswith("bar.sync") for x in after[:back])
    assert any(x.startswith("shfl.sync") for x in after[:back])


def test_scan_fits_its_register_cap() -> None:
    """ptxas (inside nvJitLink) fits the library kernel in MAX_REGISTERS with no spill: five
    blocks of 256 threads per multiprocessor (the schedule's premise)."""
    nvjitlink = pytest.importorskip("cuda.bindings.nvjitlink")
    for dtype in sk.DTYPES:
        data = sk.SCAN[dtype].ptx(cc=CC).encode()
        handle = nvjitlink.create(2, ["-arch=sm_90", "-verbose"])
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "k")
        nvjitlink.complete(handle)
        log = bytearray(nvjitlink.get_info_log_size(handle))
        nvjitlink.get_info_log(handle, log)
        text = log.decode()
        regs = int(re.findall(r"used (\d+) registers", text)[-1])
        assert regs <= sk.MAX_REGISTERS, text
        assert "0 bytes spill stores" in text and "0 bytes lmem" in text, text


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


#: Other parameters of the library's schedule, as benchmarks/primitives.py builds them.
STAGED = [{"threads": 256, "runs": 4}, {"threads": 128, "runs": 8}]


@pytest.mark.parametrize("cfg", STAGED, ids=str)
def test_staged_variants_copy_and_write_16_byte_runs(cfg: dict[str, int]) -> None:
    """Other threads x runs of the staged schedule: 16-byte copies (whole-tile and per-run), each run read from
    the shared tile twice and written once as 16 bytes, nothing in local memory, the
    protocol's atomics and no fence."""
    s = sk._make_scan_staged(np.dtype(np.float32), **cfg)
    ptx = s.kernel.ptx(cc=CC)
    body = ptx.split(".entry", 1)[1]
    runs = cfg["runs"]
    assert f".reqntid {cfg['threads']}, 1, 1" in ptx
    # the whole-tile copies (one a run), the per-run loop's copy, and wait_all
    assert _count(body, r"cp\.async\.") == runs + 2
    assert _count(body, r"^\s*ld\.shared\.v4\.") == 2 * runs
    assert _count(body, r"^\s*st\.global\.v4\.") == runs
    assert _count(body, r"^\s*ld\.global\.v") == 0
    assert ".local" not in body
    assert _count(body, r"atom\.global\.add\.u32") == 1
    assert _count(body, r"atom\.global\.exch\.b64") == 2
    assert _count(body, r"atom\.global\.or\.b64") == 1
    assert "membar" not in body and "fence" not in body
    assert s.tile == cfg["threads"] * runs * 4


def test_old_schedule_reads_and_writes_16_byte_runs() -> None:
    """The old schedule (benchmarks, and GPUs older than 8.0): four runs per lane in registers."""
    body = sk.scan_before_sm80(np.dtype(np.int32)).kernel.ptx(cc=CC).split(".entry", 1)[1]
    assert _count(body, r"^\s*ld\.global\.v4\.") == 4
    assert _count(body, r"^\s*st\.global\.v4\.") == 4
    assert "ld.local" not in body and "st.local" not in body
    assert "cp.async" not in body


def test_staged_variant_passes_the_gate() -> None:
    s = sk._make_scan_staged(np.dtype(np.int32), threads=128, runs=8)
    assert ss.check_kernel(s.kernel) == []
    for region in s.kernel.unsafe_regions:
        assert region.reason.startswith("SAFETY: ") and len(region.reason) > 60, region
