"""An exact contract block becomes .reqntid; max_threads becomes .maxntid; never both."""

from __future__ import annotations

import pytest

from tests.gpu.gpu_kernels import diff_exact, diff_free, scale, shared_copy

pytestmark = pytest.mark.ptx


def _directives(ptx: str) -> list[str]:
    return [
        line.strip() for line in ptx.splitlines() if "ntid" in line and line.strip().startswith(".")
    ]


def test_exact_block_is_stamped_as_reqntid() -> None:
    assert _directives(scale.ptx()) == [".reqntid 128, 1, 1"]
    assert _directives(diff_exact.ptx()) == [".reqntid 8, 4, 2"]


def test_max_threads_is_stamped_as_maxntid() -> None:
    assert _directives(shared_copy.ptx()) == [".maxntid 1024, 1, 1"]


def test_no_contract_no_directive() -> None:
    assert _directives(diff_free.ptx()) == []


def test_blocks_per_sm_is_stamped_as_minnctapersm() -> None:
    from tests.kernels.blocks_per_sm import bounded, exact

    def stamped(ptx: str) -> list[str]:
        return [
            ln.strip()
            for ln in ptx.splitlines()
            if ln.strip().startswith((".reqntid", ".maxntid", ".minnctapersm"))
        ]

    assert stamped(exact.ptx()) == [".reqntid 256, 1, 1", ".minnctapersm 2"]
    assert stamped(bounded.ptx()) == [".maxntid 1024, 1, 1", ".minnctapersm 3"]
