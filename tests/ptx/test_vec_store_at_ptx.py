"""``vec.store_at`` on the real target (NVVM, no GPU): one vector store per run, each refusal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module
from tests.kernels.vec_store_at_rules import ACCEPTED, REFUSED, run_source

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    assert fragment in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")


def test_outside_a_region_is_refused_at_decoration(tmp_path: Path) -> None:
    source, _ = REFUSED["outside-an-unsafe-region"]
    with pytest.raises(ss.UnsafeRegionRequired) as info:
        load_kernel_module(tmp_path, source)  # no compile needed
    assert info.value.rule == "unsafe-op"


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_compiles(tmp_path: Path, case: str) -> None:
    assert "st.global" in load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=CC)


@pytest.mark.parametrize(
    ("dt", "n", "vector"),
    [
        ("np.float32", 4, "v4.f32"),
        ("np.float32", 2, "v2.f32"),
        ("np.int32", 4, "v4.u32"),
        ("np.uint32", 4, "v4.u32"),
        ("np.float64", 2, "v2.f64"),
        ("np.int16", 8, "v4.u32"),
    ],
)
def test_one_vector_store_per_run(tmp_path: Path, dt: str, n: int, vector: str) -> None:
    body = load_kernel_module(tmp_path, run_source(dt, n)).k.ptx(cc=CC).split(".entry", 1)[1]
    vec_stores = re.findall(r"^\s*st\.global\.(v\d\.\w+)", body, re.MULTILINE)
    assert vec_stores == [vector], vec_stores
    # The fallback (a partial run at the end, or a misaligned address): element stores.
    assert re.search(r"^\s*(?:@!?%p\d+\s+)?st\.global\.(?:[fubs]\d+)\s", body, re.MULTILINE)


def test_audit_lists_the_region(tmp_path: Path) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED["a-run-of-four"])
    assert [r.reason for r in mod.k.unsafe_regions] == [
        "SAFETY: thread i alone writes run i of out (distinct runs per thread)"
    ]
