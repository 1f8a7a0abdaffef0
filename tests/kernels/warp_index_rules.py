"""The warp's number within its block is warp-uniform where the contract's block makes it so.

A warp is 32 consecutive linear thread ids (x fastest). With the contract's
exact block one row long (``block.y * block.z == 1``) or made of whole-warp
rows (``block.x % 32 == 0``), ``threadIdx.x // 32`` (``>> 5``, ``// 64``,
``& ~31``...) is one value in every lane of a warp, so a warp collective under
a branch on it is accepted; ``threadIdx.y`` is too where ``block.x % 32 == 0``.
A ``domain=1`` contract without an exact block counts as one row. Anything else
stays thread-dependent: a block shape whose warps straddle rows, a 2D or 3D
contract without an exact block, ``(threadIdx.x + 1) // 32``, ``// 16``, a
lane id; and a block barrier needs more than a warp-uniform branch.

Shared by tests/ptx (``ptx()``: the compiled-form verdict) and tests/sim (the
simulator's compile worker gives the same verdict, then the accepted twin
runs). Each refusal asserts the rule, a fragment of the message, the
collective's line (``# BAD``) and the condition's (``# COND``);
``simtsafe.sim.check`` replays both twins: the accepted one never diverges,
and the refused ones that really diverge are shown to. The replay is simtsafe's own
and the same in both processes, so it runs in the tests/ptx module only (CI time).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module, run_or_compile

F32 = np.float32
WARP_SKIPS = "`warp.sum` needs every thread of the warp to reach it"
THREAD_IDX = "the thread's index (threadIdx, a lane id, a witness)"


def kernel_1d(cond: str, contract: str = "block=256", op: str = "ss.warp.sum(v)") -> str:
    return f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, {contract}))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    v = ss.warp.sum(a[i])
    if {cond}:  # COND
        v = {op}  # BAD
    out[i] = v
"""


def kernel_2d(cond: str, block: str) -> str:
    return f"""
@ss.kernel(contract=ss.LaunchContract(domain=2, block={block}))
def k(out: DisjointSlice2D[np.float32], a: In2D[np.float32], n: int) -> None:
    w = thread.index_2d()
    v = a[w]
    if {cond}:  # COND
        v = ss.warp.sum(v)  # BAD
    out[w] = v
"""


def _compile(kernel: ss.Kernel, block: tuple[int, int, int]) -> None:  # type: ignore[type-arg]
    if ss.SIMULATOR:
        kernel.prepare(grid=(1, 1), block=block)
    else:
        kernel.ptx()


def refused(
    tmp_path: Path, source: str, block: tuple[int, int, int], *fragments: str
) -> ss.SafetyError:
    mod = load_kernel_module(tmp_path, source)
    with pytest.raises(ss.SafetyError) as info:
        _compile(mod.k, block)
    exc = info.value
    assert exc.rule == "uniformity", (exc.rule, str(exc))
    for fragment in fragments:
        assert fragment in str(exc), str(exc)
    assert exc.lineno == line_of(tmp_path, "# BAD"), (exc.lineno, str(exc))
    assert f"line {line_of(tmp_path, '# COND')}" in str(exc), str(exc)
    return exc


def _args(block: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, int]:
    if block[1] * block[2] == 1:
        a = np.arange(block[0], dtype=F32) % 5
    else:
        a = (np.arange(block[0] * block[1], dtype=F32) % 5).reshape(block[1], block[0])
    return np.zeros_like(a), a, 3


def replay(kernel: ss.Kernel, block: tuple[int, int, int]) -> ss.sim.CheckReport:  # type: ignore[type-arg]
    grid = (1, 1) if block[1] > 1 else 1
    return ss.sim.check(kernel, grid, block, *_args(block))


def accepted(tmp_path: Path, source: str, block: tuple[int, int, int]) -> np.ndarray | None:
    """Compiles (PTX) or launches (simulator); ``sim.check`` finds no divergence."""
    mod = load_kernel_module(tmp_path, source)
    _compile(mod.k, block)
    if not ss.SIMULATOR:  # the replay: once, in the tests/ptx module
        report = replay(mod.k, block)
        assert report.ok, report
    grid = (1, 1) if block[1] > 1 else 1
    res = run_or_compile(mod.k, grid, block, *_args(block))
    return None if res is None else res[0]


def diverges(tmp_path: Path, source: str, block: tuple[int, int, int]) -> None:
    """What the static check refuses really runs a warp collective in part of a warp
    (replayed once, in the tests/ptx module)."""
    if ss.SIMULATOR:
        return
    (tmp_path / "replay").mkdir()
    mod = load_kernel_module(tmp_path / "replay", source)
    kinds = {f.kind for f in replay(mod.k, block).findings}
    assert "warp_mask" in kinds, kinds


# ------------------------------------------------------------ the block reduction


REDUCTION = """
@ss.kernel(contract=ss.LaunchContract(domain=1, {contract}))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    wid = cuda.threadIdx.x // 32
    lane = cuda.threadIdx.x % 32
    v = ss.warp.sum(a[i])
    if wid == 0:  # COND
        v = ss.warp.sum(v + np.float32(lane))  # BAD
    out[i] = v
"""


def test_block_reduction_warp_zero(tmp_path: Path) -> None:
    out = accepted(tmp_path, REDUCTION.format(contract="block=256"), (256, 1, 1))
    if out is not None:
        a = np.arange(256, dtype=F32) % 5
        warp_sums = a.reshape(8, 32).sum(axis=1)
        expect = np.repeat(warp_sums, 32)
        expect[:32] = 32 * warp_sums[0] + np.arange(32).sum()
        np.testing.assert_allclose(out, expect)


def test_block_reduction_without_an_exact_block(tmp_path: Path) -> None:
    # max_threads bounds the block, not its shape -- but domain=1 makes it one row
    # (prepare refuses a block with y or z): the warp number is one value per warp
    # (attack round 25's false refusal)
    out = accepted(tmp_path, REDUCTION.format(contract="max_threads=256"), (256, 1, 1))
    if out is not None:
        a = np.arange(256, dtype=F32) % 5
        warp_sums = a.reshape(8, 32).sum(axis=1)
        expect = np.repeat(warp_sums, 32)
        expect[:32] = 32 * warp_sums[0] + np.arange(32).sum()
        np.testing.assert_allclose(out, expect)


def test_2d_block_reduction_without_an_exact_block(tmp_path: Path) -> None:
    # the rejected twin: a 2D contract without an exact block says nothing of the rows'
    # width, so a warp may straddle two rows (x 32..47 of one, 0..15 of the next)
    source = kernel_2d("cuda.threadIdx.x // 32 == 0", "(48, 2, 1)")
    refused(
        tmp_path,
        source.replace("block=(48, 2, 1)", "max_threads=256"),
        (48, 2, 1),
        WARP_SKIPS,
        THREAD_IDX,
        "threadIdx.x // 32` where the contract's exact block",
    )


# ------------------------------------------------------------ spellings of the warp number


@pytest.mark.parametrize(
    "cond",
    [
        "cuda.threadIdx.x // 32 == 0",
        "cuda.threadIdx.x >> 5 == 1",
        "np.int32(cuda.threadIdx.x) // 32 == 0",
        "int(cuda.threadIdx.x / 32) == 2",
        "(cuda.threadIdx.x // 32) * 32 + 7 == 39",
        "cuda.threadIdx.x // 64 == 1",
        "cuda.threadIdx.x & ~31 == 64",
        "cuda.threadIdx.x // 32 < n",
    ],
)
def test_warp_number_spellings(tmp_path: Path, cond: str) -> None:
    accepted(tmp_path, kernel_1d(cond), (256, 1, 1))


@pytest.mark.parametrize(
    "cond",
    [
        "(cuda.threadIdx.x + 1) // 32 == 0",
        "cuda.threadIdx.x // 16 == 0",
        "cuda.threadIdx.x // 48 == 0",
        "cuda.threadIdx.x // n == 0",
        "cuda.threadIdx.x % 32 == 0",
        "cuda.laneid == 0",
        "(cuda.threadIdx.x * 3) >> 5 == 0",
        "int(cuda.threadIdx.x / 16) == 0",
        # attacks: a compare one past a run's end, a modulus that is not a power of two,
        # a bound from an argument
        "cuda.threadIdx.x <= 32",
        "cuda.threadIdx.x % 48 < 32",
        "cuda.threadIdx.x < n",
    ],
)
def test_not_the_warp_number(tmp_path: Path, cond: str) -> None:
    source = kernel_1d(cond)
    refused(tmp_path, source, (256, 1, 1), WARP_SKIPS, THREAD_IDX)
    diverges(tmp_path, source, (256, 1, 1))


@pytest.mark.parametrize(
    "cond",
    [
        "cuda.threadIdx.x <= 31",
        "cuda.threadIdx.x % 64 < 32",
        "((cuda.threadIdx.x ^ 16) >> 5) == 0",
        "cuda.threadIdx.x - 32 < 0",
    ],
)
def test_warp_number_as_llvm_folds_it(tmp_path: Path, cond: str) -> None:
    # the twins of the attacks above: instcombine turns each into a run-boundary compare
    # (or a shift by 5) of tid.x, which the compiled form accepts, and sim.check agrees
    accepted(tmp_path, kernel_1d(cond), (256, 1, 1))


def test_trunc_to_five_bits_is_not_aligned() -> None:
    # tid.x truncated to i5 covers all of i5 in every warp: read signed it is [-16, 16),
    # straddling the sign change, so a signed compare or a sext then shift splits the warp;
    # truncated to i6 it stays in one run of 32 read signed or unsigned
    from simtsafe.lowering._irform import compiled_form
    from simtsafe.verify._divergence import WarpIndex

    ir = """
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @use(i1, i32, i1, i32)
define void @k() {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %n5 = trunc i32 %t to i5
  %c5 = icmp slt i5 %n5, 0
  %s5 = sext i5 %n5 to i32
  %h5 = lshr i32 %s5, 5
  %n6 = trunc i32 %t to i6
  %c6 = icmp slt i6 %n6, 0
  %s6 = sext i6 %n6 to i32
  %h6 = lshr i32 %s6, 5
  call void @use(i1 %c5, i32 %h5, i1 %c6, i32 %h6)
  ret void
}
"""
    form = compiled_form([ir], "k")
    defs = {i.result: i for b in form.blocks for i in b.instrs if i.result}
    verdict = WarpIndex(defs, (256, 1, 1)).warp_uniform
    assert not verdict(defs["%c5"]) and not verdict(defs["%h5"])
    assert verdict(defs["%c6"]) and verdict(defs["%h6"])

    def signed(x: int, bits: int) -> int:
        v = x % 2**bits
        return v - 2**bits if v >= 2 ** (bits - 1) else v

    for q in range(8):
        run = range(32 * q, 32 * q + 32)
        assert len({signed(x, 5) < 0 for x in run}) == 2
        assert len({(signed(x, 5) % 2**32) >> 5 for x in run}) == 2
        assert len({signed(x, 6) < 0 for x in run}) == 1
        assert len({(signed(x, 6) % 2**32) >> 5 for x in run}) == 1


def test_one_row_block_of_a_partial_warp(tmp_path: Path) -> None:
    # one row: the linear id is threadIdx.x, whatever block.x is
    accepted(tmp_path, kernel_1d("cuda.threadIdx.x // 32 == 1", "block=48"), (48, 1, 1))


# ------------------------------------------------------------ block shapes


@pytest.mark.parametrize(
    ("cond", "block"),
    [
        ("cuda.threadIdx.x // 32 == 0", (64, 2, 1)),  # rows of whole warps
        ("cuda.threadIdx.y == 1", (96, 3, 1)),  # rows of three warps: a warp has one y
        ("cuda.threadIdx.y == 1", (64, 2, 1)),
    ],
)
def test_block_shapes_whose_rows_are_whole_warps(
    tmp_path: Path, cond: str, block: tuple[int, int, int]
) -> None:
    accepted(tmp_path, kernel_2d(cond, str(block)), block)


@pytest.mark.parametrize(
    ("cond", "block"),
    [
        # block.x = 48: the second warp is x 32..47 of row 0 and x 0..15 of row 1
        ("cuda.threadIdx.x // 32 == 0", (48, 2, 1)),
        # block.x = 33: the second warp is x 32 of row 0 and x 0..30 of row 1
        ("cuda.threadIdx.x // 32 == 1", (33, 2, 1)),
        # rows of half a warp, of a quarter: a warp spans two or four y
        ("cuda.threadIdx.y == 0", (16, 2, 1)),
        ("cuda.threadIdx.y == 1", (16, 4, 1)),
    ],
)
def test_block_shapes_whose_rows_split_a_warp(
    tmp_path: Path, cond: str, block: tuple[int, int, int]
) -> None:
    source = kernel_2d(cond, str(block))
    refused(tmp_path, source, block, WARP_SKIPS, THREAD_IDX)
    diverges(tmp_path, source, block)


# ------------------------------------------------------------ block scope needs more


def test_block_collective_under_the_warp_number(tmp_path: Path) -> None:
    refused(
        tmp_path,
        kernel_1d("cuda.threadIdx.x // 32 == 0", op="ss.block.sum(v)"),
        (256, 1, 1),
        "`block.sum` needs every thread of the block to reach it",
        "control flow here is warp-uniform",
        "the thread's warp within its block",
    )


def test_block_barrier_under_the_warp_number(tmp_path: Path) -> None:
    source = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    wid = cuda.threadIdx.x >> 5
    if wid == 0:  # COND
        ss.block.sync()  # BAD
    out[i] = a[i]
"""
    refused(
        tmp_path,
        source,
        (256, 1, 1),
        "`block.sync` needs every thread of the block to reach it",
        "control flow here is warp-uniform",
    )


def test_a_local_bound_under_a_branch(tmp_path: Path) -> None:
    # lanes 16..31 never bind tb (Numba gives it 0): `tb // 32` splits every warp but the
    # first; the compiled form sees a phi of tid.x and 0, not the warp's number
    source = kernel_1d("tb // 32 == 0").replace(
        "    i = thread.index_1d()\n",
        "    i = thread.index_1d()\n    if cuda.laneid < 16:\n        tb = cuda.threadIdx.x\n",
    )
    # (sim.check replays Python, where reading the unbound tb raises: no replay here)
    refused(tmp_path, source, (256, 1, 1), WARP_SKIPS)


# ------------------------------------------------------------ the source-level analysis agrees


@pytest.mark.parametrize(
    ("cond", "contract", "uniform"),
    [
        ("cuda.threadIdx.x // 32 == 0", "block=256", True),
        ("cuda.threadIdx.x >> 5 == 1", "block=256", True),
        ("np.int32(cuda.threadIdx.x) // 32 == 0", "block=256", True),
        ("int(cuda.threadIdx.x / 32) == 2", "block=256", True),
        ("cuda.threadIdx.x & ~31 == 64", "block=256", True),
        ("tx // 64 == 1", "block=256", True),
        ("cuda.threadIdx.x // 32 == 1", "block=48", True),
        ("cuda.threadIdx.x // 32 == 0", "max_threads=256", False),
        ("(cuda.threadIdx.x + 1) // 32 == 0", "block=256", False),
        ("cuda.threadIdx.x // 16 == 0", "block=256", False),
        ("cuda.threadIdx.x % 32 == 0", "block=256", False),
        ("cuda.laneid == 0", "block=256", False),
        ("ty // 32 == 0", "block=256", False),  # ty is reassigned: not threadIdx.x alone
        # tb is bound under a thread-dependent branch: elsewhere Numba gives it 0
        ("tb // 32 == 0", "block=256", False),
    ],
)
def test_source_level_verdict(tmp_path: Path, cond: str, contract: str, uniform: bool) -> None:
    # what decides where no compiled form can be made (the simulator without the CUDA
    # compiler): it accepts the same warp numbers as the compiled form
    source = kernel_1d(cond, contract).replace(
        "    i = thread.index_1d()\n",
        "    i = thread.index_1d()\n    tx = cuda.threadIdx.x\n    ty = cuda.threadIdx.x\n"
        "    ty += 1\n    if cuda.laneid < 16:\n        tb = cuda.threadIdx.x\n",
    )
    mod = load_kernel_module(tmp_path, source)
    finding = mod.k.source_uniformity().finding
    if uniform:
        assert finding is None, finding
    else:
        assert finding is not None and finding.rule == "uniformity"
        assert finding.lineno == line_of(tmp_path, "# BAD"), finding


def test_source_level_block_op_under_the_warp_number(tmp_path: Path) -> None:
    source = kernel_1d("cuda.threadIdx.x // 32 == 0", op="ss.block.sum(v)")
    mod = load_kernel_module(tmp_path, source)
    finding = mod.k.source_uniformity().finding
    assert finding is not None and finding.lineno == line_of(tmp_path, "# BAD"), finding


def test_source_level_thread_y(tmp_path: Path) -> None:
    good = load_kernel_module(tmp_path, kernel_2d("cuda.threadIdx.y == 1", "(64, 2, 1)"))
    assert good.k.source_uniformity().finding is None
    (tmp_path / "bad").mkdir()
    bad = load_kernel_module(tmp_path / "bad", kernel_2d("cuda.threadIdx.y == 1", "(16, 4, 1)"))
    assert bad.k.source_uniformity().finding is not None
