"""Shared by the public collective modules (``block``, ``warp``, ``shared``): the builtin tag.

A public kernel-API function is tagged with its name (``block.sum``...); the
kernel decorator finds it by *identity* in its allow-list and rewrites each
call to the private intrinsic ``__ss_block_sum``. Called on the host, these
functions raise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

__all__ = ["host_call", "kernel_api"]

_F = TypeVar("_F", bound=Callable[..., Any])


def kernel_api(name: str) -> Callable[[_F], _F]:
    """Tag a public kernel-API function with its dotted name."""

    def tag(fn: _F) -> _F:
        fn.__simtsafe_builtin__ = name  # type: ignore[attr-defined]
        return fn

    return tag


def host_call(name: str) -> NoReturn:
    raise RuntimeError(
        f"simtsafe.{name}() runs inside @simtsafe.kernel or @simtsafe.device functions only"
    )
