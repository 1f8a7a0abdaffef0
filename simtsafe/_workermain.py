"""The compile worker's process (``python -m simtsafe._workermain``), for the simulator.

Started by ``simtsafe.lowering._compileworker`` without ``NUMBA_ENABLE_CUDASIM``:
it imports simtsafe with Numba's CUDA target, then answers each request (a
kernel, pickled by value) with its verdict -- accepted, or the ``SafetyError``
compiling it for the GPU raises -- or says that no verdict can be had here.
An entry point above every part of the package, like ``__main__``.
"""

from __future__ import annotations

import linecache
import os
import pickle
import sys
from typing import IO, Any

from .lowering._compileworker import recv, send


def _environment_problem(exc: BaseException) -> str | None:
    """A message when ``exc`` says the CUDA compiler libraries are missing."""
    text = f"{type(exc).__name__}: {exc}"
    for marker in ("DynamicLibNotFound", "NvvmSupportError", "libnvvm", "NVVM", "nvrtc"):
        if marker in text:
            return (
                "the CUDA target needs the CUDA compiler libraries (NVVM); install them with "
                f'`pip install "simtsafe[cu13]"` ({text.splitlines()[0][:200]})'
            )
    return None


def _serve(inp: IO[bytes], out: IO[bytes]) -> None:
    try:
        import simtsafe  # noqa: F401  - the CUDA target, registered once
    except BaseException as exc:  # pragma: no cover - depends on the installation
        problem = _environment_problem(exc) or f"simtsafe does not import here ({exc})"
        while True:
            try:
                recv(inp)
            except EOFError:
                return
            send(out, {"unavailable": problem})
    while True:
        try:
            payload = recv(inp)
        except EOFError:
            return
        try:
            # The caller's path first: unpickling may import the kernel's modules, and a
            # test may have put their folder on sys.path after the worker started.
            for entry in payload["path"]:
                if entry not in sys.path:
                    sys.path.append(entry)
            for name, lines in payload.get("sources", {}).items():
                if lines:  # the caller's text of the file, as its linecache has it
                    linecache.cache[name] = (sum(map(len, lines)), None, lines, name)
            obj, layouts = pickle.loads(payload["kernel"])
            obj._compiled_verdict(layouts)
            reply: dict[str, Any] = {"ok": True}
        except BaseException as exc:
            trouble = _environment_problem(exc)
            if trouble is not None:
                reply = {"unavailable": trouble}
            elif hasattr(exc, "rule") and hasattr(exc, "message"):
                fields = dict(getattr(exc, "fields", {}))
                fields.pop("kernel", None)
                reply = {
                    "ok": False,
                    "error": (
                        type(exc).__name__,
                        exc.message,
                        {
                            "kernel": getattr(exc, "kernel", None),
                            "rule": exc.rule,
                            "filename": getattr(exc, "filename", None),
                            "lineno": getattr(exc, "lineno", None),
                            "source_line": getattr(exc, "source_line", None),
                            **fields,
                        },
                    ),
                }
            else:
                reply = {
                    "ok": False,
                    "error": (
                        "SafetyError",
                        f"the kernel does not compile for the CUDA target: "
                        f"{type(exc).__name__}: {exc}",
                        {"rule": "typing"},
                    ),
                }
        send(out, reply)


def main() -> None:
    """Entry point of the worker process."""
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the protocol
    _serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
