"""simtsafe: Numba CUDA kernels that are safe to write and safe to launch.

General layout (data flows one way):

* Shared vocabulary, importing nothing else from simtsafe: ``_errors``
  (exception hierarchy), ``_spaces`` (index-space markers), ``_unsafe``
  (the ``unsafe`` region marker).
* What a kernel declares: ``_views`` (``DisjointSlice``, ``In``,
  ``ThreadIndex`` annotations), ``thread`` (witness constructors),
  ``_requires`` + ``_contract`` (``LaunchContract``, static launch checks),
  ``_params`` (annotations -> parameter records).
* Device path: ``_kernel`` (decorators) -> ``analysis`` (AST rules and
  rewrite) -> ``device`` (the only code touching numba-cuda internals:
  ``_cuda`` Numba types/lowering or ``_sim`` simulator twins, ``_policy``
  what kernels may refer to, ``_diagnostics`` error translation, version
  gates in ``_compat``).
* Host path: ``_contract`` -> ``_prepare`` (``PreparedLaunch``: contract,
  device and compiled-function checks, limits in ``_limits``) -> ``_launch``
  (per-launch argument checks on ``_argfacts``, a generated checker from
  ``_fastcheck``, the direct driver launch).
* ``cli``: ``simtsafe schema | audit | check``.
"""

from . import thread as thread
from ._contract import LaunchConfig as LaunchConfig
from ._contract import LaunchContract as LaunchContract
from ._contract import cover as cover
from ._errors import AliasingError as AliasingError
from ._errors import ArgumentError as ArgumentError
from ._errors import ArgumentTypeError as ArgumentTypeError
from ._errors import BlockShapeMismatch as BlockShapeMismatch
from ._errors import ClusterError as ClusterError
from ._errors import ComputeCapabilityError as ComputeCapabilityError
from ._errors import ContextMismatch as ContextMismatch
from ._errors import ContractDefinitionError as ContractDefinitionError
from ._errors import CooperativeLaunchError as CooperativeLaunchError
from ._errors import CoverageError as CoverageError
from ._errors import DeviceLimitExceeded as DeviceLimitExceeded
from ._errors import DomainMismatch as DomainMismatch
from ._errors import FunctionLimitExceeded as FunctionLimitExceeded
from ._errors import LaunchContractError as LaunchContractError
from ._errors import LaunchDimensionError as LaunchDimensionError
from ._errors import RequiresViolation as RequiresViolation
from ._errors import SafetyError as SafetyError
from ._errors import SharedMemoryError as SharedMemoryError
from ._errors import TooManyThreads as TooManyThreads
from ._errors import UnsafeRegionRequired as UnsafeRegionRequired
from ._kernel import DeviceFunction as DeviceFunction
from ._kernel import Kernel as Kernel
from ._kernel import device as device
from ._kernel import kernel as kernel
from ._prepare import PreparedLaunch as PreparedLaunch
from ._spaces import Index1D as Index1D
from ._spaces import Index2D as Index2D
from ._spaces import IndexSpace as IndexSpace
from ._spaces import PerBlock as PerBlock
from ._spaces import PerWarp as PerWarp
from ._unsafe import unsafe as unsafe
from ._views import DisjointSlice as DisjointSlice
from ._views import DisjointSlice2D as DisjointSlice2D
from ._views import In as In
from ._views import In2D as In2D
from ._views import ThreadIndex as ThreadIndex
from .device._compat import SIMULATOR as SIMULATOR

__version__ = "0.1.0"

__all__ = [
    "SIMULATOR",
    "AliasingError",
    "ArgumentError",
    "ArgumentTypeError",
    "BlockShapeMismatch",
    "ClusterError",
    "ComputeCapabilityError",
    "ContextMismatch",
    "ContractDefinitionError",
    "CooperativeLaunchError",
    "CoverageError",
    "DeviceFunction",
    "DeviceLimitExceeded",
    "DisjointSlice",
    "DisjointSlice2D",
    "DomainMismatch",
    "FunctionLimitExceeded",
    "In",
    "In2D",
    "Index1D",
    "Index2D",
    "IndexSpace",
    "Kernel",
    "LaunchConfig",
    "LaunchContract",
    "LaunchContractError",
    "LaunchDimensionError",
    "PerBlock",
    "PerWarp",
    "PreparedLaunch",
    "RequiresViolation",
    "SafetyError",
    "SharedMemoryError",
    "ThreadIndex",
    "TooManyThreads",
    "UnsafeRegionRequired",
    "cover",
    "device",
    "kernel",
    "thread",
    "unsafe",
]
