"""Porting round 20 (tests/kernels/port20.py): each ported Tier-1 kernel passes every
compile-time check with NVVM (``simtsafe.check_kernel``: no finding) and compiles for sm_90; the
round's compile-time false refusals and bad messages are pinned with the messages they give
today (the fixed ones with their new text), each beside its accepted workaround, and the probes
of the range-loop tuple positions that would be unsound if accepted stay refused."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module, port20

pytestmark = pytest.mark.ptx

ROOT = Path(__file__).resolve().parents[2]


def _kernels(mod: object) -> list[ss.Kernel]:
    return [v for v in vars(mod).values() if isinstance(v, ss.Kernel)]


def _load_src(tmp_path: Path, src: str) -> object:
    return load_kernel_module(tmp_path, port20.EXTRA_HEADER + src)


def _only_finding(tmp_path: Path, src: str) -> Any:
    (k,) = _kernels(_load_src(tmp_path, src))
    (f,) = ss.check_kernel(k)
    return f


def _line(tmp_path: Path, marker: str) -> int:
    return line_of(tmp_path, marker)


# ---------------------------------------------------------------------------------------------
# ACCEPTED
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(port20.ACCEPTED))
def test_a_ported_kernel_passes_every_check(tmp_path: Path, name: str) -> None:
    kernels = _kernels(port20.load(name, tmp_path))
    assert kernels
    for k in kernels:
        assert ss.check_kernel(k) == [], (name, k.name)
        assert ".entry" in k.ptx(cc=(9, 0))


@pytest.mark.parametrize("src", ["BF16_ROW_SUMS_F64", "WARP_BINCOUNT", "LOW_NIBBLE"], ids=str.lower)
def test_the_workarounds_pass_every_check(tmp_path: Path, src: str) -> None:
    (k,) = _kernels(_load_src(tmp_path, getattr(port20, src)))
    assert ss.check_kernel(k) == []


def test_the_int4_unpack_is_one_vector_load_and_one_vector_store(tmp_path: Path) -> None:
    ptx = port20.load("unpack_int4", tmp_path).unpack_int4.ptx(cc=(9, 0))
    assert "ld.global.u32" in ptx or "ld.global.nc.u32" in ptx
    assert "st.global.v2.u32" in ptx or "st.global.u64" in ptx


def test_the_batched_products_run_on_tensor_cores(tmp_path: Path) -> None:
    ptx = port20.load("bmm16_mma", tmp_path).bmm16.ptx(cc=(9, 0))
    assert ptx.count("mma.sync.aligned.m16n8k16") == 2
    assert "ldmatrix" in ptx


# ---------------------------------------------------------------------------------------------
# FALSE_REFUSALS tuple_position_arith (and DOC_GAPS tuple_bounded_positions)
# ---------------------------------------------------------------------------------------------


def test_tuple_positions_computed_from_a_range_variable_are_accepted(tmp_path: Path) -> None:
    # FALSE_REFUSALS tuple_position_arith, fixed by round 30's range-loop spans
    # (verify/_ranges: the index's numbers from the loop's constant start, step and trips)
    _no_finding(tmp_path, port20.GEMV_INT4_TUPLE_ARITH)


#: a loop over a 4-tuple ``t`` (of ``vec.load(a, i.index, 4)``) under the lane-dependent
#: ``if cuda.laneid < n:``, before ``warp.sum``: name -> body (8-space indented)
TUPLE_PROBE = """
@ss.device
def pick(t, k):
    return t[k]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(y: DisjointSlice[np.float32, PerWarp], a: In[np.float32], n: np.int64) -> None:
    i = thread.index_1d()
    acc = np.float32(0)
    t = ss.vec.load(a, i.index, 4)
    if cuda.laneid < n:
BODY
    acc = ss.warp.sum(acc)
    y[thread.warp_leader()] = acc
"""


def _probe(body: str) -> str:
    return TUPLE_PROBE.replace("BODY", textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8))


#: safe (every position lies in the 4-tuple), refused: the false refusals of this family
TUPLE_SAFE_REFUSED = {
    # enumerate_index and negative_range: accepted since round 33 (TUPLE_SAFE_FIXED)
    "enumerate_zip_index": "for q, (e, f) in enumerate(zip(t, t)):\n    acc += t[q] + e * f",
}
#: safe, refused in round 20, accepted since round 30's range-loop spans (verify/_ranges) and
#: the helper status joins (verify/_feasible._Joins)
TUPLE_SAFE_FIXED = {
    # accepted since the analysed copy drops nsw before instcombine (no guard rotation)
    "while_lt_4": "q = 0\nwhile q < 4:\n    acc += t[q]\n    q += 1",
    "helper_index": "for q in range(4):\n    acc += pick(t, q)",
    "q_plus_1": "for q in range(3):\n    acc += t[q + 1]",
    "q_plus_q": "for q in range(2):\n    acc += t[q + q]",
    "two_q": "for q in range(2):\n    acc += t[2 * q]",
    "q_or_2": "for q in range(2):\n    acc += t[q | 2]",
    "e_shift": "for e in range(8):\n    acc += t[e >> 1]",
    "step_2": "for q in range(0, 4, 2):\n    acc += t[q]",
    "int8_range": "for q in range(np.int8(4)):\n    acc += t[q]",
    # accepted since round 33 (tests/kernels/positions33.py): enumerate's count stepped with
    # the tuple iterator, Numba's negative cases
    "enumerate_index": "for q, e in enumerate(t):\n    acc += t[q] + e",
    "negative_range": "for q in range(-4, 0):\n    acc += t[q]",
}
#: safe and accepted (the masked forms compose with + * <<; the plain range variable)
TUPLE_SAFE_ACCEPTED = {
    "plain": "for q in range(4):\n    acc += t[q]",
    "masked_times_2": "for q in range(2):\n    acc += t[(q & 1) * 2]",
    "masked_shift": "for q in range(2):\n    acc += t[(q & 1) << 1]",
    "masked_sum": "for q in range(2):\n    acc += t[(q & 1) + (q & 1)]",
    "after_the_loop": "for q in range(4):\n    acc += t[q]\nacc += t[q]",
    "clamped_bound": "for q in range(min(n, 4)):\n    acc += t[q]",
}
#: a position that may leave the tuple: refused, as it must be (soundness probes)
TUPLE_UNSAFE_REFUSED = {
    "shadowed_by_inner_loop": "for q in range(4):\n    for q in range(6):\n"
    "        acc += np.float32(q)\n    acc += t[q]",
    "inner_from_outer": "for q in range(4):\n    for r in range(q, 6):\n        acc += t[r]",
    "rebound_by_a_later_loop": "for q in range(4):\n    acc += t[q]\nfor q in range(6):\n"
    "    acc += np.float32(q)\nacc += t[q]",
    "clamped_to_6": "for q in range(min(n, 6)):\n    acc += t[q]",
    "zip_longer": "for q, e in zip(range(8), range(4)):\n    acc += t[q]",
    "negative_5": "for q in range(-5, 0):\n    acc += t[q]",
    "while_lt_5": "q = 0\nwhile q < 5:\n    acc += t[q]\n    q += 1",
    "start_1_to_5": "for q in range(1, 5):\n    acc += t[q]",
    "start_n": "for q in range(n, 4):\n    acc += t[q]",
    "lane_reassigned": "for q in range(4):\n    if cuda.laneid == 0:\n        q = 5\n    acc += t[q]",
    "helper_index_6": "for q in range(6):\n    acc += pick(t, q)",
}


@pytest.mark.parametrize("name", sorted(TUPLE_SAFE_REFUSED))
def test_a_safe_tuple_position_from_a_range_variable_is_refused(tmp_path: Path, name: str) -> None:
    f = _only_finding(tmp_path, _probe(TUPLE_SAFE_REFUSED[name]))
    assert f.code == "SS-uniformity"
    assert "`warp.sum` needs every thread of the warp to reach it" in f.message


@pytest.mark.parametrize("name", sorted(TUPLE_SAFE_FIXED))
def test_a_safe_tuple_position_refused_in_round_20_is_accepted(tmp_path: Path, name: str) -> None:
    (k,) = _kernels(_load_src(tmp_path, _probe(TUPLE_SAFE_FIXED[name])))
    assert ss.check_kernel(k) == []


@pytest.mark.parametrize("name", sorted(TUPLE_SAFE_ACCEPTED))
def test_a_bounded_tuple_position_is_accepted(tmp_path: Path, name: str) -> None:
    (k,) = _kernels(_load_src(tmp_path, _probe(TUPLE_SAFE_ACCEPTED[name])))
    assert ss.check_kernel(k) == []


@pytest.mark.parametrize("name", sorted(TUPLE_UNSAFE_REFUSED))
def test_a_tuple_position_that_may_leave_the_tuple_is_refused(tmp_path: Path, name: str) -> None:
    f = _only_finding(tmp_path, _probe(TUPLE_UNSAFE_REFUSED[name]))
    assert f.code == "SS-uniformity"


#: DOC_GAPS tuple_bounded_positions, fixed: each position docs/safety.md ("Uniformity") lists,
#: with ``v = int(a[i])`` a value read from data and ``x = i.index`` one from the thread's
#: index, in TUPLE_PROBE -> accepted (True) or refused (False), as the page says
DOCUMENTED_POSITIONS = {
    "acc += t[v & 3]": True,
    "acc += t[np.int32(v) & np.int32(3)]": True,
    "acc += t[(v & 1) | (v & 2)]": True,
    "acc += t[(v & 1) ^ (v & 2)]": True,
    "acc += t[(v & 1) + (v & 2)]": True,
    "acc += t[(v & 1) * 2]": True,
    "acc += t[(v & 1) * (v & 3)]": True,
    "acc += t[(v & 1) << 1]": True,
    "acc += t[(v & 7) >> 1]": True,
    "acc += t[x >> 62]": True,
    "acc += t[-1]": True,
    "if 0 <= v < 4:\n    acc += t[v]": True,
    "if v >= 0 and v < 4:\n    acc += t[v]": True,
    "if x < 4:\n    acc += t[x]": True,
    "acc += t[np.uint32(a[i]) % np.uint32(4)]": True,
    "acc += t[(v & 255) % 4]": True,
    "for q in range(8):\n    acc += t[q & 3]": True,
    "for q in range(4):\n    acc += t[(2 * q) & 3]": True,
    "for q in range(min(n, 4)):\n    acc += t[q]": True,
    # accepted since round 30's range-loop spans (verify/_ranges)
    "acc += t[np.uint64(x) % np.uint64(4)]": True,
    "for q in range(8):\n    acc += t[q >> 1]": True,
    "for q in range(4):\n    acc += t[3 - q]": True,
    # past the tuple, or negative for some values: the IndexError stays (sound refusals)
    "acc += t[v & 7]": False,
    "acc += t[(v & 1) * 4]": False,
    "acc += t[(v & 1) << 2]": False,
    "if v < 4:\n    acc += t[v]": False,
    "acc += t[v % 4]": False,
    "acc += t[x % 5]": False,
    # accepted since round 33: the sign fix-up of `%` folds to branches on constants for a
    # non-negative value, and a phi's pair on an edge no run takes is no value
    "acc += t[x % 4]": True,
    "acc += t[(x & 255) % 4]": True,
    "for q in range(8):\n    acc += t[q % 4]": True,
    # and negative positions (Numba's cases i - 4)
    "acc += t[-4]": True,
    "for q in range(4):\n    acc += t[q - 1]": True,
    "for q in range(4):\n    acc += t[q - 5]": False,
}


@pytest.mark.parametrize("body", sorted(DOCUMENTED_POSITIONS), ids=str)
def test_the_bounded_positions_docs_safety_lists(tmp_path: Path, body: str) -> None:
    src = _probe(body).replace(
        "    t = ss.vec.load(a, i.index, 4)\n",
        "    t = ss.vec.load(a, i.index, 4)\n    v = int(a[i])\n    x = i.index\n",
    )
    (k,) = _kernels(_load_src(tmp_path, src))
    findings = ss.check_kernel(k)
    if DOCUMENTED_POSITIONS[body]:
        assert findings == []
    else:
        (f,) = findings
        assert f.code == "SS-uniformity" and "the tuple index at line" in f.message


# ---------------------------------------------------------------------------------------------
# FALSE_REFUSALS bf16_widen_before_collective, fp16_arith_before_collective; BAD_ERRORS
# opaque_call_uniformity_message, float_of_bf16; DOC_GAPS bf16_widen_np_float32
# ---------------------------------------------------------------------------------------------


def _no_finding(tmp_path: Path, src: str) -> None:
    (k,) = _kernels(_load_src(tmp_path, src))
    assert ss.check_kernel(k) == []
    assert ".entry" in k.ptx(cc=(9, 0))


# FALSE_REFUSALS bf16_widen_before_collective and fp16_arith_before_collective, fixed: the
# status of numba-cuda's C++ shims is read from their source (lowering/_shims.py)


def test_a_bf16_read_widened_with_np_float32_before_a_collective_is_accepted(
    tmp_path: Path,
) -> None:
    _no_finding(tmp_path, port20.BF16_ROW_SUMS)


def test_the_int4_gemv_with_the_docs_widening_of_its_scale_is_accepted(tmp_path: Path) -> None:
    _no_finding(tmp_path, port20.GEMV_INT4_BF16_SCALE)


def test_fp16_arithmetic_before_a_collective_is_accepted(tmp_path: Path) -> None:
    _no_finding(tmp_path, port20.FP16_SQUARES)


def test_np_float32_of_bf16_is_an_out_of_line_call_and_np_float64_a_shift(tmp_path: Path) -> None:
    src = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def widen(y: DisjointSlice[np.float32], x: In[ss.bfloat16]) -> None:
    i = thread.index_1d()
    if i.in_bounds(y):
        y[i] = WIDEN(x[i.index])
"""
    (d32 := tmp_path / "f32").mkdir()
    (d64 := tmp_path / "f64").mkdir()
    f32 = _load_src(d32, src.replace("WIDEN(x[i.index])", "np.float32(x[i.index])"))
    f64 = _load_src(d64, src.replace("WIDEN(x[i.index])", "np.float32(np.float64(x[i.index]))"))
    p32 = f32.widen.ptx(cc=(9, 0))  # type: ignore[attr-defined]
    p64 = f64.widen.ptx(cc=(9, 0))  # type: ignore[attr-defined]
    assert ".extern .func" in p32 and "call.uni" in p32  # cuda_bf16's operator float
    assert "call" not in p64.split(".entry")[1] and "shl.b32" in p64


_ORDER_SCRIPT = """
import sys, tempfile
from pathlib import Path
import simtsafe as ss
from tests.kernels import load_kernel_module, port20
for name in ("BF16_WIDEN_NO_BRANCH", "BF16_ROW_SUMS", "FP16_SQUARES"):
    mod = load_kernel_module(Path(tempfile.mkdtemp()), port20.EXTRA_HEADER + getattr(port20, name))
    (k,) = [v for v in vars(mod).values() if isinstance(v, ss.Kernel)]
    print(name, "|", ss.check_kernel(k))
"""


def test_shims_compiled_once_per_process_stay_known_to_later_kernels() -> None:
    # (was BAD_ERRORS opaque_call_uniformity_message: the refusal named the helper numba-cuda
    # compiles once for the first bf16 conversion, at another kernel's line.) In a fresh
    # process, the second bf16 kernel reuses that helper and its shim: still no finding
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run(
        [sys.executable, "-c", _ORDER_SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "BF16_WIDEN_NO_BRANCH", "|", "[]", "BF16_ROW_SUMS", "|", "[]", "FP16_SQUARES", "|", "[]"
    ]  # fmt: skip


#: the message of a Python conversion of a bf16 int-index read (BAD_ERRORS float_of_bf16, fixed)
BF16_SCALAR_FIX = (
    "`__nv_bfloat16` is numba-cuda's bfloat16 scalar, what an int-index read `x[k]` of a "
    "bfloat16 array gives, and Python's float()/int() and most functions do not take it. Widen "
    "it first: `np.float32(x[k])` or `np.float64(x[k])` (then int(...) and math functions "
    "apply), or read the element through a witness (`x[w]` is its exact float32); "
    "docs/porting.md section 11"
)


@pytest.mark.parametrize("conv", ["float", "int"])
def test_float_of_a_bf16_read_names_the_widening(tmp_path: Path, conv: str) -> None:
    f = _only_finding(tmp_path, port20.FLOAT_OF_BF16.replace("float(x[", f"{conv}(x["))
    assert f.code == "SS-typing"
    assert f.line == _line(tmp_path, f"y[i] = {conv}(x[i.index])")
    assert f"kernel 'widen': Numba cannot type `{conv}(__nv_bfloat16)`: " + BF16_SCALAR_FIX in (
        f.message
    )


@pytest.mark.parametrize(
    "fix", ["float(np.float32(x[i.index]))", "np.float64(x[i.index])", "x[i]"], ids=str
)
def test_the_widenings_the_bf16_message_names_are_accepted(tmp_path: Path, fix: str) -> None:
    _no_finding(tmp_path, port20.FLOAT_OF_BF16.replace("float(x[i.index])", fix))


# ---------------------------------------------------------------------------------------------
# FALSE_REFUSALS tuple_index_in_helper; BAD_ERRORS tuple_index_in_helper_message
# ---------------------------------------------------------------------------------------------


def test_a_masked_tuple_index_in_a_helper_is_accepted(tmp_path: Path) -> None:
    # FALSE_REFUSALS tuple_index_in_helper, fixed: the inlined helper's status is a join of
    # constants, one over its feasible edges once the IndexError default is dropped
    # (verify/_feasible._Joins)
    _no_finding(tmp_path, port20.GEMV_INT4_HELPER)


MASKED_PICK = """
@ss.device
def pick(t, k):
    return t[k & 3]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(y: DisjointSlice[np.float32, PerWarp], a: In[np.float32], n: np.int64) -> None:
    i = thread.index_1d()
    acc = np.float32(0)
    t = ss.vec.load(a, i.index, 4)
    if cuda.laneid < n:
        acc += USE
    acc = ss.warp.sum(acc)
    y[thread.warp_leader()] = acc
"""


def test_the_masked_index_is_accepted_inline_and_through_a_helper(tmp_path: Path) -> None:
    (a := tmp_path / "inline").mkdir()
    (b := tmp_path / "helper").mkdir()
    (c := tmp_path / "unmasked").mkdir()
    (inline,) = _kernels(_load_src(a, MASKED_PICK.replace("USE", "t[i.index & 3]")))
    assert ss.check_kernel(inline) == []
    (helper,) = _kernels(_load_src(b, MASKED_PICK.replace("USE", "pick(t, i.index)")))
    assert ss.check_kernel(helper) == []
    # the twin: the helper indexes at the lane's unmasked index, past the tuple for lane 4 on
    unmasked = MASKED_PICK.replace("return t[k & 3]", "return t[k]").replace(
        "USE", "pick(t, cuda.laneid)"
    )
    (k,) = _kernels(_load_src(c, unmasked))
    (f,) = ss.check_kernel(k)
    assert f.code == "SS-uniformity"
    assert "`warp.sum` needs every thread of the warp to reach it" in f.message


# ---------------------------------------------------------------------------------------------
# FALSE_REFUSALS covers_mma_out_tile (fixed; the launch: tests/sim/test_port20_sim.py), and
# per_cell_cursor_scatter
# ---------------------------------------------------------------------------------------------


def test_the_batched_mma_with_covers_passes_every_check(tmp_path: Path) -> None:
    # FALSE_REFUSALS covers_mma_out_tile, fixed: covers counts the block tiles at the launch
    # (tests/sim/test_port20_sim.py); the compile-time checks find nothing, as before
    (k,) = _kernels(_load_src(tmp_path, port20.BMM_COVERS))
    assert ss.check_kernel(k) == []
    assert ptx_count(k, "mma.sync.aligned.m16n8k16") == 2


def test_the_tile_sizes_covers_counts_are_recorded_at_decoration(tmp_path: Path) -> None:
    from simtsafe.host._launch import out_tile

    (k,) = _kernels(_load_src(tmp_path, port20.BMM_COVERS))
    assert out_tile(k, "c") == ("mma.out_tile", (16, 16, 16, 16))


def ptx_count(k: ss.Kernel, text: str) -> int:
    return k.ptx(cc=(9, 0)).count(text)


def test_a_per_cell_cursor_is_refused_with_append_buffer_advice(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, port20.CELL_SCATTER)
    msg = str(info.value)
    assert "`cursor.add(cell[w], 1)` returns nothing" in msg
    assert "use an AppendBuffer: w = buf.claim()" in msg
    assert "sort" not in msg  # nor any per-bucket form: there is none in Tier 1


# ---------------------------------------------------------------------------------------------
# BAD_ERRORS numpy_clip_round_allow_list, np_rint_no_spelling, collective_in_grid_stride (fixed)
# ---------------------------------------------------------------------------------------------


def test_np_clip_is_refused_with_the_scalar_spelling(tmp_path: Path) -> None:
    # BAD_ERRORS numpy_clip_round_allow_list, fixed: the refusal names the spelling that works
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, port20.QUANT_NUMPY)
    exc = info.value
    assert exc.rule == "numpy-function"
    assert exc.lineno == _line(tmp_path, "q[w] = np.int8(np.clip(")
    msg = str(exc)
    assert (
        "kernel 'quantize_rows': `np.clip` is a numpy function over arrays, not a ufunc, which "
        "kernels cannot call: they compute an element at a time, with numpy ufuncs on scalars "
        "(np.exp(x), np.minimum(a, b)), math functions and operators; for np.clip(x, lo, hi) "
        "write `min(max(x, lo), hi)` (np.clip's value for every x but NaN)"
    ) in msg
    assert "Pass data as arguments" not in msg


#: a numpy function (not a ufunc) on a scalar -> the spelling its refusal gives
NUMPY_FUNCTIONS = {
    "np.round(x)": "for np.round(x) write the builtin `round(x)`: half to even, as np.round, "
    "for a finite x in int64 range; it is an int (`np.float32(round(x))` for a float)",
    "np.around(x)": "for np.around(x) write the builtin `round(x)`",
    "np.clip(x, 0, 1)": "write `min(max(x, lo), hi)`",
    "np.where(x > 0, x, 0)": "for np.where(c, a, b) of scalars write `a if c else b`",
    "np.max(x)": "of two scalars write the builtin `max(a, b)` / `min(a, b)`",
    "np.amin(x)": "of two scalars write the builtin `max(a, b)` / `min(a, b)`",
    "np.sum(x)": "accumulate in a loop, then ss.block.sum / ss.warp.sum",
    "np.nan_to_num(x)": "math functions and operators; write it with those",
}
#: the ufuncs with no kernel implementation -> their spelling
REFUSED_UFUNCS = {
    "np.rint(x)": "`np.rint`: np.rint does not compile in kernels (numba-cuda 0.30.4 cannot "
    "lower it on the GPU); write the builtin `round(x)`: half to even, as np.rint, for a finite "
    "x in int64 range; it is an int (`np.float32(round(x))` for a float)",
    "np.sign(x)": "write `int(x > 0) - int(x < 0)` (an int; 0 for NaN, where np.sign gives NaN)",
    "np.square(x)": "write `x * x`",
}
#: the spellings the refusals give: accepted (values: tests/sim/test_port20_sim.py)
NUMPY_SPELLINGS = {
    "clip": "min(max(x, np.float32(-1)), np.float32(1))",
    "clip_int_bounds": "min(max(x, -1), 1)",
    "rint": "np.float32(round(x))",
    "sign": "np.float32(int(x > 0) - int(x < 0))",
    "where": "x if x > 0 else np.float32(0)",
    "minimum_maximum": "np.minimum(np.maximum(x, np.float32(-1)), np.float32(1))",
}

NUMPY_PROBE = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["y.size == a.size"]))
def k(y: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(y):
        x = a[i]
        y[i] = EXPR
"""


@pytest.mark.parametrize("call", sorted(NUMPY_FUNCTIONS))
def test_a_numpy_array_function_is_refused_with_its_scalar_spelling(
    tmp_path: Path, call: str
) -> None:
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, NUMPY_PROBE.replace("EXPR", call))
    exc = info.value
    assert exc.rule == "numpy-function"
    name = call.split("(")[0]
    assert f"`{name}` is a numpy function over arrays, not a ufunc" in str(exc)
    assert NUMPY_FUNCTIONS[call] in str(exc)


@pytest.mark.parametrize("call", sorted(REFUSED_UFUNCS))
def test_a_ufunc_with_no_kernel_implementation_names_its_spelling(
    tmp_path: Path, call: str
) -> None:
    # BAD_ERRORS np_rint_no_spelling, fixed (and np.sign's spelling, which the simulator ran
    # as a bool subtraction numpy refuses, now converts first)
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, NUMPY_PROBE.replace("EXPR", call))
    assert info.value.rule == "ufunc"
    assert REFUSED_UFUNCS[call] in str(info.value)


def test_np_rint_in_the_quantizer_is_refused_with_round(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, port20.QUANT_RINT)
    assert "kernel 'quantize_rows': " + REFUSED_UFUNCS["np.rint(x)"] in str(info.value)


@pytest.mark.parametrize("name", sorted(NUMPY_SPELLINGS))
def test_the_spellings_the_refusals_give_compile(tmp_path: Path, name: str) -> None:
    _no_finding(tmp_path, NUMPY_PROBE.replace("EXPR", NUMPY_SPELLINGS[name]))


def test_builtin_round_is_round_half_to_even(tmp_path: Path) -> None:
    # the spelling np.rint's and np.round's messages give: round() lowers to libdevice llrint,
    # cvt.rni (round to nearest, half to even) to int64, np.rint's rule
    (k,) = _kernels(_load_src(tmp_path, NUMPY_PROBE.replace("EXPR", NUMPY_SPELLINGS["rint"])))
    body = k.ptx(cc=(9, 0)).split(".entry")[1]
    assert "cvt.rni.s64.f64" in body
    assert "cvt.rzi" not in body and "cvt.rmi" not in body
    ptx = port20.load("quantize_rows_int8", tmp_path).quantize_rows.ptx(cc=(9, 0))
    assert "cvt.rni" in ptx


def test_a_vote_inside_grid_stride_names_the_loop_and_the_uniform_trip_count(
    tmp_path: Path,
) -> None:
    # BAD_ERRORS collective_in_grid_stride, fixed: the compiled form's refusal is told which
    # witness loop it is in (decoration/_uniformity.with_loop_note)
    f = _only_finding(tmp_path, port20.BINCOUNT_GRID_STRIDE)
    assert f.code == "SS-uniformity"
    assert f.line == _line(tmp_path, "c = ss.warp.sum(")
    loop = _line(tmp_path, "for w in thread.grid_stride(labels):")
    assert (
        f"a value computed in a loop that threads leave at different iterations (the exit at "
        f"line {loop})" in f.message
    )
    assert (
        f". The call is inside `for ... in thread.grid_stride(...)` at line {loop}, whose trip "
        "count differs between threads (thread i of the grid runs ceil((n - i) / stride) "
        "rounds: where the array ends, some threads of a warp or block run one round fewer than "
        "the others), so no collective in its body is reached by every thread the same number "
        "of times. For a collective each round, loop the same number of times in every thread "
        "and guard the read: `stride = cuda.gridsize(1)`, `i = cuda.grid(1)`, `for _ in "
        "range((n + stride - 1) // stride):` then `v = x[i] if i < n else <a value that "
        "changes nothing>` and `i += stride` at the end of the body (docs/atomics.md, 'Block "
        "claims')"
    ) in f.message


#: a collective in a witness loop whose trip count is the thread's own -> (the kernel, the
#: fragment of its note); each beside its accepted twin in LOOP_TWINS
LOOP_NOTES = {
    "block_row": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    for w in thread.block_row(out):
        out[w] = ss.block.sum(x[w])
""",
        "inside `for ... in thread.block_row(...)` at line {loop}, whose trip count differs "
        "between threads (thread t walks ceil((s.shape[1] - t) / blockDim.x) columns of the "
        "row), so no collective in its body is reached by every thread the same number of "
        "times. For a collective each round, walk the row with `for c in "
        "thread.block_row_chunks(s):`",
    ),
    "warp_row": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    for w in thread.warp_row(out):
        out[w] = ss.warp.sum(x[w])
""",
        "inside `for ... in thread.warp_row(...)` at line {loop}, whose trip count differs "
        "between threads (lane l walks ceil((s.shape[1] - l) / 32) columns of its warp's row)"
        ", so no collective in its body is reached by every thread the same number of times. "
        "For a collective each round, walk the row with `for c in thread.warp_row_chunks(s):`",
    ),
    "grid_stride_block_sum": (
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    for w in thread.grid_stride(x):
        out[w] = ss.block.sum(x[w])
""",
        "inside `for ... in thread.grid_stride(...)` at line {loop}, whose trip count differs",
    ),
    "grid_stride_helper": (
        """
@ss.device
def vote(v):
    return ss.warp.sum(v)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    for w in thread.grid_stride(x):
        out[w] = vote(x[w])
""",
        "inside `for ... in thread.grid_stride(...)` at line {loop}, whose trip count differs",
    ),
}
LOOP_TWINS = {
    "block_row": LOOP_NOTES["block_row"][0].replace("block_row(out)", "block_row_chunks(out)"),
    "warp_row": LOOP_NOTES["warp_row"][0].replace("warp_row(out)", "warp_row_chunks(out)"),
}


@pytest.mark.parametrize("name", sorted(LOOP_NOTES))
def test_a_collective_in_a_per_thread_witness_loop_names_the_loop(
    tmp_path: Path, name: str
) -> None:
    src, note = LOOP_NOTES[name]
    f = _only_finding(tmp_path, src)
    assert f.code == "SS-uniformity"
    loop = _line(tmp_path, "for w in thread.")
    assert note.format(loop=loop) in f.message


@pytest.mark.parametrize("name", sorted(LOOP_TWINS))
def test_the_chunked_row_walk_the_note_names_is_accepted(tmp_path: Path, name: str) -> None:
    _no_finding(tmp_path, LOOP_TWINS[name])


def test_a_refusal_outside_a_witness_loop_gets_no_loop_note(tmp_path: Path) -> None:
    src = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))
def k(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    acc = np.float32(0)
    for w in thread.grid_stride(x):
        acc += x[w]
    if cuda.laneid < 3:
        acc = ss.warp.sum(acc)
    out[thread.index_1d()] = acc
"""
    f = _only_finding(tmp_path, src)
    assert f.code == "SS-uniformity" and "The call is inside" not in f.message


def test_a_pixel_stored_as_a_tuple_is_told_to_write_the_fields(tmp_path: Path) -> None:
    # BAD_ERRORS record_store_tuple, fixed (ACCEPTED downsample_rgba is the field-store twin)
    f = _only_finding(tmp_path, port20.DOWNSAMPLE_TUPLE)
    assert f.code == "SS-typing"
    assert f.line == _line(tmp_path, "out[w] = (avg4(")
    assert (
        "kernel 'downsample2x2': cannot store a value of type UniTuple(uint8 x 4) into a "
        "DisjointSlice of records (fields r, g, b, a): a record element takes a record of its "
        "dtype (`out[w] = src[k]`, src an input of that dtype) or is written field by field "
        "through the witness, `out[w].r = ...`, `out[w].g = ...`, ... (docs/porting.md, "
        "'Python constructs on views')"
    ) in f.message
    assert "Record(" not in f.message


APPEND_RECORD = """
REC = np.dtype([("v", np.float32), ("i", np.int32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, appends={"out": "count"}))
def k(out: ss.AppendBuffer[REC], count: ss.Counter, x: In[np.float32], r: In[REC]) -> None:
    i = thread.index_1d()
    if i.in_bounds(x):
        w = out.claim()
        STORE
"""


def test_a_tuple_into_an_append_buffer_of_records_is_told_the_field_stores(
    tmp_path: Path,
) -> None:
    f = _only_finding(tmp_path, APPEND_RECORD.replace("STORE", "out[w] = (x[i], i.index)"))
    assert f.code == "SS-typing"
    assert (
        "cannot store a value of type Tuple(float32, int64) into an AppendBuffer of records "
        "(fields v, i): a record element takes a record of its dtype (`buf[w] = src[k]`, src an "
        "input of that dtype) or is written field by field through the witness, `buf[w].v = "
        "...`, `buf[w].i = ...` (docs/atomics.md, 'Several values per item')"
    ) in f.message


@pytest.mark.parametrize(
    "store", ["out[w] = r[i]", "out[w].v = x[i]\n        out[w].i = np.int32(i.index)"], ids=str
)
def test_the_record_stores_the_message_names_are_accepted(tmp_path: Path, store: str) -> None:
    _no_finding(tmp_path, APPEND_RECORD.replace("STORE", store))


def test_a_whole_record_from_an_input_is_stored_into_a_record_output(tmp_path: Path) -> None:
    src = port20.DOWNSAMPLE.replace(
        "        out[w].r = avg4(p00.r, p01.r, p10.r, p11.r)\n", "        out[w] = p00\n"
    )
    _no_finding(tmp_path, src)


# ---------------------------------------------------------------------------------------------
# DOC_GAPS simulator_narrow_int_wraps (the simulator's side: tests/sim/test_port20_sim.py)
# ---------------------------------------------------------------------------------------------


def test_the_gpu_computes_the_sign_extension_in_64_bits(tmp_path: Path) -> None:
    ptx = _kernels(_load_src(tmp_path, port20.LOW_NIBBLE))[0].ptx(cc=(9, 0))
    assert "add.s64" in ptx and "cvt.rn.f32.s64" in ptx  # -8.0 for a low nibble of 8


@pytest.mark.parametrize(
    "widened", ["((int(b) & 15) ^ 8) - 8", "((np.int64(b) & 15) ^ 8) - 8"], ids=str
)
def test_the_widened_sign_extension_is_the_same_64_bit_code(tmp_path: Path, widened: str) -> None:
    # DOC_GAPS simulator_narrow_int_wraps, fixed: docs/checker.md's spelling for both targets
    (k,) = _kernels(_load_src(tmp_path, port20.LOW_NIBBLE.replace("((b & 15) ^ 8) - 8", widened)))
    assert ss.check_kernel(k) == []
    ptx = k.ptx(cc=(9, 0))
    assert "add.s64" in ptx and "cvt.rn.f32.s64" in ptx
