"""Decoration-time rules on the real CUDA target (twins compile to PTX)."""

import pytest

from tests.kernels.decoration_rules import *  # noqa: F403

pytestmark = pytest.mark.ptx
