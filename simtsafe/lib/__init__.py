"""Library launches: device-wide primitives as checked host calls.

``simtsafe.lib.inclusive_scan(out, x)`` and its siblings are host functions,
not kernel API (that is ``simtsafe.block`` / ``simtsafe.warp``, inside a
kernel). Each checks its arguments before anything is enqueued, as a kernel
launch does (device arrays, dtype, rank, layout, sizes, aliasing, device),
owns its scratch memory (per device and stream) and launches simtsafe's own
Tier-2 kernels, whose unsafe regions each state why they are sound
(docs/library.md). The kernels are decorated on first use.
"""

from ._scan import inclusive_scan as inclusive_scan

__all__ = ["inclusive_scan"]
