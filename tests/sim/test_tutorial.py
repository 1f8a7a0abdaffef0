"""docs/tutorial.md runs as written: its ```python blocks, in order, as one module.

The blocks are concatenated into a real ``.py`` file (the kernel decorator
reads source, so kernels must live in a file) and imported on the simulator.
The tutorial ends its examples with ``assert`` statements comparing against
numpy, and its error examples assert the error class, so an import that
completes is a passing run.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[str]:
    """The bodies of the ```python fenced blocks of a Markdown text, in order."""
    return _BLOCK.findall(text)


def test_tutorial_has_code() -> None:
    blocks = python_blocks(TUTORIAL.read_text())
    assert len(blocks) >= 8, f"expected the tutorial's code blocks, found {len(blocks)}"


def test_tutorial_runs_top_to_bottom(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = "\n\n".join(python_blocks(TUTORIAL.read_text()))
    name = f"ss_tutorial_{uuid.uuid4().hex}"
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    out = capsys.readouterr().out
    # The printed messages are the ones the tutorial shows.
    for fragment in (
        "PreparedLaunch(kernel='vecadd', grid=(3, 1, 1), block=(128, 1, 1))",
        "BlockShapeMismatch: kernel 'vecadd' requires block (128, 1, 1) by its launch contract",
        "RequiresViolation: kernel 'vecadd' requires a.size == out.size by its launch contract, "
        "but a.size == out.size is 299 == 300.",
        "ArgumentTypeError: kernel 'vecadd': argument 'a' is a host numpy array",
        "AliasingError: kernel 'vecadd': output 'out' overlaps the memory of argument 'a'",
        "SafetyError: kernel 'shifted_copy': a DisjointSlice is written only through a "
        "ThreadIndex witness of its space (Index1D)",
        "UnsafeRegionRequired: kernel 'racy': `cuda.syncthreads` is allowed only inside",
        "UnsafeRegionRequired: kernel 'vecadd': kernel.unchecked[...] launches without any",
    ):
        assert fragment in out, f"missing from the tutorial's output: {fragment!r}\n{out}"
    # The shown source lines are the module's own lines.
    text = path.read_text().splitlines()
    assert "out[i.index + 1] = a[i]" in text[_line(out, "shifted_copy") - 1]
    assert "cuda.syncthreads()" in text[_line(out, "racy") - 1]


def _line(out: str, kernel: str) -> int:
    match = re.search(rf"kernel {kernel!r}.*?\n  File \"[^\"]+\", line (\d+)", out, re.DOTALL)
    assert match is not None, f"no location printed for {kernel!r}"
    return int(match.group(1))
