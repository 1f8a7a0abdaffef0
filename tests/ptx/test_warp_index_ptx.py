"""The warp number under the contract's block, on the CUDA target: the compiled-form verdict."""

from tests.kernels.warp_index_rules import *  # noqa: F403
