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


def test_an_operation_on_the_bf16_scalar_names_the_widening(tmp_path: Path) -> None:
    # port20 BAD_ERRORS float_of_bf16: `float(x[k])` of a bf16 int-index read
    source = tmp_path / "mod.py"
    source.write_text("def k(out, x):\n    out[0] = float(x[0])\n")
    raised = TypingError(
        "No implementation of function Function(<class 'float'>) found for signature:\n \n"
        " >>> float(__nv_bfloat16)\n"
    )
    err = translate_typing_error(raised, "k", str(source))
    assert str(err).startswith(
        "kernel 'k': Numba cannot type `float(__nv_bfloat16)`: `__nv_bfloat16` is numba-cuda's "
        "bfloat16 scalar, what an int-index read `x[k]` of a bfloat16 array gives"
    )
    assert "`np.float32(x[k])` or `np.float64(x[k])`" in str(err) and "`x[w]`" in str(err)
    # an operation on another type keeps the plain text
    other = translate_typing_error(TypingError(" >>> float(unicode_type)\n"), "k", str(source))
    assert str(other) == "kernel 'k': Numba cannot type `float(unicode_type)`"
