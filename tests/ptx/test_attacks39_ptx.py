"""Attack round 39 (tests/kernels/attacks39.py) on the real target (NVVM, no GPU): sync
dependence that needs two successors of a branch to reach the phi (2f16c64).

No unsafe kernel accepted: 7 refused shapes and 1 accepted shape held. MESSAGE 3 (LOW,
fixed: loop exits in program order): the loop exit a message names depended on
PYTHONHASHSEED. MESSAGE 1 (LOW, fixed: the index is named only where its IndexError is the
branch's one way out before the collective): a run-time tuple index in a thread branch's
region was blamed for a refusal that another exit (or the collective's own place inside the
branch) causes. MESSAGE 2 (LOW, xfail): a
``continue`` that skips a uniform exit test is explained by that test, not the ``continue``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.kernels import assert_ptx_accepted, line_of, ptx_refusal
from tests.kernels.attacks39 import ACCEPTED, MESSAGES, REFUSED

pytestmark = pytest.mark.ptx

CC = (9, 0)
_SCOPE = "`block.sum` needs every thread of the block to reach it"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_held_shapes_are_refused_at_the_deciding_branch(tmp_path: Path, name: str) -> None:
    source, *markers = REFUSED[name]
    message = ptx_refusal(tmp_path, source)
    assert _SCOPE in message
    lines = [line_of(tmp_path, marker) for marker in markers]
    assert any(re.search(rf"\bline {n}\b", message) for n in lines), message


_NAMED_EXIT = """
import re, sys, tempfile
from pathlib import Path
from tests.kernels import ptx_refusal
from tests.kernels.attacks39 import REFUSED
message = ptx_refusal(Path(tempfile.mkdtemp()), REFUSED["outer-reenters-inner"][0])
print(re.search(r"\\(the exit at line \\d+\\)", message).group(0))
"""


def test_the_exit_named_does_not_depend_on_the_hash_seed() -> None:
    named = set()
    for seed in ("6", "8"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "SIMTSAFE_CACHE_DIR": tempfile.mkdtemp()}
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        done = subprocess.run(
            [sys.executable, "-c", _NAMED_EXIT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        named.add(done.stdout.strip())
    assert len(named) == 1, named


@pytest.mark.xfail(
    strict=True,
    reason="MESSAGE 2: a `continue` skipping a uniform exit test is explained by the test",
)
def test_a_continue_that_skips_the_exit_test_is_named(tmp_path: Path) -> None:
    message = ptx_refusal(tmp_path, REFUSED["continue-skips-exit-test"][0])
    assert re.search(rf"\bline {line_of(tmp_path, '# EXIT')}\b", message), message


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_a_tuple_index_that_is_not_the_cause_is_not_named(tmp_path: Path, name: str) -> None:
    message = ptx_refusal(tmp_path, MESSAGES[name])
    assert _SCOPE in message
    assert "the tuple index at line" not in message, message
    assert re.search(rf"\bline {line_of(tmp_path, '# EXIT')}\b", message), message


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_held_shapes_are_accepted(tmp_path: Path, name: str) -> None:
    assert_ptx_accepted(tmp_path, ACCEPTED[name])
