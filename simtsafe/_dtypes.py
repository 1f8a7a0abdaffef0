"""``simtsafe.bfloat16``: ml_dtypes' bfloat16, spelled so that mypy and pyright can check it.

At runtime it *is* ``ml_dtypes.bfloat16`` (the same object: ``In[ss.bfloat16]`` and
``In[ml_dtypes.bfloat16]`` are one annotation). ml_dtypes ships no type information
for it (mypy sees ``Any``; pyright refuses it in a type expression), so type
checkers see a ``np.floating`` subclass instead: a float stores into a bf16 output
and a bf16 read into a float32 one (a witness read is a float32 at runtime), a bf16
value does not store into an integer output, and ``np.float32(x[i])`` widens it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

__all__ = ["bfloat16"]

if TYPE_CHECKING:

    class bfloat16(np.floating[Any]):  # noqa: N801 - numpy's spelling
        """Brain floating point: 1 sign, 8 exponent, 7 mantissa bits (ml_dtypes.bfloat16)."""

else:
    import ml_dtypes

    bfloat16 = ml_dtypes.bfloat16
