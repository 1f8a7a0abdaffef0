"""Tuple states in ``block.reduce`` / ``warp.reduce`` in PTX (NVVM, no GPU).

Each field moves as the scalar forms move one value: one ``shfl.sync`` word per 32-bit field
(two for a 64-bit one) at each of the 5 steps of the down tree, then one ``shfl.sync.idx``
per word to give every lane lane 0's state (a user op: no butterfly); the block form keeps
one barrier (two without an exact block) and exchanges the warps' states through shared
memory. Nothing spills to local memory for states of up to 8 fields. The compiled-form
uniformity check sees the tuple collective as it sees the scalar one: a tuple reduce that
part of the block skips is refused (at decoration and, where only the compiled form can see
it, at compile), and its result is uniform field by field.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.tuple_reduce_cases import each_source, rows_source

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _count(ptx: str, op: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(op)}\b", ptx, flags=re.MULTILINE))


def _assert_clean(ptx: str) -> None:
    assert ".local" not in ptx, "the tuple collective spilled to local memory"
    assert _count(ptx, "call") == 0, "the tuple collective compiled to a call"
    assert not re.search(r"\btrap\b", ptx)


_ONE = """
@ss.device
def combine(a, b):
    return {body}


@ss.kernel{contract}
def one(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i]
    r = ss.{scope}.reduce({state}, combine)
    out[i] = np.float32(r[0])
"""

# (scope, contract, state, op body, shfl.sync words per step, bar.sync)
_COSTS = {
    "warp f32x3": ("warp", "", "(v, v, v)", "(a[0] + b[0], a[1] * b[1], max(a[2], b[2]))", 3, 0),
    "warp f64+i32+bool": (
        "warp",
        "",
        "(np.float64(v), np.int32(i.index), v > 0)",
        "(a[0] + b[0], min(a[1], b[1]), a[2] or b[2])",
        4,
        0,
    ),
    "block f32x3 exact block": (
        "block",
        "(contract=ss.LaunchContract(domain=1, block=64))",
        "(v, v, v)",
        "(a[0] + b[0], a[1] * b[1], max(a[2], b[2]))",
        3,
        1,
    ),
    "block f32x3": ("block", "", "(v, v, v)", "(a[0] + b[0], a[1] * b[1], max(a[2], b[2]))", 3, 2),
    "block f64x8": (
        "block",
        "",
        "(" + ", ".join(f"np.float64(v + {k})" for k in range(8)) + ")",
        "(a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5], "
        "a[6] + b[6], a[7] + b[7])",
        16,
        2,
    ),
}


@pytest.mark.parametrize("case", list(_COSTS))
def test_each_field_is_shuffled_as_a_scalar_is(tmp_path: Path, case: str) -> None:
    scope, contract, state, body, words, barriers = _COSTS[case]
    mod = load_kernel_module(
        tmp_path, _ONE.format(body=body, contract=contract, scope=scope, state=state)
    )
    ptx = mod.one.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "shfl.sync.down.b32") == 5 * words
    assert _count(ptx, "shfl.sync.bfly.b32") == 0  # a user op: never the butterfly
    assert _count(ptx, "shfl.sync.idx.b32") == (words if scope == "warp" else 0)
    assert _count(ptx, "bar.sync") == barriers
    if scope == "block":
        assert _count(ptx, "st.shared") > 0 and _count(ptx, "ld.shared") > 0


@pytest.mark.parametrize("scope", ["block", "warp"])
@pytest.mark.parametrize("block", [48, 64])
def test_the_shared_cases_compile_clean(tmp_path: Path, scope: str, block: int) -> None:
    ptx = load_kernel_module(tmp_path, each_source(scope, block)).each.ptx(cc=CC)
    _assert_clean(ptx)
    # the Welford op is written with nothing to fuse: tests/gpu compares its bits with the
    # simulator's float32 steps (an op with a * b + c may become an fma on the GPU)
    assert "fma.rn.f32" not in ptx


def test_welford_rows_compile_to_one_barrier(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, rows_source(64)).welford_rows.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "bar.sync") == 1
    assert _count(ptx, "shfl.sync.down.b32") == 15


# ----------------------------------------------------------------------------- uniformity

_HEAD = """
@ss.device
def add2(a, b):
    return (a[0] + b[0], a[1] + b[1])


@ss.device
def add2_lane(a, b):
    return (a[0] + b[0], a[1] + b[1] + np.float32(cuda.threadIdx.x))


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    v = a[i]
"""


def _refused(tmp_path: Path, body: str, fragment: str) -> None:
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, _HEAD + body).k.ptx(cc=CC)
    exc = info.value
    assert exc.rule == "uniformity", (exc.rule, str(exc))
    assert fragment in str(exc), str(exc)
    assert exc.lineno == line_of(tmp_path, "# BAD"), (exc.lineno, str(exc))
    assert f"line {line_of(tmp_path, '# COND')}" in str(exc), str(exc)


def _accepted(tmp_path: Path, body: str) -> None:
    ptx = load_kernel_module(tmp_path, _HEAD + body).k.ptx(cc=CC)
    assert ".entry" in ptx


@pytest.mark.parametrize("scope", ["block", "warp"])
def test_a_tuple_reduce_under_a_thread_branch_is_refused(tmp_path: Path, scope: str) -> None:
    (tmp_path / "bad").mkdir()
    _refused(
        tmp_path / "bad",
        f"""    if cuda.threadIdx.x % 2 == 0:  # COND
        s, t = ss.{scope}.reduce((v, v), add2)  # BAD
        out[i] = s + t
""",
        f"`{scope}.reduce` needs every thread of the {scope}",
    )
    (tmp_path / "good").mkdir()
    _accepted(
        tmp_path / "good",
        f"""    s, t = ss.{scope}.reduce((v, v), add2)
    if cuda.threadIdx.x % 2 == 0:
        out[i] = s + t
""",
    )


def test_a_tuple_reduce_steered_by_an_atomic_is_refused_on_the_compiled_form(
    tmp_path: Path,
) -> None:
    # The source rules do not follow an atomic's result out of an unsafe region; the compiled
    # form does, and finds the tuple collective's instructions in the divergent block.
    body = """    with ss.unsafe("SAFETY: the counter is this block's own shared scratch"):
        c = cuda.shared.array(1, np.int32)
        old = cuda.atomic.add(c, 0, 1)
    if {cond}:{cmark}
        s, t = ss.block.reduce((v, v), add2){bmark}
        out[i] = s + t + old
"""
    (tmp_path / "bad").mkdir()
    _refused(
        tmp_path / "bad",
        body.format(cond="old > 3", cmark="  # COND", bmark="  # BAD"),
        "the result of an atomic",
    )
    (tmp_path / "good").mkdir()
    _accepted(tmp_path / "good", body.format(cond="n > 3", cmark="", bmark=""))


def test_a_tuple_reduce_result_is_uniform_field_by_field(tmp_path: Path) -> None:
    # Each field of the result may steer a barrier (the compiled form trusts the declared
    # result of every field, as it trusts a scalar collective's)...
    _accepted(
        tmp_path,
        """    s, t = ss.block.reduce((v, np.float32(1)), add2)
    if t > 3:
        ss.block.sync()
    if s > 0:
        ss.block.sync()
    out[i] = s
""",
    )


def test_a_thread_dependent_op_is_refused_at_the_reduction(tmp_path: Path) -> None:
    # ... but an op whose own result depends on the thread is refused where it reduces, used
    # or not: every thread must get the same bits (attack round 24).
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            _HEAD
            + """    s, t = ss.block.reduce((v, v), add2_lane)  # BAD
    out[i] = s
""",
        ).k.ptx(cc=CC)
    assert "the op of block.reduce at line" in str(info.value), str(info.value)
    assert "must combine its two values from them alone" in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def test_literal_fields_are_widened_as_scalars_are(tmp_path: Path) -> None:
    # (v, 0, True): a float32, an int64 and a bool, as a scalar reduce widens literals
    mod = load_kernel_module(
        tmp_path,
        _ONE.format(
            body="(a[0] + b[0], a[1] + b[1], a[2] and b[2])",
            contract="",
            scope="warp",
            state="(v, 0, True)",
        ),
    )
    ptx = mod.one.ptx(cc=CC)
    _assert_clean(ptx)
    assert _count(ptx, "shfl.sync.down.b32") == 5 * 4


# A tuple op that breaks the reduction's uniformity is refused as a scalar op is
# (tests/kernels/cooperation_rules.py has the scalar cases).
_OP_BAD = {
    "raises": (
        "if x[0] > 100:\n        raise ValueError()\n    return (x[0] + y[0], x[1])",
        "B",
        "the other way leaves first",
    ),
    "barrier-in-partial-warps": (
        "ss.block.sync()\n    return (x[0] + y[0], x[1])",
        "UPTO",
        "must combine its two values from them alone",
    ),
}


@pytest.mark.parametrize("case", list(_OP_BAD))
@pytest.mark.parametrize("scope", ["block", "warp"])
def test_a_tuple_op_that_breaks_uniformity_is_refused(
    tmp_path: Path, case: str, scope: str
) -> None:
    body, contract, fragment = _OP_BAD[case]
    contracts = {
        "B": "ss.LaunchContract(domain=1, block=128)",
        "UPTO": "ss.LaunchContract(domain=1, max_threads=128)",
    }
    source = f"""
@ss.device
def op(x, y):
    {body}


@ss.kernel(contract={contracts[contract]})
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    s, t = ss.{scope}.reduce((np.float32(1), np.float32(2)), op)  # BAD
    out[i] = s + t
"""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert info.value.rule == "uniformity", str(info.value)
    assert fragment in str(info.value), str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")
