"""Chunked row walks (``thread.block_row_chunks``, ``thread.warp_row_chunks``): kernels,
refused kernels and their accepted twins.

Kernels take ``out`` (2D float32, a ``BlockRow`` or ``WarpRow`` output) and ``x`` (2D
float32 input of the same shape); ``y`` is a second input where a case needs one. Each
refused kernel decorates and fails when it is compiled (tests/ptx) or run on the
simulator (tests/sim), at the line marked ``# BAD``, with the fragment given; each has an
accepted twin in ``TWINS`` that does the allowed thing next to it.
"""

from __future__ import annotations

__all__ = ["KERNELS", "REFUSED", "TWINS", "source"]

_IMPORT = "from simtsafe import BlockRow, WarpRow\n\n\n"
_C1 = "@ss.kernel(contract=ss.LaunchContract(domain=1))\n"
_FREE = "@ss.kernel\n"
_BR = "def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32]) -> None:\n"
_BR2 = (
    "def k(out: DisjointSlice[np.float32, BlockRow], x: In2D[np.float32], "
    "y: In2D[np.float32]) -> None:\n"
)
_WR = "def k(out: DisjointSlice[np.float32, WarpRow], x: In2D[np.float32]) -> None:\n"
_BR1 = "def k(out: DisjointSlice[np.float32, BlockRow], x: In[np.float32]) -> None:\n"


def source(header: str, body: str) -> str:
    return _IMPORT + header + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


_CUMSUM = """
carry = np.float32(0)
for c in thread.block_row_chunks(out):
    v = x[c]                       # 0 past the row's end
    s = ss.block.scan(v)           # every thread reaches it: uniform trip count
    out[c] = s + carry             # past the end: nothing written
    carry += ss.block.sum(v)
"""

#: name -> kernel source: what tests/sim checks against numpy and tests/ptx compiles.
KERNELS: dict[str, str] = {
    # out[r] = cumsum(x[r]): an unbounded-width row scan, a block per row
    "row_cumsum": source(_C1 + _BR, _CUMSUM),
    # the same without a contract: the launch shape is checked on the device
    "row_cumsum_free": source(_FREE + _BR, _CUMSUM),
    # out[r] = softmax(x[r]): a max and a sum per chunk (collectives inside the loop)
    "row_softmax": source(
        _C1 + _BR,
        """
m = np.float32(-np.inf)
for c in thread.block_row_chunks(x):
    v = x[c] if c.valid else np.float32(-np.inf)
    m = max(m, ss.block.max(v))
t = np.float32(0)
for c in thread.block_row_chunks(x):
    e = np.exp(x[c] - m) if c.valid else np.float32(0)
    t += ss.block.sum(e)
for c in thread.block_row_chunks(out):
    out[c] = np.exp(x[c] - m) / t
""",
    ),
    # out[r] = cumsum(x[r]) with a warp per row (lane l: columns l, l + 32, ...)
    "warp_row_cumsum": source(
        _C1 + _WR,
        """
carry = np.float32(0)
for c in thread.warp_row_chunks(out):
    v = x[c]
    out[c] = ss.warp.scan(v) + carry
    carry += ss.warp.sum(v)
""",
    ),
    # the witness's plain ints: out[r, col] = 1000 * r + col + chunk / 1000 where valid
    "coordinates": source(
        _C1 + _BR,
        """
for c in thread.block_row_chunks(out):
    if c.valid:
        out[c] = np.float32(1000 * c.row + c.col) + np.float32(c.chunk) / np.float32(1000)
""",
    ),
}

#: case -> (kernel source, fragment of the refusal); the refused line is marked # BAD.
REFUSED: dict[str, tuple[str, str]] = {
    "thread-dependent-break-before-the-scan": (
        source(
            _C1 + _BR,
            """
for c in thread.block_row_chunks(out):
    v = x[c]
    if v > 0:
        break
    out[c] = ss.block.scan(v)  # BAD
""",
        ),
        "`block.scan` needs every thread of the block to reach it, but control flow here is "
        "thread-dependent: the loop whose exit is at line 15 runs a different number of times "
        "in different threads: its exit depends on the thread's index (threadIdx, a lane id, "
        "a witness) at line 13",
    ),
    "thread-dependent-continue-before-the-scan": (
        source(
            _C1 + _BR,
            """
for c in thread.block_row_chunks(out):
    if not c.valid:
        continue
    out[c] = ss.block.scan(x[c])  # BAD
""",
        ),
        "`block.scan` needs every thread of the block to reach it, but control flow here is "
        "thread-dependent: the branch at line 14 depends on the thread's index",
    ),
    "thread-dependent-return-in-the-chunk-loop": (
        source(
            _C1 + _BR,
            """
for c in thread.block_row_chunks(out):
    if x[c] > 5:
        return
    out[c] = ss.block.scan(x[c])  # BAD
""",
        ),
        "`block.scan` needs every thread of the block to reach it, but control flow here is "
        "thread-dependent: the loop whose exit is at line 14 runs a different number of times",
    ),
    "a-collective-under-valid": (
        source(
            _C1 + _BR,
            """
for c in thread.block_row_chunks(out):
    if c.valid:
        out[c] = ss.block.sum(x[c])  # BAD
""",
        ),
        "`block.sum` needs every thread of the block to reach it, but control flow here is "
        "thread-dependent: the branch at line 14 depends on the thread's index",
    ),
    "scan-in-a-plain-block-row-loop": (
        source(
            _C1 + _BR,
            """
carry = np.float32(0)
for w in thread.block_row(out):
    v = x[w]
    s = ss.block.scan(v)  # BAD
    out[w] = s + carry
    carry += ss.block.sum(v)
""",
        ),
        "the loop whose exit is at line 14 runs a different number of times in different "
        "threads: its exit depends on the thread's index (threadIdx, a lane id, a witness) at "
        "line 14 (thread.block_row gives each thread the columns t, t + blockDim.x, ... below "
        "the width: their number differs between threads; to call a collective per column, "
        "walk the row in whole chunks, `for c in thread.block_row_chunks(s)`",
    ),
    "chunk-loop-over-a-thread-dependent-array": (
        source(
            _C1 + _BR2,
            """
s = x
if cuda.threadIdx.x < 3:
    s = y
for c in thread.block_row_chunks(s):
    out[c] = ss.block.sum(x[c])  # BAD
""",
        ),
        "`block.sum` needs every thread of the block to reach it, but control flow here is "
        "thread-dependent: the loop whose exit is at line 16 runs a different number of times "
        "in different threads: its exit depends on a value that depends on which way the "
        "branch at line 14 went",
    ),
    "warp-chunk-writes-a-block-row-output": (
        source(
            _C1 + _BR,
            """
for c in thread.warp_row_chunks(x):
    out[c] = x[c]  # BAD
""",
        ),
        "a RowChunk[WarpRow] witness cannot write a DisjointSlice of space BlockRow: its "
        "uniqueness is proven for WarpRow only",
    ),
    "block-chunk-walk-of-a-warp-row-output": (
        source(
            _C1 + _WR,
            """
for c in thread.block_row_chunks(out):  # BAD
    out[c] = x[c]
""",
        ),
        "thread.block_row_chunks() walks a DisjointSlice of space BlockRow (or a 2D input); "
        "got one of space WarpRow",
    ),
    "block-chunk-walk-of-a-1d-input": (
        source(
            _C1 + _BR1,
            """
for c in thread.block_row_chunks(x):  # BAD
    out[c] = x[c.col]
""",
        ),
        "thread.block_row_chunks() walks the row of a 2D array; got a 1D one",
    ),
}

#: refused case -> its accepted twin (with the same arguments)
TWINS: dict[str, str] = {
    # no thread leaves the loop: a flag stops the writes (a break after the scan would still
    # skip the next chunk's scan in the threads that leave)
    "thread-dependent-break-before-the-scan": source(
        _C1 + _BR,
        """
done = False
for c in thread.block_row_chunks(out):
    v = x[c]
    done = done or v > 0
    s = ss.block.scan(v)
    if not done:
        out[c] = s
""",
    ),
    "thread-dependent-continue-before-the-scan": source(
        _C1 + _BR,
        """
for c in thread.block_row_chunks(out):
    s = ss.block.scan(x[c])
    if not c.valid:
        continue
    out[c] = s
""",
    ),
    "thread-dependent-return-in-the-chunk-loop": source(
        _C1 + _BR,
        """
for c in thread.block_row_chunks(out):
    s = ss.block.scan(x[c])
    if x[c] <= 5:
        out[c] = s
""",
    ),
    "a-collective-under-valid": source(
        _C1 + _BR,
        """
for c in thread.block_row_chunks(out):
    s = ss.block.sum(x[c])
    if c.valid:
        out[c] = s
""",
    ),
    "scan-in-a-plain-block-row-loop": KERNELS["row_cumsum"],
    "chunk-loop-over-a-thread-dependent-array": source(
        _C1 + _BR2,
        """
for c in thread.block_row_chunks(x):
    out[c] = ss.block.sum(x[c]) + y[c]
""",
    ),
    "warp-chunk-writes-a-block-row-output": source(
        _C1 + _BR,
        """
for c in thread.block_row_chunks(x):
    out[c] = x[c]
""",
    ),
    "block-chunk-walk-of-a-warp-row-output": source(
        _C1 + _WR,
        """
for c in thread.warp_row_chunks(out):
    out[c] = x[c]
""",
    ),
    "block-chunk-walk-of-a-1d-input": source(
        _C1 + _BR1,
        """
for c in thread.block_row_chunks(out):
    if c.valid:  # c.col may lie past the row's end: a plain-int read is not bounds-checked
        out[c] = x[c.col]
""",
    ),
}
