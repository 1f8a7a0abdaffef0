"""Numba's 'Cannot unify' (one variable, two types on two paths) in words, with the fix
(lowering/_diagnostics): for simtsafe's owned values (witnesses, buffers, views) the rule that
a witness belongs to what made it; for others, two names or one type."""

from __future__ import annotations

from simtsafe.lowering._diagnostics import _UNIFY, _unify


def test_the_two_types_are_read_from_numbas_text() -> None:
    text = (
        "Cannot unify ThreadIndex[Appended[out]] and ThreadIndex[Appended[out2]] for "
        "'$phi328.0.2', defined at /tmp/m.py (10)"
    )
    found = _UNIFY.search(text)
    assert found is not None
    assert found.groups() == ("ThreadIndex[Appended[out]]", "ThreadIndex[Appended[out2]]")


def test_a_witness_of_two_claims_is_told_where_to_write() -> None:
    message = _unify("ThreadIndex[Appended[out]]", "ThreadIndex[Appended[out2]]")
    assert message.startswith(
        "one variable holds `ThreadIndex[Appended[out]]` on one path and "
        "`ThreadIndex[Appended[out2]]` on another"
    )
    assert "a witness belongs to the space, claim or buffer that made it" in message
    assert "`if c: s = out.claim(); out[s] = v`" in message


def test_plain_values_are_told_to_take_two_names() -> None:
    message = _unify("int64", "UniTuple(int64 x 2)")
    assert message.endswith("give each its own name, or convert both to one type")
    assert "witness" not in message
