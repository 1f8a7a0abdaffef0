"""cache=True on a GPU: a second process loads the kernel (PTX and cubin) and compiles nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.cache_probe import probe

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]


KERNEL = """
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

@ss.device
def twice(x):
    return x * np.float32(2)

# a relation over two names: its parsed names are a set, whose repr follows string hashing
CONTRACT = ss.LaunchContract(domain=1, block=128, requires=("out.shape[0] == a.shape[0]",))

@ss.kernel(contract=CONTRACT, cache=True)
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    s = ss.block.sum(a[i])
    out[i] = twice(s) + n
"""


def test_second_process_launches_without_compiling(tmp_path: Path) -> None:
    (tmp_path / "kmod.py").write_text(KERNEL)
    cold = probe(tmp_path, tmp_path / "cache", "launch")
    warm = probe(tmp_path, tmp_path / "cache", "launch")
    assert cold["compiles"] >= 1 and cold["checks"] == 1, cold
    assert warm["compiles"] == 0 and warm["checks"] == 0, warm
    assert warm["digest"] == cold["digest"]  # the same results from the loaded cubin
