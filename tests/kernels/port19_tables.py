"""A user module of constant tables for tests/kernels/port19.py (read by kernels through
``cuda.const.array_like(tables.NAME)``)."""

import numpy as np

#: a gamma-correction lookup table: byte -> byte
LUT = np.round(255 * (np.arange(256) / 255) ** (1 / 2.2)).astype(np.uint8)

#: a 3x3 Gaussian filter
GAUSS3 = (np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32) / 16).astype(np.float32)
