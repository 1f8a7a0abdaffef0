"""Routes around the rules, on the simulator: the same refusals as on the CUDA target."""

from tests.kernels.attacks import *  # noqa: F403
