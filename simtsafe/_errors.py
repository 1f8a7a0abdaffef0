"""The exceptions simtsafe raises: shared vocabulary, imports nothing from simtsafe.

Two families, each also a standard exception users already catch:

* ``LaunchContractError(ValueError)`` -- a launch (grid, block, shared memory,
  device, arguments) does not satisfy the kernel's launch contract or the
  device. Raised on the host *before* anything is enqueued.
* ``SafetyError(TypeError)`` -- kernel code breaks a safety rule (a write
  without a witness, a gated intrinsic outside ``simtsafe.unsafe``...).
  Raised at decoration or compile time and points at the user's line.

Every error carries structured fields (``kernel``, ``axis``, ``actual``,
``limit`` ... whichever apply) so programs can react without parsing text,
and a message that says what was wrong, the value seen, the limit and the fix.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AliasingError",
    "ArgumentError",
    "ArgumentTypeError",
    "BlockShapeMismatch",
    "CapacityExceeded",
    "ClusterError",
    "ComputeCapabilityError",
    "ContextMismatch",
    "ContractDefinitionError",
    "CooperativeLaunchError",
    "CoverageError",
    "DeviceLimitExceeded",
    "DomainMismatch",
    "FunctionLimitExceeded",
    "KernelCheckError",
    "GraphError",
    "HostReadError",
    "LaunchContractError",
    "LaunchDimensionError",
    "RequiresViolation",
    "SafetyError",
    "SharedMemoryError",
    "StreamOrderError",
    "TooManyThreads",
    "UnsafeRegionRequired",
]


class _Structured:
    """Mixin: keyword fields become attributes; the message is the first arg.

    The fields an error carries depend on its class (see docs/contracts.md);
    the common ones are declared here so that programs can read them typed,
    and are None where a class does not set them.
    """

    kernel: str | None
    axis: str | int | None = None
    actual: Any = None
    limit: Any = None
    argument: str | None = None
    other: str | None = None
    relation: str | None = None
    what: str | None = None
    stream: str | None = None
    other_stream: str | None = None
    other_kernel: str | None = None

    def _store_fields(self, kernel: str | None, fields: dict[str, Any]) -> None:
        self.kernel = kernel
        self.fields = dict(fields, kernel=kernel)
        for name, value in fields.items():
            setattr(self, name, value)


class LaunchContractError(_Structured, ValueError):
    """A launch does not satisfy its kernel's contract or the device's limits.

    Nothing has been enqueued when this is raised: no output was touched.
    """

    def __init__(self, message: str, *, kernel: str | None = None, **fields: Any) -> None:
        super().__init__(message)
        self._store_fields(kernel, fields)


class ContractDefinitionError(LaunchContractError):
    """The contract itself is malformed for this kernel (found at decoration)."""


class LaunchDimensionError(LaunchContractError):
    """A grid or block dimension is zero, negative, not an int, or overflows."""


class DomainMismatch(LaunchContractError):
    """The launch uses more grid/block axes than the contract's ``domain``."""


class BlockShapeMismatch(LaunchContractError):
    """The block differs from the contract's exact block shape."""


class TooManyThreads(LaunchContractError):
    """The block has more threads than the contract's ``max_threads`` allows."""


class DeviceLimitExceeded(LaunchContractError):
    """A grid/block axis or the threads per block exceed the live device's limit."""


class FunctionLimitExceeded(LaunchContractError):
    """The compiled function allows fewer threads per block than requested."""


class SharedMemoryError(LaunchContractError):
    """Dynamic/static shared memory breaks the contract or the device's limit."""


class ComputeCapabilityError(LaunchContractError):
    """The device is older than the contract's ``min_compute_capability``."""


class ClusterError(LaunchContractError):
    """A thread-block cluster shape is unsupported or does not divide the grid."""


class CooperativeLaunchError(LaunchContractError):
    """A cooperative grid is unsupported or cannot be co-resident."""


class ContextMismatch(LaunchContractError):
    """A prepared launch is used with a stream or arrays of another device/context."""


class ArgumentError(LaunchContractError):
    """A launch argument does not satisfy the kernel's signature or contract."""


class ArgumentTypeError(ArgumentError):
    """Wrong kind, dtype, ndim, layout or writability for a parameter."""


class AliasingError(ArgumentError):
    """An output's memory overlaps another argument's memory."""


class RequiresViolation(ArgumentError):
    """A ``requires`` size relation does not hold for these arguments."""


class CoverageError(ArgumentError):
    """The launch has fewer threads than the ``covers`` parameter has elements."""


class StreamOrderError(LaunchContractError):
    """A launch touches a buffer that a launch on another, unordered stream wrote or reads.

    Raised in strict ordering mode (``simtsafe.configure(ordering="strict")``);
    the default mode orders the streams instead. Fields: ``kernel``,
    ``argument``, ``stream``, ``other_stream``, ``other_kernel``, ``other``.
    """


class HostReadError(LaunchContractError):
    """A host copy of a device array whose last writer may still be running on another stream.

    Raised by the debug check ``simtsafe.configure(check_host_reads=True)``.
    """


class GraphError(LaunchContractError):
    """A recorded graph cannot capture, replay or re-bind a launch as asked."""


class CapacityExceeded(_Structured, RuntimeError):
    """A launch claimed more slots of an append buffer than it holds: items were dropped.

    Raised on the host by ``simtsafe.appended(items, counter)`` after the launch.
    Fields: ``actual`` (the slots claimed: the counter), ``limit`` (the capacity),
    ``dropped`` (claims that found no slot; nothing was written for them).
    """

    dropped: int = 0

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self._store_fields(None, fields)


class SafetyError(_Structured, TypeError):
    """Kernel code breaks a simtsafe safety rule.

    Fields: ``kernel``, ``rule`` (short identifier), ``filename``, ``lineno``
    and ``source_line`` when the offending code is known.
    """

    def __init__(
        self,
        message: str,
        *,
        kernel: str | None = None,
        rule: str = "",
        filename: str | None = None,
        lineno: int | None = None,
        source_line: str | None = None,
        **fields: Any,
    ) -> None:
        where = ""
        if filename is not None and lineno is not None:
            where = f'\n  File "{filename}", line {lineno}'
            if source_line:
                where += f"\n    {source_line.strip()}"
        super().__init__(message + where)
        self.message = message
        self.rule = rule
        self.filename = filename
        self.lineno = lineno
        self.source_line = source_line
        self._store_fields(kernel, fields)


class UnsafeRegionRequired(SafetyError):
    """An unsafe operation was used outside ``with simtsafe.unsafe("SAFETY: ..."):``."""


class KernelCheckError(SafetyError):
    """``simtsafe.sim.check(..., strict=True)`` observed races or synchronization errors.

    ``report`` holds the full ``CheckReport``; the message is its text, and
    ``filename`` / ``lineno`` point at the first finding's second access.
    """

    def __init__(
        self, message: str, *, report: Any, kernel: str | None = None, **fields: Any
    ) -> None:
        super().__init__(message, kernel=kernel, rule="sim-check", **fields)
        self.report = report
