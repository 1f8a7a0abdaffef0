"""Block cooperation rules at decoration, on the CUDA target."""

from tests.kernels.cooperation_rules import *  # noqa: F403
