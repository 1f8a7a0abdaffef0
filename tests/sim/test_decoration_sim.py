"""Decoration-time rules under the simulator (twins run and match numpy)."""

import pytest

from tests.kernels.decoration_rules import *  # noqa: F403

pytestmark = pytest.mark.sim
