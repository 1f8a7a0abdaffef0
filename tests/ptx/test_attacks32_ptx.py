"""Attack round 32 (tests/kernels/attacks32.py) on the real target (NVVM, no GPU): the helper
status joins (``verify/_feasible._Joins``, 32e02e2) hold against the shapes tried -- the unsafe
ones refused with their message, the sound ones accepted with no early exit in their PTX, the
safe refusals pinned -- and the latent misreading of a phi's incoming pairs (FINDING 1, LOW:
synthetic IR only) is pinned as strict xfails beside sound synthetic controls."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from simtsafe.lowering._irform import _parse
from simtsafe.verify._feasible import feasible_successors
from tests.kernels import load_kernel_module, ptx_refusal
from tests.kernels.attacks29 import loop_kernel
from tests.kernels.attacks32 import (
    ACCEPTED,
    FALSE_REFUSALS,
    FINDINGS,
    HELD_KERNELS,
    JOIN_CONTROLS,
    NOT_UNIFORM_BLOCK,
    RANGE_ACCEPTED,
    RANGE_HELD,
    helperize,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(HELD_KERNELS))
def test_held_refused(tmp_path: Path, name: str) -> None:
    source, fragment = HELD_KERNELS[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


@pytest.mark.parametrize("name", sorted(RANGE_HELD))
def test_unsafe_range_loops_through_a_helper_refused(tmp_path: Path, name: str) -> None:
    body = helperize(RANGE_HELD[name])
    assert "get(t, " in body and "t[" not in body
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, loop_kernel(body)).k.ptx(cc=CC)
    assert NOT_UNIFORM_BLOCK in str(info.value), str(info.value)


@pytest.mark.parametrize("name", sorted(RANGE_ACCEPTED))
def test_safe_range_loops_through_a_helper_accepted(tmp_path: Path, name: str) -> None:
    body = helperize(RANGE_ACCEPTED[name])
    ptx = load_kernel_module(tmp_path, loop_kernel(body)).k.ptx(cc=CC)
    assert "bar.sync" in ptx


def _entry(ptx: str) -> str:
    return ptx[ptx.index("{", ptx.index(".entry")) :]


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_sound_shapes_accepted_with_no_early_exit(tmp_path: Path, name: str) -> None:
    """Accepted; in the PTX the kernel's one ``ret`` follows the warp sum's last shuffle: no
    thread leaves before it (NVVM drops the ``IndexError`` default as the analysis did)."""
    body = _entry(load_kernel_module(tmp_path, ACCEPTED[name]).k.ptx(cc=CC))
    assert body.count("ret;") == 1, name
    shuffles = [m.start() for m in re.finditer(r"shfl\.sync", body)]
    assert shuffles and body.index("ret;") > shuffles[-1]
    assert "trap;" not in body


@pytest.mark.parametrize("name", sorted(FALSE_REFUSALS))
def test_false_refusals_pinned(tmp_path: Path, name: str) -> None:
    """Safe helper shapes still refused; pinned so a fix shows up here."""
    source, fragment = FALSE_REFUSALS[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


def test_the_nested_false_refusal_is_accepted_at_the_top_level(tmp_path: Path) -> None:
    """FALSE_REFUSALS nested-two-calls: the same helper called outside the lane branch passes
    (the refusal is the ``i32`` status join under the branch, not the helper)."""
    source, _ = FALSE_REFUSALS["nested-two-calls"]
    top = source.replace("        acc += pick(t, x)", "        acc += np.float32(1)").replace(
        "    acc = ss.warp.sum(acc)", "    acc += pick(t, x)\n    acc = ss.warp.sum(acc)"
    )
    assert "shfl.sync" in load_kernel_module(tmp_path, top).k.ptx(cc=CC)


# --------------------------------------------------------------------------- synthetic IR


@pytest.mark.parametrize("name", sorted(JOIN_CONTROLS))
def test_the_join_fold_on_sound_synthetic_shapes(name: str) -> None:
    ir, expected = JOIN_CONTROLS[name]
    form = _parse(ir, "k")
    succs = feasible_successors(form)
    if name == "loop-cycle":  # the branch on the cycle keeps both edges
        assert succs["%h"] == ("%x", "%h")
    else:
        assert succs["%j"] == expected


# FINDING 1 (LOW, latent): pairs _INCOMING_RE did not match were left out like dead edges.
# Fixed: verify/_feasible._phi_pairs reads every pair or gives no constant, and a pair from a
# block the form does not name (an unlabeled entry: `%0` in LLVM's phis) gives none either
@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_a_phi_pair_the_regex_misreads_keeps_its_edge(name: str) -> None:
    form = _parse(FINDINGS[name], "k")
    assert [b.name for b in form.blocks][:2] in (
        ["%entry", "%a"],
        ["%entry", '%"a b"'],
        ["%entry", '%"a]"'],
    ) or name == "joins-unnamed-entry"
    # %a -> %j is taken whenever %c is true: %j must keep both successors
    assert feasible_successors(form)["%j"] == ("%x", "%y")
