"""Errors about kernel code, lifted out of Numba's and the simulator's reports.

A Numba typing error that involves simtsafe's types becomes a ``SafetyError``
at the user's file and line; a ``SafetyError`` raised inside a simulated
thread (which the simulator re-raises without its fields) gets its kernel
name and line back.
"""

from __future__ import annotations

import linecache
import re

from .._errors import SafetyError
from ._compat import typing_error_location

__all__ = ["translate_simulator_error", "translate_typing_error"]


_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')
_SIMTSAFE_LINE = re.compile(r"simtsafe: (.*)")
_NO_IMPL = re.compile(r">>> (.*)")


def translate_typing_error(exc: BaseException, name: str, filename: str) -> BaseException:
    """Turn a Numba typing error that involves simtsafe into a SafetyError at the user's line."""
    text = str(exc)
    lineno: int | None = None
    located = typing_error_location(exc)
    if located is not None and located[0] == filename:
        lineno = located[1]
    else:
        for match in _LOCATION.finditer(text):
            lineno = int(match.group(2))
    simtsafe = _SIMTSAFE_LINE.search(text)
    signature = _NO_IMPL.search(text)
    if simtsafe is not None:
        message = simtsafe.group(1).strip()
    elif "ThreadIndex[" in text:
        message = (
            "no arithmetic, comparison or conversion on a witness"
            + (f" ({signature.group(1).strip()})" if signature else "")
            + ": a ThreadIndex only indexes DisjointSlices and inputs. Use w.index / w.row / "
            "w.col / w.x / w.y / w.z for a plain int (which can read inputs but no longer index "
            "a DisjointSlice)"
        )
    elif "DisjointSlice[" in text:
        message = (
            "unsupported operation on a DisjointSlice"
            + (f" ({signature.group(1).strip()})" if signature else "")
            + ": a DisjointSlice supports s[w] = v and s[w] with a witness, len(s), s.size, "
            "s.shape, and s.unchecked inside simtsafe.unsafe"
        )
    elif "readonly array" in text and "setitem" in text:
        message = "cannot store into a read-only input: In[...] parameters are read-only"
    else:
        return exc
    line = linecache.getline(filename, lineno) or None if lineno is not None else None
    return SafetyError(
        f"kernel {name!r}: {message}",
        kernel=name,
        rule="typing",
        filename=filename,
        lineno=lineno,
        source_line=line,
    )


_SIM_PREFIX = re.compile(r"^(tid=\[[^\]]*\] ctaid=\[[^\]]*\]):\s*")
_PACKAGE_DIR = __file__.rsplit("/", 2)[0]  # the simtsafe package


def translate_simulator_error(exc: BaseException, name: str) -> SafetyError:
    """Turn an error raised inside a simulated thread into a SafetyError at the user's line.

    The simulator re-raises a thread's exception as ``type(e)(message)``,
    which drops structured fields; the traceback still holds the user's frame.
    A plain ``AttributeError``/``TypeError`` there means the kernel used a
    value in a way the compiled kernel would refuse when it is typed.
    """
    text = str(exc)
    thread = ""
    match = _SIM_PREFIX.match(text)
    if match:
        thread = match.group(1)
        text = text[match.end() :]
    text = text.removeprefix("simtsafe: ")
    if not isinstance(exc, SafetyError):
        text = (
            f"{type(exc).__name__} in the kernel's code on the simulator: {text} (on the GPU, "
            "the kernel fails to compile)"
        )
    filename: str | None = None
    lineno: int | None = None
    tb = exc.__traceback__
    while tb is not None:
        code_file = tb.tb_frame.f_code.co_filename
        if not code_file.startswith(_PACKAGE_DIR) and "/numba" not in code_file:
            filename, lineno = code_file, tb.tb_lineno
        tb = tb.tb_next
    line = linecache.getline(filename, lineno) if filename and lineno else None
    suffix = f" (simulated thread {thread})" if thread else ""
    return SafetyError(
        f"kernel {name!r}: {text}{suffix}",
        kernel=name,
        rule=(exc.rule or "typing") if isinstance(exc, SafetyError) else "simulator",
        filename=filename,
        lineno=lineno,
        source_line=line or None,
    )
