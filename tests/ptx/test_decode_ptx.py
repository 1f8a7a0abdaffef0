"""examples/decode's kernels in PTX (NVVM, no GPU): the memory-bound GEMVs read 16-byte runs.

Each warp-per-row GEMV issues its weight runs as ``ld.global.v4.u32`` (8 bf16 in one access),
four per loop iteration (two per row for the two rows of gate/up), and its float32 input runs
as ``ld.global.v4.f32``; no kernel of the step calls a function or keeps a thread-private
array in local memory except qk_rope_append, where libdevice's sin/cos keep theirs (the
Payne-Hanek range reduction of large angles). With nvJitLink present (the cu13 wheels), the
PTX is also assembled for sm_90: the GEMVs spill no register, the attention a few bytes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from decode import kernels as K  # noqa: E402

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _count(ptx: str, pattern: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{pattern}", ptx, flags=re.MULTILINE))


@pytest.fixture(scope="module")
def ptx() -> dict[str, str]:
    names = [
        "gemv_norm_warp",
        "gemv_swiglu_warp",
        "gemv_residual_warp",
        "gemv_residual_split",
        "lm_head_warp",
        "attention",
        "combine",
        "qk_rope_append",
        "finish",
    ]
    return {n: getattr(K, n).ptx(cc=CC) for n in names}


@pytest.mark.parametrize(
    ("name", "weights", "inputs", "norms"),
    [
        ("gemv_norm_warp", 4, 8, 4),  # 4 weight runs, 4 input runs of 2 x f32x4, 4 norm runs
        ("lm_head_warp", 4, 8, 4),
        ("gemv_swiglu_warp", 4, 4, 2),  # 2 rows x 2 runs share 2 input runs
        ("gemv_residual_warp", 4, 8, 0),
        ("gemv_residual_split", 4, 8, 0),
    ],
)
def test_gemv_reads_16_byte_runs(
    ptx: dict[str, str], name: str, weights: int, inputs: int, norms: int
) -> None:
    code = ptx[name]
    assert _count(code, r"ld\.global\.v4\.u32") == weights + norms, code
    assert _count(code, r"ld\.global\.v4\.f32") == inputs
    assert _count(code, r"ld\.global\.v2") == 0
    assert _count(code, r"call") == 0 and ".local" not in code


def test_attention_reads_k_and_v_in_runs(ptx: dict[str, str]) -> None:
    code = ptx["attention"]
    # a K run per score step, a V run per unrolled position (4), q runs as f32x4
    assert _count(code, r"ld\.global\.v4\.u32") >= 5
    assert _count(code, r"ld\.global\.v4\.f32") >= 2
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
        ("gemv_norm_warp", 0),
        ("gemv_swiglu_warp", 0),
        ("gemv_residual_warp", 0),
        ("gemv_residual_split", 0),
        # blocks_per_sm=2 caps it at 128 registers, so that two blocks share a multiprocessor
        # (a 4096 context is 136 blocks: one wave on 132 SMs); ptxas spills a few bytes
        ("attention", 16),
    ],
)
def test_registers_spill_at_most(ptx: dict[str, str], name: str, most: int) -> None:
    log = _assemble(ptx[name])
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert spills, log
    assert all(int(st) <= most and int(ld) <= most for st, ld in spills), log
