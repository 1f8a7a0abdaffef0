r"""Attack round 28 (an outside helper): the switch-condition value ranges of
``verify/_feasible`` (commit 7208bc7: Numba's tuple-index ``switch`` whose default raises
``IndexError`` loses that default when an unsigned range of its condition is all cases) and
``cuda.const.array_like`` through modules (fc7a353, ``decoration/_rewrite._const_array`` /
``_module_attribute``).

Kernels are module bodies for ``tests.kernels.load_kernel_module`` (kernel ``k``). Scratch
harness: /tmp/a28 in the session (``tryk(name, src)`` = ``load_kernel_module(tempdir,
src).k.ptx(cc=(9, 0))``, ``check_kernel_ir`` wrapped to keep the IR; a counter on
``_feasible._Eval.range``; ptxas 9.0 of /usr/local/cuda-13.0 on the PTX, ``.version``
lowered to 9.0). No GPU used. Nothing in simtsafe/ was changed.

The ranges held against every shape tried (HELD, ACCEPTED below): the analysis sees the IR
after SROA + instcombine, so ``(x & 15) >> 2``, ``(x & 1) * 2``, ``(x & 1) << 1`` arrive as
masks and are bounded; ``-(x & 3) - 1``, ``(x & 3) ^ -1`` (values -4..-1, Numba's negative
cases) are accepted and correct; one past the tuple, a 3-tuple indexed by ``& 3``, ``-5``
and ``+ 1`` (instcombine shifts the cases) stay refused. Every accepted shape is in range
for all inputs by arithmetic (no thread reaches the IndexError path); no unsound range
was found. The findings are a cost and the 64 KiB constant-bank promise.

=============================================================================================
FINDING 1 (LOW: compile-time denial of service; FIXED: each value's range kept, no operand
of an unbounded opcode evaluated): ``_Eval`` has no memo, and a two-operand
instruction evaluates both operands before looking at its opcode -- even for ``shl``,
``mul``, ``lshr``, which it then calls unbounded. An op whose index is ``s & 3`` after
``s = s << s`` repeated n times costs 2**n evaluations (counted: n=8 6,156 calls; 12:
98,316; 14: 393,228 in 3.5 s; 16: 1,572,876 in 14.4 s; ``s = s ^ (s >> 1)`` 16: 22.7 s).
``_MAX_DEPTH`` is 32, so ~30 such lines keep ``kernel.ptx()`` / ``check_kernel`` busy for
hours. The default is dropped in the end (the mask bounds it), so the verdict is right.
=============================================================================================

Fix direction: memoize ``range(v, width)`` per ``_Eval`` (a phi on the open chain is the
only context-dependent answer -- cache only results computed with no open phi hit), or
return None for an opcode without a rule before evaluating its operands; a global budget of
evaluations per switch.

=============================================================================================
FINDING 2 (LOW-MEDIUM: accepted, then fails at load; FIXED: the size of numpy's own view): an ndarray subclass whose ``size``
property lies. ``refused_array`` computes the bytes as ``value.size * itemsize`` ("not
value.nbytes: a subclass may say otherwise") -- but ``size`` is the subclass's too. A
160,000-byte float64 table viewed as ``class Big(np.ndarray): size = 4`` passes; the copy
(``np.array``, base class) keeps all 20,000 elements: ``.const .b8 _cudapy_cmem[160000]`` in
the PTX, and ptxas: "File uses too much global constant data (0x27100 bytes, 0x10000 max)".
docs/safety.md: "at most 64 KiB ... refused at decoration". Also through a module
(``hm.BIG``).
=============================================================================================

Fix direction: measure the copy (``np.array(value, ...)``, base class) after taking it, or
use ``np.ndarray.size.__get__(value)`` / ``value.__array_interface__``-free base attributes.

=============================================================================================
FINDING 3 (LOW-MEDIUM: accepted, then fails at load; FIXED: verify/_constsize.py): two constant arrays of 40,000 bytes
each in one kernel (``cuda.const.array_like(hm.T40A)``, ``cuda.const.array_like(hm.T40B)``,
``hm`` a module) are accepted: each is under 64 KiB, nothing adds them up. The PTX holds
``_cudapy_cmem[40000]`` and ``_cudapy_cmem_$_1[40000]``; ptxas: "File uses too much global
constant data (0x13880 bytes, 0x10000 max)". The shared-memory twin of this (round 22) is
refused by ``verify/_sharedsize``.
=============================================================================================

Fix direction: sum the ``addrspace(4)`` globals of the compiled form, as
``static_shared_globals`` does for ``addrspace(3)``, and refuse past 64 KiB.

Also seen (not a finding): a ``types.ModuleType`` subclass whose ``TABLE`` is a property
returning a new array per access is accepted; the property runs twice at decoration and
twice at the freeze (``hasattr`` then ``getattr``), and the kernel compiles the fourth
value -- consistent with its cache key (the copy's bytes), but the decoration-time check
looked at other arrays.

=============================================================================================
FALSE REFUSALS: safe indexes (every value a position or Numba's negative twin) refused,
listed in FALSE_REFUSALS: ``sub`` of a constant (instcombine keeps ``add -4`` whose wrap
check fails), ``| -4``, ``(x | -16) // 4``. FIXED in round 30 (tests/kernels/
range_loops30.py, op-clamped and op-bool-index): ``min(max(x, 0), 3)`` (``umin`` by 3) and
``int(x > 0)`` (``zext`` of an ``i1``) have a number bound ``0 <= k <= U``, ``U`` below the
tuple's length, which ``Ranges._within`` now accepts.
=============================================================================================
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "FALSE_REFUSALS", "FINDINGS", "HELD", "HELD_KERNELS", "op_kernel"]

_OP_KERNEL = """
TT = TUP


@ss.device
def op(x, y):
    return x + y + TT[IDX]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    out[i] = ss.block.reduce(a[i], op)
"""

_T4 = "(1.0, 2.0, 3.0, 4.0)"
_T3 = "(1.0, 2.0, 3.0)"


def op_kernel(index: str, tup: str = _T4) -> str:
    """A block reduction whose op reads ``TT[index]`` (``x``, ``y`` the op's floats)."""
    return _OP_KERNEL.replace("IDX", index).replace("TUP", tup)


_NOT_UNIFORM = "`block.reduce` needs every thread of the block to reach it"

FINDINGS: dict[str, str] = {
    # FINDING 2: the subclass says 4 elements; the copy has 20,000 (160,000 bytes)
    "const-subclass-lying-size": """
import types


class Big(np.ndarray):
    @property
    def size(self):
        return 4


hm = types.ModuleType("a28tables")
hm.BIG = np.arange(20000, dtype=np.float64).view(Big)


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], j: In[np.int64]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(hm.BIG)
    if i.in_bounds(j):
        out[i] = t[j[i] & 7]
""",
    # FINDING 3: two tables of 40,000 bytes, 80,000 bytes of constant data
    "const-two-tables-past-the-bank": """
import types

hm = types.ModuleType("a28tables")
hm.T40A = np.arange(5000, dtype=np.float64)
hm.T40B = np.arange(5000, dtype=np.float64) * 2


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], j: In[np.int64]) -> None:
    i = thread.index_1d()
    t = cuda.const.array_like(hm.T40A)
    u = cuda.const.array_like(hm.T40B)
    if i.in_bounds(j):
        out[i] = t[j[i] & 7] + u[j[i] & 7]
""",
}

#: FINDING 1 on the compiled target: ``s = s << s`` n times, then ``TT[s & 3]``.
SHIFT_CHAIN = """
TT = (1.0, 2.0, 3.0, 4.0)


@ss.device
def op(x, y):
    s = int(x)
BODY
    return x + y + TT[s & 3]


@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float64], a: In[np.float64]) -> None:
    i = thread.index_1d()
    out[i] = ss.block.reduce(a[i], op)
"""

#: Refused and unsafe: some input takes the IndexError default (value, message fragment).
HELD_KERNELS: dict[str, tuple[str, str]] = {
    "index-minus-5": (op_kernel("(int(x) & 3) - 5"), _NOT_UNIFORM),
    "index-plus-1": (op_kernel("(int(x) & 3) + 1"), _NOT_UNIFORM),
    "three-tuple-mask-3": (op_kernel("int(x) & 3", _T3), _NOT_UNIFORM),
    "three-tuple-or-of-masks": (op_kernel("(int(x) & 1) | (int(y) & 2)", _T3), _NOT_UNIFORM),
    "xor-negative-4": (op_kernel("(int(x) & 3) ^ -8"), _NOT_UNIFORM),
    "loop-incremented-index": (
        _OP_KERNEL.replace(
            "    return x + y + TT[IDX]",
            "    j = 0\n    for _ in range(int(y) & 7):\n        j += 1\n    return x + y + TT[j]",
        ).replace("TUP", _T4),
        _NOT_UNIFORM,
    ),
}

#: Accepted and sound: every value of the index is a case (checked by arithmetic).
ACCEPTED: dict[str, str] = {
    "negated-mask-minus-1": op_kernel("-(int(x) & 3) - 1"),  # -4..-1
    "mask-xor-minus-1": op_kernel("(int(x) & 3) ^ -1"),  # -4..-1
    "mask-shifted-left": op_kernel("(int(x) & 1) << 1"),  # 0, 2
    "mask-shifted-right": op_kernel("(int(x) & 15) >> 2"),  # 0..3
    "mask-times-2": op_kernel("(int(x) & 1) * 2"),
    "i16-round-trip-mask": op_kernel("np.int64(np.int16(int(x) & 0xFFFF)) & 3"),
    "one-tuple-mask-0": op_kernel("int(x) & 0", "(1.0,)"),
}

HELD: dict[str, str] = {
    "switch-ranges": "lshr/shl/mul arrive as masks after instcombine and are bounded "
    "correctly; sub/xor/or with negative constants, wrapping adds, 3-tuples, one past the "
    "tuple, a loop-carried index stay refused (HELD_KERNELS, ACCEPTED)",
    "const-module-chain": "a ModuleType subclass with a property is a module; its value is "
    "checked again at the freeze (refused_array) and the compiled bytes are the cache key",
}

#: Safe, refused (message: _NOT_UNIFORM).
FALSE_REFUSALS: dict[str, str] = {
    "mask-minus-4": op_kernel("(int(x) & 3) - 4"),  # -4..-1
    "mask-or-minus-4": op_kernel("(int(x) & 3) | -4"),  # -4..-1
    "negative-floor-div": op_kernel("(int(x) | -16) // 4"),  # -4..-1
}
