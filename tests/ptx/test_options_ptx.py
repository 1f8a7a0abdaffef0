"""Compiler options on @simtsafe.kernel / @simtsafe.device: numba.cuda.jit's names, in the PTX."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import load_kernel_module

pytestmark = pytest.mark.skipif(ss.SIMULATOR, reason="PTX needs the CUDA target")

_KERNEL = """
{helper}
@ss.kernel(contract=ss.LaunchContract(domain=1, {shape}){options})
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = {expr}
"""


def _ptx(
    tmp_path: Path, options: str = "", shape: str = "max_threads=128", helper: str = ""
) -> str:
    expr = "half(a[i])" if helper else "a[i] / (a[i] + np.float32(1))"
    mod = load_kernel_module(
        tmp_path, _KERNEL.format(options=options, shape=shape, helper=helper, expr=expr)
    )
    return str(mod.k.ptx())


@pytest.fixture(scope="module")
def default_ptx(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _ptx(tmp_path_factory.mktemp("default"))


def test_defaults_are_numbas(default_ptx: str) -> None:
    assert "div.rn.f32" in default_ptx
    assert ".loc" not in default_ptx and "__local_depot" not in default_ptx
    assert ".maxnreg" not in default_ptx and ".minnctapersm" not in default_ptx


def test_fastmath_reaches_the_ptx(tmp_path: Path) -> None:
    assert "div.approx.ftz.f32" in _ptx(tmp_path, ", fastmath=True")


def test_lineinfo_reaches_the_ptx(tmp_path: Path) -> None:
    ptx = _ptx(tmp_path, ", lineinfo=True")
    assert ".loc" in ptx and ".file" in ptx


def test_opt_false_reaches_the_ptx(tmp_path: Path) -> None:
    assert "__local_depot" in _ptx(tmp_path, ", opt=False")  # unoptimized: locals on the stack


def test_debug_reaches_the_ptx(tmp_path: Path) -> None:
    assert ".debug_info" in _ptx(tmp_path, ", debug=True, opt=False")


def test_max_registers_reaches_the_ptx(tmp_path: Path) -> None:
    assert ".maxnreg 40" in _ptx(tmp_path, ", max_registers=40")


def test_launch_bounds_reach_the_ptx(tmp_path: Path) -> None:
    ptx = _ptx(tmp_path, ", launch_bounds=(128, 4)")
    assert ".maxntid 128, 1, 1" in ptx and ".minnctapersm 4" in ptx


def test_device_options_reach_the_helper_code(tmp_path: Path) -> None:
    helper = """
@ss.device(fastmath=True)
def half(x):
    return x / (x + np.float32(1))
"""
    assert "div.approx" in _ptx(tmp_path, helper=helper)  # the helper's own fast-math flags


@pytest.mark.parametrize(
    ("options", "shape", "fragment"),
    [
        (", launch_bounds=(128, 2)", "block=128", "fixes block=(128, 1, 1)"),
        (", launch_bounds=256", "max_threads=128", "contradicts the contract's max_threads=128"),
        (", debug=True", "max_threads=128", "debug=True needs opt=False"),
        (", debug=True, opt=False, lineinfo=True", "max_threads=128", "not both"),
        (", max_registers=300", "max_threads=128", "outside 1..255"),
        (", fastmath=1", "max_threads=128", "fastmath= takes True or False"),
        (", inline=True", "max_threads=128", "unknown option(s) inline"),
    ],
)
def test_options_that_cannot_compile_are_refused(
    tmp_path: Path, options: str, shape: str, fragment: str
) -> None:
    with pytest.raises(TypeError) as info:
        _ptx(tmp_path, options, shape)
    assert fragment in str(info.value)
    assert "'k'" in str(info.value) or "@simtsafe.kernel" in str(info.value)


def test_helper_refuses_kernel_only_options(tmp_path: Path) -> None:
    with pytest.raises(TypeError) as info:
        load_kernel_module(tmp_path, "@ss.device(max_registers=32)\ndef h(x):\n    return x\n")
    assert "unknown option(s) max_registers" in str(info.value)


def test_options_are_part_of_the_declaration(tmp_path: Path) -> None:
    # A factory with the same values but other options makes another kernel.
    mod = load_kernel_module(
        tmp_path,
        """
def make(fast, scale=2.0):
    @ss.kernel(fastmath=fast)
    def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
        out[thread.index_1d()] = a[thread.index_1d()] * scale
    return k
""",
    )
    assert mod.make(True) is mod.make(True)
    assert mod.make(True) is not mod.make(False)
    assert mod.make(True).options.fastmath and not mod.make(False).options.fastmath
