"""Row spaces (BlockRow, WarpRow) on the real target (NVVM, no GPU).

Every rule of tests/kernels/row_rules.py is refused with its message and its
accepted twin compiles; a block (warp) collective after a row loop compiles
and one inside it is refused; the launch-shape checks are present exactly
when no ``domain=1`` contract proves the launch 1D.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.row_rules import ACCEPTED, COLLECTIVES, REFUSED

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
    assert re.search(r"^\s*(?:@!?%p\d+\s+)?st\.global", ptx, re.MULTILINE)


@pytest.mark.parametrize("case", sorted(COLLECTIVES))
def test_collective_after_the_loop_accepted_inside_refused(tmp_path: Path, case: str) -> None:
    source, fragment = COLLECTIVES[case]
    if fragment is None:
        assert ".entry" in load_kernel_module(tmp_path, source).k.ptx(cc=CC)
        return
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


_SHAPES = """
from simtsafe import BlockRow, WarpRow


@ss.kernel
def free(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    for w in thread.block_row(x):
        out[w] = x[w]


@ss.kernel(contract=ss.LaunchContract(domain=1))
def proven(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
    for w in thread.block_row(x):
        out[w] = x[w]


@ss.device
def copy_row(out, x):
    for w in thread.warp_row(x):
        out[w] = x[w]


@ss.kernel(contract=ss.LaunchContract(domain=1))
def via_helper(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:
    copy_row(out, x)
"""


def test_launch_shape_checked_on_the_device_only_without_a_proof(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, _SHAPES)
    free, proven = mod.free.ptx(cc=CC), mod.proven.ptx(cc=CC)
    for sreg in ("%ntid.y", "%ntid.z", "%nctaid.y", "%nctaid.z"):
        assert sreg in free, sreg
        assert sreg not in proven, sreg
    # A helper is compiled without the kernel's proof: its witnesses check the launch.
    assert "%nctaid.y" in mod.via_helper.ptx(cc=CC)


def test_domain_rule_refuses_a_row_walk_in_a_2d_kernel(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match="block_row"):
        load_kernel_module(
            tmp_path,
            """
            from simtsafe import BlockRow

            @ss.kernel(contract=ss.LaunchContract(domain=2))
            def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:
                for w in thread.block_row(x):
                    out[w] = x[w]
            """,
        )


_ROW_EXAMPLES = [
    ("softmax", "softmax"),
    ("softmax", "softmax_warp"),
    ("rmsnorm", "rmsnorm"),
    ("layernorm", "layernorm"),
]


@pytest.mark.parametrize(("stem", "attr"), _ROW_EXAMPLES)
def test_row_examples_against_their_raw_twins(stem: str, attr: str) -> None:
    """The row examples next to their raw twins (tests/ptx/raw_rows.py).

    Not yet the zero-cost equality of test_zero_cost.py: a witness access
    checks its row against its own array, and the arrays of one kernel may
    have different numbers of rows (the safe kernel then writes the output
    row with the input's reads giving 0, where the raw twin would read past
    the input). NVVM versions the write loop on that loop-invariant test, so
    the BlockRow kernels hold each global access of that loop twice in the
    PTX (one copy runs). Held here: no trap, no call, the warp-per-row kernel
    equal to its twin, the others at most twice.
    """
    from numba import cuda

    from simtsafe.lowering._compat import assume_compute_capability
    from tests.ptx.raw_twins import RAW_TWINS
    from tests.ptx.test_zero_cost import _count, _import_example

    kernel = getattr(_import_example(stem), attr)
    safe = kernel.ptx(cc=CC)
    with assume_compute_capability(CC):
        raw, _ = cuda.compile_ptx(RAW_TWINS[attr][1], kernel.argtypes(), cc=CC)
    assert not re.search(r"\btrap\b", safe)
    assert not re.search(r"^\s*(?:@!?%p\d+\s+)?call\b", safe, re.MULTILINE)
    for op in ("ld.global", "st.global"):
        s, r = _count(safe, op), _count(raw, op)
        assert r <= s <= 2 * r, (attr, op, s, r)
        if attr == "softmax_warp":
            assert s == r, (attr, op, s, r)


@pytest.mark.parametrize("case", sorted(COLLECTIVES))
def test_source_level_fallback_agrees(tmp_path: Path, case: str) -> None:
    # The source-level finding (what the simulator uses without a CUDA target) says
    # the same as the compiled form about a collective after / inside a row loop.
    source, fragment = COLLECTIVES[case]
    finding = load_kernel_module(tmp_path, source).k.source_uniformity().finding
    if fragment is None:
        assert finding is None
    else:
        assert finding is not None and fragment in str(finding)
