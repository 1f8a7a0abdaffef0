"""``shared.fill_async``'s compiled fills emulated from their PTX (NVVM, no GPU): for a
seeded sweep of tiles (ranks, element sizes, padding, swizzle, pinned and unpinned blocks,
pairs of fills) and inputs (shapes, pitches, data pointers at element offsets, origins
before, inside, past and far outside the input, both layouts ``C`` and ``C16`` where its
facts hold), every thread's fill is run by tests/ptx/fill_emu.py: no copy reads a byte
outside the input's rows, every tile byte is written once with numpy's
``t[i, j] = a[r0 + i, c0 + j]`` (0 outside), nothing else in shared memory is written.
Attack round 14 wrote the emulator; its two findings (tests/kernels/attacks14.py) are
checked here too. A mutated row test (``_clamp30`` off by one) must fail the sweep."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.kernels import load_kernel_module
from tests.kernels.attacks14 import CONST_ADDRESS, RECORD_RUNS
from tests.ptx.fill_emu_driver import STATS, Spec, compiled, emulate

pytestmark = pytest.mark.ptx

#: Cases per tile kind and the sweep's seed (CI: about 300 cases).
PER_SPEC = 3
SEED = 20261207

SPECS = [
    # 2D float32
    Spec(2, 4, (4, 16), block=(64, 1, 1)),
    Spec(2, 4, (4, 16), pad=4, block=(64, 1, 1)),
    Spec(2, 4, (4, 16), block=(16, 1, 1)),
    Spec(2, 4, (4, 16), block=(8, 1, 1)),
    Spec(2, 4, (4, 16), block=(12, 1, 1)),
    Spec(2, 4, (4, 16), block=(6, 1, 1)),
    Spec(2, 4, (4, 16), block=None),
    Spec(2, 4, (8, 12), block=(3, 1, 1)),
    Spec(2, 4, (8, 12), block=(9, 1, 1)),
    Spec(2, 4, (8, 12), block=(7, 1, 1)),
    Spec(2, 4, (4, 6), block=(3, 1, 1)),
    Spec(2, 4, (4, 6), pad=1, block=(4, 1, 1)),
    Spec(2, 4, (5, 1), block=(2, 1, 1)),
    Spec(2, 4, (32, 64), block=(128, 1, 1)),
    Spec(2, 4, (4, 16), block=(64, 1, 1), otype="np.uint64"),
    Spec(2, 4, (4, 16), block=(8, 1, 1), otype="np.int32"),
    Spec(2, 4, (4, 16), block=(8, 1, 1), pair=True),
    Spec(2, 4, (4, 16), block=None, pair=True),
    # 2D uint8
    Spec(2, 1, (4, 16), block=(4, 1, 1)),
    Spec(2, 1, (8, 8), block=(4, 1, 1)),
    Spec(2, 1, (4, 4), block=(2, 1, 1)),
    Spec(2, 1, (3, 20), block=(5, 1, 1)),
    Spec(2, 1, (4, 32), pad=16, block=(2, 1, 1)),
    # 2D float16
    Spec(2, 2, (4, 8), block=(2, 1, 1)),
    Spec(2, 2, (4, 6), block=(3, 1, 1)),
    Spec(2, 2, (8, 16), pad=2, block=(8, 1, 1)),
    # 2D float64
    Spec(2, 8, (4, 2), block=(2, 1, 1)),
    Spec(2, 8, (4, 3), block=(3, 1, 1)),
    Spec(2, 8, (4, 1), block=(2, 1, 1)),
    Spec(2, 8, (6, 4), block=(5, 1, 1)),
    # swizzled float16
    Spec(2, 2, (8, 64), swizzle=128, block=(64, 1, 1)),
    Spec(2, 2, (8, 64), swizzle=128, block=(32, 1, 1)),
    Spec(2, 2, (16, 64), swizzle=128, block=(128, 1, 1)),
    Spec(2, 2, (16, 128), swizzle=128, block=(128, 1, 1)),
    Spec(2, 2, (16, 128), swizzle=128, block=(64, 1, 1)),
    # 1D
    Spec(1, 4, (16,), block=(4, 1, 1)),
    Spec(1, 4, (16,), block=(2, 1, 1)),
    Spec(1, 4, (16,), block=(3, 1, 1)),
    Spec(1, 4, (6,), block=(3, 1, 1)),
    Spec(1, 1, (16,), block=(1, 1, 1)),
    Spec(1, 1, (12,), block=(3, 1, 1)),
    Spec(1, 8, (3,), block=(3, 1, 1)),
    Spec(1, 2, (24,), block=(3, 1, 1)),
    Spec(1, 4, (16,), block=None),
    Spec(1, 4, (16,), block=(4, 1, 1), otype="np.uint64"),
    Spec(1, 4, (20,), block=(4, 1, 1)),  # a constant tile address (attack round 14)
    Spec(2, 4, (4, 16), block=(15, 1, 1)),  # a constant tile address (attack round 14)
    Spec(2, 4, (4, 16), block=(1, 1, 1)),  # a constant tile address (attack round 14)
    Spec(2, 2, (9, 8), block=(4, 1, 1)),
    Spec(2, 4, (3, 8), pad=4, block=(4, 1, 1)),
    Spec(2, 1, (2, 48), block=(6, 1, 1)),
    Spec(2, 8, (1, 4), block=(2, 1, 1)),
    Spec(2, 4, (1, 16), block=(2, 1, 1)),
    Spec(2, 4, (1, 16), block=(4, 1, 1)),
]


# The attack round's sweep of inputs for a tile kind (ranks, sizes, pitches, offsets, origins).
BIG = [
    2**62 - 1,
    2**62,
    2**62 + 1,
    -(2**62) + 1,
    -(2**62),
    -(2**62) - 1,
    2**63 - 1,
    -(2**63),
    2**30,
    -(2**30),
    2**31,
    -(2**31),
    2**31 - 1,
    2**32,
    -(2**32),
]


def cases(s: Spec, count: int, rnd: random.Random) -> list[tuple]:
    isz = 2 if s.swizzle else s.itemsize
    trows = s.shape[0] if s.ndim == 2 else 1
    tcols = s.shape[-1]
    n = 16 // isz
    out = []
    for _ in range(count):
        rows = rnd.choice([0, 1, 1, 2, 3, 5, trows, trows + 1, 2 * trows + 3]) if s.ndim == 2 else 1
        aligned = rnd.random() < 0.7  # inputs aligned for runs (C16 possible)
        if aligned:
            cols = n * rnd.choice([0, 1, 1, 2, 3, max(tcols // n, 1), max(tcols // n, 1) + 1, 5])
            rowbytes = cols * isz
            pitch = rowbytes + rnd.choice([0, 0, 0, 16, 32])
            if s.ndim == 2 and rows <= 1 and rnd.random() < 0.3:
                pitch = rnd.choice([16, 1024, 0 if rows == 0 else 16])
            offset = rnd.choice([0, 16, 32])
        else:
            cols = rnd.choice(
                [
                    0,
                    1,
                    2,
                    3,
                    n - 1,
                    n,
                    n + 1,
                    tcols - 1,
                    tcols,
                    tcols + 1,
                    2 * tcols + 3,
                    16 // isz * 3,
                ]
            )
            cols = max(cols, 0)
            rowbytes = cols * isz
            pitch = rowbytes + rnd.choice([0, 0, isz, 16, 16 - (rowbytes % 16 or 16), 2 * isz])
            if s.ndim == 2 and rows <= 1 and rnd.random() < 0.3:
                pitch = rnd.choice([isz, 3 * isz, rowbytes + 8, 1024 + isz])  # any stride of 1 row
            offset = rnd.choice([0, 0, 16, isz, 2 * isz, 8, 12, 4]) // isz * isz
            if s.record and rnd.random() < 0.3:  # Numba's record arrays are unaligned
                offset += 4

        def coord(size: int, tsize: int) -> int:
            r = rnd.random()
            if r < 0.08:
                return rnd.choice(BIG)
            if r < 0.25:
                return rnd.choice([-tsize - 1, -tsize, -tsize + 1, -n, -n - 1, -1, -2])
            if r < 0.45:
                return rnd.choice(
                    [size - 1, size, size + 1, size - n, size - tsize, size - tsize + 1]
                )
            return rnd.randint(-tsize - 2, size + 2)

        c0 = coord(cols, tcols)
        if aligned or rnd.random() < 0.5:  # favour run-aligned columns (the whole-run path)
            c0 = c0 // n * n if abs(c0) < 2**40 else c0
        if s.ndim == 2:
            r0 = coord(rows, trows)
            origin = (r0, c0)
            ashape = (rows, cols)
        else:
            origin = (c0,)
            ashape = (cols,)
        if s.otype == "np.int32":
            origin = tuple(((o + 2**31) % 2**32) - 2**31 for o in origin)
        if s.otype == "np.uint64":
            origin = tuple(o % 2**64 for o in origin)
        layouts = ["C"]
        if offset % 16 == 0 and rowbytes % 16 == 0 and (s.ndim == 1 or pitch % 16 == 0):
            layouts.append("C16")
        for lay in layouts:
            blk = (
                None
                if s.block
                else rnd.choice([(1, 1, 1), (5, 1, 1), (3, 2, 1), (64, 1, 1), (7, 1, 2)])
            )
            out.append((s, lay, ashape, origin, pitch, offset, blk))
    return out


def _sweep(per_spec: int, seed: int) -> list[tuple]:
    rnd = random.Random(seed)
    out: list[tuple] = []
    for s in SPECS:
        out += cases(s, per_spec, rnd)
    return out


def _failures(all_cases: list[tuple]) -> list[str]:
    out = []
    for s, lay, ashape, origin, pitch, offset, blk in all_cases:
        problems = emulate(s, lay, ashape, origin, pitch=pitch, offset=offset, block=blk)
        if problems:
            out.append(f"{s} {lay} shape {ashape} origin {origin} pitch {pitch} "
                       f"offset {offset} block {blk}: {problems[:2]}")  # fmt: skip
    return out


def test_every_fill_of_the_sweep_reads_inside_and_lands_numpys_values() -> None:
    all_cases = _sweep(PER_SPEC, SEED)
    assert len(all_cases) > 250
    assert _failures(all_cases) == []


def test_a_row_test_off_by_one_fails_the_sweep(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The sweep can fail: clamp the lined-up runs' bounds to [1, 2**30] instead of [0, 2**30]
    from llvmlite import ir

    from simtsafe.lowering import _asyncfill as af

    def off_by_one(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
        v = b.select(b.icmp_signed("<", v, af._c(1)), af._c(1), v)
        return b.trunc(b.select(b.icmp_signed(">", v, af._c(2**30)), af._c(2**30), v), af._I32)

    monkeypatch.setattr(af, "_clamp30", off_by_one)
    monkeypatch.setenv("SIMTSAFE_CACHE_DIR", str(tmp_path))  # no PTX of the real lowering
    lined = Spec(2, 4, (4, 16), block=(64, 1, 1))
    compiled.cache_clear()
    try:
        assert _failures(cases(lined, 40, random.Random(SEED)))
    finally:
        compiled.cache_clear()


@pytest.mark.parametrize("name", sorted(RECORD_RUNS))
def test_a_run_of_part_of_an_element_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(Exception, match="runs of 4, 8 or 16 bytes of whole elements"):
        load_kernel_module(tmp_path, RECORD_RUNS[name]).k.ptx(cc=(9, 0))


@pytest.mark.parametrize("name", sorted(RECORD_RUNS))
@pytest.mark.parametrize(
    "element",
    [
        "np.float64",
        'np.dtype([("x", np.float32), ("y", np.float32)])',
        'np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32), ("w", np.float32)])',
    ],
    ids=["float64", "record8", "record16"],
)
def test_a_run_of_whole_elements_is_accepted(tmp_path: Path, name: str, element: str) -> None:
    # the accepted twin: the same kernel with an element of 8 or 16 bytes, a number or a
    # record, whole elements a run. (A record tile used to be refused by the compiled form:
    # LLVM split each record store of the per-element path into byte stores that lost the
    # fill's marker. Each record is now copied as one integer; its values are checked by
    # test_record_tiles_land_numpys_values.)
    head, _, kernel = RECORD_RUNS[name].strip("\n").partition("\n\n\n")
    assert head.startswith("rec = np.dtype(")
    load_kernel_module(tmp_path, f"rec = {element}\n\n\n{kernel}").k.ptx(cc=(9, 0))


#: Tiles of 8- and 16-byte records: whole elements a run (one ``cp.async`` where aligned), and
#: where not, each element copied as one integer (``_asyncfill._Source``), read from any
#: byte (a record array is unaligned).
RECORD_SPECS = [
    Spec(2, 8, (4, 8), block=(8, 1, 1), record=True),
    Spec(2, 8, (4, 6), pad=1, block=(5, 1, 1), record=True),
    Spec(2, 8, (3, 4), block=None, record=True),
    Spec(2, 16, (4, 4), block=(4, 1, 1), record=True),
    Spec(2, 16, (3, 5), pad=1, block=(4, 1, 1), record=True),
    Spec(1, 8, (6,), block=(2, 1, 1), record=True),
    Spec(1, 16, (5,), block=(2, 1, 1), record=True),
    Spec(1, 16, (4,), block=None, record=True),
]


def test_record_tiles_land_numpys_values() -> None:
    rnd = random.Random(SEED + 1)
    all_cases = [c for s in RECORD_SPECS for c in cases(s, 20, rnd)]
    before = dict(STATS)
    assert _failures(all_cases) == []
    # both paths ran: whole runs by cp.async, and elements copied one by one
    assert STATS["whole_read"] > before["whole_read"]
    assert STATS["elementwise"] > before["elementwise"]


@pytest.mark.parametrize("name", sorted(CONST_ADDRESS))
def test_a_copy_at_a_constant_tile_address_is_part_of_its_fill(tmp_path: Path, name: str) -> None:
    load_kernel_module(tmp_path, CONST_ADDRESS[name]).k.ptx(cc=(9, 0))  # accepted
