"""Attack round 33 (tests/kernels/attacks33.py) on the real target (NVVM, no GPU): the three
poison sources the analysed copy kept (a shift by a literal amount past the width, an i64
shift amount's high bits, a float-to-integer conversion out of range) are refused, at the
default level and at ``opt=False`` where NVVM computes them as PTX does; their uniform twins
stay accepted; the ownership, block-claim, row-chunk and input-read routes hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels import load_kernel_module, ptx_refusal
from tests.kernels.attacks33 import (
    ACCEPTED,
    APPEND_HELD,
    BLOCK_CLAIM_HELD,
    FINDINGS,
    HASH_HELD,
    NOT_UNIFORM_BLOCK,
    READ_HELD,
    ROWS_HELD,
    SAFE_TWINS,
    poison_kernel,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)

_HELD = {
    **{f"append/{k}": v for k, v in APPEND_HELD.items()},
    **{f"hash/{k}": v for k, v in HASH_HELD.items()},
    **{f"block-claim/{k}": v for k, v in BLOCK_CLAIM_HELD.items()},
    **{f"rows/{k}": v for k, v in ROWS_HELD.items()},
    **{f"read/{k}": v for k, v in READ_HELD.items()},
}


# FINDINGS 1-3 (LOW), fixed in lowering/_irform._wrapping: accepted before, refused now
@pytest.mark.parametrize("options", ["", "opt=False, "], ids=["default", "opt0"])
@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_poison_in_the_analysed_copy_refused(tmp_path: Path, name: str, options: str) -> None:
    message = ptx_refusal(tmp_path, poison_kernel(FINDINGS[name], options), CC)
    assert NOT_UNIFORM_BLOCK in message, message


@pytest.mark.parametrize("name", sorted(SAFE_TWINS))
def test_uniform_twins_accepted(tmp_path: Path, name: str) -> None:
    """The same operations where the GPU gives one value in every thread (0 past the width,
    0 for a negative float into unsigned, NaN to 0): accepted."""
    ptx = load_kernel_module(tmp_path, poison_kernel(SAFE_TWINS[name])).k.ptx(cc=CC)
    assert "bar.sync" in ptx


def _ptx_opt0(tmp_path: Path, body: str) -> str:
    """The -opt=0 PTX of a finding's body with the block sum replaced by a store (accepted:
    no collective), to show what the GPU computes."""
    src = poison_kernel(body, "opt=False, ").replace(
        "    s = ss.block.sum(np.float32(1))\n", "    s = np.float32(1)\n"
    )
    tmp_path.mkdir()
    ptx = load_kernel_module(tmp_path, src).k.ptx(cc=CC)
    return ptx[ptx.index(".entry") :]


def test_what_the_gpu_computes_at_opt0(tmp_path: Path) -> None:
    """The PTX each finding rests on: PTX clamps a literal amount (FINDING 1: Numba's
    ``ashr 70`` was ``shr.s64 ..., 70``, the sign), truncates an i64 amount to 32 bits before
    shifting (FINDING 2), and converts an out-of-range double with cvt.rzi, which saturates
    (FINDING 3) -- a value per thread, where LLVM has poison. Since NVVM compiles the wrapping
    form (lowering/_nvvminput), the PTX computes these values as the analysed copy writes
    them: the sign by a shift of 63, the low 32 bits masked then the shift, ``cvt.rzi``."""
    ptx1 = _ptx_opt0(tmp_path / "1", FINDINGS["shift-literal-exit"])
    assert re.search(r"shr\.s64\s+%rd\d+, %rd\d+, 63;", ptx1), ptx1
    ptx2 = _ptx_opt0(tmp_path / "2", FINDINGS["shift-amount-high-bits"])
    assert re.search(r"or\.b64\s+(%rd\d+), %rd\d+, 4294967296;", ptx2)
    assert re.search(r"and\.b64\s+(%rd\d+), %rd\d+, 4294967295;", ptx2)
    assert re.search(r"cvt\.u32\.u64\s+(%r\d+), %rd\d+;\s+shl\.b64\s+%rd\d+, %rd\d+, \1;", ptx2)
    ptx3 = _ptx_opt0(tmp_path / "3", FINDINGS["fptosi-out-of-range"])
    assert "cvt.rzi.s64.f64" in ptx3 and ".extern" not in ptx3


@pytest.mark.parametrize("name", sorted(_HELD))
def test_held_refused(tmp_path: Path, name: str) -> None:
    source, fragment = _HELD[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_sound_shapes_accepted(tmp_path: Path, name: str) -> None:
    assert ".entry" in load_kernel_module(tmp_path, ACCEPTED[name]).k.ptx(cc=CC)
