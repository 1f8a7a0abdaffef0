"""numba-cuda's C++ shims for float16, bfloat16 and fp8 arithmetic: which return status 0.

numba-cuda lowers the arithmetic, comparisons and conversions of its ``float16``,
``__nv_bfloat16`` and fp8 scalars (its bindings of ``cuda_fp16.h``, ``cuda_bf16.h``,
``cuda_fp8.h``) to calls of ``extern "C" __device__ int NAME(T &retval, ...)`` functions
whose C++ source each binding module writes into its ``shim_stream`` as it lowers a use,
and links at the end (LTO-IR or PTX). Their bodies are not in the LLVM IR the compiled-form
checks read, so a call's status -- Numba's calling convention: nonzero raises -- would be
unknown, and ``np.float32(x[k])`` of a bf16 or ``v * v`` of a float16 before a block
collective was refused as a possible thread-dependent exit (porting round 20).

The source linked is what decides: :func:`status_zero_shims` reads each stream and takes a
function whose only ``return`` is ``return 0;``, whose body has no inline assembly, barrier,
trap, exit or loop, and whose parameters are at most one level of pointers (so it writes only
what its operands point to: ``retval``, or an operand of ``operator+=``). ``lowering._irform`` renames the calls of those functions
``__ss.shim.NAME`` in the analysed copy, which ``verify._divergence`` reads as a call whose
status is 0 and that writes its operands' memory. A shim with a pointer to a pointer (the
``atomicAdd`` bindings: ``__half **address``) stays an unknown call.
"""

from __future__ import annotations

import re
import sys

__all__ = ["SHIM_PREFIX", "status_zero_shims"]

#: The analysed copy's name for a call of a status-0 shim (``__ss.shim.NAME``).
SHIM_PREFIX = "__ss.shim."

#: numba-cuda's binding modules that link C++ shims (read only when already imported: a
#: kernel that used none of them calls no shim).
_BINDINGS = (
    "numba.cuda._internal.cuda_fp16",
    "numba.cuda._internal.cuda_bf16",
    "numba.cuda._internal.cuda_fp8",
)
#: ``extern "C" __device__ int NAME(params) {`` -- a shim's head.
_HEAD_RE = re.compile(r'extern\s+"C"\s+__device__\s+int\s+([A-Za-z_]\w*)\s*\(([^)]*)\)\s*\{')
_RETURN_RE = re.compile(r"\breturn\b([^;]*);")
#: What no status-0 shim's body may hold: inline assembly, a barrier, a trap or an exit.
_CONTROL_RE = re.compile(r"\basm\b|sync|trap|\bexit\b|\bgoto\b|\bwhile\b|\bfor\b")

_seen: dict[str, tuple[str, frozenset[str]]] = {}


def _body(text: str, start: int) -> str | None:
    """The text between the ``{`` before ``start`` and its matching ``}``; None if unmatched."""
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return None


def _parse(source: str) -> frozenset[str]:
    """The functions of one shim source that return 0 on every path and take no pointer to a
    pointer."""
    found: set[str] = set()
    refused: set[str] = set()
    for m in _HEAD_RE.finditer(source):
        name, params = m.group(1), m.group(2)
        body = _body(source, m.end())
        returns = [r.strip() for r in _RETURN_RE.findall(body)] if body is not None else []
        if (
            body is None
            or "**" in params
            or returns != ["0"]
            or "return" in body.replace("return 0;", "")
            or _CONTROL_RE.search(body)
        ):
            refused.add(name)
        else:
            found.add(name)
    return frozenset(found - refused)  # a name defined twice must pass both times


def status_zero_shims() -> frozenset[str]:
    """The shims written so far in this process (so every one a lowered kernel calls) whose
    status is 0 by their source; memoized by each stream's text."""
    names: set[str] = set()
    for module in _BINDINGS:
        stream = getattr(sys.modules.get(module), "shim_stream", None)
        getvalue = getattr(stream, "getvalue", None)
        if getvalue is None:
            continue
        source = getvalue()
        if not isinstance(source, str):
            continue
        seen = _seen.get(module)
        if seen is None or seen[0] != source:
            seen = (source, _parse(source))
            _seen[module] = seen
        names |= seen[1]
    return frozenset(names)
