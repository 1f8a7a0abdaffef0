"""``simtsafe.mma`` on the real target (NVVM, no GPU): one ``ldmatrix`` per fragment load
and one ``mma.sync.aligned.m16n8k16`` per multiply-accumulate; the refusals of
tests/kernels/mma_rules.py on the compiled form, and the source-level fallback's agreement."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.mma_rules import ACCEPTED, ACCEPTED_TWINS, REFUSED, UNIFORMITY

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _body(ptx: str) -> str:
    return ptx.split(".entry", 1)[1]


@pytest.mark.parametrize("case", sorted(REFUSED) + sorted(UNIFORMITY))
def test_refused(tmp_path: Path, case: str) -> None:
    source, fragment = {**REFUSED, **UNIFORMITY}[case]
    assert fragment is not None
    assert_refused(tmp_path, source, fragment, lambda mod: mod.k.ptx(cc=CC))


@pytest.mark.parametrize("case", sorted(ACCEPTED_TWINS))
def test_accepted_twins_compile(tmp_path: Path, case: str) -> None:
    body = _body(load_kernel_module(tmp_path, ACCEPTED_TWINS[case]).k.ptx(cc=CC))
    assert len(re.findall(r"\bmma\.sync\.aligned\.m16n8k16\b", body)) == 2


@pytest.mark.parametrize("case", sorted(UNIFORMITY))
def test_source_level_fallback_agrees(tmp_path: Path, case: str) -> None:
    # What the simulator uses without a CUDA target says the same about the warp's operations.
    source, fragment = UNIFORMITY[case]
    finding = load_kernel_module(tmp_path, source).k.source_uniformity().finding
    assert finding is not None and fragment is not None
    assert fragment.split("`")[1] in str(finding)


def test_source_level_fallback_accepts_the_twins(tmp_path: Path) -> None:
    for source in (ACCEPTED, *ACCEPTED_TWINS.values()):
        assert load_kernel_module(tmp_path, source).k.source_uniformity().finding is None
        for path in tmp_path.glob("ss_testmod_*.py"):
            path.unlink()


def test_tensor_core_instructions(tmp_path: Path) -> None:
    body = _body(load_kernel_module(tmp_path, ACCEPTED).k.ptx(cc=CC))
    mma = re.findall(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32", body)
    assert len(mma) == 2
    assert re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16", body) == [
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
    ]
    assert len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x2\.trans\.shared\.b16", body)) == 2
    # The exact block (64 threads: whole warps) folds the partial-warp guard; nothing calls out.
    assert not re.search(r"^\s*(?:@!?%p\d+\s+)?call\b", body, re.MULTILINE)
    assert not re.search(r"\btrap\b", body)
    # Tiles are 16-byte aligned (ldmatrix reads 16-byte rows).
    assert re.findall(r"\.shared \.align (\d+) \.b8 _simtsafe_tile", _ptx_all(tmp_path)) == [
        "16",
        "16",
    ]


def _ptx_all(tmp_path: Path) -> str:
    return load_kernel_module(tmp_path, ACCEPTED).k.ptx(cc=CC)
