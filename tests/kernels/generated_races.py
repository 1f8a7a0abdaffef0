"""A seeded generator of Tier-1 kernels whose threads write shared memory, for the race
differential (tests/kernels/race_differential.py): the static verdict against
``simtsafe.sim.check`` on kernels that write.

Each kernel is a ``@simtsafe.kernel`` a user could write: one or two blocks of 64
threads, or 40 (a partial warp), with a 1D shared tile ``T``, a 2D shared tile ``U``
and a shared accumulator ``B``, and outputs of every Tier-1 space (``out`` through
``index_1d``/``grid_stride``, the output tile ``o`` of ``o2``, ``pb`` through
``block_leader``, ``pw`` through ``warp_leader``, the ``Accumulate`` ``h``). Its body
mixes at random, under uniform ``if``s/loops on the scalar ``n`` and under
thread-dependent ones (``threadIdx``, lanes, input values, tile values), with
``break``/``continue``/``return``:

* writes of a tile through every documented route: ``for w in thread.block_stride(t)``
  (``t[w] = v``, ``t[w] += v``, a guarded store, a read back of ``t[w]``),
  ``t[thread.local_index()]``, named ``local_index()`` / ``local_index_2d()`` witnesses,
  whole-tile fills (``fill_async`` with its commit and waits, ``fill_transposed``);
* reads of a tile: the thread's own element (through a witness), another's by index, a
  run (``vec.load``), through a ``@simtsafe.device`` helper, inside conditions, operands
  of ``and``/``or`` and beside a collective in one expression (evaluation order);
* block barriers (``block.sync()``, and one inside a helper), block collectives
  (``sum/max/min/broadcast/scan/reduce``, a tuple ``reduce``, one inside a helper),
  warp collectives (the same per warp);
* shared-accumulator updates (``add/min/max``), reads (by index, own witness, a
  ``block_stride`` walk), the accumulator made again at every iteration of a loop; global
  ``Accumulate`` updates.

A kernel has a *discipline* (0, 0.6 or 0.95): the probability that, where the
straight-line reading of the code so far says a barrier is missing between a fill and a
read (or an update and a read, a read and a refill), the generator puts one there as a
careful author would -- and keeps collectives out of thread-dependent code. Its reading
ignores where branches join and loops go round, so disciplined kernels still hold the
subtle cases; undisciplined ones are mostly racy. Loops are bounded by small constants,
``n`` or ``threadIdx.x % 3``, so every kernel ends. The same seed gives the same kernel.

A known fraction of the kernels (``PLANTED``, drawn from a random stream of their own, so
that the rest of the kernel is the one its seed gives without it) open with a *planted
fill read*: a fill of ``T`` or ``U`` through a witness and, in the same phase, a read of
another thread's element whose value reaches the output (so the compiled code keeps the
load), then a barrier. It races on replay, and only the compiled form's clash of a read
with a witness fill refuses it: the differential's self-check (a broken clash rule must
show up as an unsound acceptance) stands on these kernels.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tests.kernels.generated_race_helpers import HELPERS

__all__ = ["CONTRACTS", "PLANTED", "Generated", "generate"]

SIGNATURE = (
    "out: DisjointSlice[np.float32], o2: DisjointSlice[np.int32], "
    "pb: DisjointSlice[np.int32, PerBlock], pw: DisjointSlice[np.int32, PerWarp], "
    "h: ss.Accumulate[np.int32], a: In[np.int32], a2: In2D[np.int32], n: np.int64"
)
#: ``a``: 256 int32 (values -4 .. 6); ``a2``: 16 x 64 int32; ``h``: 16 int32.
A_SIZE, A2_SHAPE, H_SIZE, B_SIZE = 256, (16, 64), 16, 16
_REQUIRES = '["a.size >= 256"]'
#: contract key -> (the contract's source, the launch shapes (grid, block) it admits)
CONTRACTS: dict[str, tuple[str, tuple[tuple[int, int], ...]]] = {
    "block64": (f"ss.LaunchContract(domain=1, block=64, requires={_REQUIRES})", ((1, 64), (2, 64))),
    "block40": (f"ss.LaunchContract(domain=1, block=40, requires={_REQUIRES})", ((1, 40), (2, 40))),
    "max64": (
        f"ss.LaunchContract(domain=1, max_threads=64, requires={_REQUIRES})",
        ((1, 64), (2, 64), (1, 40)),
    ),
    # the tiles laid out in a window of dynamic shared memory (T: at most 512 bytes, U 512)
    "window64": (
        f"ss.LaunchContract(domain=1, block=64, tile_shared=1024, requires={_REQUIRES})",
        ((1, 64), (2, 64)),
    ),
    # T is the dynamic tile (its length read at launch: shared_mem = 4 * T's length)
    "dynamic": (
        f"ss.LaunchContract(domain=1, max_threads=64, dynamic_shared=(0, 1024), "
        f"requires={_REQUIRES})",
        ((1, 64), (2, 64), (1, 40)),
    ),
}
_TID = "cuda.threadIdx.x"
#: The variables statements assign: all three reach the kernel's last output write, so no
#: read is dead (a read LLVM drops is no read in the compiled code; the replay has it).
_TARGETS = ("x0", "x1", "x2")
_SYNC = "ss.block.sync()"
#: The fraction of kernels that open with a planted fill read (see the module's docstring).
PLANTED = 0.15


@dataclass
class Generated:
    seed: int
    source: str
    contract: str  # a key of CONTRACTS
    shapes: tuple[tuple[int, int], ...]
    features: set[str] = field(default_factory=set)
    shared_mem: int | None = None  # bytes of dynamic shared memory a launch needs


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        #: the planted fill read's own stream: planting it changes nothing else
        self.plant_rng = random.Random(f"planted fill read {seed}")
        self.features: set[str] = set()
        self.depth = 0
        self.loops = 0
        self.loop_vars: list[str] = []
        self.budget = 0
        self.names = 0
        self.vars = ["x0", "x1", "x2"]
        #: variables holding a block (warp) collective's result: uniform conditions on them
        self.uniform_vars: dict[str, str] = {}
        self.ts = 64  # T's length
        self.uc = 16  # U's columns
        self.async_pending = False
        self.discipline = 0.0
        #: what the straight-line reading says each object is in: None (after a barrier),
        #: "fill" (witness stores), "whole" (a whole-tile fill), "read", "update" (B)
        self.phase: dict[str, str | None] = {"T": None, "U": None, "B": None}
        #: enclosing thread-dependent constructs (and exits some threads took before)
        self.divergent = 0
        #: thread-dependent returns generated so far: no barrier is careful after one
        self.exits = 0
        #: statements the expression being built needs before its statement (a barrier)
        self.pre: list[str] = []

    # ------------------------------------------------------------------ discipline

    def careful(self) -> bool:
        return self.rng.random() < self.discipline

    def can_sync(self) -> bool:
        return self.divergent == 0 and self.exits == 0

    def barrier_now(self) -> None:
        """A barrier goes before the statement being built."""
        self.pre.append(_SYNC)
        self.synced()

    def synced(self) -> None:
        self.phase = dict.fromkeys(self.phase)

    def enter(self, obj: str, state: str) -> bool:
        """``obj`` is accessed as ``state``; False when a careful author would not (and
        cannot put a barrier here)."""
        now = self.phase[obj]
        clash = now is not None and now != state and not (now == "fill" and state == "own")
        if clash and self.careful():
            if not self.can_sync():
                return False
            self.barrier_now()
        if state != "own":
            self.phase[obj] = state
        return True

    # ------------------------------------------------------------------ expressions

    def fresh(self, stem: str) -> str:
        self.names += 1
        return f"{stem}{self.names}"

    def pick(self, options: list[tuple[str, float]]) -> str:
        names = [o for o, _ in options]
        weights = [w for _, w in options]
        return self.rng.choices(names, weights=weights)[0]

    def idx_t(self) -> str:
        """An int index of ``T`` (own element, another thread's, uniform, data-dependent)."""
        r, ts = self.rng, self.ts
        options = [
            f"({_TID} + 1) % {ts}",
            f"({_TID} + 32) % {ts}",
            f"{ts - 1} - {_TID}",
            f"{_TID}",
            f"{_TID} // 2",
            f"{_TID} ^ 1",
            "0",
            "n",
            "cuda.laneid",
            f"a[{_TID}] % {ts}",
            f"{r.choice(self.vars)} % {ts}",
        ]
        options += [f"{v} % {ts}" for v in self.loop_vars]
        return r.choice(options)

    def idx_u(self) -> str:
        r = self.rng
        row = r.choice(["0", "1", "n % 4", f"{_TID} % 4", f"{r.choice(self.vars)} % 4"])
        col = r.choice([f"{_TID} % {self.uc}", f"({_TID} + 1) % {self.uc}", "0", "n"])
        return f"{row}, {col}"

    def idx_b(self) -> str:
        r = self.rng
        return r.choice(
            [
                f"{_TID} % {B_SIZE}",
                "0",
                "n",
                f"a[{_TID}] % {B_SIZE}",
                f"{r.choice(self.vars)} % {B_SIZE}",
                "cuda.laneid // 2",
            ]
        )

    def atom(self) -> str:
        r = self.rng
        pool = [
            *self.vars,
            *self.vars,
            *self.loop_vars,
            _TID,
            "n",
            "cuda.laneid",
            f"a[{_TID}]",
            "a[1]",
            "i.index",
            str(r.randint(0, 5)),
            "cuda.blockIdx.x",
        ]
        return r.choice(pool)

    def read(self, avoid: str = "") -> str:
        """A read of shared memory, as an expression (int); never of ``avoid`` by index."""
        kind = self.pick(
            [
                ("t-idx", 6),
                ("t-own", 3),
                ("t-own-call", 1),
                ("u-idx", 2),
                ("u-own", 1),
                ("b-idx", 2),
                ("b-own", 1),
                ("vec", 1),
                ("helper", 1),
                ("u-helper", 0.5),
            ]
        )
        obj = {"t": "T", "v": "T", "h": "T", "u": "U", "b": "B"}[kind[0]]
        own = kind.endswith(("-own", "-own-call")) and obj != "B"
        if obj == avoid and not own and self.careful():
            return self.atom()
        if not self.enter(obj, "own" if own else "read"):
            return self.atom()
        self.features.add(f"read-{kind}")
        if kind == "t-idx":
            return f"T[{self.idx_t()}]"
        if kind == "t-own":
            return "T[lw]"
        if kind == "t-own-call":
            return "T[thread.local_index()]"
        if kind == "u-idx":
            return f"U[{self.idx_u()}]"
        if kind == "u-own":
            return "U[lw2]"
        if kind == "b-idx":
            return f"B[{self.idx_b()}]"
        if kind == "b-own":
            return "B[lw]"
        if kind == "vec":
            j = self.rng.choice([f"{_TID} // 2", "0", "n", f"({_TID} + 1) % {self.ts // 2}"])
            return f"ss.vec.load(T, {j}, 2)[{self.rng.randint(0, 1)}]"
        if kind == "helper":
            return f"h_read(T, {self.idx_t()})"
        return f"h_read(U, ({self.idx_u()}))"

    def val(self, depth: int = 0, avoid: str = "") -> str:
        r = self.rng
        k = r.random()
        if k < 0.45 or depth > 1:
            return self.atom()
        if k < 0.7:
            return self.read(avoid)
        if k < 0.92 or (not self.can_sync() and self.careful()):
            op = r.choice(["+", "-", "^"])
            return f"({self.val(depth + 1, avoid)} {op} {self.val(depth + 1, avoid)})"
        # a collective beside a read in one expression: where its barrier falls between them
        self.features.add("collective-in-expression")
        coll = r.choice(["ss.block.sum", "ss.block.max", "ss.block.broadcast", "ss.warp.sum"])
        inner = f"{coll}({self.atom()})"
        if r.random() < 0.5:
            if "block" in coll:
                self.synced()
            return f"({inner} + {self.read(avoid)})"
        other = self.read(avoid)
        if "block" in coll:
            self.synced()
        return f"({other} + {inner})"

    def cond(self, kind: str) -> str:
        r = self.rng
        c = r.randint(0, 3)
        block_vars = [v for v, scope in self.uniform_vars.items() if scope == "block"]
        warp_vars = [v for v in self.uniform_vars]
        if kind == "uniform":
            return r.choice(
                [
                    *(f"{v} > {c}" for v in block_vars),
                    f"n > {r.randint(0, 1)}",
                    f"n == {r.randint(0, 2)}",
                    "n % 2 == 0",
                    "cuda.blockIdx.x == 0",
                    f"a[1] > {r.randint(-2, 2)}",
                    f"ss.block.max(n) > {r.randint(0, 1)}",
                ]
            )
        if kind == "warp":
            return r.choice(
                [
                    f"{_TID} // 32 == 0",
                    f"{_TID} // 32 == 1",
                    f"{_TID} >= 32",
                    f"ss.warp.max({_TID}) > {r.choice([31, 40])}",
                    f"ss.warp.broadcast({r.choice(self.vars)}) > {c}",
                    *(f"{v} > {c}" for v in warp_vars),
                ]
            )
        choice = r.choice(
            [
                f"{_TID} < {r.choice([1, 17, 32, 39, 48])}",
                f"{_TID} % 2 == 0",
                f"a[{_TID}] > {r.randint(-1, 2)}",
                f"cuda.laneid < {r.choice([1, 16])}",
                f"{self.read()} > {c}",
                f"{r.choice(self.vars)} > {c}",
            ]
        )
        if r.random() < 0.15:
            self.features.add("short-circuit")
            choice = f"{self.cond('uniform')} {r.choice(['and', 'or'])} {choice}"
        return choice

    # ------------------------------------------------------------------ statements

    def fill(self, ind: str) -> list[str]:
        r = self.rng
        kind = self.pick(
            [
                ("stride", 5),
                ("stride-add", 1),
                ("stride-guard", 1),
                ("stride-own-read", 1),
                ("local", 3),
                ("local-call", 2),
                ("local-guarded", 2),
                ("u-local", 2),
                ("u-stride", 2),
                ("async", 1),
                ("transposed", 1),
                ("b-stride-read", 0.7),
                ("stride-sync", 0.6 if self.can_sync() else 0),
            ]
        )
        obj = (
            "B"
            if kind.startswith("b-")
            else "U"
            if kind in ("u-local", "u-stride", "transposed")
            else "T"
        )
        whole = kind in ("async", "transposed")
        v = self.val(avoid=obj)
        if not self.enter(obj, "read" if obj == "B" else "whole" if whole else "fill"):
            x = r.choice(_TARGETS)
            return [f"{ind}{x} = {x} ^ np.int64({v})"]
        self.features.add(f"fill-{kind}")
        w = self.fresh("w")
        if kind == "stride":
            return [
                f"{ind}for {w} in thread.block_stride(T):",
                f"{ind}    T[{w}] = {w}.index + {v}",
            ]
        if kind == "stride-sync":
            # a barrier inside the walk: every thread runs it as many times only when the
            # block divides the tile
            self.synced()
            return [
                f"{ind}for {w} in thread.block_stride(T):",
                f"{ind}    T[{w}] = {v}",
                f"{ind}    {_SYNC}",
            ]
        if kind == "stride-add":
            return [f"{ind}for {w} in thread.block_stride(T):", f"{ind}    T[{w}] += {v}"]
        if kind == "stride-guard":
            return [
                f"{ind}for {w} in thread.block_stride(T):",
                f"{ind}    if {self.cond(r.choice(['uniform', 'thread']))}:",
                f"{ind}        T[{w}] = {v}",
            ]
        if kind == "stride-own-read":
            x = r.choice(_TARGETS)
            return [
                f"{ind}for {w} in thread.block_stride(T):",
                f"{ind}    T[{w}] = {v}",
                f"{ind}    {x} = {x} + T[{w}]",
            ]
        if kind == "local":
            return [f"{ind}T[lw] = {v}"]
        if kind == "local-call":
            return [f"{ind}T[thread.local_index()] = {v}"]
        if kind == "local-guarded":
            self.divergent += 1
            cond = self.cond("thread")
            self.divergent -= 1
            return [f"{ind}if {cond}:", f"{ind}    T[lw] = {v}"]
        if kind == "u-local":
            return [f"{ind}U[lw2] = {v}"]
        if kind == "u-stride":
            return [
                f"{ind}for {w} in thread.block_stride(U):",
                f"{ind}    U[{w}] = {w}.row + {w}.col + {v}",
            ]
        if kind == "async":
            origin = r.choice(["0", "n", "8"])
            lines = [f"{ind}ss.shared.fill_async(T, a, {origin})", f"{ind}ss.shared.commit_group()"]
            if r.random() < 0.8:
                lines.append(f"{ind}ss.shared.{r.choice(['wait_all()', 'wait_group(0)'])}")
            else:
                self.async_pending = True
            return lines
        if kind == "transposed":
            return [f"{ind}ss.shared.fill_transposed(U, a2, (0, {r.choice(['0', 'n'])}))"]
        # the accumulator's own elements, walked (reads of B through block_stride witnesses)
        x = r.choice(_TARGETS)
        return [f"{ind}for {w} in thread.block_stride(B):", f"{ind}    {x} = {x} + B[{w}]"]

    def collective(self, ind: str, scope: str) -> list[str]:
        r = self.rng
        x = r.choice(_TARGETS)
        v = self.val()
        s = "block" if scope == "block" else "warp"
        kind = self.pick(
            [
                ("sum", 3),
                ("max", 2),
                ("min", 1),
                ("broadcast", 2),
                ("scan", 1),
                ("scan-ex", 1),
                ("reduce-max", 1),
                ("reduce-helper", 1),
                ("reduce-tuple", 1),
                ("helper", 1 if s == "block" else 0),
            ]
        )
        self.features.add(f"{s}-{kind}")
        if s == "block":
            self.synced()
        if kind == "reduce-tuple":
            y = r.choice(_TARGETS)
            return [
                f"{ind}p0, p1 = ss.{s}.reduce((np.int64({v}), np.int64({self.val()})), h_pair)",
                f"{ind}{x} = {x} + p0",
                f"{ind}{y} = {y} + p1",
            ]
        e = {
            "sum": f"ss.{s}.sum({v}) % 997",
            "max": f"ss.{s}.max({v})",
            "min": f"ss.{s}.min({v})",
            "broadcast": f"ss.{s}.broadcast({v})",
            "scan": f"ss.{s}.scan({v}) % 997",
            "scan-ex": f"ss.{s}.scan({v}, inclusive=False) % 997",
            "reduce-max": f"ss.{s}.reduce({v}, max)",
            "reduce-helper": f"ss.{s}.reduce({v}, h_max)",
            "helper": f"h_bsum({v})",
        }[kind]
        if r.random() < 0.3:
            # a fresh variable, uniform when the collective's result is: its branches are
            # block- (warp-) uniform. (Not x0..x2 overwritten: reads into them would be dead.)
            u = self.fresh("u")
            self.vars.append(u)
            if kind not in ("scan", "scan-ex"):
                self.uniform_vars[u] = s
            return [f"{ind}{u} = {e}", f"{ind}x0 = x0 + {u}"]
        return [f"{ind}{x} = ({x} + {e}) % 997"]

    def simple(self, ind: str) -> list[str]:
        """One statement that is not control flow (the barrier it needs first included)."""
        self.pre = []
        lines = self._simple(ind)
        return [f"{ind}{p}" for p in self.pre] + lines

    def _simple(self, ind: str) -> list[str]:
        r = self.rng
        x = r.choice(_TARGETS)
        quiet = not self.can_sync() and self.careful()  # no collective where threads diverge
        kind = self.pick(
            [
                ("assign", 5),
                ("fill", 10),
                ("read", 9),
                ("sync", 0 if quiet else 8),
                ("helper-sync", 0 if quiet else 1),
                ("block-coll", 0 if quiet else 5),
                ("warp-coll", 0 if quiet else 6),
                ("acc-update", 5),
                ("global-acc", 1.5),
                ("out", 4),
                ("pattern", 0 if quiet else 6),
                ("wait", 1 if self.async_pending else 0),
            ]
        )
        if kind == "assign":
            return [f"{ind}{x} = {x} ^ np.int64({self.val()})"]
        if kind == "fill":
            return self.fill(ind)
        if kind == "read":
            return [f"{ind}{x} = {x} + {self.read()}"]
        if kind == "sync":
            self.features.add("sync")
            self.synced()
            return [f"{ind}{_SYNC}"]
        if kind == "helper-sync":
            self.features.add("helper-sync")
            self.synced()
            return [f"{ind}{x} = h_sync({x})"]
        if kind == "block-coll":
            return self.collective(ind, "block")
        if kind == "warp-coll":
            return self.collective(ind, "warp")
        if kind == "acc-update":
            op = r.choice(["add", "add", "max", "min"])
            v = self.val(avoid="B") if op != "add" else "1"
            if not self.enter("B", "update"):
                return [f"{ind}{x} = np.int64({v})"]
            self.features.add(f"acc-{op}")
            return [f"{ind}B.{op}({self.idx_b()}, {v})"]
        if kind == "global-acc":
            self.features.add("global-acc")
            return [f"{ind}h.add({self.idx_b()}, {self.val()})"]
        if kind == "out":
            return self.out(ind)
        if kind == "wait":
            self.async_pending = False
            return [f"{ind}ss.shared.wait_all()"]
        # a fill, a barrier, reads, a barrier: the phases of a correct kernel
        self.features.add("pattern")
        lines = self.fill(ind) + [f"{ind}{_SYNC}"]
        self.synced()
        for _ in range(r.randint(1, 2)):
            y = r.choice(_TARGETS)
            lines.append(f"{ind}{y} = {y} + {self.read()}")
        if r.random() < 0.8:
            lines.append(f"{ind}{_SYNC}")
            self.synced()
        return lines

    def out(self, ind: str) -> list[str]:
        """An output write. The value goes through a variable that reaches the last write of
        ``out``, so that every read feeding it stays live: a later write of the same element
        may make this store dead, and LLVM would drop the read with it (the compiled form
        rightly sees no read then, while the replay of the source does)."""
        r = self.rng
        kind = self.pick(
            [("index", 3), ("stride", 1), ("tile", 2), ("block-leader", 1), ("warp-leader", 1)]
        )
        self.features.add(f"out-{kind}")
        x = r.choice(_TARGETS)
        keep = f"{ind}{x} = {x} ^ np.int64({self.val()})"
        g = self.fresh("g")
        if kind == "index":
            return [keep, f"{ind}out[i] = np.float32({x})"]
        if kind == "stride":
            return [
                keep,
                f"{ind}for {g} in thread.grid_stride(out):",
                f"{ind}    out[{g}] = np.float32({x} + {g}.index)",
            ]
        if kind == "tile":
            k = r.choice(["0", "1", "n", *self.loop_vars])
            return [keep, f"{ind}o[{k}] = {x}"]
        if kind == "block-leader":
            return [keep, f"{ind}pb[thread.block_leader()] = {x}"]
        return [keep, f"{ind}pw[thread.warp_leader()] = {x}"]

    def body(self, ind: str, count: int, divergent: bool, loop: bool) -> list[str]:
        """A nested block: under a thread-dependent construct if ``divergent``; a loop's
        body if ``loop`` (a careful author ends it with a barrier when it has a phase)."""
        saved = self.divergent
        names = len(self.vars)
        self.divergent += divergent
        self.loops += loop
        lines = self.block(ind, count)
        for gone in self.vars[names:]:  # bound in this block only
            self.uniform_vars.pop(gone, None)
        del self.vars[names:]
        if loop and any(self.phase.values()) and self.can_sync() and self.careful():
            lines.append(f"{ind}{_SYNC}")
            self.synced()
        self.loops -= loop
        self.divergent = saved
        return lines

    def stmt(self, ind: str) -> list[str]:
        r = self.rng
        deeper = self.depth < 3
        kind = self.pick(
            [
                ("simple", 14),
                ("if-uniform", 3 if deeper else 0),
                ("if-thread", 3 if deeper else 0),
                ("if-warp", 1 if deeper else 0),
                ("for", 3 if deeper else 0),
                ("while", 1 if deeper else 0),
                ("break", 2 if self.loops else 0),
                ("return", 1),
            ]
        )
        if kind == "simple":
            return self.simple(ind)
        self.pre = []
        if kind.startswith("if-"):
            flavor = kind[3:]
            self.features.add(kind)
            self.depth += 1
            head = f"{ind}if {self.cond(flavor)}:"
            pre = [f"{ind}{p}" for p in self.pre]
            split = flavor != "uniform"
            lines = [*pre, head, *self.body(ind + "    ", r.randint(1, 3), split, False)]
            if r.random() < 0.3:
                lines += [f"{ind}else:", *self.body(ind + "    ", r.randint(1, 2), split, False)]
            self.depth -= 1
            return lines
        if kind == "for":
            self.depth += 1
            var = f"kq{self.depth}"
            uniform = r.random() < 0.75
            bound = r.choice(["2", "n", "n + 1"]) if uniform else f"{_TID} % 3"
            self.features.add("for-uniform" if uniform else "for-thread")
            self.loop_vars.append(var)
            body = self.body(ind + "    ", r.randint(1, 4), not uniform, True)
            self.loop_vars.pop()
            self.depth -= 1
            return [f"{ind}for {var} in range({bound}):", *body]
        if kind == "while":
            self.depth += 1
            var = f"wq{self.depth}"
            bound = r.choice(["2", "n", f"{_TID} % 3"])
            self.features.add("while")
            body = self.body(ind + "    ", r.randint(1, 3), "threadIdx" in bound, True)
            self.depth -= 1
            return [
                f"{ind}{var} = 0",
                f"{ind}while {var} < {bound}:",
                f"{ind}    {var} += 1",
                *body,
            ]
        flavor = r.choice(["uniform", "thread", "warp"] + ([] if kind == "break" else ["thread"]))
        what = r.choice(["break", "continue"]) if kind == "break" else "return"
        self.features.add(f"{what}-{flavor}")
        cond = self.cond(flavor)
        pre = [f"{ind}{p}" for p in self.pre]
        if flavor != "uniform":
            # the rest of the enclosing block (the loop's body, the kernel) runs in part of
            # the threads: a careful author puts no barrier there
            if what == "return":
                self.exits += 1
            else:
                self.divergent += 1
        return [*pre, f"{ind}if {cond}:", f"{ind}    {what}"]

    def block(self, ind: str, count: int) -> list[str]:
        out: list[str] = []
        for _ in range(count):
            if self.budget <= 0:
                break
            self.budget -= 1
            out += self.stmt(ind)
        # (not `pass`: a branch on a read with an empty body would make the read dead)
        return out or [f"{ind}x0 = x0 + 1"]

    def planted(self) -> list[str]:
        """A fill through a witness and a read of another thread's element in its phase,
        whose value (``xp``) reaches the output; a barrier after them (so the kernel that
        follows starts with no phase, as without the plant)."""
        r = self.plant_rng
        kind = r.choice(["local", "local-call", "stride", "u-local"])
        self.features.add(f"planted-fill-read-{kind}")
        if kind == "u-local":
            fill = ["    U[lw2] = np.int32(x1 + n)"]
            col = r.choice([f"({_TID} + 1) % {self.uc}", f"({_TID} ^ 1) % {self.uc}"])
            read = f"U[{_TID} // {self.uc} % 4, {col}]"
        else:
            fill = {
                "local": ["    T[lw] = np.int32(x1 + n)"],
                "local-call": ["    T[thread.local_index()] = np.int32(x1 + n)"],
                "stride": ["    for wp in thread.block_stride(T):", "        T[wp] = wp.index + n"],
            }[kind]
            # another thread's element: the next one, or the neighbour of the pair (thread
            # t + 1, t ^ 1 writes it in this phase when the block has it)
            idx = r.choice([f"({_TID} + 1) % {self.ts}", f"({_TID} ^ 1) % {self.ts}"])
            read = r.choice([f"T[{idx}]", f"h_read(T, {idx})"])
        return [*fill, f"    xp = np.int64({read})", f"    {_SYNC}"]

    def kernel(self) -> Generated:
        r = self.rng
        contract = r.choice(list(CONTRACTS))
        self.ts = r.choice([64, 64, 32, 40, 128])
        self.uc = r.choice([16, 32])
        self.discipline = r.choice([0.0, 0.6, 0.95])
        self.budget = r.randint(4, 12)
        make_b = f"B = ss.shared.accumulator({B_SIZE}, np.int32)"
        dynamic = contract == "dynamic"
        make_t = (
            "ss.shared.dynamic_tile(np.int32)"
            if dynamic
            else f"ss.shared.tile({self.ts}, np.int32)"
        )
        if r.random() < 0.25:
            # the accumulator made again at every iteration of a uniform loop around the body
            self.features.add("acc-remade-in-loop")
            self.depth += 1
            self.loop_vars.append("kq0")
            inner = self.body("        ", r.randint(3, 8), False, True)
            self.loop_vars.pop()
            self.depth -= 1
            bound = r.choice(["2", "n", "n + 1"])
            body = [f"    for kq0 in range({bound}):", f"        {make_b}", *inner]
            top = []
        else:
            body = self.block("    ", r.randint(3, 8))
            top = [f"    {make_b}"]
        if self.async_pending:
            body.append("    ss.shared.wait_all()")
        plant = self.planted() if self.plant_rng.random() < PLANTED else []
        lines = [
            "import operator  # noqa: F401",
            f"from tests.kernels.generated_race_helpers import {', '.join(HELPERS)}",
            "",
            "",
            f"@ss.kernel(contract={CONTRACTS[contract][0]})",
            f"def k({SIGNATURE}) -> None:",
            "    i = thread.index_1d()",
            "    lw = thread.local_index()",
            "    lw2 = thread.local_index_2d()",
            "    o = thread.tile_1d(o2, 2)",
            f"    T = {make_t}",
            f"    U = ss.shared.tile((4, {self.uc}), np.int32)",
            *top,
            "    x0 = np.int64(0)",
            f"    x1 = np.int64({_TID})",
            "    x2 = np.int64(n)",
            *plant,
            *body,
            f"    out[i] = np.float32(x0 + x1 + x2{' + xp' if plant else ''})",
        ]
        self.features.add(f"discipline-{self.discipline}")
        self.features.add(f"contract-{contract}")
        return Generated(
            0,
            "\n".join(lines) + "\n",
            contract,
            CONTRACTS[contract][1],
            self.features,
            # the dynamic tile's bytes (without them T has no element in the replays, and
            # nothing done with it can race)
            4 * self.ts if dynamic else None,
        )


def generate(seed: int) -> Generated:
    """The kernel of ``seed`` (a module body for ``tests.kernels.load_kernel_module``)."""
    g = _Gen(seed).kernel()
    g.seed = seed
    return g
