"""Attack round 18 (tests/kernels/attacks18.py), compiled form (NVVM, no GPU): a record read
by index from a shared tile, a dynamic tile, a thread-private array or an output tile had
no bounds test in the PTX. A record is a reference to its bytes; out of range the read was a
null record pointer, a load through it undefined, and LLVM deleted that path with the
compare. Now out of range the read is a zero-filled scratch record of the thread
(``_cuda.guarded_record``, as witness reads of inputs and outputs were): the field's load
takes its address from a ``selp`` between the element and the scratch, decided by the bound.
The values on the simulator (and on a GPU): tests/sim/test_attacks18_sim.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks18 import FINDINGS
from tests.ptx.test_tile_phases_ptx import compiled_form_only  # noqa: F401 - a fixture

pytestmark = pytest.mark.ptx

ROUTES = (
    "tile-record-int-read-oob",
    "tile-record-witness-read-oob",
    "dynamic-tile-record-read-oob",
    "local-record-read-oob",
    "out-tile-record-read-oob",
)


def _unguarded_loads(ptx: str, fills: bool) -> list[str]:
    """Loads (not of a parameter) at an address no ``selp.b64`` chose. Every other read these
    kernels make is of a record (a witness read of the input, the route under test), so each
    must be at an address chosen between the element and the scratch record; a tile's fill
    reads the input with plain global loads (``fills``: those are left out)."""
    chosen = set(re.findall(r"selp\.b64\s+(%rd\d+),", ptx))
    loads = re.findall(r"(\bld\.(?!param)([\w.]*)\s+%\w+, \[(%rd\d+)(?:\+\d+)?\])", ptx)
    return [
        text
        for text, kind, reg in loads
        if reg not in chosen and not (fills and kind.startswith("global"))
    ]


@pytest.mark.parametrize("name", ROUTES)
def test_a_record_read_by_index_keeps_its_bounds_test(tmp_path: Path, name: str) -> None:
    ptx = load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=(9, 0))
    fills = "fill_async" in FINDINGS[name]
    assert _unguarded_loads(ptx, fills) == []
    assert "selp.b64" in ptx


# -- a false refusal of the round: a record tile filled through witnesses. Numba's record
# copy stored an array of bytes, which LLVM split into byte stores without the witness
# store's tag; the compiled-form phase check saw writes by no witness. A record of 1, 2, 4, 8
# or 16 bytes is now stored as one integer of its size (``_tilebase.holder_store``; other
# sizes stay refused: tests/ptx/test_attacks19_ptx.py).

RECORDS = {
    "4": '[("x", np.float32)]',
    "8": '[("x", np.float32), ("y", np.float32)]',
    "16": '[("x", np.float64), ("y", np.int32), ("z", np.int32)]',
}

WITNESS_FILL = """
REC = np.dtype(FIELDS)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC]) -> None:
    w = thread.index_1d()
    t = ss.shared.tile(32, REC)
    t[thread.local_index()] = a[w]
    ss.block.sync()
    out[w] = t[31 - cuda.threadIdx.x].x
"""


@pytest.mark.parametrize("size", sorted(RECORDS))
def test_a_record_tile_filled_through_witnesses_is_accepted(tmp_path: Path, size: str) -> None:
    body = WITNESS_FILL.replace("FIELDS", RECORDS[size])
    assert "st.shared" in load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))


@pytest.mark.usefixtures("compiled_form_only")
@pytest.mark.parametrize("size", sorted(RECORDS))
def test_the_compiled_form_alone_accepts_it_and_refuses_a_read_before_the_barrier(
    tmp_path: Path, size: str
) -> None:
    body = WITNESS_FILL.replace("FIELDS", RECORDS[size])
    load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))
    racing = body.replace("    ss.block.sync()\n", "")
    with pytest.raises(ss.SafetyError, match="in the same barrier interval"):
        load_kernel_module(tmp_path, racing).k.ptx(cc=(9, 0))


# -- another false refusal of the round: a field of a nested record of the thread's own
# output element (``out[w].inner.x = v``), accepted like ``out[w].x = v``; the same store on
# an input's element stays refused.

NESTED_FIELD = """
INNER = np.dtype([("x", np.float32), ("y", np.float32)])
REC = np.dtype([("inner", INNER), ("n", np.int32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w].inner.x = a[w]
    out[w].inner.y = a[w] * np.float32(2)
    out[w].n = 7
"""

NESTED_FIELD_OF_INPUT = """
INNER = np.dtype([("x", np.float32), ("y", np.float32)])
REC = np.dtype([("inner", INNER), ("n", np.int32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], b: In[np.float32]) -> None:
    w = thread.index_1d()
    a[w].inner.x = b[w]
    out[w] = b[w]
"""


def test_a_nested_field_of_the_own_element_is_written(tmp_path: Path) -> None:
    assert "st.u8" in load_kernel_module(tmp_path, NESTED_FIELD).k.ptx(cc=(9, 0))


def test_a_nested_field_of_an_input_element_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ss.SafetyError, match=r"assigning `a\[w\]\.inner\.x` writes through a"):
        load_kernel_module(tmp_path, NESTED_FIELD_OF_INPUT)


LOCAL_PACKED = """
REC = np.dtype([("x", np.float32), ("y", np.float32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], n: np.int64) -> None:
    w = thread.index_1d()
    l = cuda.local.array(4, REC)
    l[n] = a[w]
    out[w] = l[n & 3].x
"""


def test_a_record_stored_into_a_local_array_claims_no_alignment_it_lacks(tmp_path: Path) -> None:
    # A local array of packed records starts at its element's ABI alignment (1): the one
    # integer a record is stored as must not be stored as an aligned 8-byte word there (a
    # shared tile starts at 16, where it is: RECORDS above, st.shared.u64).
    ptx = load_kernel_module(tmp_path, LOCAL_PACKED).k.ptx(cc=(9, 0))
    stores = re.findall(r"\bst\.local\.([\w.]+)\s+\[%rd\d+\]", ptx)
    assert "u8" in stores and "u64" not in stores, stores


# -- a third false refusal of the round: a field store through a @simtsafe.device helper
# given the output and the witness (``o[w].x = v``), refused at decoration while the kernel
# form was accepted. Now the decoration admits it on a parameter annotated DisjointSlice
# (wording only), and what decides for both forms is the compiled form
# (``lowering._recordstores``): a field store is compiled only on a record Numba typed as a
# witness subscript of a DisjointSlice (or a record field of one), on every path.

HELPER_HEAD = """
from simtsafe import ThreadIndex
REC = np.dtype([("x", np.float32), ("y", np.float32)])
INNER = np.dtype([("x", np.float32), ("y", np.float32)])
NREC = np.dtype([("inner", INNER), ("n", np.int32)])
CREC = np.dtype([("c", np.complex64), ("n", np.int32)])
"""

HELPER_FIELD = (
    HELPER_HEAD
    + """

@ss.device
def h(o: DisjointSlice[REC], w: ThreadIndex[Index1D], v: np.float32) -> None:
    o[w].x = v
    o[w].y = v * np.float32(2)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    h(out, w, a[w])
"""
)

KERNEL_FIELD = (
    HELPER_HEAD
    + """

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    v = a[w]
    out[w].x = v
    out[w].y = v * np.float32(2)
"""
)

HELPER_NESTED_FIELD = (
    HELPER_HEAD
    + """

@ss.device
def h(o: ss.DisjointSlice[NREC], w: ThreadIndex[Index1D], v: np.float32) -> None:
    o[w].inner.x = v
    o[w].inner.y = v * np.float32(2)
    o[w].n = 7


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[NREC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    h(out, w, a[w])
"""
)


def _helper_kernel(params: str, body: str, call: str, sig: str, pre: str = "") -> str:
    return (
        HELPER_HEAD
        + f"""

@ss.device
def h({params}) -> None:
{body}


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k({sig}) -> None:
    w = thread.index_1d()
{pre}    {call}
"""
    )


_OUT_IN = "out: DisjointSlice[np.float32], a: In[REC], b: In[np.float32]"
_OWN = "o: DisjointSlice[REC], w: ThreadIndex[Index1D], v: np.float32"
COMPILED_REFUSAL = "not of this thread's own output element"

#: name -> (kernel module, the message the refusal carries)
HELPER_FIELD_REFUSED: dict[str, tuple[str, str]] = {
    # an int index: the subscript of a DisjointSlice types only with a witness
    "helper-field-store-int-index": (
        _helper_kernel(
            "o: DisjointSlice[REC], i: int, v: np.float32",
            "    o[i].x = v",
            "h(out, 3, a[w])",
            "out: DisjointSlice[REC], a: In[np.float32]",
        ),
        r"is read only through a witness of that space \(got int64\)",
    ),
    # a witness of another space (a block-local one)
    "helper-field-store-local-witness": (
        _helper_kernel(
            _OWN,
            "    o[w].x = v",
            "h(out, thread.local_index(), a[w])",
            "out: DisjointSlice[REC], a: In[np.float32]",
        ),
        r"witness of that space \(got ThreadIndex\[Local1D\]\)",
    ),
    # the helper's parameter annotated In: refused at decoration, as in a kernel
    "in-record-field-store": (
        _helper_kernel(
            "o: In[REC], w: ThreadIndex[Index1D], v: np.float32",
            "    o[w].x = v",
            "h(a, w, b[w])\n    out[w] = b[w]",
            _OUT_IN,
        ),
        r"assigning `o\[w\]\.x` writes through a reference",
    ),
    # annotated DisjointSlice but given an input: the compiled form refuses it
    "helper-field-store-on-input": (
        _helper_kernel(_OWN, "    o[w].x = v", "h(a, w, b[w])\n    out[w] = b[w]", _OUT_IN),
        r"`o\[\.\.\.\]\.x` writes a field of an element of the input `o` \(read-only\), "
        + COMPILED_REFUSAL,
    ),
    # a rebound name is no longer the output it was given
    "helper-field-store-rebound": (
        _helper_kernel(
            _OWN + ", p: DisjointSlice[REC]",
            "    o = p\n    o[w].x = v",
            "h(out, w, a[w], out)",
            "out: DisjointSlice[REC], a: In[np.float32]",
        ),
        r"assigning `o\[w\]\.x` writes through a reference",
    ),
    # a part of a complex field: the kernel form's message
    "helper-field-store-complex-part": (
        _helper_kernel(
            "o: DisjointSlice[CREC], w: ThreadIndex[Index1D], v: np.float32",
            "    o[w].c.real = v",
            "h(out, w, a[w])",
            "out: DisjointSlice[CREC], a: In[np.float32]",
        ),
        r"assigning `o\[w\]\.c\.real` writes one part of a complex value",
    ),
    # a record of a shared tile (a helper gets a read-only tile)
    "helper-field-store-tile": (
        _helper_kernel(
            "t, w: ThreadIndex[Index1D], v: np.float32",
            "    t[w].x = v",
            "h(t, thread.local_index(), b[w])\n    out[w] = t[cuda.threadIdx.x].x",
            _OUT_IN,
            pre="    t = ss.shared.tile(32, REC)\n    ss.shared.fill_async(t, a, 0)\n"
            "    ss.shared.wait_all()\n    ss.block.sync()\n",
        ),
        r"assigning `t\[w\]\.x` writes through a reference",
    ),
    # a record handed to the helper: no witness in sight
    "helper-field-store-record-param": (
        _helper_kernel(
            "r, v: np.float32",
            "    r.x = v",
            "h(out[w], a[w])",
            "out: DisjointSlice[REC], a: In[np.float32]",
        ),
        r"assigning `r\.x` writes through a reference",
    ),
}


def _stores_and_choices(ptx: str) -> tuple[list[str], dict[str, str]]:
    """The global-or-generic stores' address registers, and each ``selp.b64`` result's
    predicate (a store of the thread's element goes to an address chosen between the
    element and the thread's scratch record by the witness's bound)."""
    stores = re.findall(r"\bst\.(?!local|param|shared)[\w.]+\s+\[(%rd\d+)(?:\+\d+)?\]", ptx)
    chosen = dict(re.findall(r"selp\.b64\s+(%rd\d+),\s*%rd\d+,\s*%rd\d+,\s*(%p\d+);", ptx))
    return stores, chosen


@pytest.mark.parametrize("body", [HELPER_FIELD, KERNEL_FIELD, HELPER_NESTED_FIELD])
def test_a_field_store_lands_at_the_witness_checked_address(tmp_path: Path, body: str) -> None:
    ptx = load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))
    stores, chosen = _stores_and_choices(ptx)
    assert stores, ptx
    assert all(reg in chosen for reg in stores), (stores, chosen)
    bounds = set(re.findall(r"setp\.lt\.u64\s+(%p\d+),", ptx))
    assert set(chosen.values()) <= bounds  # chosen by an unsigned bounds compare


def test_the_helper_form_compiles_as_the_kernel_form(tmp_path: Path) -> None:
    def memory(body: str) -> list[str]:
        """The loads and stores (kind and offset) and the address choices, but for the
        parameters and the scratch record's zeroing (scheduled differently)."""
        ptx = load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))
        found = re.findall(r"\b(ld\.[\w.]+|st\.[\w.]+|selp\.b64)\s[^;]*?(\+\d+)?\]?[,;]", ptx)
        return sorted(
            kind + offset for kind, offset in found if not kind.startswith(("ld.param", "st.local"))
        )

    assert memory(HELPER_FIELD) == memory(KERNEL_FIELD)


@pytest.mark.parametrize("name", sorted(HELPER_FIELD_REFUSED))
def test_a_field_store_on_anything_else_stays_refused(tmp_path: Path, name: str) -> None:
    body, message = HELPER_FIELD_REFUSED[name]
    with pytest.raises(ss.SafetyError, match=message):
        load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))


@pytest.fixture
def record_stores_unchecked_at_decoration(monkeypatch: pytest.MonkeyPatch) -> None:
    """The decoration's field-store rule forgotten: only the compiled form decides."""
    from simtsafe.decoration import _rewrite

    monkeypatch.setattr(_rewrite._Checker, "_own_record_field", lambda self, node: True)


COMPILED_ONLY_REFUSED = {
    "in-annotated helper": HELPER_FIELD_REFUSED["in-record-field-store"][0],
    "record parameter": HELPER_FIELD_REFUSED["helper-field-store-record-param"][0],
    "shared tile": HELPER_FIELD_REFUSED["helper-field-store-tile"][0],
    "kernel input": HELPER_HEAD
    + """

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC], b: In[np.float32]) -> None:
    w = thread.index_1d()
    a[w].x = b[w]
    out[w] = b[w]
""",
    "output or input by branch": HELPER_HEAD
    + """

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[REC], b: In[np.float32]) -> None:
    w = thread.index_1d()
    r = out[w]
    if b[w] > 0:
        r = a[w]
    r.x = b[w]
""",
    "local array": HELPER_HEAD
    + """

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[REC]) -> None:
    w = thread.index_1d()
    l = cuda.local.array(2, REC)
    l[0].x = a[w].x
    out[w] = l[0].x
""",
}


@pytest.mark.usefixtures("record_stores_unchecked_at_decoration")
@pytest.mark.parametrize("name", sorted(COMPILED_ONLY_REFUSED))
def test_the_compiled_form_alone_refuses_a_field_store_off_the_own_element(
    tmp_path: Path, name: str
) -> None:
    mod = load_kernel_module(tmp_path, COMPILED_ONLY_REFUSED[name])
    with pytest.raises(ss.SafetyError, match=COMPILED_REFUSAL):
        mod.k.ptx(cc=(9, 0))


@pytest.mark.usefixtures("record_stores_unchecked_at_decoration")
def test_the_compiled_form_alone_accepts_the_own_element_and_unsafe_regions(
    tmp_path: Path,
) -> None:
    for body in (HELPER_FIELD, HELPER_NESTED_FIELD, KERNEL_FIELD):
        load_kernel_module(tmp_path, body).k.ptx(cc=(9, 0))
    unsafe = COMPILED_ONLY_REFUSED["kernel input"].replace(
        "    a[w].x = b[w]\n",
        '    with ss.unsafe("SAFETY: test: the input is scratch the host discards"):\n'
        "        a[w].x = b[w]\n",
    )
    assert "st." in load_kernel_module(tmp_path, unsafe).k.ptx(cc=(9, 0))


HELPER_FORMS = {
    "helper calling a helper": """
@ss.device
def h2(o: DisjointSlice[REC], w: ThreadIndex[Index1D], v: np.float32) -> None:
    o[w].y = v


@ss.device
def h(o: DisjointSlice[REC], w: ThreadIndex[Index1D], v: np.float32) -> None:
    o[w].x = v
    h2(o, w, v)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    h(out, w, a[w])
""",
    "grid-stride loop in the helper": """
@ss.device
def h(o: DisjointSlice[REC], a: In[np.float32]) -> None:
    for w in thread.grid_stride(o):
        o[w].x = a[w]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    h(out, a)
""",
    "2D output": """
@ss.device
def h(o: DisjointSlice2D[REC], w: ThreadIndex[Index2D], v: np.float32) -> None:
    o[w].x = v


@ss.kernel(contract=ss.LaunchContract(domain=2, block=(8, 4, 1)))
def k(out: DisjointSlice2D[REC], a: In2D[np.float32]) -> None:
    w = thread.index_2d()
    h(out, w, np.float32(1))
""",
    "a record handed to a helper, in its unsafe region": """
@ss.device
def h(r, v: np.float32) -> None:
    with ss.unsafe("SAFETY: test: r is the caller's own output element"):
        r.x = v


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    h(out[w], a[w])
""",
}


@pytest.mark.parametrize("name", sorted(HELPER_FORMS))
def test_other_helper_forms_store_the_field(tmp_path: Path, name: str) -> None:
    ptx = load_kernel_module(tmp_path, HELPER_HEAD + HELPER_FORMS[name]).k.ptx(cc=(9, 0))
    assert re.search(r"\bst\.(?!local|param|shared)[\w.]+\s+\[%rd\d+", ptx), ptx
