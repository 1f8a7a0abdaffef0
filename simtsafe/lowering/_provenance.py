"""Where each LLVM instruction of a simtsafe function came from, as metadata on it.

The compiled-form checks (``simtsafe.verify``) read the LLVM IR Numba hands
to NVVM. To report a finding at the user's line, and to tell simtsafe's own
collectives from raw code, every instruction created while a simtsafe kernel
or helper is lowered carries custom metadata (NVVM ignores unknown metadata
kinds, and drops the one instruction a tag adds, ``fill_start``'s unused
``ptrtoint``; the wgmma example's PTX was compared byte for byte when the fill
tags came in, no test pins it):

* ``!ss.loc !{!"file.py", i32 line}`` -- the user statement being lowered
  (instructions of Numba-internal functions compiled for that statement get
  the same tag);
* ``!ss.site !{!"block.sum", !"block", i32 id}`` -- every instruction a Tier-1
  collective or barrier emits (one ``id`` per call site lowered);
* ``!ss.opcall !{i32 id}`` -- a call of user code from inside a collective
  (a reduction's operator; the status check after it is untagged, so its
  branches are the user's);
* ``!ss.uniform !{!"<llvm type>", !"block", i32 id}`` -- the instruction that
  produces a collective's result, which simtsafe's lowering guarantees to be
  the same in every thread of the scope (``verify`` trusts it only there);
* ``!ss.gridread !{i32 1}`` -- every instruction a ``simtsafe.grid.read`` emits:
  its global load reads an output that other threads write in other grid
  phases (``verify`` checks that a grid sync separates them);
* ``!ss.witness !{!"Local1D", i32 axis}`` -- an ``add x, 0`` (folded by NVVM)
  whose result is a block-local witness's index on ``axis``: the element of a
  tile that only this thread writes (``verify._tilephases``);
* ``!ss.own !{i32 1}`` -- every instruction a store into a shared tile through a
  block-local witness emits (``tile[w] = v``): its address is the thread's own
  element, which no other thread writes (``verify._tilephases`` lets the thread
  read that address back in the fill phase);
* ``!ss.fill !{!"async16"}`` -- every instruction a whole-object fill emits
  (``shared.fill_async``, ``fill_transposed``, an accumulator's zeroing): the
  label names how the fill gives the object's elements to threads, so that two
  fills with one label write each element from one thread (``verify._tilephases``
  compares the writes of one object by it);
* ``!ss.fillstart !{i32 1}`` -- a ``ptrtoint`` of the tile an asynchronous fill
  emits before its first copy: where the check asks whether the thread's earlier
  copies into that tile may still be in flight.

Two hooks, installed once at import of the CUDA backend: Numba's
``CUDALower.lower_inst`` records the statement's location while a function
built by simtsafe is lowered, and llvmlite's ``IRBuilder._insert`` copies the
current tags onto each new instruction. Both are thread-local and cost one
attribute lookup per instruction elsewhere. The second also bounds the
``%tid``/``%ntid`` reads of a kernel with ``.reqntid`` (``_blockgeo.bound_sreg``:
Numba's own ``cuda.threadIdx`` included), which is not provenance but needs the
same place: every instruction as it is inserted.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import types as pytypes
from collections.abc import Iterator
from typing import Any

from llvmlite import ir

from ._blockgeo import bound_sreg

__all__ = [
    "at_line",
    "current_loc",
    "current_site",
    "declare_uniform",
    "fill_start",
    "fill_writes",
    "grid_read",
    "install",
    "mark_built",
    "mark_witness",
    "own_store",
    "site",
    "tile_symbol",
    "user_code",
]

#: The attribute set on functions simtsafe builds (kernels and helpers after the rewrite).
BUILT = "__simtsafe_built__"

_TLS = threading.local()
_SITE_IDS = itertools.count(1)
_I32 = ir.IntType(32)


def mark_built(fn: pytypes.FunctionType, unsafe_lines: tuple[tuple[int, int], ...] = ()) -> None:
    """Tag the rewritten function so that its lowering records source lines and runs the
    statement checks (``_lowerchecks``); ``unsafe_lines``: the (first, last) lines of its
    ``simtsafe.unsafe`` regions, where those checks leave field stores to the author."""
    from ._recordstores import UNSAFE_LINES

    setattr(fn, BUILT, True)
    setattr(fn, UNSAFE_LINES, tuple(unsafe_lines))


def _node(module: ir.Module, key: tuple[Any, ...]) -> Any:
    """One metadata node per module and content (strings and i32s)."""
    cache: dict[tuple[Any, ...], Any] = module.__dict__.setdefault("_ss_md", {})
    node = cache.get(key)
    if node is None:
        ops = [
            ir.Constant(_I32, v) if isinstance(v, int) else ir.MetaDataString(module, str(v))
            for v in key
        ]
        node = cache[key] = module.add_metadata(ops)
    return node


@contextlib.contextmanager
def site(api: str, scope: str) -> Iterator[int]:
    """Tag every instruction emitted inside as part of one Tier-1 collective call site.

    Args:
        api: the public name (``"block.sum"``).
        scope: ``"block"``, ``"warp"`` or ``"grid"``: who must reach the call together.

    Yields:
        The site's id (for ``declare_uniform``).
    """
    saved = getattr(_TLS, "site", None)
    ident = next(_SITE_IDS)
    _TLS.site = (api, scope, ident)
    try:
        yield ident
    finally:
        _TLS.site = saved


def current_site() -> int:
    """The id of the collective being lowered (0 outside any)."""
    where = getattr(_TLS, "site", None)
    return int(where[2]) if where is not None else 0


@contextlib.contextmanager
def user_code(ident: int) -> Iterator[None]:
    """Inside a collective, code that is the user's (a reduction's operator and the
    status check after calling it): not the collective's own, so its branches count
    for the compiled-form check. Its calls are tagged ``!ss.opcall !{i32 ident}``."""
    saved = getattr(_TLS, "site", None), getattr(_TLS, "opcall", None)
    _TLS.site, _TLS.opcall = None, ident
    try:
        yield
    finally:
        _TLS.site, _TLS.opcall = saved


@contextlib.contextmanager
def _tagging(name: str, value: Any, default: Any) -> Iterator[None]:
    """``_TLS.<name> = value`` inside (what ``_tagging_insert`` copies onto each new
    instruction), the previous value (``default`` if none) after."""
    saved = getattr(_TLS, name, default)
    setattr(_TLS, name, value)
    try:
        yield
    finally:
        setattr(_TLS, name, saved)


def grid_read() -> contextlib.AbstractContextManager[None]:
    """Tag every instruction emitted inside as part of a ``simtsafe.grid.read``."""
    return _tagging("gridread", True, False)


@contextlib.contextmanager
def at_line(line: int) -> Iterator[None]:
    """Tag every instruction emitted inside with ``line`` of the statement's file: the part of
    one lowered call that a source statement below it wrote (the second call of a pair of
    fills, ``decoration._fillpairs``). Nothing changes outside a tagged statement."""
    saved = getattr(_TLS, "loc", None)
    if saved is not None:
        _TLS.loc = (saved[0], int(line))
    try:
        yield
    finally:
        _TLS.loc = saved


def own_store() -> contextlib.AbstractContextManager[None]:
    """Tag every instruction emitted inside as part of a witness store into a shared tile.

    Safety:
        Only the lowering of ``tile[w] = v`` with a block-local witness ``w`` of
        the tile's space may use this: the tag tells the compiled-form check
        that the address is the storing thread's own element.
    """
    return _tagging("own", True, False)


def fill_writes(label: str) -> contextlib.AbstractContextManager[None]:
    """Tag every instruction emitted inside as part of a whole-object fill whose elements go
    to threads by the map ``label`` names.

    Safety:
        Only the lowering of a fill may use this, with a label that determines which thread
        writes each element of the object (two fills of one object with one label give every
        element to the same thread): the compiled-form check does not compare writes of one
        label with each other.
    """
    return _tagging("fill", label, None)


def fill_start(builder: ir.IRBuilder, tile: ir.Value) -> None:
    """Mark the start of an asynchronous fill of ``tile``: an unused ``ptrtoint`` of it, tagged
    (NVVM drops it; the compiled-form check asks there whether copies into the tile may still
    be in flight)."""
    out = builder.ptrtoint(tile, ir.IntType(64))
    # never folded away: without the mark the check would not ask at this fill
    assert isinstance(out, ir.Instruction), out
    out.metadata["ss.fillstart"] = _node(builder.module, (1,))


def mark_witness(builder: ir.IRBuilder, value: ir.Value, space: str, axis: int) -> ir.Value:
    """``value``, a block-local witness's index on ``axis``, through a tagged ``add 0``.

    Safety:
        Only the lowering of a block-local witness (``local_index``,
        ``local_index_2d``, ``block_stride``'s) may call this: the tag tells
        the compiled-form check that the value names this thread's own element.
    """
    out = builder.add(value, ir.Constant(value.type, 0))
    if isinstance(out, ir.Instruction):
        out.metadata["ss.witness"] = _node(builder.module, (space, axis))
    return out


def current_loc() -> tuple[str, int] | None:
    """The (file, line) of the user statement being lowered, if any."""
    loc = getattr(_TLS, "loc", None)
    return (str(loc[0]), int(loc[1])) if loc is not None else None


def tile_symbol(prefix: str) -> str:
    """A shared object's symbol prefix with the line that makes it (``_simtsafe_tile_L12``):
    the compiled-form phase check (``verify._tilephases``) names the object by it."""
    loc = current_loc()
    return f"{prefix}_L{loc[1]}" if loc is not None else prefix


def declare_uniform(builder: ir.IRBuilder, value: ir.Value, scope: str, ident: int) -> None:
    """State that ``value``, a collective's result, is the same in every thread of ``scope``.

    Safety:
        Only the lowering of a collective whose result is provably equal in
        all participating threads may call this (``_coop``'s invariant).
    """
    if isinstance(value, ir.Instruction):
        value.metadata["ss.uniform"] = _node(builder.module, (str(value.type), scope, ident))


def _tagging_insert(original: Any) -> Any:
    def _insert(self: ir.IRBuilder, instr: ir.Instruction) -> None:
        loc = getattr(_TLS, "loc", None)
        if loc is not None:
            module = self._block.parent.module
            instr.metadata["ss.loc"] = _node(module, loc)
            if getattr(_TLS, "gridread", False):
                instr.metadata["ss.gridread"] = _node(module, (1,))
            if getattr(_TLS, "own", False):
                instr.metadata["ss.own"] = _node(module, (1,))
            fill = getattr(_TLS, "fill", None)
            if fill is not None:
                instr.metadata["ss.fill"] = _node(module, (fill,))
            where = getattr(_TLS, "site", None)
            if where is not None:
                instr.metadata["ss.site"] = _node(module, where)
            else:
                opcall = getattr(_TLS, "opcall", None)
                if opcall is not None and isinstance(instr, ir.CallInstr):
                    instr.metadata["ss.opcall"] = _node(module, (opcall,))
        original(self, instr)
        bound_sreg(self, instr)

    _insert.__wrapped__ = original  # type: ignore[attr-defined]
    return _insert


def _locating_lower_inst(original: Any) -> Any:
    def lower_inst(self: Any, inst: Any) -> Any:
        func = getattr(getattr(self, "func_ir", None), "func_id", None)
        built = getattr(getattr(func, "func", None), BUILT, False)
        if not built:  # Numba-internal code: keep the user statement's tag, if any
            return original(self, inst)
        saved = getattr(_TLS, "loc", None)
        loc = getattr(inst, "loc", None)
        _TLS.loc = (str(loc.filename), int(loc.line)) if loc is not None and loc.line else saved
        try:
            return original(self, inst)
        finally:
            _TLS.loc = saved

    lower_inst.__wrapped__ = original  # type: ignore[attr-defined]
    return lower_inst


_INSTALLED = False
_INSTALL_LOCK = threading.Lock()


def install() -> None:
    """Install the two hooks (idempotent)."""
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        from numba.cuda.lowering import CUDALower

        ir.IRBuilder._insert = _tagging_insert(ir.IRBuilder._insert)
        CUDALower.lower_inst = _locating_lower_inst(CUDALower.lower_inst)
        _INSTALLED = True
