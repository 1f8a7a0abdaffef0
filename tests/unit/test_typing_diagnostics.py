"""Numba's typing errors become SafetyErrors at the user's line, in plain text."""

from __future__ import annotations

from pathlib import Path

from numba.core.errors import TypingError

from simtsafe.lowering._diagnostics import translate_typing_error


def test_colour_codes_of_numba_are_not_in_the_message(tmp_path: Path) -> None:
    """With colorama installed Numba wraps its messages in terminal codes; none reach the user."""
    source = tmp_path / "mod.py"
    source.write_text("def k(out):\n    out[0] = 1\n")
    red, reset = "\x1b[1m\x1b[31m", "\x1b[0m"
    raised = TypingError(
        f"{red}Failed in cuda mode pipeline{reset}\n"
        f"{red}simtsafe: a DisjointSlice is written only through a witness{reset}{reset}{reset}\n"
        f'File "{source}", line 2:'
    )
    err = translate_typing_error(raised, "k", str(source))
    assert (
        str(err).splitlines()[0] == "kernel 'k': a DisjointSlice is written only through a witness"
    )
    assert err.lineno == 2


def test_an_untyped_operation_is_named_without_colour_codes(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("def k(out):\n    out[0] = 1\n")
    raised = TypingError(
        "\x1b[1mNo implementation of function Function(<built-in function setitem>) found "
        "for signature:\n \n >>> setitem(int64, int64, int64)\x1b[0m"
    )
    err = translate_typing_error(raised, "k", str(source))
    assert "\x1b" not in str(err) and "setitem(int64, int64, int64)" in str(err)
