"""Control-flow facts of a compiled function: dominators, post-dominators, control dependence, loops.

Plain graph algorithms over block names (Cooper, Harvey and Kennedy's
iterative dominators, run forwards and on the reversed graph with one
virtual exit that every ``ret``/``unreachable`` block -- and every block
that reaches none, such as an endless loop -- flows into).

Definitions used by the divergence analysis:

* Block ``Y`` is *control dependent* on block ``X`` when ``X`` has two
  successors, ``Y`` post-dominates one of them and does not strictly
  post-dominate ``X``: whether ``Y`` runs (and how often) is decided by the
  branch at the end of ``X``.
* A *natural loop* is the set of blocks of a back edge ``T -> H`` (``H``
  dominates ``T``); its *exits* are the edges from inside to outside.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["EXIT", "Graph", "Loop"]

#: The virtual exit node of the post-dominator tree.
EXIT = "<exit>"


@dataclass(frozen=True)
class Loop:
    header: str
    blocks: frozenset[str]
    exits: tuple[tuple[str, str], ...]  # (inside, outside) edges


def _idoms(nodes: Sequence[str], entry: str, preds: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Immediate dominators of ``nodes`` (given in reverse post-order from ``entry``)."""
    order = {n: i for i, n in enumerate(nodes)}
    idom: dict[str, str] = {entry: entry}
    changed = True
    while changed:
        changed = False
        for n in nodes[1:]:
            candidates = [p for p in preds.get(n, ()) if p in idom]
            if not candidates:
                continue
            new = candidates[0]
            for p in candidates[1:]:
                a, b = p, new
                while a != b:
                    while order[a] > order[b]:
                        a = idom[a]
                    while order[b] > order[a]:
                        b = idom[b]
                new = a
            if idom.get(n) != new:
                idom[n] = new
                changed = True
    return idom


def _rpo(entry: str, succs: Mapping[str, Sequence[str]]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    stack: list[tuple[str, int]] = [(entry, 0)]
    seen.add(entry)
    while stack:
        node, i = stack.pop()
        children = succs.get(node, ())
        if i < len(children):
            stack.append((node, i + 1))
            child = children[i]
            if child not in seen:
                seen.add(child)
                stack.append((child, 0))
        else:
            out.append(node)
    out.reverse()
    return out


@dataclass
class Graph:
    """The CFG of one function and what the analysis derives from it."""

    entry: str
    succs: dict[str, tuple[str, ...]]
    preds: dict[str, list[str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # reverse post-order (reachable blocks)
    idom: dict[str, str] = field(default_factory=dict)
    ipdom: dict[str, str] = field(default_factory=dict)
    #: block -> the branch blocks it is control dependent on
    deps: dict[str, set[str]] = field(default_factory=dict)
    loops: list[Loop] = field(default_factory=list)
    irreducible: bool = False

    @classmethod
    def build(cls, entry: str, succs: Mapping[str, Iterable[str]]) -> Graph:
        g = cls(entry, {b: tuple(dict.fromkeys(s)) for b, s in succs.items()})
        g.order = _rpo(entry, g.succs)
        reachable = set(g.order)
        g.succs = {b: tuple(s for s in g.succs.get(b, ()) if s in reachable) for b in g.order}
        g.preds = {b: [] for b in g.order}
        for b in g.order:
            for s in g.succs[b]:
                g.preds[s].append(b)
        g.idom = _idoms(g.order, entry, g.preds)
        g._post_dominators()
        g._control_dependence()
        g._natural_loops()
        return g

    # ------------------------------------------------------------------ post-dominators

    def _post_dominators(self) -> None:
        # Reverse graph: EXIT -> every exit block; blocks that reach no exit (an
        # endless loop) are connected to EXIT too, so every block is post-dominated.
        rsuccs: dict[str, list[str]] = {b: list(self.preds[b]) for b in self.order}
        exits = [b for b in self.order if not self.succs[b]]
        reaches = self._reaching(exits)
        stuck = [b for b in self.order if b not in reaches]
        rsuccs[EXIT] = exits + stuck
        rorder = _rpo(EXIT, rsuccs)
        rpreds: dict[str, list[str]] = {b: list(self.succs[b]) for b in self.order}
        rpreds[EXIT] = []
        for b in exits + stuck:
            rpreds[b] = [*rpreds[b], EXIT]
        self.ipdom = _idoms(rorder, EXIT, rpreds)

    def _reaching(self, targets: Sequence[str]) -> set[str]:
        seen = set(targets)
        work = list(targets)
        while work:
            b = work.pop()
            for p in self.preds[b]:
                if p not in seen:
                    seen.add(p)
                    work.append(p)
        return seen

    def post_dominates(self, a: str, b: str) -> bool:
        """Does ``a`` post-dominate ``b`` (every path from ``b`` to the exit passes ``a``)?"""
        while True:
            if a == b:
                return True
            parent = self.ipdom.get(b)
            if parent is None or parent == b:
                return False
            b = parent

    def _control_dependence(self) -> None:
        self.deps = {b: set() for b in self.order}
        for a in self.order:
            if len(self.succs[a]) < 2:
                continue
            stop = self.ipdom.get(a)
            for s in self.succs[a]:
                runner: str | None = s
                while runner is not None and runner != stop and runner != EXIT:
                    self.deps[runner].add(a)
                    nxt = self.ipdom.get(runner)
                    runner = None if nxt == runner else nxt

    # ------------------------------------------------------------------ loops

    def dominates(self, a: str, b: str) -> bool:
        while True:
            if a == b:
                return True
            parent = self.idom.get(b)
            if parent is None or parent == b:
                return False
            b = parent

    def _natural_loops(self) -> None:
        position = {b: i for i, b in enumerate(self.order)}
        by_header: dict[str, set[str]] = {}
        for t in self.order:
            for h in self.succs[t]:
                if position[h] > position[t]:
                    continue  # a forward edge
                if not self.dominates(h, t):
                    self.irreducible = True  # a retreating edge into a non-dominator
                    continue
                body = by_header.setdefault(h, {h})
                work = [t]
                while work:
                    n = work.pop()
                    if n not in body:
                        body.add(n)
                        work.extend(self.preds[n])
        for h, body in by_header.items():
            # in program order: a message names the first of the exits as divergent
            ordered = sorted(body, key=position.__getitem__)
            exits = tuple((b, s) for b in ordered for s in self.succs[b] if s not in body)
            self.loops.append(Loop(h, frozenset(body), exits))
