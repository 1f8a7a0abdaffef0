"""Attack round 6 on the real target (NVVM, no GPU): Columns and vec.store (each test failed
on commit 65b3103; kernels in tests/kernels/attacks6.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks6 import (
    BF16_DOUBLE_ROUNDING,
    COLUMN_IN_BOUNDS_OF_AN_INPUT,
    TILE_STORE_OF_BF16_SCALARS,
    VEC_STORE_OF_BF16_SCALARS,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _entry(ptx: str) -> str:
    return ptx.split(".entry", 1)[1]


def test_column_witness_in_bounds_of_a_1d_input_compiles(tmp_path: Path) -> None:
    """Finding 1 (false refusal, internal error): ``w.in_bounds(x)`` with a Columns
    witness and a 1D input types (x[w] is the documented read), but the lowering unpacks
    two extents from the 1D input's shape: llvmlite's TypeError "Can't index at [1] in
    [1 x i64]" escapes, not even a SafetyError."""
    mod = load_kernel_module(tmp_path, COLUMN_IN_BOUNDS_OF_AN_INPUT)
    try:
        ptx = mod.k.ptx(cc=CC)
    except Exception as exc:  # noqa: BLE001 - the finding is which exception escapes
        pytest.fail(
            f"a Columns witness's in_bounds of a 1D input is refused: {type(exc).__name__}: {exc}"
        )
    body = _entry(ptx)
    # the guarded input read and the guarded output store are there
    assert re.search(r"\bld\.global(\.nc)?\.f32", body), body
    assert re.search(r"\bst\.global\.f32", body), body


def test_column_in_bounds_refusal_if_any_is_a_safety_error(tmp_path: Path) -> None:
    """Whatever the fix decides, what escapes must be a SafetyError naming the kernel."""
    mod = load_kernel_module(tmp_path, COLUMN_IN_BOUNDS_OF_AN_INPUT)
    try:
        mod.k.ptx(cc=CC)
    except ss.SafetyError as exc:
        assert "'k'" in str(exc)
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"not a SafetyError: {type(exc).__name__}: {exc}")


def test_bf16_tile_store_rounds_through_float32_on_the_device(tmp_path: Path) -> None:
    """Evidence for finding 2 (the simulator test is the failing one): the device rounds
    a float64 stored into a bf16 tile element to float32 first (cvt.rn.f32.f64), then to
    bf16 -- two roundings, as the docs say. The simulator rounds once."""
    body = _entry(load_kernel_module(tmp_path, BF16_DOUBLE_ROUNDING).k.ptx(cc=CC))
    assert len(re.findall(r"cvt\.rn\.f32\.f64", body)) >= 1, body
    assert "cvt.rn.bf16" not in body  # no direct f64 -> bf16 rounding anywhere


def test_vec_store_takes_what_the_tile_element_store_takes(tmp_path: Path) -> None:
    """Finding 3 (false refusal): docs/cooperation.md says vec.store converts each value
    "as t[k] = v would"; ``t[k] = a[k]`` of a bf16 value read by plain int compiles, the
    same values through vec.store are refused ("got __nv_bfloat16")."""
    twin = tmp_path / "twin"
    twin.mkdir()
    load_kernel_module(twin, TILE_STORE_OF_BF16_SCALARS).k.ptx(cc=CC)
    try:
        load_kernel_module(tmp_path, VEC_STORE_OF_BF16_SCALARS).k.ptx(cc=CC)
    except ss.SafetyError as exc:
        pytest.fail(f"vec.store refuses values its element-store twin accepts: {exc}")
