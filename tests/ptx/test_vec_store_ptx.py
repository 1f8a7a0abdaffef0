"""``vec.store`` on the real target (NVVM, no GPU): one vector store per tile, each refusal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels import assert_refused, load_kernel_module
from tests.kernels.vec_store_rules import ACCEPTED, REFUSED, copy_source

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], lambda mod: mod.k.ptx(cc=CC))


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_twin_compiles(tmp_path: Path, case: str) -> None:
    assert "st.global" in load_kernel_module(tmp_path, ACCEPTED[case]).k.ptx(cc=CC)


@pytest.mark.parametrize(
    ("dt", "n", "vector"),
    [
        ("np.float32", 4, "v4.f32"),
        ("np.float32", 2, "v2.f32"),
        ("np.float64", 2, "v2.f64"),
        ("np.int32", 4, "v4.u32"),
        ("np.int16", 8, "v4.u32"),
        ("np.float16", 4, "v2.u32"),
        ("ss.bfloat16", 8, "v4.u32"),
    ],
)
def test_one_vector_store_per_tile(tmp_path: Path, dt: str, n: int, vector: str) -> None:
    body = load_kernel_module(tmp_path, copy_source(dt, n)).k.ptx(cc=CC).split(".entry", 1)[1]
    vec_stores = re.findall(r"^\s*st\.global\.(v\d\.\w+)", body, re.MULTILINE)
    assert vec_stores == [vector.replace("v4.f32", "v4.f32")], vec_stores
    # The fallback (edge tile or misaligned address) stores element by element.
    assert re.search(r"^\s*(?:@!?%p\d+\s+)?st\.global\.(?:[fubs]\d+)\s", body, re.MULTILINE)
