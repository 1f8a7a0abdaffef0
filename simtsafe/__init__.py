"""simtsafe: Numba CUDA kernels that are safe to write and safe to launch.

General layout (DESIGN.md sections 3 and 11), bottom to top; each part
imports only the parts below it (tests/unit/test_layering.py):

* Shared vocabulary, importing nothing else from simtsafe: ``_errors``
  (exception hierarchy), ``_spaces`` (index-space markers), ``_unsafe``
  (the ``unsafe`` region marker), ``_toolchain`` (which CUDA library is
  missing, in one line); the annotations ``_views`` and the witness
  constructors ``thread`` build only on those.
* ``lowering/`` -- what Numba compiles: Numba types and lowering of views
  and witnesses, their simulator twins, and every other use of numba-cuda
  internals (array packing, compiled-function access, stream conversion,
  error translation, the compiled form's IR and its provenance tags, the
  simulator's compile worker; version gates in ``_compat``).
* ``verify/`` -- the compiled-form checks: a divergence analysis over the
  LLVM IR of every compile decides whether every barrier and collective is
  reached by its whole scope.
* ``decoration/`` -- declarations: annotations -> parameters, the allow-list
  of what kernel code may reach, the source rules, the rewrite handed to
  Numba, the frozen scope; ``_registry`` records every kernel and helper made.
* ``host/`` -- ``LaunchContract`` and ``requires``, ``prepare`` ->
  ``PreparedLaunch`` (device and function limits), the per-launch argument
  checks (CuPy/PyTorch facts read natively in ``_foreign``) and the driver
  launch; the execution model: stream ordering (``_streams``), handles,
  ``synchronize``/``to_host``/``configure`` (``_handles``), CUDA graphs of
  checked launches (``_graphs``).
* ``sim/`` -- the CPU race / synchronization checker.
* ``_compose`` -- ``Kernel`` and ``DeviceFunction``, the objects users hold:
  each composes its declaration, its compile (+ the compiled-form verdict)
  and its launch; ``@kernel`` / ``@device`` make them.
* ``lib/`` -- library launches: device-wide primitives (``inclusive_scan``...)
  as checked host calls of simtsafe's own Tier-2 kernels, their scratch per
  device and stream.
* ``gate/`` -- ``simtsafe check | audit`` and ``check_kernel``: every kernel
  and helper made while the user's modules are imported, compiled to PTX.
* ``cli`` -- ``simtsafe check | audit | schema | sim-check`` (``python -m simtsafe``).

"""

try:  # numba-cuda loads the CUDA runtime at import: a missing library is said in one line
    import numba.cuda as _numba_cuda  # noqa: F401
except Exception as _exc:  # pragma: no cover - needs a machine without the CUDA wheels
    from ._toolchain import fail_import as _fail_import

    _fail_import(_exc)

from . import block as block
from . import grid as grid
from . import hashing as hashing
from . import lib as lib
from . import mma as mma
from . import random as random
from . import shared as shared
from . import sim as sim
from . import thread as thread
from . import vec as vec
from . import warp as warp
from . import wgmma as wgmma
from ._atomicviews import AppendBuffer as AppendBuffer
from ._atomicviews import Counter as Counter
from ._atomicviews import HashTable as HashTable
from ._atomicviews import HashValues as HashValues
from ._compose import DeviceFunction as DeviceFunction
from ._compose import Kernel as Kernel
from ._compose import device as device
from ._compose import kernel as kernel
from ._coopviews import Accumulate as Accumulate
from ._coopviews import OutTile as OutTile
from ._coopviews import OutTile2D as OutTile2D
from ._coopviews import SharedAccumulator as SharedAccumulator
from ._coopviews import SharedAccumulator2D as SharedAccumulator2D
from ._coopviews import SharedTile as SharedTile
from ._dtypes import bfloat16 as bfloat16
from ._errors import AliasingError as AliasingError
from ._errors import ArgumentError as ArgumentError
from ._errors import ArgumentTypeError as ArgumentTypeError
from ._errors import BlockShapeMismatch as BlockShapeMismatch
from ._errors import CapacityExceeded as CapacityExceeded
from ._errors import ClusterError as ClusterError
from ._errors import ComputeCapabilityError as ComputeCapabilityError
from ._errors import ContextMismatch as ContextMismatch
from ._errors import ContractDefinitionError as ContractDefinitionError
from ._errors import CooperativeLaunchError as CooperativeLaunchError
from ._errors import CoverageError as CoverageError
from ._errors import DeviceLimitExceeded as DeviceLimitExceeded
from ._errors import DomainMismatch as DomainMismatch
from ._errors import FunctionLimitExceeded as FunctionLimitExceeded
from ._errors import GraphError as GraphError
from ._errors import HostReadError as HostReadError
from ._errors import KernelCheckError as KernelCheckError
from ._errors import LaunchContractError as LaunchContractError
from ._errors import LaunchDimensionError as LaunchDimensionError
from ._errors import RequiresViolation as RequiresViolation
from ._errors import SafetyError as SafetyError
from ._errors import SharedMemoryError as SharedMemoryError
from ._errors import StreamOrderError as StreamOrderError
from ._errors import TooManyThreads as TooManyThreads
from ._errors import UnsafeRegionRequired as UnsafeRegionRequired
from ._spaces import Appended as Appended
from ._spaces import BlockRow as BlockRow
from ._spaces import Columns as Columns
from ._spaces import Found as Found
from ._spaces import Index1D as Index1D
from ._spaces import Index2D as Index2D
from ._spaces import Index3D as Index3D
from ._spaces import IndexSpace as IndexSpace
from ._spaces import Inserted as Inserted
from ._spaces import Local1D as Local1D
from ._spaces import Local2D as Local2D
from ._spaces import PerBlock as PerBlock
from ._spaces import PerWarp as PerWarp
from ._spaces import WarpRow as WarpRow
from ._unsafe import unsafe as unsafe
from ._views import DisjointSlice as DisjointSlice
from ._views import DisjointSlice2D as DisjointSlice2D
from ._views import DisjointSlice3D as DisjointSlice3D
from ._views import In as In
from ._views import In2D as In2D
from ._views import In3D as In3D
from ._views import RowChunk as RowChunk
from ._views import ThreadIndex as ThreadIndex
from .gate._gate import check_kernel as check_kernel
from .host._appended import AppendResult as AppendResult
from .host._appended import InsertResult as InsertResult
from .host._appended import append_result as append_result
from .host._appended import appended as appended
from .host._appended import counter as counter
from .host._appended import empty_keys as empty_keys
from .host._appended import hash_lookup as hash_lookup
from .host._appended import insert_result as insert_result
from .host._appended import inserted as inserted
from .host._bound import BoundLaunch as BoundLaunch
from .host._contract import LaunchConfig as LaunchConfig
from .host._contract import LaunchContract as LaunchContract
from .host._contract import cover as cover
from .host._graphs import Graph as Graph
from .host._graphs import graph as graph
from .host._handles import ExecutionSettings as ExecutionSettings
from .host._handles import LaunchHandle as LaunchHandle
from .host._handles import configure as configure
from .host._handles import execution_settings as execution_settings
from .host._handles import synchronize as synchronize
from .host._handles import to_host as to_host
from .host._prepare import PreparedLaunch as PreparedLaunch
from .lowering._compat import SIMULATOR as SIMULATOR

__version__ = "0.1.0"

__all__ = [
    "Accumulate",
    "AliasingError",
    "AppendBuffer",
    "AppendResult",
    "Appended",
    "ArgumentError",
    "ArgumentTypeError",
    "BlockShapeMismatch",
    "BoundLaunch",
    "CapacityExceeded",
    "ClusterError",
    "ComputeCapabilityError",
    "ContextMismatch",
    "ContractDefinitionError",
    "CooperativeLaunchError",
    "Counter",
    "CoverageError",
    "DeviceFunction",
    "DeviceLimitExceeded",
    "DisjointSlice",
    "DisjointSlice2D",
    "DisjointSlice3D",
    "DomainMismatch",
    "ExecutionSettings",
    "Found",
    "FunctionLimitExceeded",
    "Graph",
    "GraphError",
    "HashTable",
    "HashValues",
    "HostReadError",
    "BlockRow",
    "Columns",
    "In",
    "In2D",
    "In3D",
    "Index1D",
    "Index2D",
    "Index3D",
    "IndexSpace",
    "InsertResult",
    "Inserted",
    "Kernel",
    "KernelCheckError",
    "LaunchConfig",
    "LaunchContract",
    "LaunchContractError",
    "LaunchDimensionError",
    "LaunchHandle",
    "Local1D",
    "Local2D",
    "OutTile",
    "OutTile2D",
    "PerBlock",
    "PerWarp",
    "PreparedLaunch",
    "RequiresViolation",
    "SIMULATOR",
    "SafetyError",
    "SharedAccumulator",
    "SharedAccumulator2D",
    "SharedMemoryError",
    "SharedTile",
    "StreamOrderError",
    "RowChunk",
    "ThreadIndex",
    "TooManyThreads",
    "UnsafeRegionRequired",
    "WarpRow",
    "append_result",
    "appended",
    "check_kernel",
    "block",
    "grid",
    "configure",
    "counter",
    "cover",
    "device",
    "empty_keys",
    "execution_settings",
    "graph",
    "hash_lookup",
    "hashing",
    "insert_result",
    "inserted",
    "kernel",
    "lib",
    "mma",
    "random",
    "shared",
    "sim",
    "synchronize",
    "thread",
    "to_host",
    "unsafe",
    "vec",
    "warp",
    "wgmma",
]
