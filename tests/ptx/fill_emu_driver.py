"""Compile a ``shared.fill_async`` kernel to PTX (NVVM, no GPU) and emulate every thread's
fill with ``tests/ptx/fill_emu.py``: each copy's reads against the input's rows, each tile
byte against numpy's ``t[i, j] = a[r0 + i, c0 + j]`` (0 outside), written once. Written by
attack round 14 (tests/kernels/attacks14.py); tests/ptx/test_fill_emulation.py sweeps it."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from tests.kernels import load_kernel_module
from tests.ptx.fill_emu import Events, Memory, parse, run_thread

STATS = {"cases": 0, "whole_read": 0, "whole_zero": 0, "per_run_cp": 0, "elementwise": 0}
_TMP = Path(tempfile.mkdtemp(prefix="a14_"))

DT = {
    1: "np.uint8",
    2: "np.float16",
    4: "np.float32",
    8: "np.float64",
    12: "rec12",
    3: "rec3",
    6: "rec6",
}
#: records whose itemsize is not a power of two (attack round 14, finding 2), and records of
#: 8 and 16 bytes (``Spec.record``: whole elements a run; the per-element path copies each as
#: one integer, ``_asyncfill._Source``)
RECORDS = (
    'rec12 = np.dtype([("x", np.float32), ("y", np.float32), ("z", np.float32)])\n'
    'rec6 = np.dtype([("x", np.int16), ("y", np.int16), ("z", np.int16)])\n'
    'rec3 = np.dtype([("x", np.uint8), ("y", np.uint8), ("z", np.uint8)])\n'
    'rec8 = np.dtype([("x", np.float32), ("y", np.int32)])\n'
    'rec16 = np.dtype([("x", np.float32), ("y", np.int32), ("z", np.float64)])\n'
)
NP = {1: np.uint8, 2: np.float16, 4: np.float32, 8: np.float64}


@dataclass(frozen=True)
class Spec:
    ndim: int = 2  # input and tile rank
    itemsize: int = 4
    shape: tuple[int, ...] = (4, 16)  # tile shape
    pad: int = 0
    swizzle: int = 0
    block: tuple[int, int, int] | None = (64, 1, 1)  # None: not pinned
    otype: str = "np.int64"
    pair: bool = False  # two fills in a row (second one into t2, same input, origin (r0, c0))
    record: bool = False  # a record of ``itemsize`` bytes (8 or 16), not a number


def source(s: Spec) -> str:
    dt = f"rec{s.itemsize}" if s.record else DT[s.itemsize]
    if s.swizzle:
        dt = "np.float16"
    block = f", block={list(s.block)}" if s.block else ""
    if s.ndim == 2:
        sig = f"a: In2D[{dt}], r0: {s.otype}, c0: {s.otype}"
        extra = []
        if s.pad:
            extra.append(f"pad={s.pad}")
        if s.swizzle:
            extra.append(f"swizzle={s.swizzle}")
        tile = f"ss.shared.tile({tuple(s.shape)}, {dt}{''.join(', ' + e for e in extra)})"
        origin = "(r0, c0)"
    else:
        sig = f"a: In[{dt}], c0: {s.otype}"
        tile = f"ss.shared.tile({s.shape[0]}, {dt})"
        origin = "c0"
    lines = [f"t = {tile}", f"ss.shared.fill_async(t, a, {origin})"]
    if s.pair:
        lines.insert(1, f"t2 = {tile}")
        lines.append(f"ss.shared.fill_async(t2, a, {origin})")
    lines += ["ss.shared.wait_all()", "ss.block.sync()", "out[w] = 0"]
    return (RECORDS if dt.startswith("rec") else "") + (
        f"@ss.kernel(contract=ss.LaunchContract(domain=1{block}))\n"
        f"def k(out: DisjointSlice[{'np.float32' if dt.startswith('rec') else dt}], {sig}) -> None:\n"
        "    w = thread.index_1d()\n" + "".join(f"    {ln}\n" for ln in lines)
    )


@cache
def compiled(s: Spec, layout: str) -> Any:
    """The parsed PTX of the kernel of ``s`` for one input layout (``"C"`` or ``"C16"``)."""
    mod = load_kernel_module(_TMP, source(s))
    ptx = mod.k.ptx(cc=(9, 0), layouts=(layout,))
    return parse(ptx), ptx


def chunk_offset(rows: int, i: int, c: int) -> int:
    block = c >> 3
    within = (c & 7) ^ (i & 7)
    return block * 64 * rows + (i << 6) + (within << 3)


def emulate(
    s: Spec,
    layout: str,
    ashape: tuple[int, ...],
    origin: tuple[int, ...],
    *,
    pitch: int | None = None,
    offset: int = 0,
    block: tuple[int, int, int] | None = None,
    base: int = 0x7F00_0000_0000,
) -> list[str]:
    """Emulate one fill; return the problems found (empty: correct)."""
    k, _ = compiled(s, layout)
    isz = s.itemsize if not s.swizzle else 2
    rows = ashape[0] if s.ndim == 2 else 1
    cols = ashape[-1]
    rowbytes = cols * isz
    if pitch is None:
        pitch = rowbytes
    data = base + offset
    extent = offset + (max(rows - 1, 0) * pitch + rowbytes if rows and cols else 0) + 64
    rng = np.random.default_rng(abs(hash((ashape, origin, pitch, offset))) % 2**32)
    alloc = bytes(rng.integers(1, 256, extent + 64, dtype=np.uint8))
    inside = [(data + r * pitch, data + r * pitch + rowbytes) for r in range(rows)] if cols else []
    mem = Memory(base, alloc, inside)
    # params: out (1D: 7), a (5 + 2 ndim), scalars
    vals = [0, 0, 1 << 20, isz, 0x5000_0000_0000, 1 << 20, isz]
    strides = (pitch, isz) if s.ndim == 2 else (isz,)
    nitems = int(np.prod(ashape))
    vals += [0, 0, nitems, isz, data, *ashape, *strides]
    ob = 64
    for o in origin:
        vals.append(o & ((1 << ob) - 1))
    params = dict(enumerate(vals))
    assert len(vals) == len(k.params), (len(vals), len(k.params))
    # shared symbols
    sym, at = {}, 0x1000
    for name, size in k.shared.items():
        sym[name] = at
        at += (size + 1023) // 1024 * 1024 + 1024
    smem = bytearray(at)
    writes = [0] * at
    ev = Events()
    blk = block or s.block or (5, 2, 1)
    assert blk is not None
    if k.reqntid is not None:
        assert tuple(k.reqntid) == tuple(blk)
    for z in range(blk[2]):
        for y in range(blk[1]):
            for x in range(blk[0]):
                run_thread(k, params, (x, y, z), blk, mem, smem, writes, sym, ev)
    problems = list(ev.oob)
    STATS["whole_read"] += any(
        c["ignore"] is False and c["srcsize"] and "ign" in c for c in ev.copies
    )
    STATS["whole_zero"] += any(c.get("ign") and c["ignore"] for c in ev.copies)
    STATS["per_run_cp"] += any("ign" not in c for c in ev.copies)
    STATS["elementwise"] += bool(ev.loads)
    STATS["cases"] += 1
    # expected tile
    names = list(k.shared)
    for name in names:
        t0 = sym[name]
        trows = s.shape[0] if s.ndim == 2 else 1
        tcols = s.shape[-1]
        storage = tcols + s.pad
        expect_at = set()
        bad = []
        r0, c0 = origin if s.ndim == 2 else (0, origin[0])
        for i in range(trows):
            for j in range(tcols):
                if s.swizzle:
                    off = (chunk_offset(trows, i, j // 8) + (j % 8)) * isz
                else:
                    off = (i * storage + j) * isz
                addr = t0 + off
                gr, gc = r0 + i, c0 + j
                if 0 <= gr < rows and 0 <= gc < cols:
                    a = data + gr * pitch + gc * isz
                    want = alloc[a - base : a - base + isz]
                else:
                    want = b"\x00" * isz
                got = bytes(smem[addr : addr + isz])
                w = writes[addr : addr + isz]
                for b in range(isz):
                    expect_at.add(addr + b)
                if any(x != 1 for x in w):
                    bad.append(f"t[{i},{j}] written {w} times")
                elif got != want:
                    bad.append(f"t[{i},{j}] = {got.hex()} want {want.hex()} (a[{gr},{gc}])")
        stray = [a for a in range(t0, t0 + k.shared[name]) if writes[a] and a not in expect_at]
        if bad:
            problems.append(f"{name}: {len(bad)} wrong elements, e.g. {bad[:4]}")
        if stray:
            problems.append(
                f"{name}: {len(stray)} stray bytes written (pads), first {stray[0] - t0}"
            )
    outside = [
        a
        for a in range(len(writes))
        if writes[a] and not any(sym[n] <= a < sym[n] + k.shared[n] for n in names)
    ]
    if outside:
        problems.append(f"{len(outside)} shared bytes written outside every tile")
    return problems
