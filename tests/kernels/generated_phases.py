"""A seeded generator of kernels that fill and read shared tiles, for the tile-phase
differential (tests/ptx/test_phase_differential.py): the compiled form's phase check against
``simtsafe.sim.check``.

Each kernel has two 4 x 16 float32 tiles ``t`` and ``u`` and a block of 64 threads (one
16-byte run a thread), and runs a random sequence, under uniform ``if``s and short loops, of:
asynchronous fills (``fill_async``, from a column that may leave the input), transposed fills
(from a 16 x 4 window), ``commit_group``, ``wait_group(0 | 1)``, ``wait_all``, block barriers,
and reads of a tile at the thread's own element or another thread's. It ends by waiting for
every copy and a barrier, so only what happens inside the sequence can race. The same seed
gives the same kernel.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Generated", "generate"]

SIGNATURE = "out: DisjointSlice[np.float32], a: In2D[np.float32], n: np.int64"
#: a: 16 x 32 float32; n = 1 at every launch
ROWS, COLS = 16, 32


@dataclass(frozen=True)
class Generated:
    seed: int
    source: str


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.depth = 0

    def stmt(self, ind: str) -> list[str]:
        r = self.rng
        tile = r.choice(["t", "u"])
        kind = r.choices(
            ["fill", "tfill", "commit", "wait", "wait_all", "sync", "read", "if", "for"],
            weights=[5, 2, 3, 2, 2, 4, 4, 1 if self.depth < 2 else 0, 1 if self.depth < 2 else 0],
        )[0]
        if kind == "fill":
            col = r.choice(["0", "16", "n", "28"])
            return [f"{ind}ss.shared.fill_async({tile}, a, (0, {col}))"]
        if kind == "tfill":
            return [f"{ind}ss.shared.fill_transposed({tile}, a, (0, {r.choice(['0', 'n'])}))"]
        if kind == "commit":
            return [f"{ind}ss.shared.commit_group()"]
        if kind == "wait":
            return [f"{ind}ss.shared.wait_group({r.choice([0, 1])})"]
        if kind == "wait_all":
            return [f"{ind}ss.shared.wait_all()"]
        if kind == "sync":
            return [f"{ind}ss.block.sync()"]
        if kind == "read":
            shift = r.choice(["0", "1", "5"])
            return [
                f"{ind}acc += {tile}[cuda.threadIdx.x // 16, (cuda.threadIdx.x + {shift}) % 16]"
            ]
        self.depth += 1
        body = self.block(ind + "    ", r.randint(1, 4))
        self.depth -= 1
        if kind == "if":
            head = f"{ind}if n {r.choice(['>', '<', '=='])} {r.choice([0, 1, 2])}:"
            return [head, *body]
        return [f"{ind}for _ in range({r.choice(['2', 'n', 'n + 1'])}):", *body]

    def block(self, ind: str, count: int) -> list[str]:
        out: list[str] = []
        for _ in range(count):
            out += self.stmt(ind)
        return out

    def kernel(self) -> str:
        lines = [
            "@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))",
            f"def k({SIGNATURE}) -> None:",
            "    w = thread.index_1d()",
            "    t = ss.shared.tile((4, 16), np.float32)",
            "    u = ss.shared.tile((4, 16), np.float32)",
            "    acc = np.float32(0)",
            *self.block("    ", self.rng.randint(3, 9)),
            "    ss.shared.wait_all()",
            "    ss.block.sync()",
            "    out[w] = acc",
        ]
        return "\n".join(lines) + "\n"


def generate(seed: int) -> Generated:
    """The kernel of ``seed`` (a module body for ``tests.kernels.load_kernel_module``)."""
    return Generated(seed, _Gen(seed).kernel())
