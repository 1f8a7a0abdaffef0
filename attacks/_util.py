"""Attack helpers: compile a kernel from inline source; PTX and the IR NVVM receives."""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simtsafe.lowering import simtsafe_typing  # noqa: E402
from simtsafe.lowering._compat import assume_compute_capability, compile_kernel_ptx  # noqa: E402
from tests.kernels import load_kernel_module  # noqa: E402


def load(src: str):
    return load_kernel_module(Path(tempfile.mkdtemp()), src)


def compiled(k, cc=(9, 0)):
    """(ptx, [ir texts], entry) of a simtsafe kernel, through the checked path (k.ptx())."""
    ptx = k.ptx(cc=cc)  # runs every check
    build = k._recheck()
    with assume_compute_capability(cc), simtsafe_typing():
        p2, texts, entry = compile_kernel_ptx(
            build.function, k.argtypes(None), cc, **k.options.ptx(**k._bounds())
        )
    return ptx, texts, entry


def sreg_lines(text: str) -> list[str]:
    return [l.strip() for l in text.splitlines() if "llvm.nvvm.read.ptx.sreg" in l and "call" in l]


def body(ptx: str) -> str:
    return ptx.split(".entry", 1)[1]
