# numba's top level, re-exported unchanged from numba's own (inline-typed)
# modules. This file exists only so that a checker that finds this directory
# through ``mypy_path = "stubs"`` still resolves ``import numba`` to numba's
# real API; everything below ``numba.cuda`` is what this stub package adds.
from numba.core import config as config
from numba.core import errors as errors
from numba.core import types as types
from numba.core.decorators import cfunc as cfunc
from numba.core.decorators import jit as jit
from numba.core.decorators import jit_module as jit_module
from numba.core.decorators import njit as njit
from numba.core.errors import *
from numba.core.types import *
from numba.misc.special import gdb as gdb
from numba.misc.special import gdb_breakpoint as gdb_breakpoint
from numba.misc.special import gdb_init as gdb_init
from numba.misc.special import literal_unroll as literal_unroll
from numba.misc.special import literally as literally
from numba.misc.special import pndindex as pndindex
from numba.misc.special import prange as prange
from numba.misc.special import typeof as typeof
from numba.np.numpy_support import carray as carray
from numba.np.numpy_support import farray as farray
from numba.np.numpy_support import from_dtype as from_dtype
from numba.np.ufunc import get_num_threads as get_num_threads
from numba.np.ufunc import get_parallel_chunksize as get_parallel_chunksize
from numba.np.ufunc import get_thread_id as get_thread_id
from numba.np.ufunc import guvectorize as guvectorize
from numba.np.ufunc import set_num_threads as set_num_threads
from numba.np.ufunc import set_parallel_chunksize as set_parallel_chunksize
from numba.np.ufunc import threading_layer as threading_layer
from numba.np.ufunc import vectorize as vectorize
from numba import experimental as experimental
from numba import typed as typed

__version__: str
version_info: tuple[object, ...]
