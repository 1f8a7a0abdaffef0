"""examples/gemm_bf16.py on the real target (NVVM, no GPU), against its raw twin: the A and B
tiles filled by ``shared.fill_async`` (16-byte ``cp.async.cg`` runs) four 32-deep stages deep,
in the launch's dynamic shared memory (the contract's ``tile_shared``: 106 KiB, over the 48 KiB
of static shared memory), read by ``ldmatrix.x4`` (A) and ``ldmatrix.x4.trans`` (two B
fragments each): per barrier, 64 MMAs and 16 ``ldmatrix`` per warp, the safe main loop as
lean as the raw one's; and the compiled-form tile phases telling the stages' tiles apart when
``ldmatrix`` takes an integer address (offset from ``%tid`` + ``ptrtoint @tile``)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from numba import cuda, types

import simtsafe as ss
from tests.coop_examples import example
from tests.kernels import line_of, load_kernel_module
from tests.ptx.ptx_text import basic_blocks

pytestmark = pytest.mark.ptx

CC = (9, 0)
STAGES = 4
FILLS = 2 * (STAGES - 1) + 2 * STAGES  # prologue (A, B) x 3 + four steps x (A, B)
# A fill whose tile lies wholly inside its input takes the whole-tile path: a thread's runs
# (2 of the A tile's 512, 4 of the B tile's 1024, 256 threads) one after another, no test.
WHOLE_RUNS = (STAGES - 1 + STAGES) * (2 + 4)
RUN = 8  # bf16 elements per 16-byte run
MMA_PER_STEP = 64  # a warp's 64 x 64 tile, 32 deep: 4 x 8 accumulators x 2
LDMATRIX_PER_STEP = 16  # per 16-deep half: 4 x4 (A) + 4 x4.trans (B pairs)


def count(ptx: str, pattern: str) -> int:
    return len(re.findall(pattern, ptx.split(".entry", 1)[1]))


@cache
def safe(layouts: tuple[str, ...] = ("C16", "C16")) -> str:
    """The example as its launches compile it: inputs aligned for 16-byte runs ("C16",
    lowering._runaligned: what a launch finds for arrays of 8k-multiple widths)."""
    return str(example("gemm_bf16").gemm_bf16.ptx(cc=CC, layouts=layouts))


@cache
def raw() -> str:
    g = example("gemm_bf16")
    sig = (types.float32[:, ::1], types.uint16[:, ::1], types.uint16[:, ::1])
    ptx, _ = cuda.compile_ptx(g.gemm_bf16_raw.py_func, sig, cc=CC)
    return str(ptx)


@pytest.mark.parametrize("which", ["safe", "safe_any_input", "raw"])
def test_fills_are_cp_async_four_stages_deep(which: str) -> None:
    # Each fill's whole-run copies; the raw twin and the safe code compiled for any input
    # ("C") also have each fill's per-run copy (a misaligned source), which NVVM drops where
    # the launch found the inputs aligned for runs ("C16": the alignment test folds).
    ptx = _ptx(which)
    per_run = FILLS if which != "safe" else 0
    assert (
        count(ptx, r"cp\.async\.cg\.shared\.global \[[^]]+\], \[[^]]+\], 16,")
        == per_run + WHOLE_RUNS
    )
    assert count(ptx, r"cp\.async\.commit_group;") == (STAGES - 1) + STAGES
    assert count(ptx, r"cp\.async\.wait_group 2;") == STAGES
    assert count(ptx, r"cp\.async\.wait_all;") == 1
    assert count(ptx, r"bar\.sync") == STAGES  # one barrier per step


@pytest.mark.parametrize("which", ["safe", "safe_any_input", "raw"])
def test_the_only_shared_stores_are_the_fills_element_fallback(which: str) -> None:
    # A run at a misaligned source (and, in the raw twin, one that starts outside the input)
    # is copied element by element: RUN guarded loads and stores per fill, the only
    # st.shared / ld.global of the kernel (no witness fill; the epilogue stores to global).
    # Compiled for inputs aligned for runs there is none. No local memory: the 128
    # accumulators per lane stay in registers.
    ptx = _ptx(which)
    elements = FILLS * RUN if which != "safe" else 0
    assert count(ptx, r"st\.shared\.") == elements
    assert count(ptx, r"ld\.global\.(?:nc\.)?u16") == elements
    assert count(ptx, r"st\.global\.f32") >= 4 * 8 * 4  # the accumulators, 32 x 4 per lane
    assert count(ptx, r"(?:ld|st)\.local") == 0
    assert ".local" not in ptx


def test_the_raw_twin_has_the_same_tensor_core_work() -> None:
    for pattern in (
        r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16",
        r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16",
        r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32",
    ):
        assert count(safe(), pattern) == count(raw(), pattern) > 0, pattern
    assert count(safe(), r"ldmatrix\.sync\.aligned\.m8n8\.x2") == 0  # B by .x4.trans only
    assert count(safe(), r"mma\.sync") == STAGES * MMA_PER_STEP


def _ptx(which: str) -> str:
    if which == "raw":
        return raw()
    return safe() if which == "safe" else safe(("C", "C"))


def _tensor_blocks(ptx: str) -> list[list[str]]:
    """The main loop's steps: each stretch between two barriers of a basic block that holds
    an ldmatrix or an mma (a step is a basic block of its own where a branch ends it)."""
    out: list[list[str]] = []
    for block in basic_blocks(ptx):
        step: list[str] = []
        for i in [*block, "bar.sync"]:
            if i.startswith("bar.sync"):
                if any(x.startswith(("ldmatrix", "mma")) for x in step):
                    out.append(step)
                step = []
            else:
                step.append(i)
    return out


def _opcodes(block: list[str]) -> list[str]:
    ops = []
    for i in block:
        if i.startswith(("{", "}", ".reg")):
            continue
        ops.append((i.split()[1] if i.startswith("@") else i.split()[0]).split(".")[0])
    return ops


def _unguarded(block: list[str]) -> list[str]:
    """A block without its predicated whole-tile copies (each an asm block of ``setp`` into
    ``%ssp``, ``cvta`` and ``@%ssp cp.async``)."""
    out: list[str] = []
    for i in block:
        if i.startswith("@%ssp cp.async"):
            while out and not out[-1].startswith("setp.ne.b32 %ssi"):
                out.pop()  # the copy's cvta and its predicates' setps: its own asm block
            assert out, f"a predicated copy without its predicates' setp: {i}"
            out.pop()
            continue
        out.append(i)
    return out


def _reads(block: list[str]) -> list[str]:
    """A tensor block's opcodes from its first ldmatrix to its last mma: one step's reads."""
    ops = _opcodes(block)
    return ops[ops.index("ldmatrix") : len(ops) - ops[::-1].index("mma")]


def test_each_step_is_one_block_of_64_mma_and_16_ldmatrix() -> None:
    # The loop shape (as a launch of aligned inputs compiles it: the fills have no branch,
    # so the whole loop body is one basic block): one barrier per 32-deep step, and between
    # two barriers one step with 64 mma.sync and 16 ldmatrix per warp (0.25 ldmatrix per MMA; the previous
    # schedule had 16 mma and 8 ldmatrix per barrier). The checks of every ldmatrix run are
    # decided at compile time -- the fragment origins are constants or functions of
    # threadIdx.y, which .reqntid bounds, and the helpers are inlined into the kernel
    # (@ss.device(inline=True)) where that bound is known -- so there is no selp zeroing a
    # fragment and no branch around a load. The raw twin's reads are ldmatrix and mma alone;
    # the safe ones add one address `add` per ldmatrix (tile base + the lane's offset), and
    # the first step of the loop body some address set-up (at most 48 integer instructions
    # per iteration of four steps).
    safe_blocks, raw_blocks = _tensor_blocks(safe()), _tensor_blocks(raw())
    assert len(safe_blocks) == len(raw_blocks) == STAGES
    extra = 0
    for safe_block, raw_block in zip(safe_blocks, raw_blocks, strict=True):
        reads = _reads(safe_block)
        assert reads.count("ldmatrix") == LDMATRIX_PER_STEP == _reads(raw_block).count("ldmatrix")
        assert reads.count("mma") == MMA_PER_STEP == _reads(raw_block).count("mma")
        assert "selp" not in reads and "bra" not in reads and "setp" not in reads, reads
        others = [op for op in reads if op not in ("ldmatrix", "mma")]
        assert len(others) <= LDMATRIX_PER_STEP + 48, others
        extra += len(others) - LDMATRIX_PER_STEP
    assert extra <= 48, extra
    # The safe steps also hold the next fills' copies: predicated on the alignment test (the
    # block is pinned; a fact where the inputs are aligned for runs), each with its run's
    # bounds as its ignore-src predicate, never branched around, while the raw twin's copies
    # sit in the block its `if` opens. Apart from them the two have the same operations.
    safe_ops = [op for b in safe_blocks for op in _opcodes(_unguarded(b))]
    raw_ops = [op for b in raw_blocks for op in _opcodes(b)]
    for op in ("ldmatrix", "mma", "cp"):
        assert safe_ops.count(op) == raw_ops.count(op), op
    assert count(safe(), r"@%ssp cp\.async\.cg") == WHOLE_RUNS  # every whole-tile copy
    # the address adds above (16 a step), the set-up, and the next fills' bounds tests and
    # copies' addresses (each run's row and column checked against the input, where the raw
    # twin trusts the origin non-negative and inside): at most 56 a step more than raw
    assert len(safe_ops) - len(raw_ops) <= 56 * STAGES, (len(safe_ops), len(raw_ops))


def test_the_tiles_live_in_the_tile_shared_window() -> None:
    # No static shared memory: each tile is its own .extern .shared symbol (all at the dynamic
    # base), addressed at its offset in the window: A tiles 0, 10240, 20480, 30720; B tiles
    # 40960 + 16896 s. The contract's tile_shared is their sum, 106 KiB.
    g = example("gemm_bf16")
    ptx = safe()
    assert re.findall(r"\.shared \.align 16 \.b8 _simtsafe_tile\w*\[(\d+)\]", ptx) == []
    assert len(re.findall(r"\.extern \.shared \.align 16 \.b8 _simtsafe_tile\w*\[\]", ptx)) == 8
    assert g.TILE_SHARED == STAGES * (128 * 40 + 32 * 264) * 2 == 108544
    assert g.gemm_bf16.contract.tile_shared == g.TILE_SHARED == g.RAW_SHARED


# ------------------------------------------------------------ the compiled form tells stages apart

_DOUBLE = """BM = 32
BN = 16
BK = 16


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(64, 1, 1)))
def k(out: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], b: In2D[ss.bfloat16]) -> None:
    ta0 = ss.shared.tile((BM, BK), ss.bfloat16, pad=8)
    ta1 = ss.shared.tile((BM, BK), ss.bfloat16, pad=8)
    tb0 = ss.shared.tile((BK, BN), ss.bfloat16, pad=8)
    tb1 = ss.shared.tile((BK, BN), ss.bfloat16, pad=8)
    o = ss.mma.out_tile(out, BM, BN, 16, 16)
    warp = cuda.threadIdx.x // 32
    r0 = cuda.blockIdx.y * BM
    c0 = cuda.blockIdx.x * BN
    acc0 = ss.mma.zeros()
    acc1 = ss.mma.zeros()
    ss.shared.fill_async(ta0, a, (r0, 0))
    ss.shared.fill_async(tb0, b, (0, c0))
    ss.shared.commit_group()
    for k0 in range(0, a.shape[1], 2 * BK):
        ss.shared.fill_async(ta1, a, (r0, k0 + BK))  # FILL
        ss.shared.fill_async(tb1, b, (k0 + BK, c0))
        ss.shared.commit_group()
        ss.shared.wait_group(1)
        ss.block.sync()
        fa = ss.mma.load_a(ta0, (warp * 16, 0))  # READ
        fb0 = ss.mma.load_b(tb0, (0, 0))
        fb1 = ss.mma.load_b(tb0, (0, 8))
        acc0 = ss.mma.mma(fa, fb0, acc0)
        acc1 = ss.mma.mma(fa, fb1, acc1)
        ss.block.sync()
        ss.shared.fill_async(ta0, a, (r0, k0 + 2 * BK))
        ss.shared.fill_async(tb0, b, (k0 + 2 * BK, c0))
        ss.shared.commit_group()
        ss.shared.wait_group(1)
        ss.block.sync()
        fa = ss.mma.load_a(ta1, (warp * 16, 0))
        fb0 = ss.mma.load_b(tb1, (0, 0))
        fb1 = ss.mma.load_b(tb1, (0, 8))
        acc0 = ss.mma.mma(fa, fb0, acc0)
        acc1 = ss.mma.mma(fa, fb1, acc1)
        ss.block.sync()
    ss.shared.wait_all()
    ss.mma.store(o, 0, 0, acc0)
    ss.mma.store(o, 0, 1, acc1)
"""


@pytest.fixture
def compiled_form_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The source-level phase analysis forgotten: only the compiled form decides."""
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)


def test_double_buffered_ldmatrix_is_accepted_by_the_compiled_form(
    tmp_path: Path, compiled_form_only: None
) -> None:
    # ldmatrix's address is an integer: ptrtoint @ta0 + an offset computed from %tid. The
    # offset points nowhere (a special register is a number), so the read is of ta0 alone,
    # not of every tile -- ta1's copies in flight do not clash with it.
    ptx = load_kernel_module(tmp_path, _DOUBLE).k.ptx(cc=CC)
    assert count(ptx, r"ldmatrix\.sync\.aligned\.m8n8\.x4") == 2


def test_reading_the_stage_in_flight_is_refused_by_the_compiled_form(
    tmp_path: Path, compiled_form_only: None
) -> None:
    source = _DOUBLE.replace(
        "fa = ss.mma.load_a(ta0, (warp * 16, 0))  # READ",
        "fa = ss.mma.load_a(ta1, (warp * 16, 0))  # READ",
    )
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source).k.ptx(cc=CC)
    msg = str(info.value)
    assert info.value.rule == "tile-phase", msg
    assert "shared tile 'ta1'" in msg and "filled asynchronously (cp.async)" in msg, msg
    assert info.value.lineno == line_of(tmp_path, "# READ"), msg
    assert getattr(info.value, "cause_line", None) == line_of(tmp_path, "# FILL"), msg


def test_reading_the_stage_in_flight_is_refused_at_decoration(tmp_path: Path) -> None:
    source = _DOUBLE.replace(
        "fa = ss.mma.load_a(ta0, (warp * 16, 0))  # READ",
        "fa = ss.mma.load_a(ta1, (warp * 16, 0))  # READ",
    )
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, source)
    assert info.value.rule == "tile-phase", str(info.value)
    assert "ta1" in str(info.value), str(info.value)
