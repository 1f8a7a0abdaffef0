"""Attack round 19 (tests/kernels/attacks19.py), compiled form (NVVM, no GPU): a record stored
into a tile or local array as one integer (``_tilebase.holder_store``, added for attack round
18's false refusal) was addressed by a getelementptr over that integer, which steps by the
integer's allocation size -- 16 bytes for a 12-byte record, 4 for a 3-byte one -- while its
reads, its bounds and the simulator step by the record's size: stores past the tile and into
a thread's other variables. Only records of 1, 2, 4, 8 or 16 bytes are stored so now (their
integer is exactly their size); other records keep Numba's copy: a tile of them stays
refused when filled through witnesses (the compiled-form phase check cannot match Numba's
byte stores to the witness), and a local array of them is stored at its own stride."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module
from tests.kernels.attacks19 import FINDINGS

pytestmark = pytest.mark.ptx

TILES = ("tile-record12-witness-store", "dynamic-tile-record12-store", "tile2d-record12-pad-store")


@pytest.mark.parametrize("name", TILES)
def test_a_tile_of_odd_sized_records_filled_by_witnesses_stays_refused(
    tmp_path: Path, name: str
) -> None:
    with pytest.raises(ss.SafetyError, match="is written through a witness at line 14 and written"):
        load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=(9, 0))


@pytest.mark.parametrize(
    ("name", "size"), [("local-record12-store", 12), ("local-record3-store", 3)]
)
def test_a_local_array_of_odd_sized_records_is_stored_at_their_stride(
    tmp_path: Path, name: str, size: int
) -> None:
    ptx = load_kernel_module(tmp_path, FINDINGS[name]).k.ptx(cc=(9, 0))
    scales = re.findall(r"mul\.(?:lo\.s64|wide\.[us]32)\s+%rd\d+, %r\w+, (\d+);", ptx)
    assert scales.count(str(size)) >= 2, scales  # the store's index and the reads'
    wrong = {12: "16", 3: "4"}[size]
    assert wrong not in scales, scales


COMPLEX_PART = """
REC = np.dtype([("c", np.complex64), ("n", np.int32)])


@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[REC], a: In[np.float32]) -> None:
    w = thread.index_1d()
    out[w].c.real = a[w]
"""


def test_a_part_of_a_complex_field_is_refused_with_the_whole_store_named(tmp_path: Path) -> None:
    # the round's raw NotImplementedError from Numba, now the rule's message
    with pytest.raises(ss.SafetyError, match=r"a complex field is written whole: `out\[w\]\.c ="):
        load_kernel_module(tmp_path, COMPLEX_PART)
    whole = COMPLEX_PART.replace("out[w].c.real = a[w]", "out[w].c = complex(a[w], np.float32(0))")
    assert ".entry" in load_kernel_module(tmp_path, whole).k.ptx(cc=(9, 0))
