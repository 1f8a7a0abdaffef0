"""Issue 16 classes on the CUDA target: typing and the compiled-form checks (PTX, no GPU)."""

from tests.kernels.compiled_form import *  # noqa: F403
