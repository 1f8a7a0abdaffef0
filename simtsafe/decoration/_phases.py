"""Phases of shared tiles and accumulators: fill, then barrier, then read.

Between two block barriers (``simtsafe.block.sync()`` and the block
collectives, which contain one) a shared tile is in one phase:

* **fill** -- threads write elements through block-local witnesses
  (``tile[w] = v``: one writer per element) and may read back only through a
  witness (``tile[w]``: their own element);
* **read** -- threads read any element (``tile[i]``, ``tile[i, j]``, a run of them with
  ``simtsafe.vec.load(tile, ...)``); nobody writes.

A write and a read by index in the same interval would race (another thread's
element, unordered). A shared accumulator likewise: atomic updates
(``acc.add/min/max``) and plain reads (``acc[i]``) never share an interval.

The analysis walks the kernel's control flow: a barrier ends the interval;
``if``/``else`` join their states; a loop is walked until its state is
stable, so a read at the top of a loop body and a write at its bottom are
caught across the back edge (``continue`` joins the back edge, ``break`` the
loop's exit). Within an expression, accesses and barriers count in
evaluation order, and a barrier under ``and``/``or``/``x if c else y`` is a
branch. Making an accumulator (zero stores, then a barrier) is a write. Barriers are only allowed under block-uniform
control flow (``_uniformity``), so every thread crosses the same ones. Raw
``cuda.syncthreads()`` inside an unsafe region does not count as a
barrier here (nothing checks that every thread reaches it).

Tiles and accumulators are tracked by name: binding one to another name or
storing it in a container is refused, so every access is visible here. A
tile passed to a ``@simtsafe.device`` helper is a read of it at the call:
the helper receives a read-only view (``__ss_tile_read``; Numba's typing of
that view refuses any store).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .._errors import SafetyError
from ._uniformity import BLOCK_OPS, GRID_OPS

__all__ = ["check_phases"]

_TILE_CTORS = frozenset({"shared.tile", "shared.dynamic_tile"})
_ACC_CTORS = frozenset({"shared.accumulator"})
#: Calls that read their first argument, a shared tile, anywhere: reads of the read phase.
_TILE_READERS = frozenset({"vec.load", "mma.load_a", "mma.load_b"})
#: Tier-1 barriers: block.sync and the block collectives (each contains one).
_BARRIERS = BLOCK_OPS | GRID_OPS  # a grid sync is a barrier of every block too
_WITNESS_CTORS = frozenset({"thread.local_index", "thread.local_index_2d"})
_ACC_UPDATES = frozenset({"add", "min", "max"})


@dataclass(frozen=True)
class _Access:
    kind: str  # "write", "read" (tiles); "update", "clear", "read" (accumulators)
    line: int


@dataclass
class _State:
    """Per tracked object: the accesses of the current barrier interval."""

    seen: dict[str, frozenset[_Access]] = field(default_factory=dict)

    def copy(self) -> _State:
        return _State(dict(self.seen))

    def join(self, other: _State) -> _State:
        keys = self.seen.keys() | other.seen.keys()
        return _State(
            {k: self.seen.get(k, frozenset()) | other.seen.get(k, frozenset()) for k in keys}
        )


@dataclass
class _Frame:
    """The states at a loop's ``break`` and ``continue`` statements."""

    breaks: list[_State] = field(default_factory=list)
    continues: list[_State] = field(default_factory=list)


class _Analysis:
    def __init__(
        self,
        fn: ast.FunctionDef,
        ref_name: Callable[[ast.expr], str | None],
        fail: Callable[[ast.AST, str, str], SafetyError],
        is_helper: Callable[[ast.expr], bool] = lambda e: False,
    ) -> None:
        self.fn = fn
        self.ref_name = ref_name
        self.fail = fail
        self.is_helper = is_helper
        self.tiles: dict[str, int] = {}  # name -> line of creation
        self.accs: dict[str, int] = {}
        self.witnesses: set[str] = set()
        self.loops: list[_Frame] = []

    # ------------------------------------------------------------ discovery

    def discover(self) -> None:
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Call):
                name = self.ref_name(node.func)
                if name in _TILE_CTORS | _ACC_CTORS:
                    self._must_be_bound(node)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                name = self.ref_name(node.value.func)
                target = node.targets[0] if len(node.targets) == 1 else None
                if isinstance(target, ast.Name):
                    if name in _TILE_CTORS:
                        self._declare(self.tiles, target.id, node)
                    elif name in _ACC_CTORS:
                        self._declare(self.accs, target.id, node)
                    elif name in _WITNESS_CTORS:
                        self.witnesses.add(target.id)
            if (
                isinstance(node, ast.For)
                and isinstance(node.iter, ast.Call)
                and self.ref_name(node.iter.func) == "thread.block_stride"
                and isinstance(node.target, ast.Name)
            ):
                self.witnesses.add(node.target.id)
        # A witness name is only ever bound to a witness: rebound to anything else
        # (an int, another value), its subscripts are reads by index.
        for node in ast.walk(self.fn):
            for name in self._bound_names(node):
                if name in self.witnesses and not self._binds_witness(node):
                    self.witnesses.discard(name)
        dynamic = [
            n
            for n in ast.walk(self.fn)
            if isinstance(n, ast.Call) and self.ref_name(n.func) == "shared.dynamic_tile"
        ]
        if len(dynamic) > 1:
            raise self.fail(
                dynamic[1],
                f"a second shared.dynamic_tile (the first is at line {dynamic[0].lineno}): every "
                "dynamic tile is the launch's one dynamic shared memory, so two would alias; "
                "make one and index it",
                "tile-phase",
            )
        tracked = self.tiles.keys() | self.accs.keys()
        for node in ast.walk(self.fn):
            if isinstance(node, ast.Name) and node.id in tracked:
                self._check_use(node)

    @staticmethod
    def _bound_names(node: ast.AST) -> list[str]:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.NamedExpr):
            targets = [node.target]
        elif isinstance(node, ast.For):
            targets = [node.target]
        return [
            n.id
            for t in targets
            for n in ast.walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        ]

    def _binds_witness(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            return self.ref_name(node.value.func) in _WITNESS_CTORS and len(node.targets) == 1
        return (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and self.ref_name(node.iter.func) == "thread.block_stride"
            and isinstance(node.target, ast.Name)
        )

    def _declare(self, table: dict[str, int], name: str, node: ast.Assign) -> None:
        if name in table:
            raise self.fail(
                node,
                f"`{name}` is bound to a second shared tile or accumulator (first at line "
                f"{table[name]}); give each its own name, so that its phases can be followed",
                "tile-phase",
            )
        table[name] = node.lineno

    def _must_be_bound(self, call: ast.Call) -> None:
        parent = self._parents().get(id(call))
        if not (
            isinstance(parent, ast.Assign)
            and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
            and parent.value is call
        ):
            raise self.fail(
                call,
                "bind a shared tile or accumulator to a plain name where it is made: "
                "`tile = simtsafe.shared.tile(...)`",
                "tile-phase",
            )

    def _parents(self) -> dict[int, ast.AST]:
        if not hasattr(self, "_parent_map"):
            self._parent_map = {
                id(child): node
                for node in ast.walk(self.fn)
                for child in ast.iter_child_nodes(node)
            }
        return self._parent_map

    def _check_use(self, node: ast.Name) -> None:
        """A tile/accumulator name may only be subscripted, have a method called, or len()."""
        parent = self._parents().get(id(node))
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return
        if isinstance(parent, ast.Assign) and node in parent.targets:
            return
        if isinstance(parent, ast.Call) and node in parent.args:
            name = self.ref_name(parent.func)
            if name == "thread.block_stride" or (
                isinstance(parent.func, ast.Name) and parent.func.id == "len"
            ):
                return
            if node.id in self.tiles and self.is_helper(parent.func):
                return  # a read of the tile at the call; the helper gets a read-only view
            if node.id in self.tiles and name in _TILE_READERS and parent.args[0] is node:
                return  # a read of a run of the tile (recorded as a read: `expr`)
        raise self.fail(
            node,
            f"`{node.id}` is a shared tile or accumulator: index it, call its methods, pass it "
            "to thread.block_stride or len(), or pass a tile to a @simtsafe.device helper (a "
            "read-only view, read in the tile's read phase); it cannot be copied, stored or "
            "returned (its fill and read phases could not be followed)",
            "tile-phase",
        )

    # ------------------------------------------------------------ flow

    def expr(self, e: ast.AST, state: _State) -> _State:
        """Walk ``e`` in evaluation order: operands and arguments first, then the
        access or barrier itself. A barrier only some evaluations reach (a later
        operand of ``and``/``or``, a branch of ``x if c else y``) is a branch: the
        paths with and without it join."""
        if isinstance(e, ast.BoolOp):
            cur = self.expr(e.values[0], state)
            out = cur
            for value in e.values[1:]:
                cur = self.expr(value, cur.copy())
                out = out.join(cur)
            return out
        if isinstance(e, ast.IfExp):
            state = self.expr(e.test, state)
            return self.expr(e.body, state.copy()).join(self.expr(e.orelse, state.copy()))
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr | ast.keyword):
                state = self.expr(child, state)
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name):
            self.subscript(e, state, store=isinstance(e.ctx, ast.Store))
        if isinstance(e, ast.Call):
            func = e.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in self.accs
                and func.attr in _ACC_UPDATES
            ):
                self.record(state, func.value.id, _Access("update", e.lineno), e)
            if self.is_helper(func):
                # A helper given a tile reads it (any element): a read at the call.
                for arg in e.args:
                    if isinstance(arg, ast.Name) and arg.id in self.tiles:
                        self.record(state, arg.id, _Access("read", e.lineno), e)
            if (
                self.ref_name(func) in _TILE_READERS
                and e.args
                and isinstance(e.args[0], ast.Name)
                and e.args[0].id in self.tiles
            ):
                # A run of the tile, any elements: a read.
                self.record(state, e.args[0].id, _Access("read", e.lineno), e)
            if self.ref_name(func) in _BARRIERS:
                return _State()
        return state

    def subscript(self, node: ast.Subscript, state: _State, *, store: bool) -> None:
        """The access of ``name[...]`` (its value and index already walked)."""
        assert isinstance(node.value, ast.Name)
        name = node.value.id
        if name in self.tiles:
            if store:
                self.record(state, name, _Access("write", node.lineno), node)
            elif not self._own_element(node.slice):
                self.record(state, name, _Access("read", node.lineno), node)
        elif name in self.accs and not store:
            self.record(state, name, _Access("read", node.lineno), node)

    def _own_element(self, index: ast.expr) -> bool:
        """Is ``index`` a block-local witness (named, or made right there)?

        Every block-local witness of a thread addresses elements only that thread
        writes (``local_index()`` is the first element ``block_stride`` gives it),
        so a read through one is a read of the thread's own element.
        """
        if isinstance(index, ast.Name):
            return index.id in self.witnesses
        return (
            isinstance(index, ast.Call)
            and not index.args
            and not index.keywords
            and self.ref_name(index.func) in _WITNESS_CTORS
        )

    def record(self, state: _State, name: str, access: _Access, node: ast.AST) -> None:
        seen = state.seen.get(name, frozenset())
        is_acc = name in self.accs
        for other in seen:
            if other.kind != access.kind and "read" in (other.kind, access.kind):
                write = other if other.kind != "read" else access
                read = access if access.kind == "read" else other
                what = "updated (atomically)" if is_acc else "filled"
                if write.kind == "clear":
                    what = "cleared (made again, zero-filled)"
                raise self.fail(
                    node,
                    f"{'accumulator' if is_acc else 'shared tile'} `{name}` is read by index at "
                    f"line {read.line} and {what} at line {write.line} with no block barrier "
                    "between them (on some path): another thread may be writing the element "
                    "being read. Put simtsafe.block.sync() between the "
                    f"{'updates' if is_acc else 'fill'} and the reads (every thread must "
                    "reach it), or read only through the filling thread's own witness",
                    "tile-phase",
                )
        state.seen[name] = seen | {access}

    def block(self, stmts: Sequence[ast.stmt], state: _State) -> _State:
        for s in stmts:
            state = self.stmt(s, state)
        return state

    def stmt(self, s: ast.stmt, state: _State) -> _State:
        if isinstance(s, ast.If):
            state = self.expr(s.test, state)
            a = self.block(s.body, state.copy())
            b = self.block(s.orelse, state.copy())
            return a.join(b)
        if isinstance(s, ast.For | ast.While):
            return self.loop(s, state)
        if isinstance(s, ast.With):
            for item in s.items:
                state = self.expr(item.context_expr, state)
            return self.block(s.body, state)
        if isinstance(s, ast.Break | ast.Continue):
            # The state goes to the loop's exit (break) or back edge (continue);
            # nothing after it in this block runs.
            frame = self.loops[-1] if self.loops else None
            if frame is not None:
                (frame.breaks if isinstance(s, ast.Break) else frame.continues).append(state)
            return _State()
        if isinstance(s, ast.Return | ast.Raise):
            self.children(s, state)
            return _State()  # the thread leaves: no path continues from here
        if isinstance(s, ast.Assign):
            value = s.value
            if (
                isinstance(value, ast.Call)
                and self.ref_name(value.func) in _ACC_CTORS
                and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)
                and s.targets[0].id in self.accs
            ):
                # Made again (in a loop): plain zero stores, then the barrier inside.
                name = s.targets[0].id
                self.record(state, name, _Access("clear", s.lineno), s)
            # The value (and a barrier in it) comes before the store.
            state = self.expr(value, state)
            for target in s.targets:
                state = self.expr(target, state)
            return state
        if isinstance(s, ast.AugAssign):
            state = self.expr(s.value, state)
            target = s.target
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                state = self.expr(target.slice, state)
                self.subscript(target, state, store=False)  # `t[x] += v` reads t[x] first
                self.subscript(target, state, store=True)
                return state
            return self.expr(target, state)
        if isinstance(s, ast.AnnAssign):
            if s.value is None:
                return state
            state = self.expr(s.value, state)
            return self.expr(s.target, state)
        return self.children(s, state)

    def children(self, s: ast.stmt, state: _State) -> _State:
        for child in ast.iter_child_nodes(s):
            if isinstance(child, ast.expr):
                state = self.expr(child, state)
        return state

    def loop(self, s: ast.For | ast.While, state: _State) -> _State:
        """Iterate the body to a fixed point over the back edge (the body's end and
        every ``continue``); the exit joins the loop test's failure and every
        ``break``."""
        if isinstance(s, ast.For):
            state = self.expr(s.iter, state)
        entry = state
        while True:  # the states only grow (finitely many accesses): this ends
            head = self.expr(s.test, entry.copy()) if isinstance(s, ast.While) else entry
            frame = _Frame()
            self.loops.append(frame)
            try:
                after = self.block(s.body, head.copy())
            finally:
                self.loops.pop()
            back = after
            for c in frame.continues:
                back = back.join(c)
            joined = entry.join(back)
            if joined.seen == entry.seen:
                break
            entry = joined
        out = self.block(s.orelse, head.copy())
        for b in frame.breaks:
            out = out.join(b)
        return out

    def run(self) -> None:
        self.discover()
        if self.tiles or self.accs:
            self.block(self.fn.body, _State())


def check_phases(
    fn: ast.FunctionDef,
    *,
    ref_name: Callable[[ast.expr], str | None],
    fail: Callable[[ast.AST, str, str], SafetyError],
    is_helper: Callable[[ast.expr], bool] = lambda e: False,
) -> None:
    """Check the fill/read phases of every shared tile and accumulator of ``fn``.

    Args:
        is_helper: does a call target denote a ``@simtsafe.device`` helper (a tile
            passed to one is read there, through a read-only view)?

    Raises:
        SafetyError: ``rule="tile-phase"``, naming the read and the write lines.
    """
    _Analysis(fn, ref_name, fail, is_helper).run()
