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


GRID_READ = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=32, cooperative=True))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    i = w.index
    with ss.unsafe("SAFETY: claimed: run i is thread i's"):
        ss.vec.store_at(out.unchecked, i, (1.0, 2.0, 3.0, 4.0))  # WRITE
    v = ss.grid.read(out, i + 1)
    ss.grid.sync()
    out[w] = v
"""


def test_grid_read_counts_store_at_as_a_write_of_the_output(tmp_path: Path) -> None:
    """A vector store through out.unchecked is a write of out for the grid-phase analysis."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, GRID_READ).k.ptx(cc=CC)
    assert "grid.read of output 'out' may run in the same grid phase as the write" in str(
        info.value
    )
    assert f"write at line {line_of(tmp_path, '# WRITE')}" in str(info.value)


def test_grid_read_after_a_sync_is_accepted(tmp_path: Path) -> None:
    twin = GRID_READ.replace(
        "    v = ss.grid.read(out, i + 1)\n    ss.grid.sync()\n",
        "    ss.grid.sync()\n    v = ss.grid.read(out, i + 1)\n    ss.grid.sync()\n",
    )
    assert twin != GRID_READ
    assert "st.global" in load_kernel_module(tmp_path, twin).k.ptx(cc=CC)
