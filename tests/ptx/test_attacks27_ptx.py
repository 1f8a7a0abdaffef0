"""Attack round 27 (tests/kernels/attacks27.py) on the real target (NVVM, no GPU): the
private-memory rule, masked switch defaults, numba.cuda under an alias, reduce(state=, op=),
helper field reads by type and block_stride over a shared accumulator hold against the
routes tried (refused with their message); their sound twins stay accepted. Finding 2's
compiled side: a record field named `size`/`ndim` is read as the field."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module, ptx_refusal
from tests.kernels.attacks27 import ACCEPTED, FINDINGS, HELD_KERNELS

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(HELD_KERNELS))
def test_held_refused(tmp_path: Path, name: str) -> None:
    source, fragment = HELD_KERNELS[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_sound_twins_accepted(tmp_path: Path, name: str) -> None:
    assert "bar.sync" in load_kernel_module(tmp_path, ACCEPTED[name]).k.ptx(cc=CC)


def test_local_array_made_in_a_loop_is_zeroed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 1's compiled side, which the simulator now matches: the array's alloca and
    its zero-fill sit in the entry block only; the loop body reuses the alloca, so the GPU
    sums the previous iterations' 1.0 (2.0)."""
    import simtsafe._compose as compose

    texts: list[str] = []
    check = compose.check_kernel_ir

    def spy(irs: Any, entry: str, info: Any) -> Any:
        texts.extend(irs)
        return check(irs, entry, info)

    monkeypatch.setattr(compose, "check_kernel_ir", spy)
    load_kernel_module(tmp_path, FINDINGS["local-array-made-in-loop"]).k._compiled_verdict()
    blocks = re.split(r"\n(?=[\w.]+:\n)", "\n".join(texts))
    made = [b for b in blocks if '%"__ss.lmem" = alloca [4 x double]' in b]
    assert len(made) == 1 and made[0].startswith("entry:"), made
    zero = "store [4 x double] zeroinitializer"
    assert zero in made[0]
    assert sum(b.count(zero) for b in blocks) == 1
    assert any('bitcast [4 x double]* %"__ss.lmem"' in b for b in blocks if b is not made[0])


def test_record_field_named_size_reads_the_field(tmp_path: Path) -> None:
    """Finding 2's compiled side: `r[w].size` / `r[w].ndim` of a record with such fields
    load the fields (offsets 0 and 16) and combine them (3 + 100 * 7 on the data of the
    sim test); the simulator answers numpy's attributes instead."""
    ptx = load_kernel_module(tmp_path, FINDINGS["record-field-named-size"]).k.ptx(cc=CC)
    assert "[%rd11+16]" in ptx or "+16]" in ptx, ptx
    assert "st.global.f64" in ptx


NO_SUCH_FIELD = """
REC = np.dtype([("x", np.float64), ("y", np.float64)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float64], a: In[REC]) -> None:
    i = thread.index_1d()
    if i.in_bounds(out) and i.in_bounds(a):
        out[i] = 10.0 * a[i].{attr}
"""


@pytest.mark.parametrize("attr", ["size", "real", "ndim", "shape[0]"])
def test_record_without_the_field_is_refused(tmp_path: Path, attr: str) -> None:
    """The rejected twin of finding 2: a record offers its fields only (Numba's typing
    failed with a raw KeyError)."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, NO_SUCH_FIELD.format(attr=attr)).k.ptx(cc=CC)
    name = attr.split("[")[0]
    assert f"attribute `.{name}` is not allowed in kernels on a value of type Record(" in str(
        info.value
    ), str(info.value)
    assert f"`.{name}` is read only as a field of a record that has one" in str(info.value)


def test_record_field_named_real_is_accepted(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, FINDINGS["record-field-named-real"]).k.ptx(cc=CC)
    assert "st.global.f64" in ptx
