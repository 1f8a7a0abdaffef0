"""The helper a compiled-form message names for an inlined instruction (verify/_verdict):
the nearest inlined call whose helper's module may hold the instruction's file."""

from __future__ import annotations

from simtsafe.verify._verdict import _defined_in, _helper_name

EXP = "_ZN5numba4cuda7cpython9cmathimpl8exp_implB2v5B100cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3Effbb"
BUTTERFLY = "_ZN43ss_testmod_6e5db54581d245ba95790158f66519e09butterflyB2v4B100cw51cXTLSUwv1sEx"
CLOSURE = "_ZN5numba4cuda7cpython7numbers16complex_div_impl12_3clocals_3e11complex_divB2v4B100cw5"
USER = "_ZN8examples6decode4gemv8dot_halfB2v1B100cw5E"


def test_names() -> None:
    assert _helper_name(EXP) == "exp_impl"
    assert _helper_name(BUTTERFLY) == "butterfly"
    assert _helper_name(CLOSURE) == "complex_div"
    assert _helper_name("plain") == "plain"


def test_a_library_helper_does_not_hold_a_line_of_the_users_module() -> None:
    user_file = "/tmp/t/ss_testmod_6e5db54581d245ba95790158f66519e0.py"
    assert _defined_in(BUTTERFLY, user_file)
    assert not _defined_in(EXP, user_file)
    assert _defined_in(EXP, "/venv/site-packages/numba_cuda/numba/cuda/cpython/cmathimpl.py")
    assert _defined_in(CLOSURE, "/venv/numba_cuda/numba/cuda/cpython/numbers.py")
    assert not _defined_in(CLOSURE, "/venv/numba_cuda/numba/cuda/cpython/cmathimpl.py")
    assert _defined_in(USER, "/work/repo/examples/decode/gemv.py")
    assert not _defined_in(USER, "/work/repo/examples/decode/attention.py")


def test_a_name_that_says_nothing_may_hold_any_line() -> None:
    assert _defined_in("plain", "/any/file.py")
    assert _defined_in("_ZN4onlyB2v1E", "/any/file.py")
