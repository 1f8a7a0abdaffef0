"""Attack round 30 (tests/kernels/attacks30.py) on the real target (NVVM, no GPU): the float16
/ bf16 shim relaxation (bfca8ba, 8bb11f6) and ``vec_alignment="any"`` (59d2baf) hold against
the shapes tried -- the unsafe ones refused with their message, the sound ones accepted, the
safe refusals pinned, the constant branches LLVM folds through ``nsw`` folded by NVVM too, and
misaligned ``vec.load`` runs emulated from their PTX give numpy's values with no load outside
the input and no misaligned vector load. FINDING 1 (a float16 -> int cast rounds on the GPU,
truncates on the simulator) is fixed (lowering/_halfcasts.py) and its test asserts the
truncating cast."""

from __future__ import annotations

import random
import re
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import simtsafe.lowering._irform as irform
from tests.kernels import load_kernel_module, ptx_refusal
from tests.kernels.attacks30 import (
    ACCEPTED,
    FALSE_REFUSALS,
    FINDINGS,
    HELD_KERNELS,
    NSW_FOLDS,
    VEC_SOURCES,
)
from tests.ptx.fill_emu import Events, Memory, parse, run_thread

pytestmark = pytest.mark.ptx

CC = (9, 0)


@pytest.mark.parametrize("name", sorted(HELD_KERNELS))
def test_held_refused(tmp_path: Path, name: str) -> None:
    source, fragment = HELD_KERNELS[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_sound_shapes_accepted(tmp_path: Path, name: str) -> None:
    ptx = load_kernel_module(tmp_path, ACCEPTED[name]).k.ptx(cc=CC)
    if "ss.block." in ACCEPTED[name]:
        assert "bar.sync" in ptx


@pytest.mark.parametrize("name", sorted(FALSE_REFUSALS))
def test_false_refusals_pinned(tmp_path: Path, name: str) -> None:
    """Safe fp16 / bf16 shapes still refused; pinned so a fix shows up here."""
    source, fragment = FALSE_REFUSALS[name]
    message = ptx_refusal(tmp_path, source, CC)
    assert fragment in message, message


def test_fp16_kernels_call_status_zero_shims(tmp_path: Path) -> None:
    """What the accepted kernels rest on: the fp16 multiply is a call of numba-cuda's shim
    (``.extern .func`` in the PTX), taken as status 0 from the source it links."""
    from simtsafe.lowering._shims import status_zero_shims

    ptx = load_kernel_module(tmp_path, ACCEPTED["f16_helper_arith"]).k.ptx(cc=CC)
    assert "_ZmlRK6__halfS1__nbst" in ptx and "_ZplRK6__halfS1__nbst" in ptx
    assert {"_ZmlRK6__halfS1__nbst", "_ZplRK6__halfS1__nbst"} <= status_zero_shims()


def test_the_rename_takes_only_undefined_whole_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_irform._name_status_zero_shims``: a defined function of a shim's name, a longer name
    that starts with it and a quoted name with a suffix are left alone; an undeclared call of
    the shim itself is renamed and its status becomes the constant 0."""
    name = "_ZmlRK6__halfS1__nbst"
    monkeypatch.setattr(irform, "status_zero_shims", lambda: frozenset({name}))
    text = (
        f'  %".1" = call i32 @{name}(ptr %a, ptr %b, ptr %c)\n'
        f'  %".2" = call i32 @{name}_caller(ptr %a, ptr %b)\n'
        f'  %".3" = call i32 @"{name}.1"(ptr %a)\n'
        f"declare i32 @{name}(ptr, ptr, ptr)\n"
    )
    out = irform._name_status_zero_shims(text, set())
    assert f'%".1.ssstatus" = call i32 @"__ss.shim.{name}"(' in out
    assert '%".1" = add i32 0, 0' in out
    assert f"@{name}_caller(" in out and f'@"{name}.1"(' in out
    assert out.count("__ss.shim.") == 2  # the call and its declaration
    assert irform._name_status_zero_shims(text, {name}) == text


# --------------------------------------------------------------------------- nsw folds


def _setps_before_barrier(ptx: str) -> list[str]:
    body = ptx[ptx.index("{", ptx.index(".entry")) :]
    return re.findall(r"setp\.[^\n]*", body[: body.index("bar.sync")])


#: holds in wrapping arithmetic too: Numba adds two int32 in int64, which cannot wrap
_TRUE_FOLDS = {"int32-add-one-greater"}


@pytest.mark.parametrize("name", sorted(_TRUE_FOLDS))
def test_a_fold_that_holds_without_nsw_is_accepted(tmp_path: Path, name: str) -> None:
    ptx = load_kernel_module(tmp_path, NSW_FOLDS[name]).k.ptx(cc=CC)
    setps = _setps_before_barrier(ptx)
    assert len(setps) == 1 and setps[0].startswith("setp.ne.s32"), setps


@pytest.mark.parametrize("name", sorted(set(NSW_FOLDS) - _TRUE_FOLDS))
def test_nsw_folds_are_refused(tmp_path: Path, name: str) -> None:
    """These conditions fold to a constant only through ``nsw`` or an oversized shift's
    poison (``t + 1 > t``, ``(1 << t) != 0``): NVVM folds them at ``opt=True`` but not at
    ``-opt=0``, where the wrapped (clamped) value takes the other branch (attack round 31).
    The analysed copy drops the flags and clamps run-time shift amounts as PTX does
    (lowering/_irform._wrapping): the compare stays, refused."""
    message = ptx_refusal(tmp_path, NSW_FOLDS[name], CC)
    assert "`block.sum` needs every thread of the block to reach it" in message, message


# --------------------------------------------------------------------------- vec emulation

_M64 = (1 << 64) - 1
_TMP = Path(tempfile.mkdtemp(prefix="a30_"))
_STATS = {"vector": 0, "misaligned": 0}
#: (dtype, run length): 1-, 2-, 4- and 8-byte elements, runs of 4, 8 and 16 bytes
_COMBOS = (
    ("uint8", 4),
    ("int8", 8),
    ("uint16", 2),
    ("int16", 4),
    ("uint16", 8),
    ("uint32", 2),
    ("int32", 4),
    ("int64", 2),
)


@cache
def _compiled(kind: str, dtype: str, run: int) -> tuple[Any, str]:
    src = VEC_SOURCES[kind].replace("DTYPE", f"np.{dtype}").replace("RUN", str(run))
    ptx = load_kernel_module(_TMP, src).k.ptx(cc=CC, layouts=("C",))
    return parse(ptx), ptx


class _Memory(Memory):
    """Global memory that flags a vector load whose address is not a multiple of its size
    (a fault on the GPU), read off the emulator's frame (``opc``, ``dests``, ``idx``)."""

    def read(self, addr: int, n: int) -> bytes:
        frame = sys._getframe(1).f_locals
        if str(frame.get("opc", "")).startswith("ld.global.v") and frame.get("idx") == 0:
            size = len(frame["dests"]) * n
            _STATS["vector"] += 1
            if addr % size:
                _STATS["misaligned"] += 1
                frame["ev"].oob.append(f"misaligned vector load {addr:#x} ({size} bytes)")
        return super().read(addr, n)


def _s64(v: int) -> int:
    v &= _M64
    return v - (1 << 64) if v >> 63 else v


def _emulate(
    kind: str,
    dtype: str,
    run: int,
    shape: tuple[int, ...],
    offset: int,
    scalars: tuple[int, ...],
    k: Any = None,
) -> list[str]:
    """Run the 8 threads of ``VEC_SOURCES[kind]`` on an input at ``offset`` bytes past a
    16-byte boundary; the problems found (loads outside the input, misaligned vector loads,
    hashes that differ from numpy's runs, 0 outside the array)."""
    k = k or _compiled(kind, dtype, run)[0]
    dt = np.dtype(dtype)
    isz = dt.itemsize
    rows = shape[0] if kind == "2d" else 1
    cols = shape[-1]
    base = 0x7F00_0000_0000
    data = base + offset
    nbytes = rows * cols * isz
    rng = np.random.default_rng(offset * 7919 + cols * 31 + rows)
    alloc = bytes(rng.integers(0, 256, offset + nbytes + 128, dtype=np.uint8))
    mem = _Memory(base, alloc, [(data, data + nbytes)] if nbytes else [])
    arr = np.frombuffer(alloc[offset : offset + nbytes], dtype=dt).reshape(
        (rows, cols) if kind == "2d" else (cols,)
    )
    vals = [0, 0, 8, 8, 0x5000_0000_0000, 8, 8]  # out
    if kind == "2d":
        vals += [0, 0, rows * cols, isz, data, rows, cols, cols * isz, isz]
    else:
        vals += [0, 0, cols, isz, data, cols, isz]
    vals += [s & _M64 for s in scalars]
    assert len(vals) == len(k.params), (len(vals), len(k.params))
    sym, at = {}, 0x1000
    for name, size in k.shared.items():
        sym[name] = at
        at += (size + 1023) // 1024 * 1024 + 1024
    smem = bytearray(at)
    writes = [0] * at
    ev = Events()
    for x in range(8):
        run_thread(k, dict(enumerate(vals)), (x, 0, 0), (8, 1, 1), mem, smem, writes, sym, ev)
    problems = list(ev.oob)

    def numpy_run(r: int, j: int) -> list[int]:
        out = []
        for q in range(run):
            c = j * run + q
            inside = 0 <= r < rows and j >= 0 and c < cols
            out.append(int(arr[r, c] if kind == "2d" else arr[c]) if inside else 0)
        return out

    (tile,) = list(k.shared)
    for x in range(8):
        if kind == "1d":
            runs = [numpy_run(0, scalars[0] + x)]
        elif kind == "2d":
            runs = [numpy_run(scalars[0] + x // 4, scalars[1] + x % 4)]
        else:
            runs = [numpy_run(0, scalars[0] + x), numpy_run(0, scalars[0] - 3 * x)]
        want = 0
        for values in runs:
            for v in values:
                want = _s64(want * 1000003 + v)
        got = _s64(int.from_bytes(smem[sym[tile] + 8 * x : sym[tile] + 8 * x + 8], "little"))
        if got != want:
            problems.append(f"thread {x}: {got:#x}, numpy {want:#x}")
    return problems


def _cases(per_combo: int, seed: int) -> list[tuple[Any, ...]]:
    rnd = random.Random(seed)
    out = []
    for kind in ("1d", "2d", "runs"):
        for dtype, run in _COMBOS:
            isz = np.dtype(dtype).itemsize
            for _ in range(per_combo):
                offset = rnd.choice([0, 0, 1, 2, 3, 5, 7, 8, 12, 15]) * isz
                cols = rnd.choice([0, 1, 3, run, run + 1, 2 * run - 1, 4 * run, 5 * run + 3, 17])
                rows = rnd.choice([1, 2, 3, 5])
                j0 = rnd.choice([-9, -1, 0, 0, 1, 2, 3, cols // run, 1 << 62, -(1 << 62)])
                r0 = rnd.choice([-1, 0, 0, 1, rows - 1, rows, 1 << 62])
                scalars = (r0, j0) if kind == "2d" else (j0,)
                shape = (rows, cols) if kind == "2d" else (cols,)
                out.append((kind, dtype, run, shape, offset, scalars))
    return out


def test_misaligned_vec_loads_emulated() -> None:
    """``vec_alignment="any"``: every run read at element offsets from a 16-byte boundary,
    ragged rows, run indices before, inside, at the tail of and far past the input gives
    numpy's values (0 outside), no load leaves the input, vector loads are issued (aligned
    runs) and none is misaligned."""
    _STATS.update(vector=0, misaligned=0)
    bad = []
    cases = _cases(5, 30)
    for case in cases:
        problems = _emulate(*case)
        if problems:
            bad.append((case, problems[:3]))
    assert not bad, bad[:5]
    assert _STATS["vector"] > 20 and _STATS["misaligned"] == 0, _STATS


def test_the_emulation_catches_a_dropped_alignment_test() -> None:
    """The sweep's own check: with the alignment mask of the run test zeroed in the PTX (every
    whole run takes the vector path), misaligned inputs give misaligned vector loads."""
    found = []
    for kind, dtype, run in (("1d", "int8", 8), ("2d", "uint16", 4), ("1d", "int32", 4)):
        _, ptx = _compiled(kind, dtype, run)
        nbytes = run * np.dtype(dtype).itemsize
        mutated, count = re.subn(rf"(and\.b64\s+%rd\d+, %rd\d+, ){nbytes - 1};", r"\g<1>0;", ptx)
        assert count == 1, (kind, dtype, run, count)
        k = parse(mutated)
        isz = np.dtype(dtype).itemsize
        shape = (2, 4 * run) if kind == "2d" else (4 * run,)
        scalars = (0, 0) if kind == "2d" else (0,)
        found += [
            p for p in _emulate(kind, dtype, run, shape, isz, scalars, k) if "misaligned" in p
        ]
    assert found


# --------------------------------------------------------------------------- FINDING 1


# FIXED: lowering/_halfcasts.py lowers the cast with cvt.rzi
def test_fp16_to_int_truncates_like_the_simulator(tmp_path: Path) -> None:
    ptx = load_kernel_module(tmp_path, FINDINGS["fp16-to-int-rounds"]).k.ptx(cc=CC)
    assert "cvt.rzi.s64.f32" in ptx  # the float32 cast: truncation
    assert not re.search(r"cvt\.rni\.[su]\d+\.f16", ptx), re.findall(r"cvt\.\S+\.f16", ptx)
    assert "cvt.rzi.s64.f16" in ptx and "cvt.rzi.s32.f16" in ptx
