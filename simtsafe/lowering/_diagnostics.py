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
from ._fillrule import SECOND_CALL

__all__ = ["translate_simulator_error", "translate_typing_error"]


_LOCATION = re.compile(r'File "([^"]+)", line (\d+)')
_SIMTSAFE_LINE = re.compile(r"simtsafe: (.*)")
_NO_IMPL = re.compile(r">>> (.*)")
_INVALID_USE = re.compile(r"Invalid use of (.*?) with parameters \((.*)\)")
_UNKNOWN_ATTR = re.compile(r"Unknown attribute '([^']+)' of type (.*)")
#: Terminal colour codes: Numba highlights its messages when colorama is installed.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

#: What each simtsafe value supports, for messages about an operation it does not.
_SUPPORTS = {
    "DisjointSlice": (
        "a DisjointSlice (an output) supports only s[w] = v and s[w] with a witness of its "
        "space, len(s), s.size, s.shape, s.ndim, and s.unchecked inside simtsafe.unsafe"
    ),
    "In": (
        "an In[...] input is a read-only array: index it (a[i], a[w]) to get an element, and "
        "read len(a), a.shape, a.size, a.ndim; functions such as math.sqrt take its elements, "
        "not the array"
    ),
    "AppendBuffer": (
        "an AppendBuffer supports w = buf.claim(), buf[w] = v and buf[w] with that witness, "
        "len(buf), buf.size, buf.shape"
    ),
    "ThreadIndex": (
        "a witness (ThreadIndex) has no arithmetic, comparison or conversion: it only indexes "
        "DisjointSlices and inputs. Use w.index / w.row / w.col / w.x / w.y / w.z for a plain "
        "int (which can read inputs but no longer index a DisjointSlice). A bounds guard such "
        "as `if i < out.size:` is not needed: a write through a witness outside its output "
        "does nothing; to test it, `w.in_bounds(out)`"
    ),
}


def _operation(text: str) -> str | None:
    """The operation Numba could not type, as ``name(arg types)``."""
    found = _NO_IMPL.search(text)
    if found is not None:
        return found.group(1).strip()
    found = _INVALID_USE.search(text)
    if found is not None:
        return f"{found.group(1).strip()}({found.group(2).strip()})"
    found = _UNKNOWN_ATTR.search(text)
    if found is not None:
        return f".{found.group(1)} of {found.group(2).strip()}"
    return None


def _involved(operation: str) -> list[str]:
    """The simtsafe values among an operation's operands, most specific first."""
    kinds: list[str] = []
    if "ThreadIndex[" in operation:
        kinds.append("ThreadIndex")
    if "DisjointSlice[" in operation:
        kinds.append("DisjointSlice")
    if "AppendBuffer[" in operation:
        kinds.append("AppendBuffer")
    if "readonly array(" in operation:
        kinds.append("In")
    return kinds


#: For an operation on numba-cuda's bf16 scalar, the type of an int-index read of a bf16 array.
_BF16_SCALAR = (
    "`__nv_bfloat16` is numba-cuda's bfloat16 scalar, what an int-index read `x[k]` of a "
    "bfloat16 array gives, and Python's float()/int() and most functions do not take it. Widen "
    "it first: `np.float32(x[k])` or `np.float64(x[k])` (then int(...) and math functions "
    "apply), or read the element through a witness (`x[w]` is its exact float32); "
    "docs/porting.md section 11"
)

_NOT_DEFINED = re.compile(r"Variable '([^']+)' is not defined")
#: What Numba's lowering says of an object it would allocate with its runtime (NRT), which
#: CUDA kernels do not have, and the message for it.
_NEEDS_NRT = "NRT required but not enabled"
_NO_HEAP = (
    "an object Numba allocates at run time (a string, list, dict or set built in the "
    "kernel) needs Numba's runtime, which CUDA kernels do not have: hold a few values in a "
    "tuple, `(a, b)`, and a thread-private array in `cuda.local.array(n, dtype)` (n a "
    "constant)"
)

_UNBOUND_NAME = (
    "`{name}` has no value where it is read: the function assigns `{name}` later (or "
    "elsewhere), and a name assigned anywhere in a function is local to the whole function, "
    "so this line does not read the module's `{name}` (Python raises UnboundLocalError "
    "here). Give the local variable another name, or bind it before this line"
)

_RUN_TIME_STRING = (
    "a kernel cannot build a string at run time (`{operation}`: an f-string or str() of a "
    "value known only at run time); an assert or raise message must be a constant string. "
    'Use a string literal (`assert cond, "what went wrong"`); to see the value, write '
    "it to an output"
)


def _run_time_string(operation: str) -> bool:
    """Whether Numba failed on building a string from a run-time value (an f-string)."""
    return operation.startswith(("str(", "format(", "format_value(")) or (
        operation.startswith("add(") and "Literal[str]" in operation
    )


#: Numba's text for a constant index past the end of a tuple (``a.shape[k]`` included).
_PAST_TUPLE = "tuple index out of range"
_SHAPE_AXIS = re.compile(r"\b([A-Za-z_]\w*)\.shape\[\s*(\d+)\s*\]")
_PAST_SHAPE = (
    "`{name}.shape[{axis}]` names an axis `{name}` does not have: its annotation gives it "
    "fewer than {axes} axes (In / DisjointSlice / Accumulate are 1D, In2D / DisjointSlice2D "
    "2D, In3D / DisjointSlice3D 3D). Annotate the array with its number of axes; an array of "
    "more than 3 axes (NCHW) goes in as a 3D view made on the host, "
    "`x.reshape(n * c, h, w)` with `In3D`. (If `{name}` has the axis, another constant index "
    "on this line is past the end of its tuple.)"
)
_PAST_CONSTANT = (
    "a constant index past the end of a tuple (a tuple of n values has positions 0 to n - 1, "
    "and -n to -1)"
)


def _past_tuple(source_line: str | None) -> str:
    """The message for a constant tuple index out of range, naming ``a.shape[k]`` if the line
    has one (several: the one with the largest axis, the likeliest to be past the end)."""
    found = _SHAPE_AXIS.findall(source_line or "")
    if not found:
        return _PAST_CONSTANT
    name, axis = max(found, key=lambda m: int(m[1]))
    return _PAST_SHAPE.format(name=name, axis=axis, axes=int(axis) + 1)


_VEC_RUN_TIME_N = (
    "vec.load's run length n must be a compile-time int in (2, 4, 8); got a value known only "
    "at run time. Write a literal (vec.load(a, j, 4)) or a global constant"
)


def _second_call(message: str, lineno: int | None) -> tuple[str, int | None]:
    """A refusal of the second call of a pair of fills at that call's line, without the note
    that carried it (``_fillrule.second_call``)."""
    found = SECOND_CALL.search(message)
    if found is None:
        return message, lineno
    return message[: found.start()] + message[found.end() :], int(found.group(1))


_UNIFY = re.compile(r"Cannot unify (.+?) and (.+?) for '")
#: simtsafe's types that a variable of two paths may not merge (their spaces, claims, arrays)
_OWNED_TYPES = ("ThreadIndex", "Appended", "AppendBuffer", "DisjointSlice", "RowChunk", "Shared")


def _unify(a: str, b: str) -> str:
    """Numba's 'Cannot unify' (one variable, two types on two paths), in words and with the fix."""
    message = (
        f"one variable holds `{a}` on one path and `{b}` on another, and Numba gives a "
        "variable one type"
    )
    if any(t in a or t in b for t in _OWNED_TYPES):
        return message + (
            ": a witness belongs to the space, claim or buffer that made it (a view to its "
            "array), so one name cannot carry either of two. Use each where it is made (write "
            "through a claim's witness in the branch that claims it: `if c: s = out.claim(); "
            "out[s] = v`), or give each its own name"
        )
    return message + ": give each its own name, or convert both to one type"


def translate_typing_error(exc: BaseException, name: str, filename: str) -> BaseException:
    """Turn a Numba typing error in a simtsafe kernel into a SafetyError at the user's line.

    A rejection by one of simtsafe's typing rules carries its own text
    (``simtsafe: ...``). Anything else Numba could not type is named by the
    operation and its operand types, with what each simtsafe value involved
    (an output, an input, a witness) does support.
    """
    text = _ANSI.sub("", str(exc))
    lineno: int | None = None
    located = typing_error_location(exc)
    if located is not None and located[0] == filename:
        lineno = located[1]
    else:
        for match in _LOCATION.finditer(text):
            if match.group(1).endswith(filename.rsplit("/", 1)[-1]):
                lineno = int(match.group(2))
    simtsafe = _SIMTSAFE_LINE.search(text)
    operation = _operation(text)
    not_defined = _NOT_DEFINED.search(text)
    if simtsafe is not None:
        message = simtsafe.group(1).strip()
        message, lineno = _second_call(message, lineno)
    elif not_defined is not None:
        message = _UNBOUND_NAME.format(name=not_defined.group(1))
    elif operation is not None and _run_time_string(operation):
        message = _RUN_TIME_STRING.format(operation=operation)
    elif _NEEDS_NRT in text:
        message = _NO_HEAP
    elif operation is not None and operation.startswith(("_vec_load(", "_vec_load_runs(")):
        message = _VEC_RUN_TIME_N  # the typer matches a constant n only (lowering/_vec)
    elif operation is not None:
        involved = _involved(operation)
        message = f"Numba cannot type `{operation}`" + (
            f": {_SUPPORTS[involved[0]]}"
            if involved
            else f": {_BF16_SCALAR}"
            if "__nv_bfloat16" in operation
            else ""
        )
    elif (unify := _UNIFY.search(text)) is not None:
        message = _unify(unify.group(1), unify.group(2))
    elif _PAST_TUPLE in text and "static-get-item" in text:
        source = linecache.getline(filename, lineno) if lineno is not None else None
        message = _past_tuple(source)
    else:
        lines = [
            line.strip()
            for line in text.splitlines()
            if line.strip() and not line.strip().startswith(("Failed in", "During:", "File "))
        ]
        message = "Numba cannot compile this line" + (f": {lines[0]}" if lines else "")
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
    The kernel was typed for the CUDA target before it ran (the compile
    worker), so an ``AttributeError``/``TypeError`` here is the simulator's
    own limit (a Numba feature it does not model), not a compile failure.
    """
    text = str(exc)
    thread = ""
    match = _SIM_PREFIX.match(text)
    if match:
        thread = match.group(1)
        text = text[match.end() :]
    text = text.removeprefix("simtsafe: ")
    rule = (exc.rule or "typing") if isinstance(exc, SafetyError) else "simulator"
    if isinstance(exc, UnboundLocalError):
        rule = "unbound-local"
        text = (
            f"{text}: a name used on a path that never bound it. The simulator raises here, as "
            "Python does; the compiled kernel does not -- Numba gives such a number the value "
            "0 on the GPU (a witness, tile or view that may be unbound is refused at compile). "
            "Bind it on every path before the use"
        )
    elif not isinstance(exc, SafetyError):
        text = (
            f"{type(exc).__name__} in the kernel's code on the simulator: {text} (the "
            "simulator cannot run this line; check it on the GPU or with simtsafe.sim.check)"
        )
    filename: str | None = None
    lineno: int | None = None
    tb = exc.__traceback__
    while tb is not None:
        code_file = tb.tb_frame.f_code.co_filename
        if not code_file.startswith(_PACKAGE_DIR) and "/numba" not in code_file:
            filename, lineno = code_file, tb.tb_lineno
        tb = tb.tb_next
    if isinstance(exc, SafetyError):
        text, lineno = _second_call(text, lineno)
    line = linecache.getline(filename, lineno) if filename and lineno else None
    suffix = f" (simulated thread {thread})" if thread else ""
    return SafetyError(
        f"kernel {name!r}: {text}{suffix}",
        kernel=name,
        rule=rule,
        filename=filename,
        lineno=lineno,
        source_line=line or None,
    )
