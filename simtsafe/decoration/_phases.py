"""Phases of shared tiles and accumulators: fill, then barrier, then read.

Between two block barriers (``simtsafe.block.sync()`` and the block
collectives, which contain one) a shared tile is in one phase:

* **fill** -- threads write elements through block-local witnesses
  (``tile[w] = v``: one writer per element) and may read back only through a
  witness (``tile[w]``: their own element);
* **read** -- threads read any element (``tile[i]``, ``tile[i, j]``, a run of them with
  ``simtsafe.vec.load(tile, ...)``); nobody writes.

A tile may also be filled *asynchronously* (``simtsafe.shared.fill_async``:
``cp.async`` copies from global memory, each thread its own runs) or
*transposed* (``simtsafe.shared.fill_transposed``). Each fill is its own
ownership scheme (which thread writes which element), so two schemes never
share an interval, and a witness read back of a thread's "own" element is
meaningful only under the witness scheme. An asynchronous fill lands when the
thread waits for its group (``shared.commit_group()`` closes a group,
``shared.wait_group(n)`` waits until at most the ``n`` newest groups are in
flight, ``shared.wait_all()`` waits for all): until then it is a write that
continues across barriers. A tile is read only after the wait *and* a barrier
(every thread waited for its own copies, then all meet). The analysis keeps,
per tile, the possible ages of its fills in flight (how many groups were
closed after each; "not yet closed" is not covered by any ``wait_group``).

A write and a read by index in the same interval would race (another thread's
element, unordered). A shared accumulator likewise: atomic updates
(``acc.add/min/max``) and plain reads (``acc[i]``) never share an interval.

The analysis walks the kernel's control flow: a barrier ends the interval;
``if``/``else`` join their states, and a joined state is checked again (one
thread may take one branch and another thread the other, in the same
interval); a thread that returns or raises keeps its interval's accesses in
the state that flows on (the other threads continue in that interval), and the
statements after a ``return``/``raise``/``break``/``continue`` (or an ``if`` whose
branches all end so) are not walked: they never run (a barrier there is none); a loop is walked until its state is
stable, so a read at the top of a loop body and a write at its bottom are
caught across the back edge (``continue`` joins the back edge, ``break`` the
loop's exit). Within an expression, accesses and barriers count in
evaluation order, and a barrier under ``and``/``or``/``x if c else y`` or in a
later operand of a chained comparison (``a < b < c`` evaluates ``c`` only when
``a < b``) is a branch. Making an accumulator (zero stores, then a barrier) is a write. Barriers are only allowed under block-uniform
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
from typing import Any

from .._errors import SafetyError
from ._uniformity import BLOCK_OPS, GRID_OPS

__all__ = ["check_phases"]

_KIND_WORDS = {
    "write": "through witnesses",
    "tfill": "transposed",
    "async": "asynchronously",
}

_TILE_CTORS = frozenset({"shared.tile", "shared.dynamic_tile"})
_ACC_CTORS = frozenset({"shared.accumulator"})
#: Calls that read their first argument, a shared tile, anywhere: reads of the read phase.
_TILE_READERS = frozenset({"vec.load", "vec.load_runs", "mma.load_a", "mma.load_b", "mma.load_b2"})
#: Calls that read their first two arguments, shared tiles, whole: reads of the read phase.
_TILE_PAIR_READERS = frozenset({"wgmma.mma", "wgmma.mma_async"})
#: Tier-1 barriers: block.sync and the block collectives (each contains one).
_BARRIERS = BLOCK_OPS | GRID_OPS  # a grid sync is a barrier of every block too
_WITNESS_CTORS = frozenset({"thread.local_index", "thread.local_index_2d"})
_ACC_UPDATES = frozenset({"add", "min", "max"})
_ASYNC_FILL = "shared.fill_async"
_TRANSPOSED_FILL = "shared.fill_transposed"
_FILLS = frozenset({_ASYNC_FILL, _TRANSPOSED_FILL})
_COMMIT = "shared.commit_group"
_WAIT_GROUP = "shared.wait_group"
_WAIT_ALL = "shared.wait_all"
#: ``wait_group(n)`` takes 0 <= n <= _MAX_WAIT; ages saturate above it.
_MAX_WAIT = 7
_OLD = _MAX_WAIT + 1
#: The age of an asynchronous fill whose group is not closed yet.
_OPEN = -1

#: Kinds of access that may not share a barrier interval, with why.
_CLASHES: dict[frozenset[str], str] = {
    frozenset({"read", "write"}): "filled",
    frozenset({"read", "tfill"}): "filled (transposed)",
    frozenset({"read", "async"}): "filled asynchronously",
    frozenset({"read", "update"}): "updated (atomically)",
    frozenset({"read", "clear"}): "cleared (made again, zero-filled)",
    frozenset({"own", "async"}): "filled asynchronously",
    frozenset({"own", "tfill"}): "filled (transposed)",
    frozenset({"write", "async"}): "filled asynchronously",
    frozenset({"write", "tfill"}): "filled (transposed)",
    frozenset({"tfill", "async"}): "filled asynchronously",
}


@dataclass(frozen=True)
class _Access:
    #: tiles: "write" (through a witness), "own" (read through a witness), "read" (by
    #: index), "async" (fill_async), "tfill" (fill_transposed); accumulators: "update",
    #: "clear", "read"
    kind: str
    line: int


def _merge(a: dict[str, frozenset[Any]], b: dict[str, frozenset[Any]]) -> dict[str, frozenset[Any]]:
    # in the order the names were met (a set's order varies from run to run: messages would)
    return {k: a.get(k, frozenset()) | b.get(k, frozenset()) for k in dict.fromkeys([*a, *b])}


@dataclass
class _State:
    """Per tracked object: the accesses of the current barrier interval, and (tiles) the
    asynchronous fills that may still be in flight, as (age, line)."""

    seen: dict[str, frozenset[_Access]] = field(default_factory=dict)
    pending: dict[str, frozenset[tuple[int, int]]] = field(default_factory=dict)

    def copy(self) -> _State:
        return _State(dict(self.seen), dict(self.pending))

    def join(self, other: _State) -> _State:
        return _State(_merge(self.seen, other.seen), _merge(self.pending, other.pending))

    def same(self, other: _State) -> bool:
        drop: frozenset[Any] = frozenset()
        return {k: v for k, v in self.seen.items() if v != drop} == {
            k: v for k, v in other.seen.items() if v != drop
        } and {k: v for k, v in self.pending.items() if v != drop} == {
            k: v for k, v in other.pending.items() if v != drop
        }

    def barrier(self) -> _State:
        """After a block barrier: fills still in flight keep writing in the new interval."""
        return _State(
            {
                t: frozenset(_Access("async", line) for _, line in p)
                for t, p in self.pending.items()
                if p
            },
            {t: p for t, p in self.pending.items() if p},
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
        # (an int, another value), or a parameter (an int until a witness is bound to
        # it: Numba types each binding apart), its subscripts are reads by index.
        args = self.fn.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        self.witnesses -= {a.arg for a in params if a is not None}
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
            if node.id in self.tiles and name in _TILE_PAIR_READERS and node in parent.args[:2]:
                return  # a read of the tile (recorded as one: `expr`)
            if node.id in self.tiles and name in _FILLS and parent.args[0] is node:
                return  # a fill of the tile (recorded as one: `expr`)
        raise self.fail(
            node,
            f"`{node.id}` is a shared tile or accumulator: index it, call its methods, pass it "
            "to thread.block_stride or len(), or pass a tile to a @simtsafe.device helper (a "
            "read-only view, read in the tile's read phase); it cannot be copied, stored or "
            "returned (its fill and read phases could not be followed). To alternate two "
            "tiles (ping-pong buffers), keep each tile's name and unroll the loop by two: "
            "fill b from a, sync, fill a from b, sync",
            "tile-phase",
        )

    # ------------------------------------------------------------ flow

    def joined(self, a: _State, b: _State, node: ast.AST) -> _State:
        """``a`` and ``b`` joined, checked: two threads of one interval may take the two
        paths, so what one path does must not clash with what the other does."""
        out = a.join(b)
        for name, seen in out.seen.items():
            self.clash(name, seen, None, node)
        return out

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
                out = self.joined(out, cur, e)
            return out
        if isinstance(e, ast.IfExp):
            state = self.expr(e.test, state)
            return self.joined(
                self.expr(e.body, state.copy()), self.expr(e.orelse, state.copy()), e
            )
        if isinstance(e, ast.Compare) and len(e.comparators) > 1:
            # `a < b < c` evaluates `c` only when `a < b` holds (it is `a < b and b < c`):
            # every comparator after the first is a branch, like a later operand of `and`.
            cur = self.expr(e.comparators[0], self.expr(e.left, state))
            out = cur
            for value in e.comparators[1:]:
                cur = self.expr(value, cur.copy())
                out = self.joined(out, cur, e)
            return out
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
            if self.ref_name(func) in _TILE_PAIR_READERS:
                for arg in e.args[:2]:  # wgmma.mma(ta, tb, acc): both tiles, whole
                    if isinstance(arg, ast.Name) and arg.id in self.tiles:
                        self.record(state, arg.id, _Access("read", e.lineno), e)
            name = self.ref_name(func)
            if name in _FILLS and e.args and isinstance(e.args[0], ast.Name):
                tile = e.args[0].id
                if tile in self.tiles:
                    self.fill(state, tile, name, e)
            if name == _COMMIT:
                state.pending = {
                    t: frozenset((min(age + 1, _OLD), line) for age, line in p)
                    for t, p in state.pending.items()
                }
            if name == _WAIT_GROUP:
                n = self.wait_count(e)
                state.pending = {
                    t: frozenset((age, line) for age, line in p if age < n)
                    for t, p in state.pending.items()
                }
            if name == _WAIT_ALL:
                state.pending = {}
            if name in _BARRIERS:
                return state.barrier()
        return state

    def wait_count(self, e: ast.Call) -> int:
        given = [*e.args, *[k.value for k in e.keywords if k.arg == "n"]]
        arg = given[0] if len(given) == 1 and len(e.args) + len(e.keywords) == 1 else None
        if not (
            isinstance(arg, ast.Constant)
            and isinstance(arg.value, int)
            and not isinstance(arg.value, bool)
            and 0 <= arg.value <= _MAX_WAIT
        ):
            raise self.fail(
                e,
                "shared.wait_group(n) takes one int literal n, 0 <= n <= "
                f"{_MAX_WAIT} (how many of the newest groups may stay in flight); "
                "got `" + ast.unparse(e) + "`. A literal, because the decorator proves "
                "which asynchronous fills have landed from the source before anything is "
                "compiled: it reads the number written in the call, not a variable's or a "
                "module constant's value. Write the number itself (`shared.wait_group(1)`)",
                "tile-phase",
            )
        return arg.value

    def fill(self, state: _State, tile: str, name: str, e: ast.Call) -> None:
        """A whole-tile fill: transposed (plain stores) or asynchronous (in flight until
        its group is waited for)."""
        flying = state.pending.get(tile, frozenset())
        if flying:
            line = min(line for _, line in flying)
            raise self.fail(
                e,
                f"shared tile `{tile}` is filled again while its asynchronous fill at line "
                f"{line} may still be in flight (on some path): the two copies into one "
                "element are unordered. Wait for the earlier fill first "
                "(simtsafe.shared.wait_group(n) / wait_all())",
                "tile-phase",
            )
        if name == _TRANSPOSED_FILL:
            self.record(state, tile, _Access("tfill", e.lineno), e)
            return
        self.record(state, tile, _Access("async", e.lineno), e)
        state.pending[tile] = frozenset({(_OPEN, e.lineno)})

    def subscript(self, node: ast.Subscript, state: _State, *, store: bool) -> None:
        """The access of ``name[...]`` (its value and index already walked)."""
        assert isinstance(node.value, ast.Name)
        name = node.value.id
        if name in self.tiles:
            if store:
                self.record(state, name, _Access("write", node.lineno), node)
            elif self._own_element(node.slice):
                self.record(state, name, _Access("own", node.lineno), node)
            else:
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
        self.clash(name, seen, access, node)
        state.seen[name] = seen | {access}

    def clash(
        self, name: str, seen: frozenset[_Access], access: _Access | None, node: ast.AST
    ) -> None:
        """Refuse two accesses of ``name`` (``access`` and one of ``seen``, or two of
        ``seen``) that may not share a barrier interval."""
        met = sorted(seen, key=lambda x: (x.line, x.kind))  # one message in every run
        pairs = (
            [(access, other) for other in met]
            if access is not None
            else [(a, b) for a in met for b in met]
        )
        for a, b in pairs:
            what = _CLASHES.get(frozenset({a.kind, b.kind}))
            if what is None:
                continue
            first, second = sorted((a, b), key=lambda x: (x.kind not in ("read", "own"), x.line))
            if access is None:  # found at a join: name the later access's line
                line = max(a.line, b.line)
                node = ast.Pass(lineno=line, col_offset=0, end_lineno=line, end_col_offset=0)
            self._refuse(name, first, second, what, node)

    def _refuse(self, name: str, a: _Access, b: _Access, what: str, node: ast.AST) -> None:
        is_acc = name in self.accs
        thing = "accumulator" if is_acc else "shared tile"
        if a.kind == "read":
            waits = (
                " and after the wait for it (simtsafe.shared.wait_group(n) or wait_all(): an "
                "asynchronous fill lands only when the thread waits for its group)"
                if b.kind == "async"
                else ""
            )
            raise self.fail(
                node,
                f"{thing} `{name}` is read by index at line {a.line} and {what} at line "
                f"{b.line} with no block barrier between them (on some path): another thread "
                "may be writing the element being read. Put simtsafe.block.sync() between the "
                f"{'updates' if is_acc else 'fill'} and the reads (every thread must reach it)"
                f"{waits}"
                + ("" if is_acc else ", or read only through the filling thread's own witness")
                + (
                    ". A tree reduction that reads and writes one tile in a step (t[me] = "
                    "t[me] + t[me.index + s]) is simtsafe.block.sum / block.reduce / "
                    "block.max in Tier 1"
                    if a.line == b.line
                    else ""
                ),
                "tile-phase",
            )
        if a.kind == "own":
            raise self.fail(
                node,
                f"shared tile `{name}` is read through a witness at line {a.line} and {what} "
                f"at line {b.line} with no block barrier between them (on some path): a "
                "witness names the thread's own element only when the tile is filled through "
                "witnesses; this fill gives the element to another thread"
                + (" (and lands only after a wait)" if b.kind == "async" else "")
                + ". Wait for the fill, put simtsafe.block.sync() after it, then read",
                "tile-phase",
            )
        raise self.fail(
            node,
            f"shared tile `{name}` is filled {_KIND_WORDS[a.kind]} at line {a.line} and "
            f"{_KIND_WORDS[b.kind]} at line {b.line} with no block barrier between them (on "
            "some path): the two fills give an element to different threads, so two threads "
            "may write it. Fill a tile one way per interval: wait for an asynchronous fill, "
            "then simtsafe.block.sync(), before filling the tile another way",
            "tile-phase",
        )

    def block(self, stmts: Sequence[ast.stmt], state: _State) -> _State:
        for s in stmts:
            state = self.stmt(s, state)
            if not _falls_through(s):
                # What follows never runs (Python drops it: a barrier there is no barrier);
                # the state of a thread that returned or raised flows on as it is.
                break
        return state

    def stmt(self, s: ast.stmt, state: _State) -> _State:
        if isinstance(s, ast.If):
            state = self.expr(s.test, state)
            a = self.block(s.body, state.copy())
            b = self.block(s.orelse, state.copy())
            return self.joined(a, b, s)
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
        if isinstance(s, ast.Assert):
            # The message is evaluated only where the test fails: a branch, like a later
            # operand of `and` (a barrier in it is not on every path).
            state = self.expr(s.test, state)
            if s.msg is None:
                return state
            return self.joined(state, self.expr(s.msg, state.copy()), s)
        if isinstance(s, ast.Return | ast.Raise):
            # The thread leaves, but what it did belongs to this interval, which the other
            # threads continue (until the next barrier): its state flows on.
            return self.children(s, state)
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
            target = s.target
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                # Python's order: the index, the read of t[x], then the value (a barrier in
                # it comes after that read), then the store.
                state = self.expr(target.slice, state)
                self.subscript(target, state, store=False)
                state = self.expr(s.value, state)
                self.subscript(target, state, store=True)
                return state
            state = self.expr(s.value, state)
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
                # Each iteration of a `for` first stores the next item into its target,
                # which may be an element (`for t[w] in ...` writes t[w]).
                start = self.expr(s.target, head.copy()) if isinstance(s, ast.For) else head
                after = self.block(s.body, start.copy())
            finally:
                self.loops.pop()
            back = after
            for c in frame.continues:
                back = self.joined(back, c, s)
            joined = self.joined(entry, back, s)
            if joined.same(entry):
                break
            entry = joined
        out = self.block(s.orelse, head.copy())
        for b in frame.breaks:
            out = self.joined(out, b, s)
        return out

    def run(self) -> None:
        self.discover()
        if self.tiles or self.accs:
            self.block(self.fn.body, _State())


def _falls_through(s: ast.stmt) -> bool:
    """May control reach the statement after ``s``? False only where it surely cannot:
    after ``return``/``raise``/``break``/``continue``, an ``if`` both of whose branches
    end so, a ``with`` whose body does, and a ``while`` with a true constant test and no
    ``break`` of its own."""
    if isinstance(s, ast.Return | ast.Raise | ast.Break | ast.Continue):
        return False
    if isinstance(s, ast.If):
        return _block_falls_through(s.body) or _block_falls_through(s.orelse)
    if isinstance(s, ast.With):
        return _block_falls_through(s.body)
    if isinstance(s, ast.While):
        test = s.test
        forever = isinstance(test, ast.Constant) and bool(test.value)
        return not forever or _breaks(s.body)
    return True


def _block_falls_through(stmts: Sequence[ast.stmt]) -> bool:
    return all(_falls_through(s) for s in stmts)


def _breaks(stmts: Sequence[ast.stmt]) -> bool:
    """Does a ``break`` in ``stmts`` leave the loop they are the body of (not an inner one)?"""
    for s in stmts:
        if isinstance(s, ast.Break):
            return True
        if isinstance(s, ast.If | ast.With) and _breaks(s.body + getattr(s, "orelse", [])):
            return True
        if isinstance(s, ast.For | ast.While) and _breaks(s.orelse):
            return True
    return False


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
