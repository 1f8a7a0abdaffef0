"""numpy ufuncs on scalars on the simulator: numpy's values and dtypes, the GPU's refusals."""

from __future__ import annotations

from tests.kernels.ufunc_cases import *  # noqa: F403
