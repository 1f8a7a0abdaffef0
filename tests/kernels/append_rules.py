"""Append buffers: refused kernels and their accepted twins (tests/ptx and tests/sim).

Each refused kernel decorates and fails when it is compiled (tests/ptx) or
when it runs on the simulator (tests/sim), with the fragment given; the
refused line is marked ``# BAD``. Each has an accepted twin that does the
allowed thing next to it. Kernels are named ``k``; the common signature
(``SIGNATURE``) is two append buffers ``out``/``out2`` of float32 with their
counters ``n``/``n2``, a float32 output ``o`` and a float32 input ``x``;
launched with ``GRID`` blocks of ``BLOCK`` threads over ``N`` elements.

Accepted twins compact ``x > 0`` into ``out`` (and, for some, ``out2``): the
tests check that every positive element is stored once and nothing else.
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "BLOCK", "GRID", "N", "REFUSED", "TYPED", "source"]

GRID, BLOCK, N = 2, 64, 128

_HEAD = (
    '@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1), appends={"out": "n", '
    '"out2": "n2"}))\n'
    "def k(out: ss.AppendBuffer[np.float32], n: ss.Counter, out2: ss.AppendBuffer[np.float32], "
    "n2: ss.Counter, o: DisjointSlice[np.float32], x: In[np.float32]) -> None:\n"
)


def source(body: str, before: str = "") -> str:
    return before + _HEAD + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


_LOOP = "for w in thread.grid_stride(x):\n    if x[w] > 0:\n"


def _in_loop(body: str) -> str:
    return _LOOP + "".join(f"        {line}\n" for line in body.strip("\n").splitlines())


#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "written-with-index-1d": (
        source(_in_loop("out[w] = x[w]  # BAD")),
        "a ThreadIndex[Index1D] witness cannot write the AppendBuffer 'out': only a slot won "
        "by out.claim() is this thread's there",
    ),
    "written-with-an-int": (
        source(_in_loop("out[3] = x[w]  # BAD")),
        "an AppendBuffer is written only at a slot this thread claimed: w = out.claim(), then "
        "out[w]",
    ),
    "written-with-the-slot-number": (
        source(_in_loop("s = out.claim()\nout[s.index] = x[w]  # BAD")),
        "an AppendBuffer is written only at a slot this thread claimed",
    ),
    "witness-of-another-buffer": (
        source(_in_loop("s = out.claim()\nout2[s] = x[w]  # BAD")),
        "a ThreadIndex[Appended[out]] witness cannot write the AppendBuffer 'out2'",
    ),
    "read-with-another-buffers-witness": (
        source(_in_loop("s = out2.claim()\nout2[s] = out[s]  # BAD")),
        "a ThreadIndex[Appended[out2]] witness cannot read the AppendBuffer 'out'",
    ),
    "claim-witness-writes-a-disjoint-slice": (
        source(_in_loop("s = out.claim()\no[s] = x[w]  # BAD")),
        "a ThreadIndex[Appended[out]] witness cannot write a DisjointSlice of space Index1D",
    ),
    "witness-arithmetic": (
        source(_in_loop("s = out.claim()\nout[s + 1] = x[w]  # BAD")),
        "no arithmetic",
    ),
    "witness-comparison": (
        source(_in_loop("s = out.claim()\nif s < 10:  # BAD\n    out[s] = x[w]")),
        "no arithmetic",
    ),
    "counter-read": (
        source(_in_loop("c = n[0]  # BAD\ns = out.claim()\nout[s] = x[w] + c")),
        "a Counter is not read during the launch (other threads are adding to it)",
    ),
    "counter-written": (
        source("n[0] = 0  # BAD"),
        "a Counter is not written by kernel code",
    ),
    "counter-attribute": (
        source("c = n.size  # BAD"),
        "a Counter has no .size",
    ),
    "claim-on-an-input": (
        source(_in_loop("s = x.claim()  # BAD\nout[s] = x[w]")),
        "`.claim` is not available on it",
    ),
    "claim-with-an-argument": (
        source(_in_loop("s = out.claim(1)  # BAD\nout[s] = x[w]")),
        "out.claim() takes no arguments",
    ),
    "helper-returns-the-witness": (
        source(
            "for w in thread.grid_stride(x):\n    s = take(out)\n    out[s] = x[w]",
            before="@ss.device\ndef take(buf):\n    return buf.claim()  # BAD\n\n\n",
        ),
        "a device helper may not return a witness",
    ),
    "helper-returns-the-witness-in-a-tuple": (
        source(
            "for w in thread.grid_stride(x):\n    s, v = take(out, x[w])\n    out[s] = v",
            before="@ss.device\ndef take(buf, v):\n    return buf.claim(), v  # BAD\n\n\n",
        ),
        "a device helper may not return a witness",
    ),
    "witness-through-a-collective": (
        source("s = out.claim()\nt = ss.warp.broadcast(s)  # BAD\nout[t] = 1.0"),
        "warp.broadcast(v) takes a number (an int, float or bool scalar); got "
        "ThreadIndex[Appended[out]]",
    ),
    "grid-stride-over-the-buffer": (
        source("for w in thread.grid_stride(out):  # BAD\n    o[w] = 1.0"),
        "thread.grid_stride() takes a DisjointSlice or an input array, got AppendBuffer[",
    ),
    "raw-atomic-result-as-a-slot": (
        source(
            "w = thread.index_1d()\n"
            'with ss.unsafe("SAFETY: one thread per element updates o[0] atomically"):\n'
            "    i = cuda.atomic.add(o.unchecked, 0, 1.0)\n"
            "    j = int(i)\n"
            "out[j] = x[w]  # BAD"
        ),
        "an AppendBuffer is written only at a slot this thread claimed",
    ),
    "barrier-steered-by-the-slot": (
        source(
            "w = thread.index_1d()\ns = out.claim()\nout[s] = x[w]\n"
            "if s.index < 10:\n    ss.block.sync()  # BAD"
        ),
        "the result of an atomic",
    ),
}

#: case -> accepted twin (compacts x > 0 into out)
ACCEPTED: dict[str, str] = {
    "claim-and-write": source(_in_loop("s = out.claim()\nout[s] = x[w]")),
    "claim-read-back": source(_in_loop("s = out.claim()\nout[s] = x[w]\nout[s] = out[s] * 1")),
    "written-through-in-bounds": source(
        _in_loop("s = out.claim()\nif s.in_bounds(out):\n    out[s] = x[w]")
    ),
    "slot-number-reads-an-input": source(_in_loop("s = out.claim()\nout[s] = x[w] + 0 * x[s]")),
    "each-buffer-its-own-claim": source(
        _in_loop("s = out.claim()\nout[s] = x[w]\ns2 = out2.claim()\nout2[s2] = x[w]")
    ),
    "claim-in-a-helper": source(
        "for w in thread.grid_stride(x):\n    if x[w] > 0:\n        push(out, x[w])",
        before="@ss.device\ndef push(buf, v):\n    s = buf.claim()\n    buf[s] = v\n\n\n",
    ),
    "claim-through-an-alias": source(_in_loop("b = out\ns = b.claim()\nout[s] = x[w]")),
    "collective-after-the-claim": source(
        "w = thread.index_1d()\nv = x[w] if w.in_bounds(x) else np.float32(0)\n"
        "if v > 0:\n    s = out.claim()\n    out[s] = v\nt = ss.block.sum(v)\no[w] = t"
    ),
}

#: A record buffer and a bf16 buffer, claimed in one loop (kernel ``k``, record dtype ``Rec``).
TYPED = """
Rec = np.dtype([("i", np.int32), ("v", np.float32)], align=True)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=(32, 1, 1), appends={"out": "n", "h": "m"}))
def k(out: ss.AppendBuffer[Rec], n: ss.Counter, h: ss.AppendBuffer[ss.bfloat16], m: ss.Counter,
      x: In[np.float32]) -> None:
    for w in thread.grid_stride(x):
        if x[w] > 0:
            s = out.claim()
            out[s].i = np.int32(w.index)
            out[s].v = x[w]
            t = h.claim()
            h[t] = x[w]
"""
