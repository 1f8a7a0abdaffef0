"""Tile phases decided on the compiled form (the LLVM IR handed to NVVM; no GPU, no NVVM).

The phase rule of shared tiles and accumulators (fill, block barrier, read) is checked twice:
at decoration on the source (``decoration._phases``: early, named messages) and on the
compiled form (``verify._tilephases``). Here the source check is switched off, and every
phase refusal of tests/kernels (cooperation_rules, async_fill_rules, vec_tile_rules,
mma_rules) is still refused, by the compiled form, naming the kernel, the tile, the read's
line and the write's line. Then the attacks the source analysis accepts and the compiled form
refuses (a witness name that holds its default value on some path; an accumulator made again
while other threads still update the last one), each with its accepted twin.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import async_fill_rules as fills
from tests.kernels import line_of, load_kernel_module, mma_rules, vec_tile_rules
from tests.kernels.cooperation_rules import _PHASE_BAD, _PHASE_OK, HEAD, SIG

pytestmark = pytest.mark.ptx

CC = (9, 0)
SAME_INTERVAL = "in the same barrier interval (the compiled code has no simtsafe block barrier"


@pytest.fixture
def compiled_form_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The source-level phase analysis forgotten: only the compiled form decides."""
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)
    yield


def _refusal(tmp_path: Path, source: str) -> ss.SafetyError:
    mod = load_kernel_module(tmp_path, source)  # the source analysis is off: no refusal here
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    assert info.value.rule == "tile-phase", str(info.value)
    assert SAME_INTERVAL in str(info.value), str(info.value)
    assert "kernel 'k'" in str(info.value)
    return info.value


def _cooperation_kernel(body: str) -> str:
    return HEAD + (
        "@ss.kernel(contract=B128)\n"
        f"def k({SIG}) -> None:\n"
        "    i = thread.index_1d()\n"
        "    tile = ss.shared.tile(128, np.float32)\n"
        f"    {body}\n"
    )


#: Source refusals whose racy read LLVM removes as dead (its value is never used): the compiled
#: code reads nothing there, so it has no race to refuse. Each is checked below with the value
#: used.
_DEAD_READS = {
    "fill-after-read": ("x = tile[0]  # FILL", "x = tile[0]  # FILL\n    out[i] = x"),
    "read-after-barrier-in-same-expr": (
        "tile[w] = np.float32(-1)  # BAD",
        "tile[w] = np.float32(-1)  # BAD\n    out[i] = x",
    ),
}


@pytest.mark.parametrize("case", sorted(_PHASE_BAD))
def test_cooperation_phase_refusals_are_refused_by_the_compiled_form(
    tmp_path: Path, case: str, compiled_form_only: None
) -> None:
    body = _PHASE_BAD[case]
    if case in _DEAD_READS:
        body = body.replace(*_DEAD_READS[case])
    exc = _refusal(tmp_path, _cooperation_kernel(body))
    lines = {line_of(tmp_path, "# BAD"), line_of(tmp_path, "# FILL")}
    assert exc.lineno in lines and exc.cause_line in lines, (exc.lineno, exc.cause_line, str(exc))
    for line in lines:
        assert f"line {line}" in str(exc), str(exc)
    what = "accumulator 'h'" if "accumulator" in case else "shared tile 'tile' (made at line"
    assert what in str(exc), str(exc)
    assert "simtsafe.block.sync()" in str(exc)


@pytest.mark.parametrize("case", sorted(_PHASE_OK))
def test_cooperation_phase_twins_are_accepted_by_the_compiled_form(
    tmp_path: Path, case: str, compiled_form_only: None
) -> None:
    load_kernel_module(tmp_path, _cooperation_kernel(_PHASE_OK[case])).k.ptx(cc=CC)


#: async_fill_rules refusals that are about phases (the others are typing rules), and whether
#: the write is the asynchronous copy (the message then says how to wait for it).
_ASYNC_PHASE = {
    "read-before-the-wait": True,
    "wait-without-a-barrier": True,
    "barrier-before-the-wait": True,
    "wait-leaves-its-group-in-flight": True,
    "group-never-closed": True,
    "double-buffer-reads-the-stage-in-flight": True,
    "fill-into-the-tile-being-read": True,
    "witness-write-during-the-fill": True,
    "own-element-read-back": True,
    "transposed-read-without-a-barrier": False,
    "transposed-and-witness-fill": False,
    "dynamic-tile-before-the-wait": True,
}


@pytest.mark.parametrize("case", sorted(_ASYNC_PHASE))
def test_async_fill_phase_refusals_are_refused_by_the_compiled_form(
    tmp_path: Path, case: str, compiled_form_only: None
) -> None:
    source, _ = fills.REFUSED[case]
    exc = _refusal(tmp_path, source)
    bad = line_of(tmp_path, "# BAD")
    assert bad in (exc.lineno, exc.cause_line), (bad, str(exc))
    fill_calls = [
        n
        for n, text in enumerate(Path(exc.filename or "").read_text().splitlines(), start=1)
        if "fill_async(" in text or "fill_transposed(" in text
    ]
    assert {exc.lineno, exc.cause_line} & set(fill_calls), str(exc)
    if _ASYNC_PHASE[case]:
        assert "filled asynchronously (cp.async)" in str(exc), str(exc)
    if case in ("read-before-the-wait", "wait-without-a-barrier", "group-never-closed"):
        assert "Wait for the copies" in str(exc)


def test_a_fill_again_in_flight_is_refused_by_the_compiled_form(
    tmp_path: Path, compiled_form_only: None
) -> None:
    # Two fill_async of one tile in flight together: each element is copied twice by the SAME
    # thread (one run mapping), and the two copies land in either order. The compiled form
    # asks at the start of each asynchronous fill which copies may still be in flight.
    source, _ = fills.REFUSED["fill-again-while-in-flight"]
    mod = load_kernel_module(tmp_path, source)
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    exc = info.value
    assert exc.rule == "tile-phase"
    assert exc.lineno == line_of(tmp_path, "# BAD"), str(exc)
    assert "may still be in flight" in str(exc) and "shared tile 't'" in str(exc)


@pytest.mark.parametrize(
    "source",
    [fills.ONE_STAGE, fills.DOUBLE_BUFFER, fills.TRANSPOSED],
    ids=["one-stage", "double-buffer", "transposed"],
)
def test_async_fill_twins_are_accepted_by_the_compiled_form(
    tmp_path: Path, source: str, compiled_form_only: None
) -> None:
    load_kernel_module(tmp_path, source).k.ptx(cc=CC)


@pytest.mark.parametrize(
    ("rules", "case"),
    [
        (vec_tile_rules, "read-in-the-fill-phase"),
        (vec_tile_rules, "fill-after-the-read"),
        (vec_tile_rules, "runs-read-in-the-fill-phase"),
        (mma_rules, "load-in-the-fill-phase"),
        (mma_rules, "fill-after-the-load-without-a-barrier"),
    ],
)
def test_vec_and_mma_phase_refusals_are_refused_by_the_compiled_form(
    tmp_path: Path, rules: object, case: str, compiled_form_only: None
) -> None:
    source, _ = rules.REFUSED[case]  # type: ignore[attr-defined]
    exc = _refusal(tmp_path, source)
    assert line_of(tmp_path, "# BAD") in (exc.lineno, exc.cause_line), str(exc)
    assert "written through a witness at line" in str(exc), str(exc)


@pytest.mark.parametrize("rules", [vec_tile_rules, mma_rules], ids=["vec", "mma"])
def test_vec_and_mma_twins_are_accepted_by_the_compiled_form(
    tmp_path: Path, rules: object, compiled_form_only: None
) -> None:
    load_kernel_module(tmp_path, rules.ACCEPTED).k.ptx(cc=CC)  # type: ignore[attr-defined]


def test_load_runs_twin_is_accepted_by_the_compiled_form(
    tmp_path: Path, compiled_form_only: None
) -> None:
    load_kernel_module(tmp_path, vec_tile_rules.ACCEPTED_RUNS).k.ptx(cc=CC)


@pytest.mark.parametrize("case", sorted(fills.RECORD_TILES))
def test_record_fill_twins_are_accepted_by_the_compiled_form(
    tmp_path: Path, case: str, compiled_form_only: None
) -> None:
    # Every store of the fill's per-element path is one integer store of a whole record,
    # marked as the fill's: LLVM has no record store to split into unmarked pieces.
    load_kernel_module(tmp_path, fills.RECORD_TILES[case]).k.ptx(cc=CC)


@pytest.mark.parametrize("case", sorted(fills.RECORD_WRITTEN_DURING_THE_FILL))
def test_a_record_written_during_its_fill_is_refused_by_the_compiled_form(
    tmp_path: Path, case: str, compiled_form_only: None
) -> None:
    # A write into the tile that the fill did not emit (a witness store of a record) still
    # clashes with the fill's copies: the marker is on the fill's own stores only.
    source, _ = fills.RECORD_WRITTEN_DURING_THE_FILL[case]
    exc = _refusal(tmp_path, source)
    assert exc.lineno == line_of(tmp_path, "# BAD") - 2, str(exc)  # the fill's line
    assert exc.cause_line == line_of(tmp_path, "# BAD"), str(exc)
    assert "shared tile 't'" in str(exc), str(exc)
    assert "is filled asynchronously (cp.async) at line" in str(exc), str(exc)
    assert "and written through a witness at line" in str(exc), str(exc)
    assert "so two threads may write one element" in str(exc), str(exc)


def test_dynamic_fill_twin_is_accepted_by_the_compiled_form(
    tmp_path: Path, compiled_form_only: None
) -> None:
    load_kernel_module(tmp_path, fills.DYNAMIC).k.ptx(cc=CC)


# ------------------------------------------------------------------ what the source misses

_B128 = "@ss.kernel(contract=ss.LaunchContract(domain=1, block=128))\n"
_KSIG = "def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:\n"

#: case -> (refused kernel, accepted twin, fragment). Each is accepted by the source analysis.
ATTACKS: dict[str, tuple[str, str, str]] = {
    # 64 elements, 128 threads: threads 64..127 run no iteration, and `w` keeps its default
    # (index 0): they read element 0 while thread 0 writes it. The source takes `w` for a
    # witness, so `tile[w]` for the thread's own element.
    "witness-after-a-loop-that-ran-no-iteration": (
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    tile = ss.shared.tile(64, np.float32)\n"
        "    for w in thread.block_stride(tile):\n"
        "        tile[w] = a[w.index]  # WRITE\n"
        "    x = tile[w]  # BAD\n"
        "    ss.block.sync()\n"
        "    out[i] = x\n",
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    tile = ss.shared.tile(64, np.float32)\n"
        "    for w in thread.block_stride(tile):\n"
        "        tile[w] = a[w.index]\n"
        "    ss.block.sync()\n"
        "    out[i] = tile[i.index % 64]\n",
        "is read at line",
    ),
    # n <= 0: `w` is never bound and every thread stores to, and reads, element 0.
    "witness-bound-under-a-branch": (
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    tile = ss.shared.tile(128, np.float32)\n"
        "    if n > 0:\n"
        "        w = thread.local_index()\n"
        "    tile[w] = a[i]  # WRITE\n"
        "    x = tile[w]  # BAD\n"
        "    ss.block.sync()\n"
        "    out[i] = x + tile[5]\n",
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    tile = ss.shared.tile(128, np.float32)\n"
        "    if n > 0:\n"
        "        w = thread.local_index()\n"
        "    else:\n"
        "        w = thread.local_index()\n"
        "    tile[w] = a[i]\n"
        "    x = tile[w]\n"
        "    ss.block.sync()\n"
        "    out[i] = x + tile[5]\n",
        "is read at line",
    ),
    # The same through a loop that may run no iteration.
    "witness-bound-in-a-loop": (
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    tile = ss.shared.tile(128, np.float32)\n"
        "    for r in range(n):\n"
        "        w = thread.local_index()\n"
        "    tile[w] = a[i]  # WRITE\n"
        "    x = tile[w]  # BAD\n"
        "    ss.block.sync()\n"
        "    out[i] = x + tile[5]\n",
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    tile = ss.shared.tile(128, np.float32)\n"
        "    w = thread.local_index()\n"
        "    for r in range(n):\n"
        "        w = thread.local_index()\n"
        "    tile[w] = a[i]\n"
        "    x = tile[w]\n"
        "    ss.block.sync()\n"
        "    out[i] = x + tile[5]\n",
        "is read at line",
    ),
    # Made again in a loop while other threads may still add into the last one: the zero
    # stores of the new one race with the atomic adds (its count depends on the timing).
    "accumulator-cleared-while-updated": (
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    for r in range(2):\n"
        "        h = ss.shared.accumulator(16, np.int32)  # BAD\n"
        "        h.add(cuda.threadIdx.x % 16, 1)  # WRITE\n"
        "    ss.block.sync()\n"
        "    out[i] = h[cuda.threadIdx.x % 16]\n",
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    for r in range(2):\n"
        "        h = ss.shared.accumulator(16, np.int32)\n"
        "        h.add(cuda.threadIdx.x % 16, 1)\n"
        "        ss.block.sync()\n"
        "        out[i] = h[cuda.threadIdx.x % 16]\n"  # used where it is bound
        "        ss.block.sync()\n",
        "updated atomically at line",
    ),
}


#: Attacks whose witness may be unbound where it is used: the typed-IR check of
#: lowering/_unbound.py refuses them at the first use, before the tile-phase check runs.
UNBOUND_FIRST = {
    "witness-after-a-loop-that-ran-no-iteration",
    "witness-bound-in-a-loop",
    "witness-bound-under-a-branch",
    "accumulator-cleared-while-updated",  # read after the loop that makes it
}


@pytest.mark.parametrize("case", sorted(ATTACKS))
def test_attack_the_source_analysis_accepts_is_refused_on_the_compiled_form(
    tmp_path: Path, case: str
) -> None:
    bad, _, fragment = ATTACKS[case]
    mod = load_kernel_module(tmp_path, bad)  # the source analysis (on) accepts it
    with pytest.raises(ss.SafetyError) as info:
        mod.k.ptx(cc=CC)
    exc = info.value
    if case in UNBOUND_FIRST:
        assert "may be unbound where it is used" in str(exc), str(exc)  # at the first use
        return
    assert exc.rule == "tile-phase", str(exc)
    assert SAME_INTERVAL in str(exc) and fragment in str(exc), str(exc)
    lines = {line_of(tmp_path, "# BAD"), line_of(tmp_path, "# WRITE")}
    assert {exc.lineno, exc.cause_line} == lines, (exc.lineno, exc.cause_line, str(exc))


@pytest.mark.parametrize("case", sorted(ATTACKS))
def test_attack_twin_is_accepted(tmp_path: Path, case: str) -> None:
    _, good, _ = ATTACKS[case]
    load_kernel_module(tmp_path, good).k.ptx(cc=CC)


def test_local_index_reads_back_a_block_stride_fill(tmp_path: Path) -> None:
    # Two spellings of the same owner: the compiled form compares witness indices, not names.
    load_kernel_module(
        tmp_path,
        _B128 + _KSIG + "    i = thread.index_1d()\n"
        "    tile = ss.shared.tile(128, np.float32)\n"
        "    for w in thread.block_stride(tile):\n"
        "        tile[w] = a[w.index]\n"
        "    x = tile[thread.local_index()]\n"
        "    ss.block.sync()\n"
        "    out[i] = x + tile[0]\n",
    ).k.ptx(cc=CC)
