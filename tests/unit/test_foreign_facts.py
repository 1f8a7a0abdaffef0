"""CuPy / PyTorch launch facts read natively equal the facts from their CAI dict.

Property tests over generated shapes, strides (contiguous, sliced, transposed,
negative for CuPy), dtypes, offsets and empty arrays, on stand-ins that
mirror each library's ``__cuda_array_interface__`` (tests/fake_arrays.py;
tests/gpu/test_execution_gpu.py repeats the properties on the real
libraries). Also: the memo fingerprint changes with every in-place change.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simtsafe as ss
from simtsafe.host import _argfacts
from simtsafe.host._argfacts import array_facts, make_facts, native_facts
from simtsafe.host._foreign import BF16_TYPESTR, dtype_name, guard
from simtsafe.lowering._launching import pack_array
from tests import fake_arrays as fa

PARAM = types.SimpleNamespace(name="x", annotation="In[float32]")


@pytest.fixture(autouse=True)
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    fa.install(monkeypatch)
    monkeypatch.setattr(_argfacts, "several_devices", lambda: False)


def _layout(draw: Any, itemsize: int, negative: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    kind = draw(st.sampled_from(["c", "sliced", "transposed", "random"]))
    c = []
    step = itemsize
    for n in reversed(shape):
        c.append(step)
        step *= max(n, 1)
    strides = tuple(reversed(c))
    if kind == "sliced":
        strides = tuple(s * draw(st.integers(1, 3)) for s in strides)
    elif kind == "transposed":
        strides = tuple(reversed(strides))
    elif kind == "random":
        low = -4 if negative else 0
        strides = tuple(itemsize * draw(st.integers(low, 8)) for _ in shape)
    return shape, strides


@st.composite
def cupy_arrays(draw: Any) -> Any:
    dtype = np.dtype(draw(st.sampled_from(["float32", "float64", "int32", "int16", "uint8"])))
    shape, strides = _layout(draw, dtype.itemsize, negative=True)
    ptr = 0x7F0000000000 + dtype.itemsize * draw(st.integers(0, 4096))
    return fa.make_cupy(ptr, shape, strides, dtype)


@st.composite
def tensors(draw: Any) -> Any:
    dtype = draw(st.sampled_from(["float32", "float64", "int32", "int16", "uint8", "bool"]))
    itemsize = getattr(fa.TORCH, dtype).itemsize
    shape, strides = _layout(draw, itemsize, negative=False)
    ptr = 0x7E0000000000 + itemsize * draw(st.integers(0, 4096))
    return fa.make_torch(ptr, shape, tuple(s // itemsize for s in strides), dtype)


@settings(max_examples=400, deadline=None)
@given(x=cupy_arrays(), itemsize=st.sampled_from([1, 2, 4, 8]), stream=st.sampled_from([0, 0x55]))
def test_cupy_native_facts_equal_cai_facts(x: Any, itemsize: int, stream: int) -> None:
    fa.set_cupy_stream(stream)
    fast = native_facts(x, itemsize)
    assert fast is not None
    assert fast == array_facts(x, PARAM, "k", itemsize)  # type: ignore[arg-type]
    assert fast.stream == (stream or 1)


@settings(max_examples=400, deadline=None)
@given(x=tensors(), itemsize=st.sampled_from([1, 2, 4, 8]), stream=st.sampled_from([0, 0x66]))
def test_torch_native_facts_equal_cai_facts(x: Any, itemsize: int, stream: int) -> None:
    fa.set_torch_stream(stream)
    fast = native_facts(x, itemsize)
    assert fast is not None
    assert fast == array_facts(x, PARAM, "k", itemsize)  # type: ignore[arg-type]
    assert fast.stream == (stream or 1)  # PyTorch's current stream; 0 -> legacy (1)


def test_one_dimensional_fast_path_packs_like_numba() -> None:
    for n in (0, 1, 7, 1024):
        facts = make_facts(0x1000, (n,), None, "<f4", False, 4, False, None)
        assert facts.packed == pack_array(0x1000, (n,), (4,), n, 4)
        assert facts == make_facts(0x1000, (n,), (4,), "<f4", False, 4, False, None)


def test_tensor_that_requires_grad_is_refused_by_the_cai_path_not_the_reader() -> None:
    t = fa.make_torch(0x1000, (8,), (1,), "float32", requires_grad=True)
    assert native_facts(t, 4) is None
    with pytest.raises(ss.ArgumentTypeError, match="requires grad.*detach"):
        array_facts(t, PARAM, "k", 4)  # type: ignore[arg-type]


def test_bfloat16_tensor_is_read_as_bfloat16_not_taken_for_float16() -> None:
    # PyTorch's CAI exports bfloat16 as "<f2" (float16's); the tensor's dtype decides.
    import ml_dtypes

    assert BF16_TYPESTR == np.dtype(ml_dtypes.bfloat16).str
    t = fa.make_torch(0x1000, (8,), (1,), "bfloat16")
    native = native_facts(t, 2)
    assert native is not None and native.typestr == BF16_TYPESTR
    _argfacts.FACTS_CACHE.clear()
    assert array_facts(t, PARAM, "k", 2).typestr == BF16_TYPESTR  # type: ignore[arg-type]
    strided = fa.make_torch(0x1000, (4, 8), (1, 4), "bfloat16")
    facts = native_facts(strided, 2)
    assert facts is not None and facts.typestr == BF16_TYPESTR
    assert facts == array_facts(strided, PARAM, "k", 2)  # type: ignore[arg-type]
    f16 = fa.make_torch(0x1000, (8,), (1,), "float16")
    assert array_facts(f16, PARAM, "k", 2).typestr == "<f2"  # type: ignore[arg-type]
    assert dtype_name(BF16_TYPESTR) == "bfloat16" and dtype_name("<f2") == "float16"


def test_cpu_tensor_is_not_a_device_array() -> None:
    t = fa.make_torch(0x1000, (8,), (1,), "float32", is_cuda=False)
    assert native_facts(t, 4) is None
    with pytest.raises(ss.ArgumentTypeError, match="must be a device array"):
        array_facts(t, PARAM, "k", 4)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    ["pointer", "shape", "strides", "dtype", "requires_grad", "host"],
)
def test_memo_fingerprint_sees_every_in_place_change_of_a_tensor(change: str) -> None:
    t = fa.make_torch(0x1000, (4, 8), (8, 1), "float32")
    g = guard(t)
    assert g is not None
    fingerprint, before, _reader = g
    assert fingerprint(t) == before
    if change == "pointer":
        t._ptr += 64  # set_() onto other storage
    elif change == "shape":
        t.shape = (2, 8)  # resize_()
    elif change == "strides":
        t._strides = (1, 4)  # as_strided_()
    elif change == "dtype":
        t.dtype = fa.TORCH.int32  # type: ignore[attr-defined]
    elif change == "requires_grad":
        t.requires_grad = True
    else:  # .data = t.cpu(): host memory, another address
        t.is_cuda, t._ptr = False, 0x5600_0000_0000
    assert fingerprint(t) != before


@pytest.mark.parametrize("change", ["pointer", "shape", "dtype"])
def test_memo_fingerprint_sees_every_in_place_change_of_a_cupy_array(change: str) -> None:
    x = fa.make_cupy(0x2000, (16,), (4,), np.float32)
    g = guard(x)
    assert g is not None
    fingerprint, before, reader = g
    assert fingerprint(x) == before
    if change == "pointer":
        x.data = fa._Memory(0x3000)
    elif change == "shape":
        x.shape, x.strides = (4, 4), (16, 4)  # x.shape = (4, 4)
    else:
        x.dtype = np.dtype(np.int32)
    assert fingerprint(x) != before


def test_memo_stream_reader_follows_the_current_stream() -> None:
    x = fa.make_cupy(0x2000, (16,), (4,), np.float32)
    g = guard(x)
    assert g is not None
    read = g[2]
    assert read() == 1
    fa.set_cupy_stream(0x77)
    assert read() == 0x77


def test_other_objects_have_no_native_reader_or_guard() -> None:
    class Exporter:
        __cuda_array_interface__ = {
            "shape": (4,),
            "typestr": "<f4",
            "data": (0x1000, False),
            "version": 3,
            "stream": 0x99,
        }

    e = Exporter()
    assert native_facts(e, 4) is None and guard(e) is None
    assert array_facts(e, PARAM, "k", 4).stream == 0x99  # type: ignore[arg-type]


def test_memo_entry_with_tensors_matches_only_while_nothing_changed() -> None:
    from simtsafe.host._launch import _Memo, matcher_factory

    out = fa.make_torch(0x1000, (8,), (1,), "float32")
    a = fa.make_torch(0x2000, (8,), (1,), "float32")
    args = (out, a, np.float32(2))
    facts = tuple(native_facts(x, 4) for x in (out, a))
    guards = {i: g for i, g in enumerate(guard(x) for x in (out, a)) if g is not None}
    make = matcher_factory(3, (0, 1), (2,))
    memo = _Memo(args, (0, 1), (2,), None, (), (), facts, guards, "k", lambda: None, make)  # type: ignore[arg-type]
    # Fingerprinted arrays: the launch path's match is the loop that re-reads them, not the
    # generated matcher (which compares identities and scalars only).
    assert memo.match == memo.matches
    assert memo.match(args)
    # The producer stream is re-read at each launch, once per device (not once per tensor).
    assert memo.streams == () and len(memo.readers) == 1
    fa.set_torch_stream(0x77)
    assert [read() for read in memo.readers] == [0x77]
    assert not memo.match((out, a, np.float32(3)))  # another scalar
    assert not memo.match((out, fa.make_torch(0x2000, (8,), (1,), "float32"), np.float32(2)))
    a.shape = (4,)  # a.resize_(4): same object, same pointer
    assert not memo.match(args)
    a.shape = (8,)
    assert memo.match(args)
    a.layout = object()  # e.g. turned sparse: its attributes raise or differ -> no match

    def broken() -> int:
        raise RuntimeError("sparse tensors do not have is_contiguous")

    a.is_contiguous = broken  # type: ignore[method-assign]
    assert not memo.match(args)
