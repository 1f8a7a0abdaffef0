"""Routes around the rules, on the CUDA target (compiled to PTX with NVVM, no GPU)."""

from tests.kernels.attacks import *  # noqa: F403
