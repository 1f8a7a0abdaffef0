"""The CUDA target's verdict for the simulator: a compile worker process.

With ``NUMBA_ENABLE_CUDASIM=1`` Numba replaces its CUDA compiler by the
simulator's, in this process, for good. But what simtsafe promises -- a
kernel runs on the simulator exactly when it compiles for the GPU -- needs
the CUDA target's typing and the compiled-form checks, and neither needs a
GPU. So at a kernel's first simulator compile, simtsafe sends the kernel
(its function, by value, with the globals and closure values it uses) to a
worker process started *without* the simulator, which decorates it again,
types and lowers it for the CUDA target (no NVVM: the checks read the LLVM
IR) and answers with the verdict: accepted, or the ``SafetyError`` a GPU
compile would raise.

One worker per process, started on first use (about two seconds: it imports
Numba's CUDA target), serving requests one at a time. If it cannot start or
compile for a reason that is not the kernel's (no CUDA compiler libraries
installed), ``verdict`` says so and the caller falls back to the source-level
checks, saying that it did.

Protocol: length-prefixed pickles over the worker's stdin/stdout.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["Unavailable", "verdict"]

_HEADER = struct.Struct("<Q")
_TIMEOUT = 300.0


class Unavailable(RuntimeError):
    """The worker cannot give a verdict (no CUDA target here); not the kernel's fault."""


def _send(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _recv(stream: IO[bytes]) -> Any:
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError("the compile worker closed its pipe")
    (n,) = _HEADER.unpack(head)
    data = stream.read(n)
    return pickle.loads(data)


@contextmanager
def _by_value(modules: set[str]) -> Iterator[None]:
    """Pickle the functions of ``modules`` by value (they may not be importable there)."""
    from numba import cloudpickle

    registered: list[Any] = []
    for name in modules:
        module = sys.modules.get(name)
        if module is None or name in ("__main__",) or name.startswith(("simtsafe", "numba")):
            continue
        try:
            cloudpickle.register_pickle_by_value(module)  # type: ignore[no-untyped-call]
        except ValueError:  # already registered
            continue
        registered.append(module)
    try:
        yield
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)  # type: ignore[no-untyped-call]


class _Worker:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.broken: str | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
        path = [p for p in sys.path if p]
        env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *path])
        return subprocess.Popen(
            [sys.executable, "-c", "from simtsafe.lowering._compileworker import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )

    def ask(self, payload: dict[str, Any]) -> Any:
        with self.lock:
            if self.broken is not None:
                raise Unavailable(self.broken)
            for attempt in range(2):
                if self.proc is None or self.proc.poll() is not None:
                    self.proc = self._start()
                proc = self.proc
                assert proc.stdin is not None and proc.stdout is not None
                try:
                    _send(proc.stdin, payload)
                    reply = _recv(proc.stdout)
                except (EOFError, BrokenPipeError, OSError) as exc:
                    self.proc = None
                    if attempt == 1:
                        self.broken = f"the compile worker stopped ({exc})"
                        raise Unavailable(self.broken) from None
                    continue
                if reply.get("unavailable"):
                    self.broken = str(reply["unavailable"])
                    raise Unavailable(self.broken)
                return reply
        raise Unavailable("the compile worker did not answer")  # pragma: no cover


_WORKER = _Worker()


def verdict(obj: Any, layouts: tuple[str, ...], modules: set[str]) -> dict[str, Any]:
    """Ask the worker to compile ``obj`` (a Kernel) for the CUDA target and check it.

    Returns:
        ``{"ok": True}``, or ``{"ok": False, "error": (class name, message, fields)}``.

    Raises:
        Unavailable: no verdict can be had here (the reason says why).
    """
    from numba import cloudpickle

    with _by_value(modules):
        try:
            payload = cloudpickle.dumps((obj, layouts))  # type: ignore[no-untyped-call]
        except Exception as exc:  # an object of the kernel's scope cannot travel
            raise Unavailable(
                f"the kernel could not be sent to the compile worker ({exc})"
            ) from None
    reply: dict[str, Any] = _WORKER.ask({"kernel": payload, "path": [p for p in sys.path if p]})
    return reply


# --------------------------------------------------------------------------- the worker side


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
                _recv(inp)
            except EOFError:
                return
            _send(out, {"unavailable": problem})
    while True:
        try:
            payload = _recv(inp)
        except EOFError:
            return
        try:
            # The caller's path first: unpickling may import the kernel's modules, and a
            # test may have put their folder on sys.path after the worker started.
            for entry in payload["path"]:
                if entry not in sys.path:
                    sys.path.append(entry)
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
        _send(out, reply)


def main() -> None:
    """Entry point of the worker process."""
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    if importlib.util.find_spec("numba") is None:  # pragma: no cover
        raise SystemExit(2)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the protocol
    _serve(sys.stdin.buffer, out)
