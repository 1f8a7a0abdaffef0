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

Protocol: length-prefixed pickles over the worker's stdin/stdout; the worker's
side is ``simtsafe._workermain`` (an entry point above every part: it imports
simtsafe itself).
"""

from __future__ import annotations

import importlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["Unavailable", "recv", "send", "verdict"]

_HEADER = struct.Struct("<Q")
_TIMEOUT = 300.0


class Unavailable(RuntimeError):
    """The worker cannot give a verdict (no CUDA target here); not the kernel's fault."""


def send(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def recv(stream: IO[bytes]) -> Any:
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


def _import_attribute(module: str, name: str) -> Any:
    """The other end of ``_Pickler.reducer_override``: the library's own object."""
    return getattr(importlib.import_module(module), name)


def _dumps(obj: Any, by_value: set[str]) -> bytes:
    """cloudpickle, but a library's module-level objects travel by name.

    Numba's dispatchers pickle as a *new* dispatcher rebuilt from their Python
    function; the allow-list trusts ``numba.cuda.random``'s functions (and
    other library objects) by identity, so they must arrive as themselves.
    """
    import io

    from numba import cloudpickle

    class _Pickler(cloudpickle.Pickler):
        def reducer_override(self, value: Any) -> Any:
            func = getattr(value, "py_func", None)
            module = getattr(func if func is not None else value, "__module__", None)
            name = getattr(func if func is not None else value, "__name__", None)
            if (
                isinstance(module, str)
                and isinstance(name, str)
                and module not in by_value
                and not isinstance(value, type)
                and getattr(sys.modules.get(module), name, None) is value
                and func is not None
            ):
                return (_import_attribute, (module, name))
            return super().reducer_override(value)  # type: ignore[no-untyped-call]

    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)  # type: ignore[no-untyped-call]
    return buffer.getvalue()


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
            [sys.executable, "-m", "simtsafe._workermain"],
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
                    send(proc.stdin, payload)
                    reply = recv(proc.stdout)
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


def verdict(
    obj: Any,
    layouts: tuple[str, ...],
    modules: set[str],
    user_modules: set[str] = frozenset(),  # type: ignore[assignment]
    sources: set[str] = frozenset(),  # type: ignore[assignment]
) -> dict[str, Any]:
    """Ask the worker to compile ``obj`` (a Kernel) for the CUDA target and check it.

    ``modules`` hold the kernel's and its helpers' functions (pickled by value);
    ``user_modules`` are the user's modules their scopes name, sent by value
    with the attributes this process has (where one cannot be pickled, there
    is no verdict: ``Unavailable``); ``sources`` the files whose text the worker is given
    (a notebook cell's source exists only in this process's ``linecache``).

    Returns:
        ``{"ok": True}``, or ``{"ok": False, "error": (class name, message, fields)}``.

    Raises:
        Unavailable: no verdict can be had here (the reason says why).
    """
    import linecache

    with _by_value(modules | user_modules):
        try:
            payload = _dumps((obj, layouts), modules | user_modules)
        except Exception as exc:  # an object of the kernel's scope cannot travel
            # By reference instead, the worker would check the modules as imported
            # afresh, not as this process runs them: no verdict rather than a wrong one.
            raise Unavailable(
                f"the kernel, or a module of yours it reads ({', '.join(sorted(user_modules))}), "
                f"could not be sent to the compile worker ({exc})"
                if user_modules
                else f"the kernel could not be sent to the compile worker ({exc})"
            ) from None
    lines = {name: linecache.getlines(name) for name in sources}
    request = {"kernel": payload, "path": [p for p in sys.path if p], "sources": lines}
    reply: dict[str, Any] = _WORKER.ask(request)
    return reply
