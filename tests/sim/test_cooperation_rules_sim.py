"""Block cooperation rules at decoration, on the simulator (the same refusals)."""

from tests.kernels.cooperation_rules import *  # noqa: F403
