"""Issue 16 classes on the simulator: the compile worker gives the GPU verdict, twins run."""

from tests.kernels.compiled_form import *  # noqa: F403
