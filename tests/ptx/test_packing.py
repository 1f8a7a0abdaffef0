"""The launch seam packs arrays exactly as numba-cuda's array data model lays them out."""

from __future__ import annotations

import numpy as np
import pytest

from simtsafe.lowering import numba_type
from simtsafe.lowering._launching import ARRAY_MODEL_FIELDS, pack_array


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_packed_array_matches_numbas_model(ndim: int) -> None:
    from numba.cuda.descriptor import cuda_target

    arrty = numba_type(np.dtype(np.float32), ndim, "C")
    model = cuda_target.target_context.data_model_manager.lookup(arrty)
    assert tuple(model._fields) == ARRAY_MODEL_FIELDS
    # The kernel ABI: the model flattened, one parameter per shape and stride entry.
    abi = cuda_target.target_context.get_arg_packer([arrty]).argument_types
    shape = tuple(range(2, 2 + ndim))
    strides = tuple(4 * (i + 1) for i in range(ndim))
    packed = pack_array(0xABC0, shape, strides, int(np.prod(shape)), 4)
    assert packed == (0, 0, int(np.prod(shape)), 4, 0xABC0, *shape, *strides)
    assert len(packed) == len(abi) == 5 + 2 * ndim
    assert str(abi[4]) == "float*"  # the data pointer sits where pack_array puts ptr
