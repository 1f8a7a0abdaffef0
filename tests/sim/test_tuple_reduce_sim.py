"""Tuple states in ``block.reduce`` / ``warp.reduce`` on the simulator: values against numpy.

Welford ``(count, mean, M2)``, argmax ``(value, index)`` with ties (the first occurrence wins,
as in ``np.argmax``) and a ``(min, max, any-negative)`` state, by a block and by a warp, at
blocks of 32, 48 (a partial warp), 64 and 96 threads over data that does not fill the last
block; every thread gets the same bits; Welford follows the GPU code's combine order bit for
bit; ``simtsafe.sim.check`` replays it; and every misuse is refused with its message.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numba import cuda

import simtsafe as ss
from simtsafe import sim
from simtsafe.lowering import _coop_sim
from tests.kernels import load_kernel_module
from tests.kernels.tuple_reduce_cases import (
    EACH_OUTPUTS,
    each_expected,
    each_inputs,
    each_source,
    rows_expected,
    rows_source,
    welford_order,
)

pytestmark = pytest.mark.sim

GRID = 2
_DTYPES = {"ai": np.int64, "lo": np.int32, "hi": np.int32, "neg": np.bool_}


def _outputs(total: int) -> list[np.ndarray]:
    return [np.full(total, 7, _DTYPES.get(name, np.float32)) for name in EACH_OUTPUTS]


def _run_each(tmp_path: Path, scope: str, block: int) -> tuple[dict[str, np.ndarray], Any]:
    mod = load_kernel_module(tmp_path, each_source(scope, block))
    total = GRID * block
    x, k = each_inputs(total - 13, seed=block)  # the last block is not full of data
    dev = [cuda.to_device(a) for a in [*_outputs(total), x, k]]
    mod.each.prepare(grid=GRID, block=block)(*dev)
    got = dict(zip(EACH_OUTPUTS, (d.copy_to_host() for d in dev), strict=False))
    return got, (x, k)


def _assert_each(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    np.testing.assert_array_equal(got["wn"], want["wn"])
    np.testing.assert_allclose(got["wm"], want["wm"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["wq"], want["wq"], rtol=1e-5, atol=1e-4)
    for name in ("av", "ai", "lo", "hi", "neg"):
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.mark.parametrize("block", [32, 48, 64, 96])
@pytest.mark.parametrize("scope", ["block", "warp"])
def test_tuple_states_match_numpy(tmp_path: Path, scope: str, block: int) -> None:
    got, (x, k) = _run_each(tmp_path, scope, block)
    _assert_each(got, each_expected(scope, block, GRID, x, k))
    # the data ties (values in -3..3): the first index of the maximum wins, not any of them
    assert (x[:32] == x[:32].max()).sum() > 1
    assert got["ai"][0] == np.argmax(x[: 32 if scope == "warp" else block])


@pytest.mark.parametrize(("scope", "block"), [("block", 96), ("block", 48), ("warp", 48)])
def test_every_thread_gets_the_gpu_orders_bits(tmp_path: Path, scope: str, block: int) -> None:
    got, (x, _) = _run_each(tmp_path, scope, block)
    size = block if scope == "block" else 32
    for b in range(GRID):
        starts = range(0, block, size)
        for s in starts:
            lo = b * block + s
            hi = b * block + min(s + size, block)
            n, mean, m2 = welford_order(x[lo : min(hi, x.size)], hi - lo, scope)
            for name, want in (("wn", n), ("wm", mean), ("wq", m2)):
                part = got[name][lo:hi].view(np.uint32)
                assert (part == np.float32(want).view(np.uint32)).all(), (name, b, s)


@pytest.mark.parametrize("block", [32, 64, 96])
@pytest.mark.parametrize("width", [150, 20])
def test_welford_rows_in_one_block_reduce(tmp_path: Path, block: int, width: int) -> None:
    # width 20 < block: some threads hold the empty state (0, 0, 0)
    mod = load_kernel_module(tmp_path, rows_source(block))
    x = (np.random.default_rng(width).standard_normal((3, width)) * 3 + 100).astype(np.float32)
    mean, var, count = (cuda.to_device(np.full(3, np.nan, np.float32)) for _ in range(3))
    mod.welford_rows.prepare(grid=3, block=block)(mean, var, count, cuda.to_device(x))
    want_mean, want_var = rows_expected(x)
    np.testing.assert_array_equal(count.copy_to_host(), np.full(3, width, np.float32))
    np.testing.assert_allclose(mean.copy_to_host(), want_mean, rtol=1e-6)
    np.testing.assert_allclose(var.copy_to_host(), want_var, rtol=1e-4)


def test_sim_check_replays_tuple_reductions(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, each_source("block", 48))
    x, k = each_inputs(80, seed=5)
    report = sim.check(mod.each, 2, 48, *_outputs(96), x, k)
    assert report.ok, str(report)
    want = each_expected("block", 48, 2, x, k)
    _assert_each({name: report.outputs[name] for name in EACH_OUTPUTS}, want)
    assert not _coop_sim._MEMO

    warp = load_kernel_module(tmp_path, each_source("warp", 48).replace("def each", "def each_w"))
    report = sim.check(warp.each_w, 2, 48, *_outputs(96), x, k)
    assert report.ok, str(report)
    _assert_each(
        {name: report.outputs[name] for name in EACH_OUTPUTS}, each_expected("warp", 48, 2, x, k)
    )


# ----------------------------------------------------------------------------- refusals

_MISUSE = """
import operator


@ss.device
def first(a, b):
    return a[0] + b[0]


@ss.device
def shorter(a, b):
    return (a[0], b[0])


@ss.device
def pairwise(a, b):
    return (a[0] + b[0], a[1] + b[1])


@ss.device
def nested(a, b):
    return a


@ss.kernel
def bad(out: DisjointSlice[np.float32], a: In[np.float32], f: In2D[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i]
    j = i.index
    {stmt}  # BAD
    out[i] = v
"""

_REFUSED = {
    "op-returns-a-number": (
        "p, q = ss.block.reduce((v, v), first)",
        "the op of block.reduce must take two UniTuple(float32 x 2) states and return one "
        "UniTuple(float32 x 2)",
        "`first` returns float32",
    ),
    "op-returns-fewer-fields": (
        "p, q, r = ss.warp.reduce((v, v, v), shorter)",
        "the op of warp.reduce must take two UniTuple(float32 x 3) states",
        "`shorter` returns UniTuple(float32 x 2)",
    ),
    "builtin-op": (
        "p, q = ss.block.reduce((v, v), operator.add)",
        "the op of block.reduce with a tuple state must be a @simtsafe.device function",
        "got operator.add (operator.add, max and min combine numbers, not tuples)",
    ),
    "builtin-max": (
        "p, q = ss.warp.reduce((v, j), max)",
        "the op of warp.reduce with a tuple state must be a @simtsafe.device function",
        "got max",
    ),
    "nested-tuple": (
        "p, q = ss.block.reduce((v, (v, v)), nested)",
        "block.reduce(state, op) got the state Tuple(float32, UniTuple(float32 x 2)): field 1 "
        "is UniTuple(float32 x 2), not a number",
        "unpack a nested tuple, an array or a record's fields into a flat tuple of numbers",
    ),
    "array-field": (
        "p, q = ss.block.reduce((v, f), nested)",
        "field 1 is readonly array(float32, 2d",
        "A reduction's tuple state holds 1 to 8 numbers",
    ),
    "nine-fields": (
        "p = ss.block.reduce((v, v, v, v, v, v, v, v, v), nested)",
        "block.reduce(state, op) got the state UniTuple(float32 x 9): it has 9 fields",
        "holds 1 to 8 numbers",
    ),
    "float16-field": (
        "p, q = ss.block.reduce((v, np.float16(v)), pairwise)",
        "block.reduce(state) does not take float16",
        "convert with np.float32(v) and back",
    ),
    "sum-of-a-tuple": (
        "p = ss.block.sum((v, v))",
        "block.sum(v) takes a number (an int, float or bool scalar); got UniTuple(float32 x 2)",
        "Reduce a tuple with block.reduce(state, op)",
    ),
    "warp-max-of-a-tuple": (
        "p = ss.warp.max((v, j))",
        "warp.max(v) takes a number",
        "Reduce a tuple with warp.reduce(state, op)",
    ),
    "scan-of-a-tuple": (
        "p = ss.block.scan((v, v))",
        "block.scan(v) takes a number",
        "Reduce a tuple with block.reduce(state, op)",
    ),
    "broadcast-of-a-tuple": (
        "p = ss.warp.broadcast((v, v))",
        "warp.broadcast(v) takes a number",
        "or call warp.broadcast once per field",
    ),
}


@pytest.mark.parametrize("case", sorted(_REFUSED))
def test_tuple_misuse_is_refused(tmp_path: Path, case: str) -> None:
    stmt, *fragments = _REFUSED[case]
    mod = load_kernel_module(tmp_path, _MISUSE.format(stmt=stmt))
    with pytest.raises(ss.SafetyError) as info:
        mod.bad.prepare(grid=1, block=32)(
            cuda.to_device(np.zeros(32, np.float32)),
            cuda.to_device(np.ones(32, np.float32)),
            cuda.to_device(np.ones((2, 2), np.float32)),
        )
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    assert info.value.rule == "typing"


def test_the_accepted_twin_of_the_misuse_runs(tmp_path: Path) -> None:
    mod = load_kernel_module(
        tmp_path, _MISUSE.format(stmt="v, w = ss.block.reduce((v, v), pairwise)")
    )
    out = cuda.to_device(np.zeros(32, np.float32))
    mod.bad.prepare(grid=1, block=32)(
        out,
        cuda.to_device(np.arange(32, dtype=np.float32)),
        cuda.to_device(np.ones((2, 2), np.float32)),
    )
    np.testing.assert_array_equal(out.copy_to_host(), np.full(32, 496, np.float32))


# The simulator's own twin of each refusal (the compile worker types the kernel first; these
# run the simulator's functions directly, as a kernel whose typing was skipped would).
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: _coop_sim._state_argument("block.reduce", (1.0, (1.0, 2.0))), "field 1 is tuple"),
        (lambda: _coop_sim._state_argument("block.reduce", (1.0,) * 9), "it has 9 fields"),
        (lambda: _coop_sim._state_argument("block.sum", (1.0, 2.0)), "Reduce a tuple with block"),
        (
            lambda: _coop_sim._state_combiner("warp.reduce", max, [(1.0, 2), (3.0, 4)]),
            "got max (operator.add, max and min combine numbers, not tuples)",
        ),
        (
            lambda: _coop_sim._state_combiner("warp.reduce", lambda a, b: a[0], [(1.0, 2)] * 2)[1](
                (1.0, 2), (3.0, 4)
            ),
            "`<lambda>` returns float.",
        ),
        (
            lambda: _coop_sim._state_combiner("warp.reduce", lambda a, b: a, [(1.0, 2), 3.0]),
            "the threads passed states of different shapes",
        ),
    ],
)
def test_simulator_twin_refuses_alike(call: Any, message: str) -> None:
    with pytest.raises(ss.SafetyError, match=re.escape(message)):
        call()


_WIDENING = """
@ss.device
def count_sum(a, b):
    return (a[0] + b[0], a[1] + b[1])  # int32 + int32 is int64 in Numba: converted back


@ss.kernel
def k(out: DisjointSlice[np.float32], cnt: DisjointSlice[np.int32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    c, s = ss.warp.reduce((np.int32(1), a[i]), count_sum)
    out[i] = s
    cnt[i] = c
"""


def test_an_op_returning_wider_fields_is_converted_field_by_field(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _WIDENING)
    out, cnt = cuda.to_device(np.zeros(48, np.float32)), cuda.to_device(np.zeros(48, np.int32))
    mod.k.prepare(grid=1, block=48)(out, cnt, cuda.to_device(np.arange(48, dtype=np.float32)))
    np.testing.assert_array_equal(cnt.copy_to_host(), [32] * 32 + [16] * 16)
    np.testing.assert_array_equal(
        out.copy_to_host(), [sum(range(32))] * 32 + [sum(range(32, 48))] * 16
    )


def test_the_porting_rounds_tuple_reductions_are_accepted(tmp_path: Path) -> None:
    # Port rounds 15 and 17 met these as false refusals ("takes a number ... got Tuple(...)")
    from tests.kernels import port15, port17

    (tmp_path / "argmax").mkdir()
    argmax = port15.load("argmax_pair_reduce", tmp_path / "argmax")
    assert port15.CHECKS["argmax_pair_reduce"](argmax, np.random.default_rng(15))
    (tmp_path / "welford").mkdir()
    welford = port17.load("welford_tuple_reduce", tmp_path / "welford")
    assert port17.CHECKS["welford_tuple_reduce"](welford, np.random.default_rng(17))


_DIVERGENT = """
@ss.device
def add2(a, b):
    return (a[0] + b[0], a[1] + b[1])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i]
    {body}
"""


def test_a_divergent_tuple_reduce_is_refused_on_the_simulator_too(tmp_path: Path) -> None:
    bad = "if cuda.threadIdx.x < 32:\n        s, t = ss.block.reduce((v, v), add2)  # BAD\n" + (
        "        out[i] = s + t"
    )
    (tmp_path / "bad").mkdir()
    mod = load_kernel_module(tmp_path / "bad", _DIVERGENT.format(body=bad))
    out, a = cuda.to_device(np.zeros(64, np.float32)), cuda.to_device(np.ones(64, np.float32))
    with pytest.raises(ss.SafetyError, match="`block.reduce` needs every thread of the block"):
        mod.k.prepare(grid=1, block=64)(out, a)
    (tmp_path / "good").mkdir()
    good = "s, t = ss.block.reduce((v, v), add2)\n    if cuda.threadIdx.x < 32:\n        out[i] = s + t"
    mod = load_kernel_module(tmp_path / "good", _DIVERGENT.format(body=good))
    mod.k.prepare(grid=1, block=64)(out, a)
    np.testing.assert_array_equal(out.copy_to_host(), [128] * 32 + [0] * 32)
