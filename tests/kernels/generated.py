"""A seeded generator of Tier-1 kernels that cooperate, for the static-vs-dynamic differential.

Each kernel mixes, at random places: nested ``if``/``for``/``while`` with
``break``/``continue``/``return``, thread-dependent and uniform values
(``threadIdx``, lanes, warps, ``blockIdx``, the scalar parameter, loads at
uniform and at thread-dependent addresses), tuple indexing that may be out of
range (an implicit exit), guarded reads of a slice of the input and ``vec.load`` runs at
uniform and thread-dependent indices, tuples indexed at masked positions and at range-loop
variables, thread-private arrays filled and read back, atomics inside unsafe regions whose
results steer
later code, ``@simtsafe.device`` helpers with barriers under their
parameters, and block barriers and block/warp collectives.

Loops are bounded by small constants or the parameter, so every kernel ends.
The same seed gives the same kernel.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tests.kernels.generated_helpers import HELPERS

__all__ = ["Generated", "generate"]

SIGNATURE = "out: DisjointSlice[np.float32], a: In[np.float32], n: int"
CONTRACT = "ss.LaunchContract(domain=1, max_threads=64)"


@dataclass
class Generated:
    seed: int
    source: str
    features: set[str] = field(default_factory=set)


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.features: set[str] = set()
        self.loop_depth = 0
        self.depth = 0
        self.budget = 0
        self.vars = ["x0", "x1", "x2"]
        self.loop_vars: list[str] = []
        self.helper_names: list[str] = []

    # ------------------------------------------------------------------ expressions

    def atom(self, uniform_only: bool = False) -> str:
        r = self.rng
        uniform = ["n", "n % 3", "2", "5", "cuda.blockIdx.x", "cuda.blockDim.x // 32", "int(a[1])"]
        thread = [
            "cuda.threadIdx.x",
            "cuda.threadIdx.x % 2",
            "cuda.threadIdx.x // 32",
            "cuda.laneid",
            "int(a[cuda.threadIdx.x])",
            "(cuda.threadIdx.x * 7) % 5",
        ]
        pool = uniform + ([] if uniform_only else thread) + self.vars + self.loop_vars
        choice = r.choice(pool)
        if choice in thread:
            self.features.add("thread-value")
        return choice

    def expr(self) -> str:
        r = self.rng
        k = r.random()
        if k < 0.55:
            return self.atom()
        if k < 0.8:
            return f"({self.atom()} {r.choice(['+', '-', '*'])} {self.atom()})"
        if k < 0.9:
            return f"min({self.atom()}, {r.randint(1, 6)})"
        self.features.add("tuple-index")
        k = r.random()
        if k < 0.4:
            return f"(3, 5, 7)[({self.atom()}) % {r.choice([3, 3, 4])}]"
        if k < 0.7:  # a masked position: in range for & 3, may leave the tuple for & 7
            return f"(3, 5, 7, 9)[int({self.atom()}) & {r.choice([3, 3, 7])}]"
        if self.loop_vars:  # a range loop's variable: in range when the bound is at most 4
            self.features.add("tuple-index-loop")
            return f"(3, 5, 7, 9)[{r.choice(self.loop_vars)}]"
        return f"(3, 5, 7, 9)[min({self.atom()}, 3)]"

    def cond(self) -> str:
        r = self.rng
        c = f"{self.expr()} {r.choice(['>', '<', '==', '>='])} {r.randint(0, 6)}"
        if r.random() < 0.15:
            c = f"{c} {r.choice(['and', 'or'])} {self.atom()} > {r.randint(0, 3)}"
        return c

    # ------------------------------------------------------------------ statements

    def block(self, ind: str, n: int) -> list[str]:
        out: list[str] = []
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            out += self.stmt(ind)
        return out or [f"{ind}pass"]

    def stmt(self, ind: str) -> list[str]:
        r = self.rng
        k = r.random()
        v = r.choice(self.vars)
        deeper = self.depth < 3
        if k < 0.18:
            return [f"{ind}{v} = {self.expr()}"]
        if k < 0.30 and deeper:
            self.depth += 1
            body = [f"{ind}if {self.cond()}:", *self.block(ind + "    ", r.randint(1, 3))]
            if r.random() < 0.35:
                body += [f"{ind}else:", *self.block(ind + "    ", r.randint(1, 2))]
            self.depth -= 1
            return body
        if k < 0.40 and deeper:
            self.depth += 1
            self.loop_depth += 1
            var = f"k{self.depth}"
            bound = r.choice(["n", "3", "min(n, 4)", self.atom(), f"min({self.atom()}, 4)"])
            self.loop_vars.append(var)
            lines = [
                f"{ind}for {var} in range({bound}):",
                *self.block(ind + "    ", r.randint(1, 3)),
            ]
            self.loop_vars.pop()
            self.loop_depth -= 1
            self.depth -= 1
            self.features.add("for")
            return lines
        if k < 0.46 and deeper:
            self.depth += 1
            self.loop_depth += 1
            var = f"w{self.depth}"
            lines = [
                f"{ind}{var} = 0",
                f"{ind}while {var} < {r.choice(['3', 'min(n, 4)', f'min({self.atom()}, 3)'])}:",
                f"{ind}    {var} += 1",
                *self.block(ind + "    ", r.randint(1, 2)),
            ]
            self.loop_depth -= 1
            self.depth -= 1
            self.features.add("while")
            return lines
        if k < 0.52 and self.loop_depth:
            self.features.add("break")
            return [f"{ind}if {self.cond()}:", f"{ind}    {r.choice(['break', 'continue'])}"]
        if k < 0.56:
            self.features.add("return")
            return [f"{ind}if {self.cond()}:", f"{ind}    return"]
        if k < 0.68:
            self.features.add("barrier")
            return [f"{ind}ss.block.sync()"]
        if k < 0.80:
            op = r.choice(["ss.block.sum", "ss.block.max", "ss.block.broadcast", "ss.warp.sum"])
            self.features.add("warp-collective" if "warp" in op else "block-collective")
            return [f"{ind}{v} = int({op}(np.float32({self.expr()})))"]
        if k < 0.86:
            self.features.add("atomic")
            return [
                f'{ind}with ss.unsafe("SAFETY: generated: a counter in shared scratch"):',
                f"{ind}    c = cuda.shared.array(1, np.int32)",
                f"{ind}    {v} = cuda.atomic.add(c, 0, 1)",
            ]
        if k < 0.94:
            name = self.helper()
            self.features.add("helper")
            return [f"{ind}{v} = {name}({self.expr()}, {self.expr()})"]
        if k < 0.97:
            return self.guarded_read(ind, v) if r.random() < 0.5 else self.private(ind, v)
        return [f"{ind}{v} = {v} + 1"]

    def private(self, ind: str, v: str) -> list[str]:
        """A thread-private array (``cuda.local.array``): elements stored at constant or
        computed positions (maybe not all of them, maybe under a branch), then one read back
        -- as uniform as what was stored, where every element was stored first."""
        r = self.rng
        self.features.add("local-array")
        lines = [f"{ind}t = cuda.local.array(4, np.int32)"]
        if r.random() < 0.6:
            lines += [f"{ind}for q in range(4):", f"{ind}    t[q] = {self.expr()}"]
        else:
            lines += [f"{ind}t[{r.randint(0, 3)}] = {self.expr()}"]
        if r.random() < 0.3:
            lines += [f"{ind}if {self.cond()}:", f"{ind}    t[{r.randint(0, 3)}] = {self.expr()}"]
        where = r.choice([str(r.randint(0, 3)), f"int({self.atom()}) & 3"])
        return [*lines, f"{ind}{v} = int(t[{where}])"]

    def guarded_read(self, ind: str, v: str) -> list[str]:
        """A read of the input at an index (uniform or not) under a guard: of a slice
        (``a[1:][g]`` under ``g < b.size``, or the wrong ``g <= b.size``) or a run of
        ``vec.load`` (which guards itself)."""
        r = self.rng
        self.features.add("guarded-read")
        g = self.atom()
        if r.random() < 0.5:
            test = r.choice(["0 <= g < b.size", "0 <= g < b.size", "0 <= g <= b.size"])
            return [
                f"{ind}b = a[1:]",
                f"{ind}g = {g}",
                f"{ind}if {test}:",
                f"{ind}    {v} = int(b[g])",
            ]
        return [
            f"{ind}g = {g}",
            f"{ind}if 0 <= g < a.size:",
            f"{ind}    {v} = int(ss.vec.load(a, g, 2)[{r.randint(0, 1)}])",
        ]

    def helper(self) -> str:
        name = self.rng.choice(HELPERS)
        self.helper_names.append(name)
        self.features.add(
            {
                "h_barrier_if": "helper-barrier",
                "h_nested": "helper-barrier",
                "h_exit": "helper-exit",
            }.get(name, "helper")
        )
        return name

    def kernel(self) -> str:
        self.budget = self.rng.randint(3, 9)
        body = self.block("    ", self.rng.randint(3, 6))
        head = [
            f"from tests.kernels.generated_helpers import {', '.join(HELPERS)}",
            "",
            f"@ss.kernel(contract={CONTRACT})",
            f"def k({SIGNATURE}) -> None:",
        ]
        init = ["    i = thread.index_1d()", "    x0 = 0", "    x1 = 1", "    x2 = n"]
        tail = ["    out[i] = np.float32(x0 + x1 + x2)"]
        return "\n".join(head + init + body + tail) + "\n"


def generate(seed: int) -> Generated:
    g = _Gen(seed)
    source = g.kernel()
    return Generated(seed, source, g.features)
