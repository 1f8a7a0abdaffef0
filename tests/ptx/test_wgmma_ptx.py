"""``simtsafe.wgmma`` on the real target (NVVM for sm_90a, no GPU): the rules of
tests/kernels/wgmma_rules.py (each refused kernel with its message, each accepted twin), the
compiled-form phase check deciding alone (an in-flight group's reads, a wait without the proxy
fence, a wgmma that is no barrier), and examples/gemm_bf16_wgmma.py and its raw twin: 16
``wgmma.mma_async`` per round, one group left in flight, every copy wait fenced, the
descriptors of the 128-byte swizzled tiles."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from numba import cuda, types

import simtsafe as ss
from tests.coop_examples import example
from tests.kernels import load_kernel_module
from tests.kernels import wgmma_rules as rules

pytestmark = pytest.mark.ptx

CC = (9, 0, "a")  # wgmma is an sm_90a instruction
#: The descriptors' constant bits: 128-byte swizzle (bit 62), stride 1024 B between 8-row
#: groups; A's leading offset unused (16 B), B's the 64-row column block (64 * 128 B).
A_DESC = (1 << 62) | ((1024 >> 4) << 32) | ((16 >> 4) << 16)
B_DESC = (1 << 62) | ((1024 >> 4) << 32) | ((64 * 128 >> 4) << 16)


def _compile(tmp_path: Path, source: str) -> str:
    return str(load_kernel_module(tmp_path, source).k.ptx(cc=CC))


def test_the_small_gemm_is_accepted(tmp_path: Path) -> None:
    ptx = _compile(tmp_path, rules.ACCEPTED)
    assert len(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16", ptx)) == 4
    assert "wgmma.wait_group.sync.aligned 0;" in ptx
    # the wait for the copies is fenced for the tensor cores' proxy
    assert re.search(r"cp\.async\.wait_group 0;\s*fence\.proxy\.async\.shared::cta;", ptx)


@pytest.mark.parametrize("case", sorted(rules.REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    source, fragment = rules.REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        _compile(tmp_path, source)
    assert fragment in str(info.value), str(info.value)
    assert "kernel 'k'" in str(info.value)


@pytest.mark.parametrize("case", sorted(rules.ACCEPTED_TWINS))
def test_accepted_twin(tmp_path: Path, case: str) -> None:
    assert set(rules.ACCEPTED_TWINS) <= set(rules.REFUSED)
    assert "wgmma.mma_async" in _compile(tmp_path, rules.ACCEPTED_TWINS[case])


@pytest.fixture
def compiled_form_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The source-level phase analysis forgotten: only the compiled form decides."""
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)
    yield


@pytest.mark.usefixtures("compiled_form_only")
def test_the_compiled_form_sees_a_group_read_the_refilled_tile(tmp_path: Path) -> None:
    source, _ = rules.REFUSED["refill_in_flight"]
    with pytest.raises(ss.SafetyError) as info:
        _compile(tmp_path, source)
    assert info.value.rule == "tile-phase"
    assert "read by a wgmma group still in flight (wgmma.mma_async) at line" in str(info.value)


@pytest.mark.usefixtures("compiled_form_only")
def test_a_wgmma_is_no_barrier(tmp_path: Path) -> None:
    """The wait without the barrier after it: the wgmma reads in the fill's interval (a
    wgmma that counted as a barrier -- a block collective -- would hide it)."""
    source = rules._swap("ss.shared.wait_group(0)\n    ss.block.sync()", "ss.shared.wait_group(0)")
    with pytest.raises(ss.SafetyError) as info:
        _compile(tmp_path, source)
    assert info.value.rule == "tile-phase"
    assert "filled asynchronously (cp.async) at line" in str(info.value)


@pytest.mark.usefixtures("compiled_form_only")
def test_a_wait_in_a_helper_has_no_fence_and_is_refused(tmp_path: Path) -> None:
    helper = "@ss.device\ndef settle() -> None:\n    ss.shared.wait_group(0)\n\n\n"
    source = helper + rules._swap("ss.shared.wait_group(0)", "settle()")
    with pytest.raises(ss.SafetyError) as info:
        _compile(tmp_path, source)
    assert "is not followed by the proxy fence" in str(info.value)
    assert "(in helper settle" in str(info.value)
    # its twin, the wait in the kernel (ACCEPTED), compiles: test_the_small_gemm_is_accepted


@pytest.mark.parametrize("case", sorted(rules.GROUPS_COUNTED_APART))
@pytest.mark.usefixtures("compiled_form_only")
def test_copy_groups_and_wgmma_groups_are_counted_apart(tmp_path: Path, case: str) -> None:
    source, fragment = rules.GROUPS_COUNTED_APART[case]
    with pytest.raises(ss.SafetyError) as info:
        _compile(tmp_path, source)
    assert info.value.rule == "tile-phase"
    assert fragment in str(info.value), str(info.value)


# --------------------------------------------------------------------------- the example


def count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx.split(".entry", 1)[1]))


@cache
def safe() -> str:
    return str(example("gemm_bf16_wgmma").gemm_bf16.ptx(cc=CC))


@cache
def raw() -> str:
    g = example("gemm_bf16_wgmma")
    sig = (types.float32[:, ::1], types.uint16[:, ::1], types.uint16[:, ::1])
    ptx, _ = cuda.compile_ptx(g.gemm_bf16_raw.py_func, sig, cc=CC)
    return str(ptx)


def test_the_example_pipelines_one_group_in_flight() -> None:
    ptx = safe()
    wgmma = r"wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16"
    assert count(ptx, wgmma) == 16  # four steps of a round, four per 64 columns of K
    assert count(ptx, r"wgmma\.wait_group\.sync\.aligned 1;") == 4
    assert count(ptx, r"wgmma\.wait_group\.sync\.aligned 0;") == 1
    waits = count(ptx, r"cp\.async\.wait_(?:group \d+|all);")
    assert waits == 5 and count(ptx, r"fence\.proxy\.async\.shared::cta;") == waits
    for desc in (A_DESC, B_DESC):
        assert str(desc) in ptx, desc


def test_the_raw_twin_has_the_same_instructions() -> None:
    ptx = raw()
    assert count(ptx, r"wgmma\.mma_async\.sync\.aligned\.m64n256k16") == 4  # a loop of steps
    assert count(ptx, r"wgmma\.wait_group\.sync\.aligned 1;") == 1
    assert count(ptx, r"fence\.proxy\.async\.shared::cta;") == 1


def test_a_whole_warpgroup_rectangle_is_stored_with_no_compare() -> None:
    # wgmma.store tests once whether the warpgroup's 64 x 256 rectangle lies inside c; then its
    # 128 stores follow one another (constant offsets from two row addresses), no test between
    # them. The edge path stores the same 128 elements one checked store at a time.
    body = safe().split(".entry", 1)[1]
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    longest = run = 0
    for line in lines:
        run = run + 1 if line.startswith("st.global.f32") else 0
        longest = max(longest, run)
    assert longest == 128
    assert count(safe(), r"st\.global\.f32") == 256
