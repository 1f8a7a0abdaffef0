"""Block claims (``buf.block_claim(keep)``): refused kernels and their accepted twins.

Used by tests/ptx (the compiled-form check) and tests/sim (the source-level
check the simulator runs). Each refused kernel is refused with the fragment
given, at the line marked ``# BAD``; each accepted twin compacts ``x > 0``
into ``out``: the tests check that every positive element is stored once and
nothing else (a thread whose ``keep`` is false writes through its witness
unconditionally: the invalid witness writes nothing).

The common signature (``_HEAD``) is the one of tests/kernels/append_rules.py:
two append buffers ``out``/``out2`` of float32 with their counters
``n``/``n2``, a float32 output ``o`` and a float32 input ``x``; launched with
``GRID`` blocks of ``BLOCK`` threads over ``N`` elements.
"""

from __future__ import annotations

from .append_rules import BLOCK, GRID, N, source

__all__ = ["ACCEPTED", "BLOCK", "GRID", "N", "REFUSED", "UNIFORM_LOOP"]

#: A block-uniform loop over x: every thread of the block runs the same number of rounds
#: (the trip count is computed from the size and the grid), one element per thread a round.
UNIFORM_LOOP = """
size = x.size
stride = cuda.gridDim.x * cuda.blockDim.x
i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
for _ in range((size + stride - 1) // stride):
    v = x[i] if i < size else np.float32(0)
{body}
    i += stride
"""


def _uniform(body: str) -> str:
    """``body`` (lines indented by 4: inside the loop) in ``UNIFORM_LOOP``."""
    return UNIFORM_LOOP.replace("{body}", body.strip("\n"))


_DIVERGENCE = "block_claim` needs every thread of the block to reach it"

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "under-a-data-dependent-branch": (
        source(
            "for w in thread.grid_stride(x):\n"
            "    if x[w] > 0:\n"
            "        s = out.block_claim(True)  # BAD\n"
            "        out[s] = x[w]"
        ),
        _DIVERGENCE,
    ),
    "in-a-grid-stride-loop": (
        # grid_stride's trip count differs between the threads of the last round's block
        source(
            "for w in thread.grid_stride(x):\n"
            "    s = out.block_claim(x[w] > 0)  # BAD\n"
            "    out[s] = x[w]"
        ),
        _DIVERGENCE,
    ),
    "after-an-early-return": (
        source(
            "w = thread.index_1d()\n"
            "if not w.in_bounds(x):\n"
            "    return\n"
            "s = out.block_claim(x[w] > 0)  # BAD\n"
            "out[s] = x[w]"
        ),
        _DIVERGENCE,
    ),
    "after-a-thread-dependent-break": (
        source(
            "i = cuda.threadIdx.x\n"
            "for r in range(4):\n"
            "    if r == i:\n"
            "        break\n"
            "    s = out.block_claim(True)  # BAD\n"
            "    out[s] = np.float32(r)"
        ),
        _DIVERGENCE,
    ),
    "in-a-helper-under-a-branch": (
        source(
            "i = cuda.threadIdx.x\nif i < 16:\n    push(out, np.float32(1))  # BAD",
            before=(
                "@ss.device\ndef push(buf, v):\n    s = buf.block_claim(v > 0)\n"
                "    buf[s] = v\n\n\n"
            ),
        ),
        "needs every thread of the block to reach it",
    ),
    "steered-by-its-own-slot": (
        source(
            _uniform(
                "    s = out.block_claim(v > 0)\n"
                "    out[s] = v\n"
                "    if s.in_bounds(out):\n"
                "        t = out2.block_claim(True)  # BAD\n"
                "        out2[t] = v"
            )
        ),
        _DIVERGENCE,
    ),
    "keep-is-not-a-bool": (
        source(_uniform("    s = out.block_claim(v)  # BAD\n    out[s] = v")),
        "out.block_claim(keep) takes one bool, whether this thread appends an item",
    ),
    "witness-writes-another-buffer": (
        source(_uniform("    s = out.block_claim(v > 0)\n    out2[s] = v  # BAD")),
        "a ThreadIndex[Appended[out]] witness cannot write the AppendBuffer 'out2'",
    ),
    "witness-writes-a-disjoint-slice": (
        source(_uniform("    s = out.block_claim(v > 0)\n    o[s] = v  # BAD")),
        "a ThreadIndex[Appended[out]] witness cannot write a DisjointSlice of space Index1D",
    ),
    "witness-arithmetic": (
        source(_uniform("    s = out.block_claim(v > 0)\n    out[s + 1] = v  # BAD")),
        "no arithmetic",
    ),
}

#: case -> accepted twin (compacts x > 0 into out)
ACCEPTED: dict[str, str] = {
    # A thread whose keep is false writes through its (invalid) witness: nothing is written.
    "unconditional-write": source(_uniform("    s = out.block_claim(v > 0)\n    out[s] = v")),
    "written-under-in-bounds": source(
        _uniform(
            "    s = out.block_claim(v > 0 and i < size)\n    if s.in_bounds(out):\n"
            "        out[s] = v"
        )
    ),
    "witness-kept-to-the-next-round": source(
        # a slot won in one round and written again in the next: still this thread's alone
        "keep_s = out.block_claim(False)\n"
        + _uniform(
            "    out[keep_s] = out[keep_s]\n"
            "    s = out.block_claim(v > 0)\n"
            "    out[s] = v\n"
            "    keep_s = s"
        )
    ),
    "next-to-a-per-warp-claim": source(
        # both add to the one counter: the ranges of the two kinds of fetch-add are disjoint
        _uniform(
            "    s = out.block_claim(v > 0 and i % 2 == 0)\n"
            "    out[s] = v\n"
            "    if v > 0 and i % 2 == 1:\n"
            "        t = out.claim()\n"
            "        out[t] = v"
        )
    ),
    "in-a-helper-called-by-every-thread": source(
        _uniform("    push(out, v)"),
        before="@ss.device\ndef push(buf, v):\n    s = buf.block_claim(v > 0)\n    buf[s] = v\n\n\n",
    ),
    "after-a-block-collective": source(
        _uniform(
            "    m = ss.block.max(v)\n    s = out.block_claim(v > 0 and m > 0)\n    out[s] = v"
        )
    ),
}
