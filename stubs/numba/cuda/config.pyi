# numba.cuda.config: the numba-cuda configuration (runtime: numba.cuda.core.config).
ENABLE_CUDASIM: bool
CUDA_DEFAULT_PTX_CC: tuple[int, int]
CUDA_LOW_OCCUPANCY_WARNINGS: bool
CUDA_WARN_ON_IMPLICIT_COPY: bool
DISABLE_JIT: bool
DEBUGINFO_DEFAULT: bool
OPT: int
