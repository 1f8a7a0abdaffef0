"""cache=True: a second process compiles nothing for an unchanged kernel (the PTX path, no GPU).

Each run is a fresh process (tests/kernels/cache_probe.py) with its own cache
directory; the probe counts Numba compiles and compiled-form checks. Any change
to what decides the code or the verdict -- the kernel's source, a helper's
source in another file, the contract, an option, a closure value of a factory
-- is a miss.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels.cache_probe import probe, run_probe

pytestmark = pytest.mark.skipif(ss.SIMULATOR, reason="the PTX path needs the CUDA target")


HELPERS = """
import numpy as np
import simtsafe as ss

@ss.device
def scale(x):
    return x * np.float32({factor})
"""

KERNEL = """
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread
from helpers import scale

def make(offset):
    # a relation over two names: its parsed names are a set, whose repr follows string hashing
    contract = ss.LaunchContract(domain=1, block={block}, requires=("out.shape[0] == a.shape[0]",))
    @ss.kernel(contract=contract, cache=True{options})
    def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
        i = thread.index_1d()
        s = ss.block.sum(a[i])
        out[i] = scale(s) + offset
    return k

k = make({offset})
"""


def _write(
    folder: Path, factor: str = "2", block: int = 128, options: str = "", offset: str = "1.0"
) -> None:
    (folder / "helpers.py").write_text(HELPERS.format(factor=factor))
    (folder / "kmod.py").write_text(KERNEL.format(block=block, options=options, offset=offset))


def test_second_process_compiles_nothing_and_any_change_misses(tmp_path: Path) -> None:
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    _write(src)
    cold = probe(src, cache, "ptx")
    assert cold["compiles"] >= 1 and cold["checks"] == 1, cold  # the kernel and its helper
    warm = probe(src, cache, "ptx")
    assert warm["compiles"] == 0 and warm["checks"] == 0, warm
    assert warm["digest"] == cold["digest"]
    changes = {
        "helper source (another file)": {"factor": "3"},
        "contract": {"block": 64},
        "option": {"options": ", fastmath=True"},
        "closure value": {"offset": "2.0"},
    }
    for what, change in changes.items():
        _write(src, **change)  # type: ignore[arg-type]
        missed = probe(src, cache, "ptx")
        assert missed["compiles"] >= 1 and missed["checks"] == 1, (what, missed)
        assert missed["digest"] != cold["digest"] or what == "option", what
        again = probe(src, cache, "ptx")
        assert again["compiles"] == 0, (what, again)


def test_a_refused_kernel_is_never_cached(tmp_path: Path) -> None:
    src, cache = tmp_path / "src", tmp_path / "cache"
    src.mkdir()
    (src / "helpers.py").write_text("")
    (src / "kmod.py").write_text(
        """
import numpy as np
from numba import cuda
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

@ss.kernel(contract=ss.LaunchContract(domain=1, block=128), cache=True)
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    if cuda.threadIdx.x < 3:
        ss.block.sync()
"""
    )
    for _ in range(2):
        run = run_probe(src, cache, "ptx")
        assert run.returncode != 0 and "needs every thread of the block" in run.stderr
    assert not list(cache.rglob("*.pkl"))
