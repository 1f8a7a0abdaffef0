"""The Columns space on the real target (NVVM, no GPU).

Every rule of tests/kernels/column_rules.py is refused with its message at its
line and its accepted twin compiles to a guarded global store; the store of
``out[pos[0], w]`` compares both indices, unsigned, with the output's own
shape and has the raw twin's global loads and stores; the launch-shape check
is compiled exactly when no ``domain=1`` contract proves the launch 1D.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import assert_refused, line_of, load_kernel_module
from tests.kernels.column_rules import ACCEPTED, RECORD, REFUSED

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_when_compiled(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], lambda mod: mod.k.ptx(cc=CC))


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_rule_twin_compiles(tmp_path: Path, case: str) -> None:
    ptx = load_kernel_module(tmp_path, ACCEPTED[case][0]).k.ptx(cc=CC)
    assert re.search(r"^\s*(?:@!?%p\d+\s+)?st\.global", ptx, re.MULTILINE)


def test_record_fields_of_the_own_element_are_stored(tmp_path: Path) -> None:
    body = load_kernel_module(tmp_path, RECORD).k.ptx(cc=CC).split(".entry", 1)[1]
    # the two 4-byte field stores (own element, else a scratch record; the constant
    # 1.5 is stored as its bits)
    assert len(re.findall(r"\bst\.(?:f32|u32|b32)\s", body)) == 2, body


def test_a_column_witness_needs_a_1d_contract(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match=r"thread\.column\(\) needs a 1D launch") as info:
        load_kernel_module(
            tmp_path,
            """
from simtsafe import Columns


@ss.kernel(contract=ss.LaunchContract(domain=2))
def k(out: DisjointSlice[np.float32, Columns], x: In[np.float32]) -> None:
    w = thread.column()  # BAD
    out[0, w] = x[w]
""",
        )
    assert info.value.lineno == line_of(tmp_path, "# BAD")


_APPEND = """
from simtsafe import Columns


@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, covers="cache"))
def k(cache: DisjointSlice[np.float32, Columns], kv: In[np.float32], pos: In[np.int32]) -> None:
    w = thread.column()
    cache[pos[0], w] = kv[w]


@ss.kernel
def free(cache: DisjointSlice[np.float32, Columns], kv: In[np.float32], pos: In[np.int32]) -> None:
    w = thread.column()
    cache[pos[0], w] = kv[w]


@cuda.jit
def raw(cache, kv, pos):
    i = cuda.grid(1)
    p = pos[0]
    if i < kv.shape[0]:
        v = kv[i]
    else:
        v = np.float32(0)
    if p < cache.shape[0] and i < cache.shape[1]:
        cache[p, i] = v
"""


def _ops(ptx: str, op: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{op}\b", ptx, re.MULTILINE))


def test_append_store_is_guarded_on_both_axes_as_the_raw_twin(tmp_path: Path) -> None:
    from numba import cuda, types

    mod = load_kernel_module(tmp_path, _APPEND)
    ptx = mod.k.ptx(cc=CC)
    body = ptx[ptx.index(".entry") :]
    assert _ops(body, "st.global.f32") == 1
    # row < shape[0] and column < shape[1], both unsigned: the sentinel and a negative
    # row (an int32 position sign-extended) are out of range.
    assert _ops(body, r"setp\.ge\.u64") >= 2
    assert "ntid.y" not in body and "nctaid.y" not in body  # domain=1: proven on the host
    f32 = types.Array(types.float32, 1, "C")
    sig = (types.Array(types.float32, 2, "C"), f32, types.Array(types.int32, 1, "C"))
    raw_ptx = cuda.compile_ptx(mod.raw.py_func, sig, cc=CC)[0]
    for op in ("ld.global", "st.global"):
        assert _ops(body, op) == _ops(raw_ptx[raw_ptx.index(".entry") :], op), op


def test_launch_shape_is_checked_on_the_device_only_without_a_proof(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, _APPEND).free.ptx(cc=CC)
    body = ptx[ptx.index(".entry") :]
    assert "%ntid.y" in body and "%nctaid.z" in body
