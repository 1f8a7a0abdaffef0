"""``shared.fill_async`` / ``fill_transposed`` on the real target (NVVM, no GPU): the cp.async
instructions, the transposed fill's vector loads, PTX that ptxas accepts (through nvJitLink)
for sm_90, and the refusals of tests/kernels/async_fill_rules.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels import assert_refused, line_of, load_kernel_module
from tests.kernels.async_fill_rules import (
    DOUBLE_BUFFER,
    DYNAMIC,
    ONE_STAGE,
    PAIR,
    PAIR_EARLY_READ,
    PAIR_REFUSAL,
    PAIR_REFUSED,
    RECORD_TILES,
    RECORD_WRITTEN_DURING_THE_FILL,
    REFUSED,
    STEPPED,
    STEPPED_LOOP,
    TRANSPOSED,
    UNPAIRED,
)

pytestmark = pytest.mark.ptx

CC = (9, 0)


def _body(tmp_path: Path, source: str) -> tuple[str, str]:
    ptx = load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    return ptx, ptx.split(".entry", 1)[1]


def _assembles(ptx: str) -> None:
    """ptxas (inside nvJitLink) turns the PTX into a cubin for sm_90."""
    nvjitlink = pytest.importorskip("cuda.bindings.nvjitlink")
    handle = nvjitlink.create(1, ["-arch=sm_90"])
    data = ptx.encode()
    nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), "k")
    try:
        nvjitlink.complete(handle)
    except Exception:  # pragma: no cover - the log says why
        log = bytearray(nvjitlink.get_error_log_size(handle))
        nvjitlink.get_error_log(handle, log)
        raise AssertionError(log.decode()) from None
    assert nvjitlink.get_linked_cubin_size(handle) > 0


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused(tmp_path: Path, case: str) -> None:
    assert_refused(tmp_path, *REFUSED[case], lambda mod: mod.k.ptx(cc=CC))


@pytest.mark.parametrize("case", sorted(RECORD_TILES))
def test_a_tile_of_8_or_16_byte_records_is_filled(tmp_path: Path, case: str) -> None:
    # Accepted. Where a run is not one copy, each record is one integer load and one store
    # into the tile (st.shared.u64 / .v2.u64), never a store a byte: no piece of a record store
    # without its fill's marker.
    ptx, body = _body(tmp_path, RECORD_TILES[case])
    if "fill-async" in case:
        assert re.findall(r"cp\.async\.cg\.shared\.global \[%\w+\], \[%\w+\], 16, ", body)
    stores = re.findall(r"st\.shared(\.v\d)?\.(\w+)", body)
    assert stores and all(kind in ("u64", "b64") for _, kind in stores), stores
    _assembles(ptx)


@pytest.mark.parametrize("case", sorted(RECORD_WRITTEN_DURING_THE_FILL))
def test_a_record_written_into_the_tile_during_its_fill_is_refused(
    tmp_path: Path, case: str
) -> None:
    assert_refused(tmp_path, *RECORD_WRITTEN_DURING_THE_FILL[case], lambda mod: mod.k.ptx(cc=CC))


def test_one_stage_is_cp_async_with_a_src_size_and_its_group(tmp_path: Path) -> None:
    ptx, body = _body(tmp_path, ONE_STAGE)
    # 4 x 16 floats: runs of 16 bytes, .cg, src-size from a register (zero-fill past the row)
    assert re.findall(r"cp\.async\.cg\.shared\.global \[%\w+\], \[%\w+\], 16, %r\d+;", body)
    assert "cp.async.ca" not in body
    assert body.count("cp.async.commit_group;") == 1
    assert body.count("cp.async.wait_group 0;") == 1
    assert body.index("cp.async.wait_group 0;") < body.index("bar.sync")
    _assembles(ptx)


def test_each_run_is_one_copy_that_zero_fills_outside(tmp_path: Path) -> None:
    # Two paths: the copies (the 16 runs of the 4 x 16 tile: with the block pinned to 64
    # threads, the runs of threads 0..15, one cp.async each whose ignore-src predicate is
    # "this run's row or column lies outside the input": zeros there, nothing read) and the
    # per-run one for misaligned sources (a cp.async with a computed src-size, else element
    # by element).
    _, body = _body(tmp_path, ONE_STAGE)
    whole = re.findall(r"cp\.async\.cg\.shared\.global \[%\w+\], \[%\w+\], 16, %ssi;", body)
    per_run = re.findall(r"cp\.async\.cg\.shared\.global \[%\w+\], \[%\w+\], 16, %r\d+;", body)
    assert len(whole) == 1 and len(per_run) == 1, (whole, per_run)


def test_a_pinned_fill_is_predicated_not_branched_around(tmp_path: Path) -> None:
    # The block is pinned: each copy is one predicated instruction whose predicate is the
    # alignment test (a register set to 0 or 1), so no branch goes around it, and whose
    # ignore-src predicate is the run's bounds test; the per-run path's copy keeps its
    # computed src-size and no predicate.
    _, body = _body(tmp_path, ONE_STAGE)
    guarded = re.findall(
        r"setp\.ne\.b32 %ssi, (%r\d+), 0;\s*setp\.ne\.b32 %ssp, (%r\d+), 0;\s*"
        r"cvta\.to\.global\.u64 %ssg, %rd\d+;\s*"
        r"@%ssp cp\.async\.cg\.shared\.global \[%r\d+\], \[%ssg\], 16, %ssi;",
        body,
    )
    assert len(guarded) == 1, guarded
    ((outside, test),) = guarded
    assert re.search(rf"selp\.u32\s+{re.escape(test)}, 1, 0, %p\d+;", body), test
    assert re.search(rf"selp\.u32\s+{re.escape(outside)}, 1, 0, %p\d+;", body), outside
    assert len(re.findall(r"@%ssp cp\.async", body)) == 1


def test_inputs_aligned_for_runs_have_no_per_run_path(tmp_path: Path) -> None:
    # Compiled for inputs the launch found aligned for 16-byte runs ("C16": data pointer,
    # pitch and row bytes multiples of 16) and a fill whose origin column steps by whole
    # runs, NVVM folds the alignment test: no per-run path (no element loads or shared
    # stores), the copies only. For any input ("C") the per-run path stays.
    mod = load_kernel_module(tmp_path, STEPPED_LOOP)
    fast = mod.k.ptx(cc=CC, layouts=("C16",))
    generic = mod.k.ptx(cc=CC, layouts=("C",))
    for ptx, per_run in ((fast, False), (generic, True)):
        body = ptx.split(".entry", 1)[1]
        assert ("st.shared.f32" in body) == per_run
        assert ("ld.global.f32" in body) == per_run
        assert re.search(r"cp\.async\.cg\.shared\.global .*, 16, %ssi;", body)
        _assembles(ptx)


def test_double_buffer_waits_for_all_but_the_newest_group(tmp_path: Path) -> None:
    ptx, body = _body(tmp_path, DOUBLE_BUFFER)
    # 1D tiles of 64 floats: 16-byte runs; the prologue's fill and the loop's two
    assert len(re.findall(r"cp\.async\.cg\.shared\.global", body)) >= 3
    assert body.count("cp.async.wait_group 1;") == 2
    assert body.count("cp.async.wait_all;") == 1
    _assembles(ptx)


@pytest.mark.parametrize(("cols", "size"), [(2, 8), (3, 4)])
def test_small_rows_copy_4_or_8_bytes_with_ca(tmp_path: Path, cols: int, size: int) -> None:
    src = ONE_STAGE.replace("(4, 16), np.float32, pad=4", f"(4, {cols}), np.float32").replace(
        "out[w] = t[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16]", "out[w] = t[0, 1]"
    )
    ptx, body = _body(tmp_path, src)
    pattern = rf"cp\.async\.ca\.shared\.global \[%\w+\], \[%\w+\], {size}, %r\d+;"
    assert re.findall(pattern, body)
    _assembles(ptx)


def test_tiles_are_16_byte_aligned(tmp_path: Path) -> None:
    ptx, _ = _body(tmp_path, ONE_STAGE)
    assert re.search(r"\.shared \.align 16 \.b8 \w*_simtsafe_tile", ptx)


def test_transposed_fill_reads_rows_with_vector_loads(tmp_path: Path) -> None:
    ptx, body = _body(tmp_path, TRANSPOSED)
    assert re.findall(r"ld\.global(?:\.nc)?\.v4\.f32", body)
    assert "cp.async" not in body
    _assembles(ptx)


def test_dynamic_tile_copies_16_byte_runs_up_to_the_launch_length(tmp_path: Path) -> None:
    ptx, body = _body(tmp_path, DYNAMIC)
    # whole runs: cp.async of 16 bytes; the tile's length is read on the device
    assert re.findall(r"cp\.async\.cg\.shared\.global \[%\w+\], \[%\w+\], 16, %r\d+;", body)
    assert "%dynamic_smem_size" in body
    assert body.count("cp.async.wait_all;") == 1
    _assembles(ptx)


def test_the_dynamic_tile_is_16_byte_aligned(tmp_path: Path) -> None:
    """cp.async.cg writes 16 bytes at multiples of 16 from the tile's start: the dynamic tile
    of 1-byte elements is declared 16-byte aligned, as static tiles are."""
    src = DYNAMIC.replace("np.float32", "np.int8")
    ptx, _ = _body(tmp_path, src)
    assert re.search(r"\.extern \.shared \.align 16 \.b8 _simtsafe_dyntile", ptx), ptx[:2000]
    _assembles(ptx)


def test_an_unsigned_start_past_2_62_is_out_of_range(tmp_path: Path) -> None:
    """An unsigned 64-bit start is compared, unsigned, with 2**62 before it is used as an
    int64 (no wrap to a negative start); a signed start has no such compare."""
    _, unsigned = _body(tmp_path, DYNAMIC.replace("start: np.int64", "start: np.uint64"))
    _, signed = _body(tmp_path, DYNAMIC)
    assert str(2**62) in unsigned
    assert str(2**62) not in signed


def test_a_pinned_whole_fill_computes_one_address_per_thread(tmp_path: Path) -> None:
    # With the block pinned, run k + 256 of a tile wholly inside lies 16 rows below run k: the
    # thread's first source address is computed once (a multiply by the row pitch) and each
    # further run is one add. Twice the runs a thread, no further multiply.
    muls = []
    for rows in (64, 128):  # 4 and 8 runs a thread
        (tmp_path / str(rows)).mkdir()
        ptx, body = _body(tmp_path / str(rows), STEPPED[rows])
        muls.append(len(re.findall(r"\bmul(?:\.wide)?\.(?:lo\.)?[su]64\b", body)))
        _assembles(ptx)
    assert muls[0] == muls[1], muls


def _between_copies(body: str) -> str:
    """The PTX from the first predicated whole-tile copy to the last."""
    first = body.index("@%ssp cp.async")
    last = body.rindex("@%ssp cp.async")
    return body[first:last]


def test_a_pair_issues_both_tiles_copies_before_any_branch(tmp_path: Path) -> None:
    # Two consecutive fills are one pair: the copies of both tiles (one 16-byte run of each a
    # thread, predicated on its tile's test) come one after the other, and one branch after
    # them leads to the per-run paths, each under its own tile's test.
    ptx, body = _body(tmp_path, PAIR)
    assert len(re.findall(r"@%ssp cp\.async\.cg", body)) == 2
    assert "bra" not in _between_copies(body)
    after = body[body.rindex("@%ssp cp.async") :]
    assert re.search(r"and\.pred\s+(%p\d+), %p\d+, %p\d+;\s*@\1 bra", after), after[:400]
    _assembles(ptx)


def test_two_fills_apart_keep_a_branch_between_their_copies(tmp_path: Path) -> None:
    # The accepted twin: a statement between the two fills keeps them two calls; the first
    # fill's per-run path is branched to between the two tiles' copies.
    ptx, body = _body(tmp_path, UNPAIRED)
    assert len(re.findall(r"@%ssp cp\.async\.cg", body)) == 2
    assert "bra" in _between_copies(body)
    _assembles(ptx)


def test_a_pairs_second_call_is_refused_at_its_own_line(tmp_path: Path) -> None:
    error = assert_refused(tmp_path, PAIR_REFUSED, PAIR_REFUSAL, lambda mod: mod.k.ptx(cc=CC))
    assert "second call" not in str(error)


@pytest.mark.parametrize("source_level", [True, False], ids=["decorator", "compiled-form-only"])
def test_a_read_of_the_pairs_second_tile_before_its_wait_names_that_fill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source_level: bool
) -> None:
    # The pair's code for the second tile carries the second call's line, so the
    # compiled-form phase check (the decorator's source-level analysis forgotten) names the
    # fill of `u`, not the first call's line where the pair is.
    if not source_level:
        from simtsafe.decoration import _rewrite

        monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)
    error = assert_refused(
        tmp_path, PAIR_EARLY_READ, "filled asynchronously", lambda mod: mod.k.ptx(cc=CC)
    )
    fill = line_of(tmp_path, "# FILL")
    assert f"at line {fill}" in str(error), str(error)
    assert f"at line {fill - 1}" not in str(error)


def test_a_refusal_mentioning_a_second_call_keeps_its_own_line(tmp_path: Path) -> None:
    # The mark that moves a pair's second refusal to its line is random per process: text a
    # user writes (here a record field's name) cannot carry it.
    source = (
        'REC = np.dtype([("v (the call on line 1) [second call: line 1 0123456789abcdef]", np.float32)])\n'
        "@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))\n"
        "def k(out: DisjointSlice[np.float32], a: In[np.float32], r: In[REC]) -> None:\n"
        "    w = thread.index_1d()\n"
        "    ss.shared.fill_async(r, a, 0)  # BAD\n"
        "    out[w] = a[0]\n"
    )
    assert_refused(tmp_path, source, "fills a shared tile", lambda mod: mod.k.ptx(cc=CC))


BOOL_INPUT = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In2D[np.float32], m: In2D[np.bool_], r0: np.int64,
      c0: np.int64) -> None:
    w = thread.index_1d()
    t = ss.shared.tile((4, 16), np.float32)
    ss.shared.fill_async(t, a, (r0, c0))
    ss.shared.wait_all()
    ss.block.sync()
    v = t[cuda.threadIdx.x // 16, cuda.threadIdx.x % 16]
    if m[0, 0]:
        v = np.float32(0)
    out[w] = v
"""


@pytest.mark.parametrize("layouts", [("C", "C"), ("C16", "C"), ("C16", "C16")])
def test_every_input_type_compiles_run_aligned(tmp_path: Path, layouts: tuple[str, str]) -> None:
    # A launch gives any aligned input of a fill kernel the "C16" specialization, a bool
    # array included (attack round 12: its size was read from a bit width bool lacks).
    ptx = load_kernel_module(tmp_path, BOOL_INPUT).k.ptx(cc=CC, layouts=layouts)
    assert "cp.async" in ptx


@pytest.mark.parametrize(
    ("module", "kernel"),
    [
        ("sgemm_async", "sgemm_async"),
        ("decode.gemv", "gemv_norm"),
        ("decode.gemv", "gemv_swiglu"),
        ("decode.gemv", "lm_head"),
    ],
)
def test_example_fill_kernels_compile_run_aligned(module: str, kernel: str) -> None:
    # What their launches compile for aligned inputs (every input "C16"): the facts stated,
    # the fills' copies still there.
    from tests.coop_examples import example

    k = getattr(example(module), kernel)
    inputs = sum(1 for p in k.params if p.kind == "in")
    ptx = k.ptx(cc=CC, layouts=("C16",) * inputs)
    assert "cp.async" in ptx
    _assembles(ptx)
