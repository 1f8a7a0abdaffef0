"""An output annotated ``DisjointSlice2D[T, Space]`` (porting round 15: the natural guess for a
2D output of another space) is refused at decoration with what the aliases take and the
spelling that works; ``DisjointSlice[T, Columns]`` is accepted. With string annotations
(``from __future__ import annotations``) simtsafe evaluates them and can say so; eager
annotations fail in Python itself before the decorator runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
import tests.kernels as kernels
from tests.kernels import load_kernel_module


def _kernel(annotation: str) -> str:
    return (
        "from simtsafe import Columns\n\n"
        "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
        f"def k(out: {annotation}, a: In[np.float32]) -> None:\n"
        "    out[0, thread.column()] = a[0]\n"
    )


def test_a_2d_alias_with_a_space_is_refused_with_the_spelling_that_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kernels, "HEADER", "from __future__ import annotations\n" + kernels.HEADER)
    with pytest.raises(
        ss.SafetyError, match=r"take the element type only .* DisjointSlice\[T, Space\]"
    ):
        load_kernel_module(tmp_path, _kernel("DisjointSlice2D[np.float32, Columns]"))
    load_kernel_module(tmp_path, _kernel("DisjointSlice[np.float32, Columns]"))  # accepted
