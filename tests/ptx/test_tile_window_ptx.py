"""Shared tiles in a ``tile_shared`` window on the real target (NVVM, no GPU): each tile is
its own ``.extern .shared`` symbol at its offset in the launch's dynamic shared memory, so
tiles over the 48 KiB of static shared memory compile; a window too small is refused; the
compiled-form phase check still tells the window's tiles apart; ``mma.load_b2`` is one
``ldmatrix.x4.trans``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import assert_refused, line_of, load_kernel_module
from tests.kernels.tile_window import BIG, BIG_N, RAW_DYNAMIC, TOO_SMALL, WINDOW, WINDOW_SCRATCH
from tests.ptx.test_gemm_bf16_ptx import _DOUBLE

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _body(ptx: str) -> str:
    return ptx.split(".entry", 1)[1]


def test_window_tiles_are_extern_symbols_at_their_offsets(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, WINDOW).k.ptx(cc=CC)
    assert (
        len(re.findall(r"\.extern \.shared \.align 16 \.b8 _simtsafe_tile_L\d+_\d+\[\];", ptx)) == 2
    )
    assert not re.search(r"\.shared \.align \d+ \.b8 \w+\[\d+\]", ptx)  # no static shared
    # load_b2: the two B fragments by one ldmatrix.x4.trans, no .x2.
    assert (
        len(re.findall(r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16", _body(ptx))) == 1
    )
    assert "m8n8.x2" not in ptx


def test_tiles_over_48_kib_compile_into_the_window(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, BIG).big.ptx(cc=CC)
    assert len(re.findall(r"\.extern \.shared \.align 16 \.b8 _simtsafe_tile\w*\[\];", ptx)) == 2
    # The second tile starts where the first ends: BIG_N float32 in.
    assert f"+{BIG_N * 4}]" in _body(ptx)


def test_a_window_too_small_is_refused_at_compile(tmp_path: Path) -> None:
    err = assert_refused(tmp_path, TOO_SMALL, "as tile_shared", lambda m: m.k.ptx(cc=CC))
    assert "would end at byte 2304" in str(err), str(err)


@pytest.fixture
def compiled_form_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The source-level phase analysis forgotten: only the compiled form decides."""
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)


_WINDOWED = _DOUBLE.replace(
    "block=(64, 1, 1))", f"block=(64, 1, 1), tile_shared={2 * (32 * 24 + 16 * 24) * 2})"
)


def test_window_stages_are_told_apart_by_the_compiled_form(
    tmp_path: Path, compiled_form_only: None
) -> None:
    # The tiles share one dynamic shared memory, but each is its own symbol: reading ta0
    # while ta1's copies are in flight is no clash.
    assert "tile_shared=" in _WINDOWED
    ptx = load_kernel_module(tmp_path, _WINDOWED).k.ptx(cc=CC)
    assert ptx.count(".extern .shared") == 4


def test_reading_a_window_stage_in_flight_is_refused_by_the_compiled_form(
    tmp_path: Path, compiled_form_only: None
) -> None:
    source = _WINDOWED.replace(
        "fa = ss.mma.load_a(ta0, (warp * 16, 0))  # READ",
        "fa = ss.mma.load_a(ta1, (warp * 16, 0))  # READ",
    )
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    msg = str(info.value)
    assert info.value.rule == "tile-phase", msg
    assert "shared tile 'ta1'" in msg and "filled asynchronously (cp.async)" in msg, msg
    assert info.value.lineno == line_of(tmp_path, "# READ"), msg


def test_inline_helpers_are_a_device_option_only() -> None:
    @ss.device(inline=True)
    def helper(x: int) -> int:
        return x + 1

    assert helper is not None
    with pytest.raises(TypeError, match="inline"):

        @ss.device(inline="always")  # type: ignore[arg-type]
        def other(x: int) -> int:
            return x


def test_a_raw_dynamic_shared_array_cannot_alias_the_window(tmp_path: Path) -> None:
    # An attack round's kernel: cuda.shared.array(0, ...) in an unsafe region starts at the
    # dynamic base, where the window's first tile is: its writes race with t's reads.
    (tmp_path / "bad").mkdir()
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path / "bad", RAW_DYNAMIC).k.ptx(cc=CC)
    assert info.value.rule == "tile-window", str(info.value)
    assert "would start at the first tile's address" in str(info.value), str(info.value)
    (tmp_path / "good").mkdir()
    ptx = load_kernel_module(tmp_path / "good", WINDOW_SCRATCH).k.ptx(cc=CC)
    assert len(re.findall(r"\.extern \.shared \.align \d+ \.b8 _simtsafe_tile_\w+\[\];", ptx)) == 2
