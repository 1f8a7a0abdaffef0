"""Porting round 21 (tests/kernels/port21.py): each ported Tier-1 kernel passes every
compile-time check with NVVM (``simtsafe.check_kernel``: no finding) and compiles for sm_90; the
round's fixes are pinned where they act: complex tile elements stored and loaded as one integer
(the FFT and a complex read-modify-write accepted, a neighbour's element read in the writing
interval still refused by the compiled form alone), the messages of a floor division in
``requires``, of a shape axis past the annotation and of a pair index into an ``Accumulate``;
a hash's uint32 products are 64-bit on the GPU unless taken back to uint32 (the doc gap)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module, port21

pytestmark = pytest.mark.ptx


def _kernels(mod: object) -> list[ss.Kernel]:
    return [v for v in vars(mod).values() if isinstance(v, ss.Kernel)]


def _load_src(tmp_path: Path, src: str) -> object:
    return load_kernel_module(tmp_path, port21.EXTRA_HEADER + src)


def _only_finding(tmp_path: Path, src: str) -> Any:
    (k,) = _kernels(_load_src(tmp_path, src))
    (f,) = ss.check_kernel(k)
    return f


def _no_finding(tmp_path: Path, src: str) -> ss.Kernel:
    (k,) = _kernels(_load_src(tmp_path, src))
    assert ss.check_kernel(k) == []
    return k


# ---------------------------------------------------------------------------------------------
# ACCEPTED
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(port21.ACCEPTED))
def test_a_ported_kernel_passes_every_check(tmp_path: Path, name: str) -> None:
    kernels = _kernels(port21.load(name, tmp_path))
    assert kernels
    for k in kernels:
        assert ss.check_kernel(k) == [], (name, k.name)
        assert ".entry" in k.ptx(cc=(9, 0))


# ---------------------------------------------------------------------------------------------
# FALSE_REFUSALS complex_tile_witness_store and complex_tile_own_read, fixed
# ---------------------------------------------------------------------------------------------


def _shared_accesses(ptx: str) -> list[str]:
    return re.findall(r"\b(?:st|ld)\.shared\.[\w.]+", ptx)


def test_the_fft_stores_each_complex_element_of_its_tiles_as_one_word(tmp_path: Path) -> None:
    # the witness stores of the bit-reversed load and of each stage: one 8-byte store each
    ptx = port21.load("fft256", tmp_path).fft256.ptx(cc=(9, 0))
    accesses = _shared_accesses(ptx)
    assert "st.shared.u64" in accesses
    assert not [a for a in accesses if a.startswith("st.shared") and "f32" in a]


#: complex tiles filled through witnesses, accepted (before the fix each was refused with
#: "written through a witness at line L and written at line L")
COMPLEX_TILE_ACCEPTED = {
    "own_read": port21.COMPLEX_TILE_OWN_READ,
    "complex128": """
N = 64


@ss.kernel(contract=ss.LaunchContract(domain=1, block=N))
def reverse128(out: DisjointSlice[np.complex128, BlockRow], x: In2D[np.complex128]) -> None:
    a = ss.shared.tile(N, np.complex128)
    t = thread.local_index()
    a[t] = x[cuda.blockIdx.x, t.index]
    ss.block.sync()
    for w in thread.block_row(out):
        out[w] = a[N - 1 - w.col]
""",
    "padded_2d_block_stride": """
@ss.kernel(contract=ss.LaunchContract(domain=2, block=(32, 8, 1)))
def transpose_c64(out: DisjointSlice2D[np.complex64], x: In2D[np.complex64]) -> None:
    t = ss.shared.tile((32, 32), np.complex64, pad=1)
    r0 = cuda.blockIdx.y * 32
    c0 = cuda.blockIdx.x * 32
    for w in thread.block_stride(t):
        t[w] = x[c0 + w.row, r0 + w.col]
    ss.block.sync()
    w = thread.index_2d()
    out[w] = t[cuda.threadIdx.x, cuda.threadIdx.y]
""",
}


@pytest.mark.parametrize("name", sorted(COMPLEX_TILE_ACCEPTED))
def test_a_complex_tile_filled_through_witnesses_is_accepted(tmp_path: Path, name: str) -> None:
    k = _no_finding(tmp_path, COMPLEX_TILE_ACCEPTED[name])
    assert ".entry" in k.ptx(cc=(9, 0))


def test_a_complex128_witness_store_is_one_16_byte_store(tmp_path: Path) -> None:
    k = _no_finding(tmp_path, COMPLEX_TILE_ACCEPTED["complex128"])
    stores = [a for a in _shared_accesses(k.ptx(cc=(9, 0))) if a.startswith("st.")]
    assert stores == ["st.shared.v2.u64"]


@pytest.fixture
def compiled_form_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn the source-level phase pass off: the compiled form alone decides."""
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite, "check_phases", lambda *args, **kwargs: None)


def test_a_neighbours_complex_element_read_while_written_is_refused_at_the_source(
    tmp_path: Path,
) -> None:
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, port21.COMPLEX_TILE_NEIGHBOUR_READ)
    assert "shared tile `a` is read by index at line" in str(info.value)


@pytest.mark.usefixtures("compiled_form_only")
def test_a_neighbours_complex_element_read_while_written_is_refused_by_the_compiled_form(
    tmp_path: Path,
) -> None:
    # the unsafe twin of complex_tile_own_read: the one-word store is still the owner's only,
    # and a read of another element in its interval clashes with it
    f = _only_finding(tmp_path, port21.COMPLEX_TILE_NEIGHBOUR_READ)
    read = line_of(tmp_path, "v = a[(t.index + 1) % N]")
    write = line_of(tmp_path, "a[t] = x[cuda.blockIdx.x, t.index]")
    assert f.code == "SS-tile-phase"
    assert (
        f"shared tile 'a' (made at line {write - 2}) is read at line {read} and written "
        f"through a witness at line {write} in the same barrier interval"
    ) in f.message


@pytest.mark.usefixtures("compiled_form_only")
def test_a_transposed_complex_read_in_the_fill_interval_is_refused_by_the_compiled_form(
    tmp_path: Path,
) -> None:
    # the unsafe twin of padded_2d_block_stride: without the barrier, thread (ty, tx) reads
    # element (tx, ty) while its owner may still be writing it
    src = COMPLEX_TILE_ACCEPTED["padded_2d_block_stride"].replace("    ss.block.sync()\n", "")
    f = _only_finding(tmp_path, src)
    assert f.code == "SS-tile-phase"
    assert f.line == line_of(tmp_path, "out[w] = t[cuda.threadIdx.x, cuda.threadIdx.y]")
    assert "is read at line" in f.message
    assert "written through a witness at line" in f.message


# ---------------------------------------------------------------------------------------------
# FALSE_REFUSALS tile_written_by_helper (documented, not fixed)
# ---------------------------------------------------------------------------------------------


def test_a_tile_written_by_a_helper_is_refused_with_the_rule(tmp_path: Path) -> None:
    f = _only_finding(tmp_path, port21.FFT_STAGE_HELPER)
    assert f.code == "SS-typing"
    assert "a shared tile passed to a helper (SharedTile[complex64, 256, read-only]) is " in (
        f.message
    )
    assert "Fill tiles in the kernel that makes them" in f.message


# ---------------------------------------------------------------------------------------------
# FALSE_REFUSALS stage_parity_pingpong (not fixed) and BAD_ERRORS helper_named_by_the_last_call
# (fixed)
# ---------------------------------------------------------------------------------------------


def test_a_ping_pong_by_the_stages_parity_is_refused_at_the_source(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, port21.FFT_PARITY)
    # the first tile met, in every run (the source-level join once named either, by hash)
    read = line_of(tmp_path, "b[t] = butterfly(a, t.index, s)")
    write = line_of(tmp_path, "a[t] = butterfly(b, t.index, s)")
    assert f"shared tile `a` is read by index at line {read} and filled at line {write}" in str(
        info.value
    )
    assert "with no block barrier between them (on some path)" in str(info.value)


@pytest.mark.usefixtures("compiled_form_only")
def test_a_ping_pong_by_the_stages_parity_is_refused_by_the_compiled_form(tmp_path: Path) -> None:
    f = _only_finding(tmp_path, port21.FFT_PARITY)
    read = line_of(tmp_path, "b[t] = butterfly(a, t.index, s)")
    write = line_of(tmp_path, "a[t] = butterfly(b, t.index, s)")
    inner = line_of(tmp_path, "a = src[base + j]")
    assert f.code == "SS-tile-phase"
    # the helper named is the one whose line it is, `butterfly`, not the last call before the
    # read (cmath.exp's implementation: BAD_ERRORS helper_named_by_the_last_call, fixed)
    assert (
        f"is read at line {read} (in helper butterfly, line {inner}) and written through a "
        f"witness at line {write}"
    ) in f.message


# ---------------------------------------------------------------------------------------------
# BAD_ERRORS
# ---------------------------------------------------------------------------------------------


def test_a_floor_division_in_requires_names_the_bounds_that_say_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        _load_src(tmp_path, port21.MAXPOOL_FLOORDIV)
    msg = str(info.value)
    assert "the operator '//' is not allowed (use + - * only)" in msg
    assert (
        "A quotient is a bound on a product: `A == x.shape[1] // 2` is the two entries "
        "`2 * A <= x.shape[1]` and `x.shape[1] < 2 * A + 2`"
    ) in msg


def test_a_modulo_in_requires_keeps_the_plain_refusal() -> None:
    with pytest.raises(ValueError) as info:
        ss.LaunchContract(domain=1, block=64, requires=["x.size % 4 == 0"])
    assert "the operator '%' is not allowed (use + - * only). Grammar:" in str(info.value)


def test_a_shape_axis_past_the_annotation_names_the_array_and_the_fix(tmp_path: Path) -> None:
    f = _only_finding(tmp_path, port21.DEPTHWISE_4D)
    assert f.code == "SS-typing"
    assert f.line == line_of(tmp_path, "n = w.z // x.shape[1]")
    assert (
        "`x.shape[1]` names an axis `x` does not have: its annotation gives it fewer than 2 "
        "axes (In / DisjointSlice / Accumulate are 1D"
    ) in f.message
    assert "`x.reshape(n * c, h, w)` with `In3D`" in f.message
    assert "tuple index out of range" not in f.message


def test_a_constant_tuple_index_past_the_end_says_so(tmp_path: Path) -> None:
    src = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def fifth(out: DisjointSlice[np.float32], x: In[np.float32]) -> None:
    i = thread.index_1d()
    t = ss.vec.load(x, i.index, 4)
    out[i] = t[4]
"""
    f = _only_finding(tmp_path, src)
    assert f.line == line_of(tmp_path, "out[i] = t[4]")
    assert "a constant index past the end of a tuple (a tuple of n values has positions" in (
        f.message
    )


def test_a_pair_index_into_an_accumulate_names_the_flat_view(tmp_path: Path) -> None:
    f = _only_finding(tmp_path, port21.COO_PAIR)
    assert f.code == "SS-typing"
    assert "acc.add(i, v): the index must be an int; got UniTuple(int32 x 2)" in f.message
    assert "pass its C-order flat view (`dense.reshape(-1)`)" in f.message
    assert "`acc.add(r * ncols + c, v)`" in f.message


def test_a_vector_store_into_a_row_tile_names_the_flat_view(tmp_path: Path) -> None:
    f = _only_finding(tmp_path, port21.PAGED_VEC_2D)
    assert f.code == "SS-typing"
    assert "got a 2d tile of 1 x 8. Write its elements with t[r, c] = v, or keep the vector " in (
        f.message
    )
    assert "`out.reshape(-1)`, a DisjointSlice) and take `t = thread.tile_1d(out, 8)`" in (
        f.message
    )


def test_a_vector_store_into_a_two_row_tile_keeps_the_plain_refusal(tmp_path: Path) -> None:
    src = port21.PAGED_VEC_2D.replace("tile_2d(out, 1, 8)", "tile_2d(out, 2, 4)")
    f = _only_finding(tmp_path, src)
    assert f.message.endswith("got a 2d tile of 2 x 4. Write its elements with t[r, c] = v")


def test_the_flat_paged_gather_is_one_16_byte_load_and_store(tmp_path: Path) -> None:
    k = _no_finding(tmp_path, port21.PAGED_VEC_FLAT)
    ptx = k.ptx(cc=(9, 0))
    assert re.search(r"ld\.global(\.nc)?\.v4\.u32", ptx)
    assert "st.global.v4.u32" in ptx


def test_a_complex_block_sum_names_its_two_parts(tmp_path: Path) -> None:
    f = _only_finding(tmp_path, port21.ROW_DC)
    assert f.code == "SS-typing"
    assert f.line == line_of(tmp_path, "dc[thread.block_leader()] = ss.block.sum(acc)")
    assert (
        "block.sum(v) takes a number (an int, float or bool scalar); got complex64. A complex "
        "value goes as its two parts, `re = block.sum(v.real)` and `im = block.sum(v.imag)`"
    ) in f.message
    (tmp_path / "parts").mkdir()
    _no_finding(tmp_path / "parts", port21.ROW_DC_PARTS)


def test_an_inserts_witness_tested_against_the_keys_names_the_value_array(
    tmp_path: Path,
) -> None:
    f = _only_finding(tmp_path, port21.BFS_VISITED_KEYS)
    assert f.code == "SS-typing"
    assert f.line == line_of(tmp_path, "if f.in_bounds(seen):")
    assert "w.in_bounds() takes a DisjointSlice, an input array or a constant array" in f.message
    assert (
        "Whether `f = seen.insert(k)` inserted the key is `f.in_bounds(vals)` for a value array "
        "of the table (declare one, `tables={'seen': {'values': ['vals'], ...}}`"
    ) in f.message


def test_the_visited_set_with_a_value_array_is_accepted(tmp_path: Path) -> None:
    k = _no_finding(tmp_path, port21.BFS_VISITED)
    assert ".entry" in k.ptx(cc=(9, 0))


def test_libdevice_imported_as_numba_cuda_documents_it_is_accepted(tmp_path: Path) -> None:
    # BAD_ERRORS libdevice_module_import, fixed: the module is cuda.libdevice, by identity
    k = _no_finding(tmp_path, port21.MX_EXPONENT)
    assert "shr" in k.ptx(cc=(9, 0))


def test_a_name_libdevice_does_not_have_is_refused_through_the_module_too(tmp_path: Path) -> None:
    src = port21.MX_EXPONENT.replace("libdevice.float_as_int(amax)", "libdevice.no_such(amax)")
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, src)
    assert "`libdevice.no_such` is not a libdevice math function" in str(info.value)


def test_a_libdevice_function_that_is_not_public_is_refused_through_the_module(
    tmp_path: Path,
) -> None:
    # the module's own imports and private names are not its kernel API: the allow-list of
    # cuda.libdevice (its public functions) decides, whatever the spelling
    src = port21.MX_EXPONENT.replace("libdevice.float_as_int(amax)", "libdevice.__name__")
    with pytest.raises(ss.SafetyError):
        _load_src(tmp_path, src)


def test_a_module_swapped_in_for_libdevice_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # unsafe twin of libdevice_module_import: the module found under numba.cuda.libdevice's
    # import name holds a function of the same name that is not numba-cuda's (here a plain
    # Python function): refused, the identity of the function decides, not its module's name
    import sys
    import types

    fake = types.ModuleType("numba.cuda.libdevice")
    fake.float_as_int = lambda v: 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "numba.cuda.libdevice", fake)
    src = port21.MX_EXPONENT.replace(
        "from numba.cuda import libdevice",
        "import sys\nlibdevice = sys.modules['numba.cuda.libdevice']",
    )
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, src)
    assert "`libdevice.float_as_int` is not numba-cuda's libdevice function" in str(info.value)


def test_a_scalars_view_is_refused_with_the_libdevice_casts(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError) as info:
        _load_src(tmp_path, port21.MX_EXPONENT_VIEW)
    msg = str(info.value)
    assert "attribute `.view` is not allowed in kernels" in msg
    assert "use the libdevice casts: `cuda.libdevice.float_as_int(v)` / `int_as_float(i)`" in msg


# ---------------------------------------------------------------------------------------------
# DOC_GAPS uint32_hash_widens
# ---------------------------------------------------------------------------------------------


def _hash_products(ptx: str) -> set[str]:
    """The multiply instructions of the hash's two constants (0x7FEB352D, 0x846CA68B)."""
    return {
        line.split()[0]
        for line in ptx.splitlines()
        if "mul" in line and re.search(r"\b(2146121005|2221713035|-2073254261)\b", line)
    }


def test_a_uint32_hash_written_as_in_cuda_c_multiplies_in_64_bits(tmp_path: Path) -> None:
    k = _no_finding(tmp_path, port21.GELU_HASH_WIDE)
    assert "mul.lo.s64" in _hash_products(k.ptx(cc=(9, 0)))


def test_the_hash_with_its_products_taken_back_to_uint32_multiplies_in_32_bits(
    tmp_path: Path,
) -> None:
    ptx = port21.load("bias_gelu_dropout", tmp_path).bias_gelu_dropout.ptx(cc=(9, 0))
    assert _hash_products(ptx) == {"mul.lo.s32"}
