"""Hash tables on the real target (NVVM, no GPU): the rules, and what an insert compiles to.

Every rule of tests/kernels/hash_rules.py is refused with its message at its
line, and its accepted twin compiles. An insert is a loop of one weak
key load (``ld.global``, as the raw twin's) and, at an empty slot, one
``atom.global.cas``; a failure adds one
to the counter; the store through the witness is bounds-checked. A lookup
(``hashing.find``) has plain loads and no atomic.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.hash_rules import ACCEPTED, REFUSED
from tests.ptx.ptx_text import innermost_loop

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
    assert "atom.global.cas.b32" in ptx
    assert re.search(r"^\s*st\.global\.f32", ptx, re.MULTILINE)


_ONE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1), tables={
    "keys": {"values": ["vals"], "failed": "nf"}}))
def k(keys: ss.HashTable[np.KEY], vals: ss.HashValues[np.float32], nf: ss.Counter,
      q: In[np.KEY], x: In[np.float32]) -> None:
    w = thread.index_1d()
    if w.in_bounds(q):
        s = keys.insert(q[w])
        vals[s] = x[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(256, 1, 1)))
def look(o: DisjointSlice[np.float32], keys: In[np.KEY], vals: In[np.float32],
         q: In[np.KEY]) -> None:
    w = thread.index_1d()
    if w.in_bounds(q):
        o[w] = vals[ss.hashing.find(keys, q[w])]
"""


def _count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx, re.MULTILINE))


@pytest.mark.parametrize(("key", "bits"), [("uint32", 32), ("int64", 64)])
def test_an_insert_is_one_load_and_one_cas_per_probe(tmp_path: Path, key: str, bits: int) -> None:
    mod = load_kernel_module(tmp_path, _ONE.replace("KEY", key))
    ptx = mod.k.ptx(cc=CC)
    probe = innermost_loop(ptx, rf"^atom\.global\.cas\.b{bits}")
    assert [i.split()[0] for i in probe if i.startswith("ld.")] == [f"ld.global.u{bits}"]
    assert "ld.volatile" not in ptx
    assert _count(ptx, rf"^\s*atom\.global\.cas\.b{bits}") == 1
    assert _count(ptx, r"^\s*atom\.global\.add\.u64") == 1  # a failed insert, counted
    # ... and a counter found at or past 2**63 marked with its top bit (it may wrap)
    assert _count(ptx, r"^\s*atom\.global\.or\.b64") == 1
    assert _count(ptx, r"^\s*st\.global\.f32") == 1
    body = ptx[ptx.index(".entry") :]
    assert "call" not in body
    # The value store is skipped unless the witness is below the values' length.
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    store = next(i for i, line in enumerate(lines) if line.startswith("st.global.f32"))
    guard = max(i for i, line in enumerate(lines[:store]) if " bra" in line)
    predicate = lines[guard].split()[0].lstrip("@!")
    setp = [line for line in lines[:guard] if line.startswith("setp") and predicate + "," in line]
    assert setp and ".u64" in setp[-1], setp


def test_a_lookup_reads_and_never_writes_the_table(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, _ONE.replace("KEY", "uint32")).look.ptx(cc=CC)
    assert "atom." not in ptx and "ld.volatile" not in ptx
    assert _count(ptx, r"^\s*ld\.global(\.nc)?\.u32") >= 1
    assert _count(ptx, r"^\s*st\.global\.f32") == 1


def test_the_probe_hashes_with_murmur3_finalizers(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _ONE.replace("KEY", "uint32"))
    ptx32 = mod.k.ptx(cc=CC)
    for const in (-2048144789, -1028477387):  # 0x85ebca6b, 0xc2b2ae35 as signed 32-bit
        assert str(const) in ptx32
    ptx64 = load_kernel_module(tmp_path, _ONE.replace("KEY", "uint64")).k.ptx(cc=CC)
    for const in (-49064778989728563, -4265267296055464877):  # fmix64's two multipliers
        assert str(const) in ptx64


@pytest.mark.parametrize(
    "case", ["barrier-steered-by-the-inserted-slot", "barrier-steered-by-insert-or-find"]
)
def test_source_level_fallback_agrees(tmp_path: Path, case: str) -> None:
    # What the simulator decides without a CUDA target: refused there too.
    steered, _ = REFUSED[case]
    assert load_kernel_module(tmp_path, steered).k.source_uniformity().finding is not None
    after = ACCEPTED["collective-after-the-insert"]
    assert load_kernel_module(tmp_path, after).k.source_uniformity().finding is None
