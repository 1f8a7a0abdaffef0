"""Every scalar kind of the table compiles as a kernel parameter (the ABI the launch packs)."""

from __future__ import annotations

import pytest

from simtsafe.lowering._scalars import SCALARS
from tests.kernels import load_kernel_module


@pytest.mark.parametrize("name", sorted(SCALARS))
def test_scalar_parameter_compiles(tmp_path, name):  # type: ignore[no-untyped-def]
    expr = "s.real" if name.startswith("complex") else ("1 if s else 0" if name == "bool" else "s")
    mod = load_kernel_module(
        tmp_path,
        f"""
        @ss.kernel
        def k(out: DisjointSlice[np.float32], s: np.{name if name != "bool" else "bool_"}) -> None:
            i = thread.index_1d()
            out[i] = np.float32({expr})
        """,
    )
    ptx = mod.k.ptx()
    entry_params = ptx.split(".entry", 1)[1].split(")", 1)[0].split(",")
    extra = 2 if name.startswith("complex") else 1
    # 7 parameters for the 1D output array, then the scalar (a complex takes two):
    # exactly what lowering/_scalars packs.
    assert len(entry_params) == 7 + extra
    assert len(SCALARS[name].pack(1)) == extra
