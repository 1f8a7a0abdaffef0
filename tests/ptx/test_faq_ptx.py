"""docs/faq.md quotes the kernel-code errors as the CUDA target (Numba typing) raises them."""

from __future__ import annotations

import pytest

from tests.kernels import load_kernel_module
from tests.kernels.faq_cases import TYPING, assert_quoted
from tests.kernels.faq_cases import (
    test_decoration_errors_are_quoted as test_decoration_errors_are_quoted,
)  # noqa: F401


@pytest.mark.parametrize("name", sorted(TYPING))
def test_typing_errors_are_quoted(tmp_path, name):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(tmp_path, TYPING[name])
    kernel = getattr(mod, "k", None) or mod.bad
    assert_quoted(kernel.ptx)
