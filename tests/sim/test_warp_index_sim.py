"""The warp number under the contract's block on the simulator: the compile worker's verdict, twins run."""

from tests.kernels.warp_index_rules import *  # noqa: F403
