"""Append buffers on the real target (NVVM, no GPU): the rules, and what the claim compiles to.

Every rule of tests/kernels/append_rules.py is refused with its message at
its line, and its accepted twin compiles. The claim is one warp-aggregated
atomic (``activemask``, ``popc``, one ``atom.global.add.u64`` by the group's
first lane, two ``shfl.sync.idx`` for the 64-bit old value) inside the branch
that calls it; the store through its witness is bounds-checked against the
buffer; the example's safe kernel has the raw twin's global stores.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.append_rules import ACCEPTED, REFUSED, TYPED

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_when_compiled(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_rule_twin_compiles(tmp_path: Path, case: str) -> None:
    ptx = load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=CC)
    assert "atom.global.add.u64" in ptx
    assert re.search(r"^\s*st\.global\.f32", ptx, re.MULTILINE)


_ONE_CLAIM = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.float32], n: ss.Counter, x: In[np.float32], t: np.float32) -> None:
    w = thread.index_1d()
    if w.in_bounds(x):
        v = x[w]
        if v > t:
            s = out.claim()
            out[s] = v
"""


def _count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx, re.MULTILINE))


def _body(ptx: str) -> list[str]:
    lines = ptx[ptx.index(".entry") :].splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("//")]


def test_a_claim_is_one_warp_aggregated_atomic(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, _ONE_CLAIM).k.ptx(cc=CC)
    assert _count(ptx, r"^\s*atom\.global\.add\.u64") == 1
    assert _count(ptx, r"^\s*activemask\.b32") == 1
    assert _count(ptx, r"^\s*mov\.u32 %r\d+, %lanemask_lt;") == 1
    assert _count(ptx, r"^\s*shfl\.sync\.idx\.b32") == 2  # the 64-bit old value, in two words
    assert _count(ptx, r"^\s*popc\.b32") >= 2  # the group's size and this lane's rank
    assert _count(ptx, r"^\s*st\.global\.f32") == 1
    assert "call" not in "\n".join(_body(ptx))  # everything inline
    # The atomic is issued by one lane of the group: it sits behind a branch.
    body = _body(ptx)
    atom = next(i for i, line in enumerate(body) if line.startswith("atom.global.add.u64"))
    assert any(line.startswith("@%p") and " bra" in line for line in body[atom - 4 : atom])


def test_activemask_stays_inside_the_branch_that_claims(tmp_path: Path) -> None:
    # Hoisted above `if v > t`, it would name lanes that never reach the shuffle.
    body = _body(load_kernel_module(tmp_path, _ONE_CLAIM).k.ptx(cc=CC))
    compare = next(i for i, line in enumerate(body) if line.startswith("setp.leu.f32"))
    mask = next(i for i, line in enumerate(body) if line.startswith("activemask.b32"))
    assert compare < mask


def test_the_store_through_a_claim_is_bounds_checked(tmp_path: Path) -> None:
    body = _body(load_kernel_module(tmp_path, _ONE_CLAIM).k.ptx(cc=CC))
    # A dropped claim is the invalid witness (2**63 - 1) ...
    assert any(line.startswith("selp.b64") and "9223372036854775807" in line for line in body)
    # ... and the store is skipped unless the slot is below the buffer's length.
    store = next(i for i, line in enumerate(body) if line.startswith("st.global.f32"))
    guard = max(i for i, line in enumerate(body[:store]) if " bra" in line)
    predicate = body[guard].split()[0].lstrip("@!")
    setp = [line for line in body[:guard] if line.startswith("setp") and predicate + "," in line]
    assert setp and ".u64" in setp[-1], setp


_RAW = """
@cuda.jit
def raw(out, n, x, t):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if v > t:
            s = cuda.atomic.add(n, 0, 1)
            if s < out.size:
                out[s] = v
"""


def test_same_global_traffic_as_the_raw_twin(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _ONE_CLAIM + _RAW)
    safe = mod.k.ptx(cc=CC)
    raw, _ = cuda.compile_ptx(mod.raw.py_func, mod.k.argtypes(), cc=CC)
    for op in (r"ld\.global(\.nc)?\.f32", r"st\.global\.f32", r"atom\.global\.add\.u64"):
        assert _count(safe, r"^\s*" + op) == _count(raw, r"^\s*" + op) == 1, op


def test_the_example_compiles_with_the_aggregated_claim() -> None:
    import importlib
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    compact = importlib.import_module("compact")
    ptx = compact.compact_warp.ptx(cc=CC)  # (compact itself: tests/ptx/test_block_claim_ptx.py)
    assert "activemask.b32" in ptx and "atom.global.add.u64" in ptx
    assert ".reqntid 256, 1, 1" in ptx


_DIVERGENT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.int32], n: ss.Counter, x: In[np.int32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(x):
        v = x[w]
        if v % 3 == 0:
            s = out.claim()
            out[s] = v
        elif v % 3 == 1:
            s = out.claim()
            out[s] = -v
        while v > 5:
            v = v // 2
            s = out.claim()
            out[s] = v
    total = ss.block.sum(1)
    if total > 1000:
        s = out.claim()
        out[s] = total
"""


def test_claims_in_divergent_code_compile_next_to_a_collective(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, _DIVERGENT).k.ptx(cc=CC)
    assert _count(ptx, r"^\s*activemask\.b32") == 4
    assert _count(ptx, r"^\s*bar\.sync") >= 1


def test_source_level_fallback_agrees(tmp_path: Path) -> None:
    # What the simulator decides without a CUDA target: a barrier steered by a claimed slot
    # is refused there too, and a collective after a claim is accepted.
    steered, _ = REFUSED["barrier-steered-by-the-slot"]
    assert load_kernel_module(tmp_path, steered).k.source_uniformity().finding is not None
    after = ACCEPTED["collective-after-the-claim"]
    assert load_kernel_module(tmp_path, after).k.source_uniformity().finding is None


def test_record_and_bf16_items_compile(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, TYPED).k.ptx(cc=CC)
    assert _count(ptx, r"^\s*atom\.global\.add\.u64") == 2
    assert _count(ptx, r"^\s*st\.global\.u16") == 1  # the bf16 item
    assert "call" not in ptx[ptx.index(".entry") :]
