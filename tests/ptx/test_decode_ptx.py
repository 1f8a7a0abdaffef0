"""examples/decode's kernels in PTX (NVVM, no GPU): the memory-bound GEMVs read 16-byte runs.

Each pair GEMV (gemv.py: two rows a warp) reads its weights with ``vec.load_runs``: a batch of
``2 * RUNS`` runs (``RUNS`` of each row, or ``RUNS / 2`` of each of gate/up's four rows) as
``ld.global.v4.u32`` (8 bf16 in one access), all in one straight-line block so that they are
in flight together, and reads its staged input as ``ld.shared.v4.f32``; the attention reads
K and V as 8-byte runs of 4 bf16 (``ld.global.v2.u32``), four positions' runs in one block. No kernel
of the step calls a function or keeps a thread-private array in local memory except
qk_rope_append, where libdevice's sin/cos keep theirs (the Payne-Hanek range reduction of
large angles).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from decode import attention as A  # noqa: E402
from decode import gemv as G  # noqa: E402
from decode import kernels as K  # noqa: E402

from tests.ptx.ptx_text import loads_per_block  # noqa: E402

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _count(ptx: str, pattern: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{pattern}", ptx, flags=re.MULTILINE))


@pytest.fixture(scope="module")
def ptx() -> dict[str, str]:
    kernels = {
        "gemv_norm": G.gemv_norm,
        "gemv_swiglu": G.gemv_swiglu,
        "gemv_residual": G.gemv_residual,
        "lm_head": G.lm_head,
        "attention": A.attention,
        "combine": K.combine,
        "qk_rope_append": K.qk_rope_append,
        "finish": K.finish,
    }
    return {n: k.ptx(cc=CC) for n, k in kernels.items()}


@pytest.mark.parametrize("name", ["gemv_norm", "lm_head", "gemv_residual", "gemv_swiglu"])
def test_gemv_reads_a_batch_of_16_byte_weight_runs_in_one_block(
    ptx: dict[str, str], name: str
) -> None:
    code = ptx[name]
    per_block = loads_per_block(code, r"ld\.global\.v4\.u32")
    # the first batch and the loop's: 2 * RUNS loads back to back in one block each
    assert sorted(per_block)[-2:] == [2 * G.RUNS, 2 * G.RUNS], per_block
    assert _count(code, r"ld\.shared\.v4\.f32") >= 2
    assert _count(code, r"ld\.global\.v2") == 0
    assert _count(code, r"call") == 0 and ".local" not in code
    assert ".minnctapersm " + str(G.BLOCKS_PER_SM) in code  # blocks_per_sm bounds registers


def test_attention_reads_k_and_v_in_runs(ptx: dict[str, str]) -> None:
    code = ptx["attention"]
    # four positions in flight: their K runs (8 bytes: 4 bf16) back to back in one block,
    # then their V runs in another (one vec.load_runs each); the four heads' q runs (f32x4)
    # likewise. The other vector loads are the runs' checked paths, one a block.
    v2 = sorted(loads_per_block(code, r"ld\.global\.v2\.u32"))
    assert v2[-2:] == [4, 4] and set(v2[:-2]) <= {0, 1}, v2
    v4 = sorted(loads_per_block(code, r"ld\.global\.v4\.f32"))
    assert v4[-1] == 4, v4
    assert _count(code, r"call") == 0 and ".local" not in code


@pytest.mark.parametrize("name", ["combine", "finish"])
def test_small_kernels_have_no_calls_or_local_memory(ptx: dict[str, str], name: str) -> None:
    assert _count(ptx[name], r"call") == 0 and ".local" not in ptx[name]


def _assemble(code: str) -> str:
    nvjitlink = pytest.importorskip("cuda.bindings.nvjitlink")
    h = nvjitlink.create(2, ["-arch=sm_90", "-verbose"])
    try:
        data = code.encode()
        nvjitlink.add_data(h, nvjitlink.InputType.PTX, data, len(data), "k")
        nvjitlink.complete(h)
        buf = bytearray(nvjitlink.get_info_log_size(h))
        nvjitlink.get_info_log(h, buf)
        return buf.decode(errors="replace")
    finally:
        nvjitlink.destroy(h)


@pytest.mark.parametrize(
    ("name", "most"),
    [
        # blocks_per_sm=3 caps the GEMVs at 80 registers (4: 64, ~70 bytes spill)
        ("gemv_norm", 0),
        ("gemv_swiglu", 48),  # four rows a warp: a few bytes spill at 80
        ("gemv_residual", 0),
        ("lm_head", 0),
        ("attention", 0),
    ],
)
def test_registers_spill_at_most(ptx: dict[str, str], name: str, most: int) -> None:
    log = _assemble(ptx[name])
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert spills, log
    assert all(int(st) <= most and int(ld) <= most for st, ld in spills), log
