"""Shared tiles, output tiles and thread-private arrays on the real target (NVVM, no GPU).

Zero cost: each safe kernel in tests/kernels/tiles.py has the memory traffic
of its raw twin (same global, shared and local loads and stores, same
barriers), its bounds checks fold where the compiler can prove them (no more
compares than the raw twin), and a full output tile is stored without any
per-element compare. Every typing rule of tile_rules.py is refused here with
its message, and its accepted twin compiles.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from numba import cuda
from numba.cuda import types

import simtsafe as ss
from simtsafe.lowering._compat import assume_compute_capability
from tests.kernels import line_of, load_kernel_module
from tests.kernels import tiles as k
from tests.kernels.tile_rules import ACCEPTED, REFUSED

pytestmark = pytest.mark.ptx

CC = (9, 0)
MEMORY = ("ld.global", "st.global", "ld.shared", "st.shared", "ld.local", "st.local", "bar.sync")


def _count(ptx: str, op: str) -> int:
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(op)}\b", ptx, flags=re.MULTILINE))


def _raw_ptx(raw: Any, argtypes: Any) -> str:
    ptx, _ = cuda.compile_ptx(raw.py_func, argtypes, cc=CC)
    return str(ptx)


def _counts(ptx: str, ops: tuple[str, ...] = MEMORY) -> dict[str, int]:
    return {op: _count(ptx, op) for op in ops}


# ----------------------------------------------------------------------------- PTX paths


_LABEL = re.compile(r"^(\$L__\w+):")
_BRANCH = re.compile(r"^(?:@(!?)(%p\d+)\s+)?bra(?:\.uni)?\s+(\$L__\w+);")


def _blocks(ptx: str) -> tuple[list[str], dict[str, list[str]]]:
    """The kernel body's basic blocks: (order of labels, label -> instructions)."""
    body = ptx[ptx.index("{", ptx.index(".entry")) + 1 : ptx.rindex("}")]
    order, blocks, current = ["<entry>"], {"<entry>": []}, "<entry>"
    for raw in body.splitlines():
        line = raw.split("//")[0].strip()
        if not line or line.startswith("."):
            continue
        label = _LABEL.match(line)
        if label:
            current = label.group(1)
            order.append(current)
            blocks[current] = []
        else:
            blocks[current].append(line)
    return order, blocks


def _full_path(ptx: str) -> list[str]:
    """The instructions reachable when every branch on the full-tile flag takes the full side.

    The flag is the predicate of the branch that jumps to a block starting
    with ``st.global`` (the compare-free store); other conditional branches
    may go either way. Straight-line fallthrough into a new label continues.
    The walk starts after the kernel's barrier when it has one (the tile
    stores come after it; the fill before it has the user's own compares).
    """
    order, blocks = _blocks(ptx)
    for label in order:
        if any(line.startswith("bar.sync") for line in blocks[label]):
            cut = next(i for i, line in enumerate(blocks[label]) if line.startswith("bar.sync"))
            blocks = {**blocks, "<start>": blocks[label][cut + 1 :]}
            order = order[: order.index(label) + 1] + ["<start>"] + order[order.index(label) + 1 :]
            # the tail of the barrier's block continues where the block did
            blocks[label] = blocks[label][: cut + 1]
    flags: set[tuple[str, str]] = set()
    for label in order:
        for line in blocks[label]:
            br = _BRANCH.match(line)
            if br and br.group(2) and blocks.get(br.group(3), [""])[0].startswith("st.global"):
                flags.add((br.group(1), br.group(2)))
    assert len(flags) == 1, f"expected one full-tile predicate, found {flags}"
    ((neg, flag),) = flags
    seen: set[str] = set()
    todo = ["<start>" if "<start>" in blocks else "<entry>"]
    path: list[str] = []
    while todo:
        label = todo.pop()
        if label in seen:
            continue
        seen.add(label)
        falls = True
        for line in blocks[label]:
            br = _BRANCH.match(line)
            if br is None:
                path.append(line)
                if line.startswith("ret"):
                    falls = False
                    break
                continue
            if br.group(2) is None:  # unconditional
                todo.append(br.group(3))
                falls = False
                break
            if br.group(2) == flag:
                if br.group(1) == neg:  # taken exactly when the tile is full
                    todo.append(br.group(3))
                    falls = False
                    break
                continue  # taken only on an edge tile: fall through
            todo.append(br.group(3))
        if falls:
            index = order.index(label)
            if index + 1 < len(order):
                todo.append(order[index + 1])
    return path


def _setp_count(lines: list[str]) -> int:
    return sum(1 for line in lines if re.match(r"^(?:@!?%p\d+\s+)?setp\b", line))


def _store_count(lines: list[str]) -> int:
    return sum(1 for line in lines if re.match(r"^(?:@!?%p\d+\s+)?st\.global\b", line))


# ----------------------------------------------------------------------------- zero cost


@pytest.mark.parametrize(
    "safe, raw",
    [(k.reverse_in_block, k.reverse_in_block_raw), (k.transpose, k.transpose_raw)],
    ids=["reverse_in_block", "transpose"],
)
def test_tile_kernels_have_the_raw_memory_traffic(safe: Any, raw: Any) -> None:
    safe_ptx = safe.ptx(cc=CC)
    raw_ptx = _raw_ptx(raw, safe.argtypes())
    got, want = _counts(safe_ptx), _counts(raw_ptx)
    # Stores of an output tile appear twice (full and edge copies): compared below.
    got.pop("st.global"), want.pop("st.global")
    assert got == want
    assert _count(safe_ptx, "setp") <= _count(raw_ptx, "setp"), "bounds checks did not fold"
    assert not re.search(r"\btrap\b|^\s*call\b", safe_ptx, re.MULTILINE)


def test_reverse_in_block_stores_like_raw() -> None:
    safe_ptx = k.reverse_in_block.ptx(cc=CC)
    assert _count(safe_ptx, "st.global") == _count(
        _raw_ptx(k.reverse_in_block_raw, k.reverse_in_block.argtypes()), "st.global"
    )


def test_padded_tile_is_one_shared_array_of_the_padded_size() -> None:
    ptx = k.transpose.ptx(cc=CC)
    decl = re.findall(r"\.shared \.align \d+ \.b8 (\w+)\[(\d+)\];", ptx)
    assert [int(size) for _, size in decl] == [k.TILE * (k.TILE + 1) * 4]


@pytest.mark.parametrize(
    "safe, raw, per_path",
    [(k.transpose, k.transpose_raw, k.PER_THREAD), (k.store_tile_full, k.store_tile_full_raw, 8)],
    ids=["transpose", "store_tile_full"],
)
def test_full_output_tile_stores_without_per_element_compare(
    safe: Any, raw: Any, per_path: int
) -> None:
    safe_ptx = safe.ptx(cc=CC)
    path = _full_path(safe_ptx)
    raw_stores = _count(_raw_ptx(raw, safe.argtypes()), "st.global")
    assert _store_count(path) == raw_stores == per_path
    # Per element there is no compare: what remains is per tile (the full
    # flag), per row of an outer loop (its local index and its latch).
    assert _setp_count(path) <= 4, "\n".join(path)
    assert _setp_count(path) < _store_count(path)


def test_edge_path_checks_each_element() -> None:
    # The other side of the claim: the edge copy does compare (else clipping is lost).
    ptx = k.store_tile_full.ptx(cc=CC)
    assert _count(ptx, "setp") - _setp_count(_full_path(ptx)) >= 8


def test_tile_strided_without_proof_checks_the_z_axis() -> None:
    ptx = k.fill_tile_2d_strided_unproven.ptx(cc=CC)
    assert "%ntid.z" in ptx and "%nctaid.z" in ptx
    proven = k.fill_tile_2d_strided.ptx(cc=CC)
    assert "%ntid.z" not in proven and "%nctaid.z" not in proven


def test_reqntid_makes_block_dims_constants() -> None:
    # block (32, 8, 1) is stamped: no %ntid read is left in the tile code.
    ptx = k.transpose.ptx(cc=CC)
    assert ".reqntid 32, 8, 1" in ptx
    assert "%ntid" not in ptx


def test_block_stride_loop_unrolls_like_the_raw_loop() -> None:
    # TILE rows / ROWS threads: the trip count is a constant, the loop is gone.
    ptx = k.transpose.ptx(cc=CC)
    before_barrier = ptx[: ptx.index("bar.sync")]
    assert _count(before_barrier, "ld.global") == k.PER_THREAD
    assert _count(before_barrier, "st.shared") == k.PER_THREAD
    assert "div." not in ptx and "rem." not in ptx


def test_dynamic_tile_reads_the_launch_size() -> None:
    ptx = k.dynamic_reverse.ptx(cc=CC)
    assert "%dynamic_smem_size" in ptx
    assert re.search(r"\.extern \.shared \.align \d+ \.b8 _simtsafe_dyntile", ptx)


def test_second_dynamic_tile_refused(tmp_path: Path) -> None:
    # Refused at decoration (two names would alias one memory the phase analysis
    # follows per name); the lowering refuses it too, as a second line of defence.
    with pytest.raises(ss.SafetyError, match="a second shared.dynamic_tile") as info:
        load_kernel_module(
            tmp_path,
            """
            @ss.kernel(contract=ss.LaunchContract(domain=1, max_threads=256, dynamic_shared=(0, 4096)))
            def k(out: DisjointSlice[np.float32]) -> None:
                a = ss.shared.dynamic_tile(np.float32)
                b = ss.shared.dynamic_tile(np.float32)  # BAD
                out[thread.index_1d()] = a[0] + b[0]
            """,
        )
    assert info.value.lineno == line_of(tmp_path, "# BAD")


# ----------------------------------------------------------------------------- local arrays

_F32 = types.float32[::1]
_I64 = types.int64[::1]


@pytest.mark.parametrize(
    "safe, raw",
    [(k.local_sum_safe, k.local_sum_raw), (k.local_2d_safe, k.local_2d_raw)],
    ids=["1d", "2d"],
)
def test_local_array_static_loops_match_raw(safe: Any, raw: Any) -> None:
    safe_ptx = _raw_ptx(safe, (_F32, _F32))
    raw_ptx = _raw_ptx(raw, (_F32, _F32))
    ops = (*MEMORY, "setp", "bra")
    assert _counts(safe_ptx, ops) == _counts(raw_ptx, ops)
    assert _count(safe_ptx, "ld.local") == _count(safe_ptx, "st.local") == 0  # registers


def test_local_array_dynamic_index_costs_one_compare() -> None:
    safe_ptx = _raw_ptx(k.local_dynamic_index_safe, (_F32, _I64))
    raw_ptx = _raw_ptx(k.local_dynamic_index_raw, (_F32, _I64))
    assert _counts(safe_ptx) == _counts(raw_ptx)
    assert _count(safe_ptx, "setp") == _count(raw_ptx, "setp") + 1


def test_local_array_filled_in_one_helper_is_read_in_another() -> None:
    """A helper's stores into the caller's thread-private arrays all reach the next
    helper's reads (sgemm_async's frags/fmas with arrays for tuples): every run loaded
    (one 16-byte load each, 4 per step) and every product kept (64 per step), as in the
    plain Numba twin with ``cuda.jit(device=True)`` helpers. A run whose store were lost
    would drop its load and the products it feeds (16 per run pair here)."""
    safe_ptx = k.local_through_helpers.ptx(cc=CC)
    with assume_compute_capability(CC):  # the raw twin calls device functions
        raw_ptx = _raw_ptx(k.local_through_helpers_raw, (_F32, _F32, _F32))
    fmas = k.HELPER_STEPS * k.HELPER_TILE
    assert _count(safe_ptx, "fma.rn.f32") == _count(raw_ptx, "fma.rn.f32") == fmas
    assert _count(safe_ptx, "ld.global.v4.f32") == 4 * k.HELPER_STEPS
    assert _count(safe_ptx, "ld.local") == _count(safe_ptx, "st.local") == 0
    assert _count(raw_ptx, "ld.local") == _count(raw_ptx, "st.local") == 0


# ----------------------------------------------------------------------------- typing rules


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_rule_refused_when_compiled(tmp_path: Path, case: str) -> None:
    source, fragment = REFUSED[case]
    with pytest.raises(ss.SafetyError) as info:
        mod = load_kernel_module(tmp_path, source)  # a type rule: refused when compiled,
        mod.k.ptx(cc=CC)  # unless the decorator's tile tracking refuses it first
    assert fragment in str(info.value)
    assert info.value.rule in ("typing", "tile-phase", "out-tile")
    assert info.value.lineno == line_of(tmp_path, "# BAD")


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_rule_twin_compiles(tmp_path: Path, case: str) -> None:
    mod = load_kernel_module(tmp_path, ACCEPTED[case])
    assert ".entry" in mod.k.ptx(cc=CC)


_HELPERS = """
@ss.device
def make():
    return ss.shared.tile(32, np.float32)  # BAD
"""

_PASSING = """
@ss.device
def put(t, w, v):
    t[w] = v  # BAD

@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1)))
def good(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    t = ss.shared.tile(32, np.float32)
    w = thread.local_index()
    put(t, w, a[thread.index_1d()])
    ss.block.sync()
    out[thread.index_1d()] = t[31 - w.index]
"""


def test_tiles_stay_in_the_kernel_that_makes_them(tmp_path: Path) -> None:
    """Helpers neither make tiles (one allocation for all calls) nor fill them: a helper
    given a tile gets a read-only view, and a store into it is a typing error."""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, _HELPERS)
    assert info.value.rule == "tile-phase"
    assert info.value.lineno == line_of(tmp_path, "# BAD")
    (tmp_path / "passing").mkdir()
    mod = load_kernel_module(tmp_path / "passing", _PASSING)
    with pytest.raises(ss.SafetyError) as info:
        mod.good.ptx()
    assert info.value.rule == "typing"
    assert "read-only there" in str(info.value)


def test_tier1_sgemm_matches_the_raw_schedule() -> None:
    # The register-blocked SGEMM as the decorator emits it (tests/kernels/tiles.py)
    # against the same schedule in raw Numba: same memory traffic, same FMAs,
    # nothing spilled to local memory, and one copy of the main loop.
    sig = (types.float32[:, ::1],) * 3
    safe_ptx = _raw_ptx(k.sgemm_tier1, sig)
    raw_ptx = _raw_ptx(k.sgemm_raw, sig)
    got, want = _counts(safe_ptx), _counts(raw_ptx)
    assert got.pop("st.global") == 2 * want.pop("st.global") - 1  # full and edge copies
    assert got == want
    assert _count(safe_ptx, "fma.rn.f32") == _count(raw_ptx, "fma.rn.f32") == k.GT * k.GT
    assert ".reqntid 16, 16, 1" in safe_ptx
