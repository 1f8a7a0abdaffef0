"""cache=True on the simulator: the compile worker's verdict is kept; a second process asks none."""

from __future__ import annotations

from pathlib import Path

from tests.kernels.cache_probe import probe, run_probe

KERNEL = """
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread

# a relation over two names: its parsed names are a set, whose repr follows string hashing
CONTRACT = ss.LaunchContract(domain=1, block=128, requires=("out.shape[0] == a.shape[0]",))

@ss.kernel(contract=CONTRACT, cache=True)
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    out[i] = ss.block.sum(a[i]) + n
"""


def test_second_simulator_process_asks_no_compile_worker(tmp_path: Path) -> None:
    (tmp_path / "kmod.py").write_text(KERNEL)
    cold = probe(tmp_path, tmp_path / "cache", "simulator")
    warm = probe(tmp_path, tmp_path / "cache", "simulator")
    assert cold["worker"] == 1, cold
    assert warm["worker"] == 0, warm
    assert warm["digest"] == cold["digest"]


#: A constant whose repr (and a ``__name__`` its instances see) hide its value; its
#: ``str`` is what Numba writes into the IR.
HIDDEN = """
class K(int):
    __name__ = "K"
    __str__ = int.__repr__
    def __repr__(self):
        return "K"
FLAG = K({flag})
"""

STEERED = """
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread
import cfg

@ss.kernel(contract=ss.LaunchContract(domain=1, block=128), cache=True)
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    w = thread.index_1d()
    c = 0
    if cfg.FLAG:
        c = w.index
    if c % 2 == 0:
        ss.block.sync()
    out[w] = a[w]
"""


def test_a_constant_is_keyed_by_its_value_not_its_spelling(tmp_path: Path) -> None:
    """The second process's constant makes the barrier divergent: its verdict is its own.

    An int subclass is never keyed (it may compile to another value than Python's), so
    each process asks for its own verdict; the first one's is never reused.
    """
    (tmp_path / "kmod.py").write_text(STEERED)
    (tmp_path / "cfg.py").write_text(HIDDEN.format(flag=0))
    first = run_probe(tmp_path, tmp_path / "cache", "simulator")
    assert first.returncode == 0, first.stderr
    (tmp_path / "cfg.py").write_text(HIDDEN.format(flag=1))
    second = run_probe(tmp_path, tmp_path / "cache", "simulator")
    assert second.returncode != 0 and "needs every thread of the block" in second.stderr
