"""Block claims on the real target (NVVM, no GPU): the rules, and what the claim compiles to.

Every rule of tests/kernels/block_claim_rules.py is refused by the compiled-form
check (or typing) with its message at its line, and its accepted twin compiles.
``buf.block_claim(keep)`` is one ``vote.sync.ballot`` per warp, two barriers and
ONE ``atom.global.add.u64`` per execution (thread 0's, for the block's total)
inside the loop; the store through its witness is bounds-checked; the example's
safe kernel has the raw twin's global traffic.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from numba import cuda

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.block_claim_rules import ACCEPTED, REFUSED, UNIFORM_LOOP
from tests.ptx.test_append_ptx import _body, _count

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
    assert "vote.sync.ballot.b32" in ptx
    assert "atom.global.add.u64" in ptx
    assert re.search(r"^\s*st\.global\.f32", ptx, re.MULTILINE)


_ONE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1), appends={"out": "n"}))
def k(out: ss.AppendBuffer[np.float32], n: ss.Counter, x: In[np.float32], t: np.float32) -> None:
""" + "".join(
    f"    {line}\n"
    for line in UNIFORM_LOOP.replace(
        "{body}", "    s = out.block_claim(v > t)\n    out[s] = v"
    ).splitlines()
)


def _loop(body: list[str]) -> list[str]:
    """The lines of the kernel's loop: from the first global load to the last backward branch."""
    first = next(i for i, line in enumerate(body) if line.startswith("ld.global"))
    labels = {line[:-1]: i for i, line in enumerate(body) if line.endswith(":")}
    back = [
        i
        for i, line in enumerate(body)
        if " bra" in line and labels.get(line.split()[-1].rstrip(";"), len(body)) < i
    ]
    return (
        body[min(labels[body[b].split()[-1].rstrip(";")] for b in back) : max(back) + 1]
        or body[first:]
    )


def test_one_atomic_per_block_and_round(tmp_path: Path) -> None:
    body = _body(load_kernel_module(tmp_path, _ONE).k.ptx(cc=CC))
    text = "\n".join(body)
    assert _count(text, r"^(@%p\d+ )?atom\.global\.add\.u64") == 1
    # the only other atomic is the mark of a counter found at or past 2**63 (cold path)
    assert _count(text, r"^(@%p\d+ )?atom\.") == 2
    assert _count(text, r"^(@%p\d+ )?atom\.global\.or\.b64") == 1
    loop = "\n".join(_loop(body))
    assert _count(loop, r"^(@%p\d+ )?atom\.global\.add\.u64") == 1
    assert _count(loop, r"^vote\.sync\.ballot\.b32") == 1
    assert _count(loop, r"^bar\.sync") == 2  # publish the warp counts; publish the base
    assert "activemask" not in text and "shfl" not in text  # no per-warp aggregation
    assert "call" not in text  # everything inline
    # the atomic is thread 0's: behind a branch
    atom = next(i for i, line in enumerate(body) if line.startswith("atom.global.add.u64"))
    assert any(line.startswith("@%p") and " bra" in line for line in body[atom - 8 : atom])


def test_the_store_through_a_block_claim_is_bounds_checked(tmp_path: Path) -> None:
    body = _body(load_kernel_module(tmp_path, _ONE).k.ptx(cc=CC))
    assert any(line.startswith("selp.b64") and "9223372036854775807" in line for line in body)
    store = next(i for i, line in enumerate(body) if line.startswith("st.global.f32"))
    guard = max(i for i, line in enumerate(body[:store]) if " bra" in line)
    predicate = body[guard].split()[0].lstrip("@!")
    setp = [line for line in body[:guard] if line.startswith("setp") and predicate + "," in line]
    assert setp and ".u64" in setp[-1], setp


def test_the_example_and_its_raw_twin_have_the_same_global_traffic() -> None:
    import importlib
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    compact = importlib.import_module("compact")
    safe = compact.compact.ptx(cc=CC)
    raw, _ = cuda.compile_ptx(compact.compact_block_raw.py_func, compact.compact.argtypes(), cc=CC)
    assert ".reqntid 256, 1, 1" in safe
    for text in (safe, raw):
        assert _count(text, r"^\s*(@%p\d+ )?atom\.global\.add\.u64") == 1
        assert _count(text, r"^\s*vote\.sync\.ballot\.b32") == 1
        assert _count(text, r"^\s*bar\.sync") == 2
    for op in (r"ld\.global(\.nc)?\.f32", r"st\.global\.f32"):
        assert _count(safe, r"^\s*(@%p\d+ )?" + op) == _count(raw, r"^\s*(@%p\d+ )?" + op), op


def test_source_level_fallback_agrees(tmp_path: Path) -> None:
    # What the simulator decides without a CUDA target.
    for case in ("under-a-data-dependent-branch", "in-a-grid-stride-loop", "after-an-early-return"):
        bad, _ = REFUSED[case]
        (tmp_path / case).mkdir()
        finding = load_kernel_module(tmp_path / case, bad).k.source_uniformity().finding
        assert finding is not None and "out.block_claim` needs every thread" in str(finding)
    for case in ("unconditional-write", "in-a-helper-called-by-every-thread"):
        (tmp_path / case).mkdir()
        ok = load_kernel_module(tmp_path / case, ACCEPTED[case]).k.source_uniformity()
        assert ok.finding is None


@pytest.mark.parametrize("case", ["under-a-data-dependent-branch", "in-a-helper-under-a-branch"])
def test_the_compiled_form_decides_without_the_source_name(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The source analysis knows block_claim by its spelling; the compiled-form check by its
    # lowering (a "block" site). With the spelling forgotten, the compiled form still refuses.
    from simtsafe.decoration import _uniformity

    monkeypatch.setattr(_uniformity, "_BLOCK_METHODS", frozenset())
    source, _ = REFUSED[case]
    mod = load_kernel_module(tmp_path, source)
    assert mod.k.source_uniformity().finding is None
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    assert "`AppendBuffer.block_claim`" in str(info.value) or "`helper push`" in str(info.value)
    assert "needs every thread of the block to reach it" in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")
