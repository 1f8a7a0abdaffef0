"""Hash tables: refused kernels and their accepted twins (tests/ptx and tests/sim).

Each refused kernel decorates and fails when it is compiled (tests/ptx) or
when it runs on the simulator (tests/sim), with the fragment given; the
refused line is marked ``# BAD``. The common signature (``SIGNATURE``): two
tables ``keys``/``keys2`` (uint32 keys, float32 values ``vals``/``vals2``,
failure counters ``nf``/``nf2``), a float32 output ``o``, and the inputs
``q`` (uint32 keys to insert) and ``x`` (float32 values); launched with
``GRID`` blocks of ``BLOCK`` threads over ``N`` keys into tables of ``CAP``
slots.

Accepted twins insert every key of ``q`` into ``keys`` with its value from
``x``: the tests check that every key is found with its value.
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "BLOCK", "CAP", "GRID", "N", "REFUSED", "source"]

GRID, BLOCK, N, CAP = 2, 64, 100, 128

_HEAD = (
    "@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1), tables={\n"
    '    "keys": {"values": ["vals"], "failed": "nf"},\n'
    '    "keys2": {"values": ["vals2"], "failed": "nf2"},\n'
    "}))\n"
    "def k(keys: ss.HashTable[np.uint32], vals: ss.HashValues[np.float32], nf: ss.Counter, "
    "keys2: ss.HashTable[np.uint32], vals2: ss.HashValues[np.float32], nf2: ss.Counter, "
    "o: DisjointSlice[np.float32], q: In[np.uint32], x: In[np.float32]) -> None:\n"
)


def source(body: str, before: str = "") -> str:
    return before + _HEAD + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())


def _in_loop(body: str) -> str:
    return "for w in thread.grid_stride(q):\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )


#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    "values-written-with-index-1d": (
        source(_in_loop("s = keys.insert(q[w])\nvals[w] = x[w]  # BAD")),
        "a ThreadIndex[Index1D] witness cannot write the values of the hash table 'keys': only "
        "the call that inserted a key into 'keys' owns its value slot",
    ),
    "values-written-with-an-int": (
        source(_in_loop("vals[3] = x[w]  # BAD")),
        "a HashValues is written only at a slot whose key this thread inserted: w = "
        "keys.insert(k), then vals[w]",
    ),
    "values-written-at-the-found-slot": (
        source(_in_loop("s = keys.insert_or_find(q[w])\nvals[s] = x[w]  # BAD")),
        "a HashValues is written only at a slot whose key this thread inserted",
    ),
    "values-of-another-table": (
        source(_in_loop("s = keys.insert(q[w])\nvals2[s] = x[w]  # BAD")),
        "a ThreadIndex[Inserted[keys]] witness cannot write the values of the hash table 'keys2'",
    ),
    "insert-witness-writes-a-disjoint-slice": (
        source(_in_loop("s = keys.insert(q[w])\no[s] = x[w]  # BAD")),
        "a ThreadIndex[Inserted[keys]] witness cannot write a DisjointSlice of space Index1D",
    ),
    "keys-read": (
        source(_in_loop("c = keys[0]  # BAD\ns = keys.insert(q[w] + c)\nvals[s] = x[w]")),
        "the keys of a hash table are not read during the launch (other threads are inserting)",
    ),
    "keys-written": (
        source(_in_loop("keys[0] = q[w]  # BAD")),
        "the keys of a hash table are written only by keys.insert(k) (a compare-and-swap)",
    ),
    "key-that-changes-its-value": (
        source(_in_loop("s = keys.insert(w.index)  # BAD\nvals[s] = x[w]")),
        "keys.insert(k): a key of type int64 would change its value in a table of uint32 keys; "
        "convert it explicitly, e.g. np.uint32(k)",
    ),
    "float-key": (
        source(_in_loop("s = keys.insert(x[w])  # BAD\nvals[s] = x[w]")),
        "keys.insert(k): the key must be an integer; got float32",
    ),
    "find-while-inserting": (
        source(_in_loop("f = ss.hashing.find(keys, q[w])  # BAD\no[w] = x[f]")),
        "hashing.find(keys, k) reads a table that no thread is inserting into",
    ),
    "found-witness-writes-a-disjoint-slice": (
        source(_in_loop("f = ss.hashing.find(q, q[w])\no[f] = x[w]  # BAD")),
        "a ThreadIndex[Found] witness cannot write a DisjointSlice of space Index1D",
    ),
    "counter-read": (
        source("c = nf[0]  # BAD"),
        "a Counter is not read during the launch",
    ),
    "witness-arithmetic": (
        source(_in_loop("s = keys.insert(q[w])\nvals[s + 1] = x[w]  # BAD")),
        "no arithmetic",
    ),
    "helper-returns-the-witness": (
        source(
            _in_loop("s = put(keys, q[w])\nvals[s] = x[w]"),
            before="@ss.device\ndef put(t, key):\n    return t.insert(key)  # BAD\n\n\n",
        ),
        "a device helper may not return a witness",
    ),
    "barrier-steered-by-the-inserted-slot": (
        source(
            "w = thread.index_1d()\ns = keys.insert(np.uint32(7))\nvals[s] = 1.0\n"
            "if s.index < 10:\n    ss.block.sync()  # BAD"
        ),
        # The witness is valid only where this thread's compare-and-swap won (the source
        # check names the atomic; the compiled form the branch on the swap's result that
        # picks the probe's exit).
        "control flow here is thread-dependent",
    ),
    "barrier-steered-by-insert-or-find": (
        source("i = keys.insert_or_find(np.uint32(7))\nif i > 3:\n    ss.block.sync()  # BAD"),
        # The source-level check (the simulator) names the probe loop's exit; the compiled
        # form, where the probe leaves by one of several exits (its outcome a phi of
        # them), names the branch that picked the exit. Both refuse the barrier.
        "control flow here is thread-dependent",
    ),
    # Attack round on the counted probe (5c96bb3): each insert result reaching a barrier
    # through a loop's exit, a flag carried over iterations, or a trip count.
    "barrier-in-a-loop-left-on-an-insert": (
        source(
            "for i in range(4):\n    s = keys.insert(np.uint32(7 + i))\n"
            "    if s.in_bounds(vals):\n        break\n    ss.block.sync()  # BAD"
        ),
        "control flow here is thread-dependent",
    ),
    "barrier-in-a-loop-left-when-an-insert-fails": (
        source(
            "for i in range(4):\n    ss.block.sync()  # BAD\n"
            "    j = keys.insert_or_find(np.uint32(i))\n    if j < 0:\n        break"
        ),
        "control flow here is thread-dependent",
    ),
    "barrier-steered-by-a-flag-of-inserts": (
        source(
            "done = False\nfor i in range(4):\n    s = keys.insert(np.uint32(i))\n"
            "    done = done or s.in_bounds(vals)\nif done:\n    ss.block.sync()  # BAD"
        ),
        "control flow here is thread-dependent",
    ),
    "barrier-trip-count-from-insert-or-find": (
        source(
            "i = keys.insert_or_find(np.uint32(7))\nfor j in range(i):\n    ss.block.sync()  # BAD"
        ),
        "control flow here is thread-dependent",
    ),
    "witness-broadcast-to-the-warp": (
        source(_in_loop("s = keys.insert(q[w])\nt = ss.warp.broadcast(s)  # BAD\nvals[t] = x[w]")),
        "warp.broadcast(v) takes a number (an int, float or bool scalar); got "
        "ThreadIndex[Inserted[keys]]",
    ),
}

#: case -> accepted twin (inserts every key of q into keys with its value from x)
ACCEPTED: dict[str, str] = {
    "insert-and-write": source(_in_loop("s = keys.insert(q[w])\nvals[s] = x[w]")),
    "insert-write-read-back": source(
        _in_loop("s = keys.insert(q[w])\nvals[s] = x[w]\nvals[s] = vals[s] * 1")
    ),
    "written-through-in-bounds": source(
        _in_loop("s = keys.insert(q[w])\nif s.in_bounds(vals):\n    vals[s] = x[w]")
    ),
    "insert-in-a-helper": source(
        _in_loop("put(keys, vals, q[w], x[w])"),
        before="@ss.device\ndef put(t, v, key, val):\n    s = t.insert(key)\n    v[s] = val\n\n\n",
    ),
    "insert-then-insert-or-find": source(
        _in_loop(
            "s = keys.insert(q[w])\nvals[s] = x[w]\ni = keys.insert_or_find(q[w])\n"
            "o[w] = np.float32(i)"
        )
    ),
    # Twins of the attack round's refusals: the barrier is reached by every thread.
    "barrier-after-a-loop-left-on-an-insert": source(
        _in_loop(
            "for i in range(4):\n    s = keys.insert(q[w])\n    if s.in_bounds(vals):\n"
            "        vals[s] = x[w]\n        break"
        )
        + "ss.block.sync()"
    ),
    "barrier-outside-a-flag-of-inserts": source(
        "w = thread.index_1d()\ndone = False\nfor i in range(4):\n"
        "    if not done and w.in_bounds(q):\n        s = keys.insert(q[w])\n"
        "        vals[s] = x[w]\n        done = s.in_bounds(vals)\n    ss.block.sync()"
    ),
    "barrier-trip-count-from-a-block-max-of-slots": source(
        "w = thread.index_1d()\ni = -1\nif w.in_bounds(q):\n    s = keys.insert(q[w])\n"
        "    vals[s] = x[w]\n    i = keys.insert_or_find(q[w])\nt = ss.block.max(i)\n"
        "for j in range(t % 3):\n    ss.block.sync()"
    ),
    "warp-broadcast-of-a-value": source(
        "w = thread.index_1d()\nm = ss.warp.broadcast(np.float32(1))\nif w.in_bounds(q):\n"
        "    s = keys.insert(q[w])\n    vals[s] = x[w] * m"
    ),
    "collective-after-the-insert": source(
        "w = thread.index_1d()\nif w.in_bounds(q):\n    s = keys.insert(q[w])\n"
        "    vals[s] = x[w]\nt = ss.block.sum(1)\no[w] = t"
    ),
}
