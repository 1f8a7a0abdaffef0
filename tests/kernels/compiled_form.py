"""Issue 16's classes, decided on the compiled form: each refused kernel with its accepted twin.

Shared by tests/ptx (``ptx()``: typing and the compiled-form checks on the
CUDA target) and tests/sim (the first simulator compile asks the compile
worker for the same verdict, then the twin runs): a kernel passes on the
simulator exactly when it compiles for the GPU. Each refusal asserts the
rule, a fragment of the message, the user's line (``# BAD``) and, where the
cause is elsewhere, that line too (``# COND``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module, run_or_compile

F32 = np.float32
B64 = "ss.LaunchContract(domain=1, block=64)"
SIG = "out: DisjointSlice[np.float32], a: In[np.float32], n: int"


def _compile(kernel: ss.Kernel) -> None:  # type: ignore[type-arg]
    if ss.SIMULATOR:
        kernel.prepare(grid=1, block=64)
    else:
        kernel.ptx()


def refused(tmp_path: Path, source: str, fragment: str, rule: str = "uniformity") -> ss.SafetyError:
    with pytest.raises(ss.SafetyError) as info:
        mod = load_kernel_module(tmp_path, source)
        _compile(mod.k)
    exc = info.value
    assert exc.rule == rule, (exc.rule, str(exc))
    assert fragment in str(exc), str(exc)
    assert exc.lineno == line_of(tmp_path, "# BAD"), (exc.lineno, str(exc))
    if "# COND" in source:
        assert f"line {line_of(tmp_path, '# COND')}" in str(exc), str(exc)
    return exc


def accepted(tmp_path: Path, source: str) -> np.ndarray | None:
    """Compiles on the CUDA target; on the simulator also runs on 64 elements."""
    mod = load_kernel_module(tmp_path, source)
    _compile(mod.k)
    res = run_or_compile(mod.k, 1, 64, np.zeros(64, F32), np.arange(64, dtype=F32), 3)
    return None if res is None else res[0]


def pair(tmp_path: Path, bad: str, good: str, fragment: str, rule: str = "uniformity") -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "good").mkdir()
    refused(tmp_path / "bad", bad, fragment, rule)
    accepted(tmp_path / "good", good)


def kernel(body: str, helpers: str = "") -> str:
    return f"""
{helpers}
@ss.kernel(contract={B64})
def k({SIG}) -> None:
    i = thread.index_1d()
    {body}
"""


# ============================================================ 1. temporal divergence

_COUNT_UNTIL = """
@ss.device
def count_until(a, start, n):
    m = 0
    for k in range(n):
        m = k
        if a[start + k] > 40:  # COND
            break
    return m
"""

_COUNT_UNIFORM = """
@ss.device
def count_until(a, start, n):
    m = 0
    for k in range(n):
        m = k
        if k * 3 > n + 40:
            break
    return m
"""


def test_loop_value_after_a_thread_dependent_break_bounds_no_barrier_loop(tmp_path):  # type: ignore[no-untyped-def]
    pair(
        tmp_path,
        kernel(
            "m = 0\n    for k in range(n):\n        m = k\n"
            "        if a[k + cuda.threadIdx.x] > 40:  # COND\n            break\n"
            "    for j in range(m):\n        ss.block.sync()  # BAD"
        ),
        kernel(
            "m = 0\n    for k in range(n):\n        m = k\n        if k * 3 > n + 40:\n"
            "            break\n    for j in range(m):\n        ss.block.sync()"
        ),
        "runs a different number of times",
    )


def test_loop_value_from_a_helper_left_early(tmp_path):  # type: ignore[no-untyped-def]
    pair(
        tmp_path,
        kernel(
            "m = count_until(a, cuda.threadIdx.x, n)\n    for j in range(m):\n"
            "        s = ss.block.sum(np.float32(j))  # BAD",
            _COUNT_UNTIL,
        ),
        kernel(
            "m = count_until(a, cuda.threadIdx.x, n)\n    for j in range(m):\n"
            "        s = ss.block.sum(np.float32(j))",
            _COUNT_UNIFORM,
        ),
        "a loop that threads leave at different iterations",
    )


# ============================================================ 2. implicit exits


@pytest.mark.parametrize(
    ("bad", "good", "fragment"),
    [
        (  # a tuple index out of range raises in the threads it is out of range for
            "t = (1.0, 2.0, 3.0)\n    x = t[cuda.threadIdx.x]  # COND\n    ss.block.sync()  # BAD\n"
            "    out[i] = x",
            "t = (1.0, 2.0, 3.0)\n    x = t[n % 3]\n    ss.block.sync()\n    out[i] = x",
            "Numba raises IndexError there for a position out of range",
        ),
        (  # range() raises for a step of 0
            "for q in range(0, n, cuda.threadIdx.x):  # COND\n        pass\n"
            "    ss.block.sync()  # BAD",
            "for q in range(0, 64, n):\n        pass\n    ss.block.sync()",
            "the other way leaves first",
        ),
    ],
    ids=["tuple-index", "range-step"],
)
def test_operation_that_fails_for_some_threads_before_a_barrier(tmp_path, bad, good, fragment):  # type: ignore[no-untyped-def]
    pair(tmp_path, kernel(bad), kernel(good), fragment)


def test_implicit_exit_inside_a_helper(tmp_path):  # type: ignore[no-untyped-def]
    helper = """
@ss.device
def pick(k):
    t = (1.0, 2.0, 3.0)
    return t[k]
"""
    pair(
        tmp_path,
        kernel(
            "x = pick(cuda.threadIdx.x)  # COND\n    s = ss.block.max(np.float32(x))  # BAD", helper
        ),
        kernel("x = pick(n % 3)\n    s = ss.block.max(np.float32(x))", helper),
        "needs every thread of the block",
    )


# ============================================================ 3. values out of unsafe regions

_ATOMIC_BAD = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: the counter is this block's own shared scratch"):
        c = cuda.shared.array(1, np.int32)
        old = cuda.atomic.add(c, 0, 1)
    if old > 3:  # COND
        ss.block.sync()  # BAD
"""

_ATOMIC_GOOD = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: the counter is this block's own shared scratch"):
        c = cuda.shared.array(1, np.int32)
        old = cuda.atomic.add(c, 0, 1)
    if n > 3:
        ss.block.sync()
    out[i] = old
"""


def test_atomic_result_steering_a_barrier(tmp_path):  # type: ignore[no-untyped-def]
    pair(tmp_path, _ATOMIC_BAD, _ATOMIC_GOOD, "the result of an atomic")


def test_compare_and_swap_result_steering_a_collective(tmp_path):  # type: ignore[no-untyped-def]
    bad = _ATOMIC_BAD.replace("cuda.atomic.add(c, 0, 1)", "cuda.atomic.cas(c, 0, 0, 1)")
    good = _ATOMIC_GOOD.replace("cuda.atomic.add(c, 0, 1)", "cuda.atomic.cas(c, 0, 0, 1)")
    pair(tmp_path, bad, good, "the result of an atomic")


def test_activemask_steering_a_barrier(tmp_path):  # type: ignore[no-untyped-def]
    body = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: reads the mask of the lanes present, changes nothing"):
        m = cuda.activemask()
    if {cond}:{marker}
        ss.block.sync(){bad}
    out[i] = m
"""
    (tmp_path / "bad").mkdir()
    refused(
        tmp_path / "bad",
        body.format(cond="m & 1", marker="  # COND", bad="  # BAD"),
        "needs every thread of the block",
    )
    (tmp_path / "good").mkdir()  # compiled only: Numba's simulator has no activemask to run
    _compile(load_kernel_module(tmp_path / "good", body.format(cond="n & 1", marker="", bad="")).k)


# ============================================================ 4. helper contexts


_TWO_LEVELS = """
@ss.device
def inner(flag):
    if flag > 0:  # COND
        ss.block.sync()  # BAD

@ss.device
def outer(flag):
    inner(flag)
"""


def test_flag_through_two_helper_levels(tmp_path):  # type: ignore[no-untyped-def]
    pair(
        tmp_path,
        kernel("outer(cuda.threadIdx.x % 2)", _TWO_LEVELS),
        kernel("outer(n % 2)", _TWO_LEVELS.replace("  # COND", "").replace("  # BAD", "")),
        "needs every thread of the block",
    )


# ============================================================ 5. what a view allows, by type


def test_array_attribute_reopened_by_a_record_field_name(tmp_path):  # type: ignore[no-untyped-def]
    # A record parameter with a field named `flat` lets the name pass the source rules:
    # the typing rules of the input's own type refuse `.flat` on the plain input.
    head = """
Rec = np.dtype([("flat", np.float32), ("n", np.int32)], align=True)

@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], r: In[Rec]) -> None:
    i = thread.index_1d()
"""
    (tmp_path / "bad").mkdir()
    refused(
        tmp_path / "bad",
        head + "    a.flat[3] = np.float32(1)  # BAD\n",
        "offers only dtype",
        rule="typing",
    )
    (tmp_path / "good").mkdir()
    mod = load_kernel_module(tmp_path / "good", head + "    out[i] = r[0].flat\n")
    _compile(mod.k)


def test_record_stores_leave_the_inputs_unwritten(tmp_path):  # type: ignore[no-untyped-def]
    # Field stores through an output witness go to the element or (out of range) to a
    # scratch record behind an opaque mov (lowering's workaround for CUDA 13.0's NVVM):
    # the compiled form must still see they write no input, so an input record read at
    # a constant index the contract covers steers a barrier uniformly.
    head = """
Rec = np.dtype([("x", np.float32), ("n", np.int32)], align=True)

@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=("a.shape[0] >= 1",)))
def k(out: DisjointSlice[Rec], a: In[Rec]) -> None:
    w = thread.index_1d()
    out[w].x = a[w].x
"""
    tail = "        ss.block.sync()  # BAD\n    out[w].n = a[w].n\n"
    (tmp_path / "bad").mkdir()
    refused(tmp_path / "bad", head + "    if a[w].n > 0:  # COND\n" + tail, "thread-dependent")
    (tmp_path / "good").mkdir()
    mod = load_kernel_module(tmp_path / "good", head + "    if a[0].n > 0:\n" + tail)
    _compile(mod.k)


def test_in_place_update_of_an_input(tmp_path):  # type: ignore[no-untyped-def]
    pair(
        tmp_path,
        kernel("a += 1  # BAD"),
        kernel("out[i] = a[i] + 1"),
        "is read-only: `+=` would update it in place",
        rule="typing",
    )


# ============================================================ 6. declarations immutable


def test_contract_edited_before_the_first_compile(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
C = ss.LaunchContract(domain=1, block=64)

@ss.kernel(contract=C)
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    out[thread.index_1d()] = a[thread.index_1d()]
""",
    )
    # The caller's object edited: the kernel checks its own copy, taken at decoration.
    object.__setattr__(mod.C, "domain", 2)
    assert mod.k.contract is not None and mod.k.contract.domain == 1
    _compile(mod.k)
    if ss.SIMULATOR:  # prepare needs a device (or the simulator)
        with pytest.raises(ss.DomainMismatch):
            mod.k.prepare(grid=(1, 2), block=64)
    # The kernel's own copy edited in place: refused at the next compile or prepare.
    object.__setattr__(mod.k.contract, "domain", 2)
    with pytest.raises(ss.SafetyError) as info:
        mod.k.prepare(grid=(1, 2), block=64) if ss.SIMULATOR else mod.k.ptx()
    assert info.value.rule == "immutable"
    assert "replaced or edited after decoration" in str(info.value)


@pytest.mark.parametrize("field", ["_holds", "source"])
def test_a_requires_check_edited_after_the_compile_is_refused(tmp_path, field):  # type: ignore[no-untyped-def]
    # A relation's compiled check and its source are fields its repr hides; the
    # read-range proof (a[3] in range) and every launch's check rely on them.
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["a.size >= 4"]))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    w = thread.index_1d()
    if a[3] > 0:
        ss.block.sync()
    out[w] = np.float32(1)
""",
    )
    _compile(mod.k)
    edit = (lambda env: True) if field == "_holds" else "True"
    object.__setattr__(mod.k.bound.relations[0], field, edit)
    with pytest.raises(ss.SafetyError) as info:
        mod.k.prepare(grid=1, block=64) if ss.SIMULATOR else mod.k.ptx()
    assert info.value.rule == "immutable"
    assert "replaced or edited after decoration" in str(info.value)


def test_contract_edited_before_any_compile_is_refused(tmp_path):  # type: ignore[no-untyped-def]
    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    out[thread.index_1d()] = a[thread.index_1d()]
""",
    )
    object.__setattr__(mod.k.contract, "block", (32, 2, 1))
    with pytest.raises(ss.SafetyError) as info:
        _compile(mod.k)
    assert info.value.rule == "immutable"


# ============================================================ attack round 3 (issue 16)


def sized(body: str, requires: str = "", helpers: str = "", options: str = "") -> str:
    """A kernel with ``requires`` (and compile options) in its contract."""
    reqs = f", requires=[{requires!r}]" if requires else ""
    return f"""
{helpers}
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64{reqs}){options})
def k({SIG}) -> None:
    i = thread.index_1d()
    {body}
"""


def test_input_read_is_uniform_only_where_the_contract_keeps_it_in_range(tmp_path):  # type: ignore[no-untyped-def]
    # A read past an input's end is not checked: it may land in an output other threads
    # write, so a[0] is trusted only when the contract says a has an element 0.
    body = "if a[0] > 0:  # COND\n        ss.block.sync()  # BAD"
    pair(
        tmp_path,
        sized(body),
        sized(body.replace("  # COND", "").replace("  # BAD", ""), "a.size >= 1"),
        "requires=['a.size >= 1']",
    )


def test_input_read_past_its_end_is_not_uniform(tmp_path):  # type: ignore[no-untyped-def]
    pair(
        tmp_path,
        sized(
            "v = a[a.size + cuda.blockIdx.x * 64]\n    if v > 0:  # COND\n"
            "        ss.block.sync()  # BAD",
            "a.size >= 1",
        ),
        sized("v = ss.block.broadcast(a[n])\n    if v > 0:\n        ss.block.sync()"),
        "at a computed index",
    )


def test_a_loop_index_is_in_range_where_the_contract_bounds_the_loop(tmp_path):  # type: ignore[no-untyped-def]
    # for k in range(n): a[k] reads inside a only if n <= a.size: the contract says so.
    body = "for k in range(n):\n        if a[k] > 60:  # COND\n            ss.block.sync()  # BAD"
    pair(
        tmp_path,
        sized(body),
        sized(body.replace("  # COND", "").replace("  # BAD", ""), "a.size >= n"),
        "at a computed index",
    )


def test_an_index_past_the_loop_bound_is_not_in_range(tmp_path):  # type: ignore[no-untyped-def]
    pair(
        tmp_path,
        sized(
            "for k in range(n):\n        if a[k + 1] > 60:  # COND\n            ss.block.sync()  # BAD",
            "a.size >= n",
        ),
        sized("for v in a:\n        if v > 60:\n            ss.block.sync()"),
        "ss.block.broadcast(a[k])",
    )


def test_a_guard_on_the_input_size_keeps_the_read_in_range(tmp_path):  # type: ignore[no-untyped-def]
    pair(
        tmp_path,
        sized(
            "k = 0\n    while k <= a.size:\n        if a[k] > 60:  # COND\n"
            "            ss.block.sync()  # BAD\n        k += 1"
        ),
        sized(
            "k = 0\n    while k < a.size:\n        if a[k] > 60:\n            ss.block.sync()\n"
            "        k += 1"
        ),
        "at a computed index",
    )


#: (requires, body, proven): reads of ``a`` steering a barrier, proven in range or not.
_READS = {
    "range-of-size": ("", "for k in range(a.size):\n        if a[k] > 60:", True),
    "range-of-shape": ("", "for k in range(a.shape[0]):\n        if a[k] > 60:", True),
    "range-bounded-gt": ("a.size > n", "for k in range(n):\n        if a[k] > 60:", True),
    "range-bounded-le": ("n <= a.size", "for k in range(n):\n        if a[k] > 60:", True),
    "enumerate": ("", "for k, v in enumerate(a):\n        if v > 60:", True),
    "constant-under-size-guard": ("", "if a.size > 3:\n        if a[3] > 60:", True),
    "unbounded-range": ("", "for k in range(n):\n        if a[k] > 60:", False),
    "range-one-past": ("a.size >= n", "for k in range(n + 1):\n        if a[k] > 60:", False),
    "relation-the-wrong-way": ("a.size <= n", "for k in range(n):\n        if a[k] > 60:", False),
    "index-minus-one": ("a.size >= n", "for k in range(n):\n        if a[k - 1] > 60:", False),
    "other-input": ("a.size >= n", "for k in range(n):\n        if b[k] > 60:", False),
    "scalar-under-guard": ("", "if n < a.size:\n        if a[n] > 60:", False),
    "guard-on-both-sides": ("", "if 0 <= n < a.size:\n        if a[n] > 60:", True),
    "block-index-under-size-guard": (
        "",
        "b = cuda.blockIdx.x\n    if b < a.size:\n        if a[b] > 60:",
        True,
    ),
    "range-of-min": ("", "for k in range(min(n, a.size)):\n        if a[k] > 60:", True),
    "unsigned-bound-negative-as-signed": (
        "a.size >= n",
        "if np.uint64(n + 3) < np.uint64(n):\n        if a[n + 3] > 60:",
        False,
    ),
    "unsigned-constant-negative-as-signed": (
        "",
        "if np.uint64(n) < np.uint64(0xFFFF_FFFF_FFFF_0000):\n        if a[n] > 60:",
        False,
    ),
    "kept-after-the-loop": (
        "a.size >= n",
        "m = 0\n    for k in range(n):\n        m = k\n    if a[m] > 60:",
        False,
    ),
}


@pytest.mark.parametrize("case", sorted(_READS))
def test_input_reads_proven_in_range_or_not(tmp_path, case):  # type: ignore[no-untyped-def]
    requires, head, proven = _READS[case]
    indent = head.splitlines()[-1][
        : len(head.splitlines()[-1]) - len(head.splitlines()[-1].lstrip())
    ]
    body = f"{head}\n{indent}    ss.block.sync()" + ("" if proven else "  # BAD")
    reqs = f", requires=[{requires!r}]" if requires else ""
    source = f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64{reqs}))
def k(out: DisjointSlice[np.float32], a: In[np.float32], b: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    {body}
    out[i] = 1.0
"""
    if proven:
        _compile(load_kernel_module(tmp_path, source).k)
    else:
        refused(tmp_path, source, "not prove in range")


#: (parameters, body, proven): indices whose sign rests on arithmetic that may wrap. numba-cuda
#: marks every signed add/mul ``nsw`` and LLVM then drops Numba's negative-index wrap, but the
#: GPU wraps: only bounds that keep a sum or product below the sign bit prove ``k >= 0``.
_WRAPS = {
    # 3 * 6148914691236517205 == 2**64 - 1: p = 3 gives kk == -1, a read before the input
    "product-that-wraps": (
        "p: np.uint32",
        "kk = np.int64(p) * 6148914691236517205\n    if kk < a.size:\n        if a[kk] > 0:",
        False,
    ),
    "product-of-two-32-bit-values": (
        "p: np.uint32, q: np.uint32",
        "kk = np.int64(p) * np.int64(q)\n    if kk < a.size:\n        if a[kk] > 0:",
        False,
    ),
    "product-of-two-16-bit-values": (
        "p: np.uint16, q: np.uint16",
        "kk = np.int64(p) * np.int64(q)\n    if kk < a.size:\n        if a[kk] > 0:",
        True,
    ),
    "sum-that-may-wrap": (
        "n: int",
        "kk = n + 5\n    if kk < a.size:\n        if a[kk] > 0:",
        False,
    ),
    "masked-parameter": (
        "n: int",
        "kk = n & 1023\n    if kk < a.size:\n        if a[kk] > 0:",
        True,
    ),
    "block-index-times-a-constant": (
        "n: int",
        "kk = cuda.blockIdx.x * 4 + 1\n    if kk < a.size:\n        if a[kk] > 0:",
        True,
    ),
    # refused although safe in practice: a.size may be 2**63 - 1 (docs/safety.md), kk + 2 wrap
    "counted-by-two-up-to-the-size": (
        "n: int",
        "kk = 0\n    while kk < a.size:\n        if a[kk] > 0:  # COND\n"
        "            ss.block.sync()  # BAD\n        kk += 2\n    if a.size > 0:\n"
        "        if a[0] > 0:",
        False,
    ),
    "counted-up-to-the-size": (
        "n: int",
        "kk = 0\n    while kk < a.size:\n        if a[kk] > 0:\n            ss.block.sync()\n"
        "        kk += 1\n    if a.size > 0:\n        if a[0] > 0:",
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(_WRAPS))
def test_an_index_sign_is_proven_from_values_not_from_overflow_flags(tmp_path, case):  # type: ignore[no-untyped-def]
    params, head, proven = _WRAPS[case]
    indent = " " * (len(head.splitlines()[-1]) - len(head.splitlines()[-1].lstrip()))
    marked = proven or "# BAD" in head  # the refused barrier is the last one unless marked
    body = f"{head}{'' if marked else '  # COND'}\n{indent}    ss.block.sync()"
    body += "" if marked else "  # BAD"
    _judge_read(tmp_path, "", params, body, proven)


def _judge_read(tmp_path, requires, params, body, proven):  # type: ignore[no-untyped-def]
    """Compile a kernel whose ``body`` steers a barrier by a read of ``a``: accepted when
    ``proven``, else refused because the read is not proven in range."""
    reqs = f", requires=[{requires!r}]" if requires else ""
    source = f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64{reqs}))
def k(out: DisjointSlice[np.float32], a: In[np.float32], {params}) -> None:
    i = thread.index_1d()
    out[i] = np.float32(1)
    {body}
"""
    if proven:
        _compile(load_kernel_module(tmp_path, source).k)
    else:
        refused(tmp_path, source, "not prove in range")


#: (body, proven), with requires=["a.size >= n"]: a loop index proven by its counter
#: (``p = N - c`` while ``c > 0``) only when both are 64-bit and the counter steps down
#: only where it is positive; a cycle of loop variables is not followed (and is no crash).
_COUNTERS = {
    # Numba's range loop: a 64-bit counter stepped down only under its `c > 0` test
    "range-of-n": ("for p in range(n):\n        if a[p] > 0:\n            ss.block.sync()", True),
    "range-of-n-then-a-wrapping-counter-elsewhere": (
        "c = np.int8(-100)\n    for p in range(n):\n        c = np.int8(c - np.int8(1))\n"
        "        if a[p] > 0:\n            ss.block.sync()",
        True,
    ),
    # an int8 counter from -100 wraps to 127 after 156 trips: then p = 156 reads past a
    "eight-bit-counter-that-wraps": (
        "p = 0\n    c = np.int8(-100)\n    while p < 100:\n        if c > 0:\n"
        "            if a[p] > 0:  # COND\n                ss.block.sync()  # BAD\n"
        "        p += 1\n        c = np.int8(c - np.int8(1))",
        False,
    ),
    "sixteen-bit-counter": (
        "p = 0\n    c = np.int16(n)\n    while p < 70000:\n        if c > 0:\n"
        "            if a[p] > 0:  # COND\n                ss.block.sync()  # BAD\n"
        "        p += 1\n        c = np.int16(c - np.int16(1))",
        False,
    ),
    "a-cycle-of-loop-variables": (
        "x = 0\n    y = 1\n    t = 0\n    while t < n:\n        if a[x] > 0:  # COND\n"
        "            ss.block.sync()  # BAD\n        x, y = y, x\n        t += 1",
        False,
    ),
}


@pytest.mark.parametrize("case", sorted(_COUNTERS))
def test_a_loop_index_proven_by_its_counter(tmp_path, case):  # type: ignore[no-untyped-def]
    body, proven = _COUNTERS[case]
    _judge_read(tmp_path, "a.size >= n", "n: int", body, proven)


@pytest.mark.parametrize(("bound", "proven"), [("n", True), ("n + 1", False)])
def test_a_strided_input_read_in_a_bounded_loop(tmp_path, bound, proven):  # type: ignore[no-untyped-def]
    # A non-contiguous input addresses element k as data + k * stride: the same proof.
    source = sized(
        f"for k in range({bound}):\n        if a[k] > 60:\n            ss.block.sync()"
        + ("" if proven else "  # BAD"),
        "a.size >= n",
    )
    kernel = load_kernel_module(tmp_path, source).k
    compile_strided = (
        (lambda: kernel.prepare(grid=1, block=64))
        if ss.SIMULATOR
        else (lambda: kernel.ptx(layouts=("A",)))
    )
    if proven:
        compile_strided()
    else:
        with pytest.raises(ss.SafetyError, match="not prove in range"):
            compile_strided()


def test_a_tile_passed_to_a_helper_defined_below_the_kernel(tmp_path):  # type: ignore[no-untyped-def]
    # The helper's name is not bound at decoration: judged at compile, where it is one.
    source = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    t = ss.shared.tile(64, np.float32)
    t[thread.local_index()] = a[i] if i.in_bounds(a) else np.float32(0)
    ss.block.sync()
    out[i] = right_neighbour(t)

@ss.device
def right_neighbour(t) -> np.float32:
    return t[(cuda.threadIdx.x + 1) % 64]
"""
    res = accepted(tmp_path, source)
    if res is not None:
        np.testing.assert_array_equal(res, np.roll(np.arange(64, dtype=F32), -1))
    (tmp_path / "bad").mkdir()
    refused(
        tmp_path / "bad",
        source.replace(
            "    return t[(cuda.threadIdx.x + 1) % 64]",
            "    t[0] = np.float32(1)  # BAD\n    return np.float32(0)",
        ),
        "is read-only there",
        rule="typing",
    )


def test_a_condition_recomputed_in_the_loop_header_is_not_a_fact_of_the_back_edge(tmp_path):  # type: ignore[no-untyped-def]
    # Attack round 4: the back edge's `done` is the previous trip's; the read on the
    # second trip is a[m], compared with nothing.
    source = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64, requires=["a.size >= 1"]))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    t = np.float32(0)
    j = 0
    done = False
    while not done:
        done = j != 0
        if done:
            if a[j] > 0:  # COND
                ss.block.sync()  # BAD
                t = np.float32(2)
        j = n
    out[i] = t
"""
    refused(tmp_path, source, "not prove in range")


def test_a_debug_build_still_checks_barriers_in_helpers(tmp_path):  # type: ignore[no-untyped-def]
    # debug=True compiles device functions noinline: the analysed copy inlines them anyway.
    helper = """
@ss.device(debug=True, opt=False)
def sync_once():
    ss.block.sync()
"""
    pair(
        tmp_path,
        sized("if cuda.threadIdx.x < 5:  # COND\n        sync_once()  # BAD", helpers=helper),
        sized("if n < 5:\n        sync_once()", helpers=helper, options=", debug=True, opt=False"),
        "needs every thread of the block",
    )


_RECURSIVE = """
@ss.device
def h(d: int) -> None:
    if d > 0:
        with ss.unsafe("SAFETY: the recursion depth is d, at most 1 here"):
            h(d - 1)
    {barrier}
"""


def test_a_barrier_behind_recursion_is_refused(tmp_path):  # type: ignore[no-untyped-def]
    bad = sized(
        "h(cuda.threadIdx.x % 2)  # BAD", helpers=_RECURSIVE.format(barrier="ss.block.sync()")
    )
    good = sized(
        "ss.block.sync()\n    h(cuda.threadIdx.x % 2)", helpers=_RECURSIVE.format(barrier="pass")
    )
    if not ss.SIMULATOR:
        pair(tmp_path, bad, good, "cannot be inlined (it calls itself")
        return
    # The simulator's compile worker cannot type a recursive helper (numba-cuda raises
    # an internal AttributeError in a fresh process): it refuses both, the safe way round.
    for folder, source in (("bad", bad), ("good", good)):
        (tmp_path / folder).mkdir()
        with pytest.raises(ss.SafetyError, match="does not compile for the CUDA target"):
            _compile(load_kernel_module(tmp_path / folder, source).k)


_TILE_IMPORTED = """
from simtsafe.shared import tile as make_tile

@ss.device
def {name}(t, v: np.float32) -> np.float32:
    {body}
    return v

@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    t = make_tile(64, np.float32)
    t[thread.local_index()] = a[i] if i.in_bounds(a) else np.float32(0)
    ss.block.sync()
    x = {name}(t, np.float32(-1.0))
    out[i] = t[(cuda.threadIdx.x + 1) % 64] + x
"""


def test_a_tile_made_by_a_bare_imported_constructor_reaches_helpers_read_only(tmp_path):  # type: ignore[no-untyped-def]
    pair(
        tmp_path,
        _TILE_IMPORTED.format(name="clobber", body="t[thread.local_index()] = v  # BAD"),
        _TILE_IMPORTED.format(name="peek", body="v = t[0]"),
        "is read-only there",
        rule="typing",
    )


def test_a_debug_print_keeps_input_reads_uniform(tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "good").mkdir()
    accepted(
        tmp_path / "good",
        sized(
            "v = np.float32(1)\n    rounds = int(a[3])\n    for r in range(rounds):\n"
            "        v = ss.block.sum(v) / np.float32(64)\n    if i.index == 0:\n"
            "        print('rounds', rounds)\n    out[i] = v",
            "a.size >= 4",
        ),
    )


def test_a_cache_hinted_load_of_an_input_is_a_load(tmp_path):  # type: ignore[no-untyped-def]
    body = "if cuda.ldcg(a, 0) > 0:  # COND\n        ss.block.sync()  # BAD"
    (tmp_path / "bad").mkdir()
    refused(tmp_path / "bad", sized(body), "requires=['a.size >= 1']")
    (tmp_path / "good").mkdir()
    good = sized(body.replace("  # COND", "").replace("  # BAD", ""), "a.size >= 1")
    _compile(load_kernel_module(tmp_path / "good", good).k)  # Numba's simulator has no ldcg


def test_warp_max_of_signed_zeros_is_the_same_in_every_lane(tmp_path):  # type: ignore[no-untyped-def]
    # max.f32 gives +0 for (+0, -0) in either order (H200, attack round 3), so every lane of
    # the butterfly ends with the same bits; the simulator's twin must agree.
    mod = load_kernel_module(
        tmp_path,
        """
import math

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    v = a[i] if i.in_bounds(a) else np.float32(0)
    hi = ss.warp.max(v)
    lo = ss.warp.min(v)
    s = np.float32(-1)
    if math.copysign(np.float32(1), hi) > 0:
        s = ss.warp.broadcast(v)
    out[i] = math.copysign(np.float32(2), hi) + math.copysign(np.float32(1), lo) + s * 0
""",
    )
    zeros = np.array([0.0, -0.0] * 16, F32)
    res = run_or_compile(mod.k, 1, 32, np.zeros(32, F32), zeros)
    if res is not None:  # +2 from max = +0, -1 from min = -0, in every lane
        np.testing.assert_array_equal(res[0], np.full(32, 1.0, F32))


def _two_modules(tmp_path: Path, limit: int, body: str) -> tuple[object, object]:
    """A config module (``LIMIT = limit``) and a kernel module that reads ``cfg.LIMIT``."""
    import sys
    import uuid

    name = f"ss_cfg_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(f"LIMIT = {limit}\n")
    sys.path.insert(0, str(tmp_path))
    try:
        cfg = __import__(name)
    finally:
        sys.path.remove(str(tmp_path))
    return cfg, body.replace("CFG", name)


_CFG_KERNEL = """
import CFG as cfg

@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    if cuda.threadIdx.x < cfg.LIMIT:  # COND
        return
    ss.block.sync()  # BAD
    out[i] = a[i]
"""


def test_a_module_attribute_set_at_start_up_is_the_one_checked(tmp_path):  # type: ignore[no-untyped-def]
    # The simulator's compile worker must see the attribute this process set, not the
    # module as imported afresh (LIMIT = 0 there: no early return).
    import sys

    (tmp_path / "bad").mkdir()
    cfg, source = _two_modules(tmp_path / "bad", 0, _CFG_KERNEL)
    cfg.LIMIT = 5  # type: ignore[attr-defined]  # e.g. from the command line
    sys.path.insert(0, str(tmp_path / "bad"))
    try:
        refused(tmp_path / "bad", source, "needs every thread of the block")
        (tmp_path / "good").mkdir()
        _cfg, source = _two_modules(tmp_path / "good", 0, _CFG_KERNEL)
        accepted(tmp_path / "good", source)
    finally:
        sys.path.remove(str(tmp_path / "bad"))


def test_a_module_reached_through_another_module_is_the_one_checked(tmp_path):  # type: ignore[no-untyped-def]
    # outer.settings.LIMIT: the inner module travels by value too (attack round 4).
    import sys
    import uuid

    inner, outer = f"ss_inner_{uuid.uuid4().hex}", f"ss_outer_{uuid.uuid4().hex}"
    (tmp_path / f"{inner}.py").write_text("LIMIT = 0\n")
    (tmp_path / f"{outer}.py").write_text(f"import {inner} as settings\n")
    sys.path.insert(0, str(tmp_path))
    try:
        __import__(inner).LIMIT = 5
        source = _CFG_KERNEL.replace("import CFG as cfg", f"import {outer} as cfg").replace(
            "cfg.LIMIT", "cfg.settings.LIMIT"
        )
        refused(tmp_path, source, "needs every thread of the block")
    finally:
        sys.path.remove(str(tmp_path))


def test_a_module_that_cannot_travel_falls_back_to_the_source_checks(tmp_path):  # type: ignore[no-untyped-def]
    # A module holding a lock cannot be pickled: no verdict from the worker (never one
    # over the module as imported afresh), the source-level checks with their warning.
    import sys

    cfg, source = _two_modules(tmp_path, 0, _CFG_KERNEL)
    cfg.LIMIT = 5  # type: ignore[attr-defined]
    cfg.LOCK = __import__("threading").Lock()  # type: ignore[attr-defined]
    sys.path.insert(0, str(tmp_path))
    try:
        if ss.SIMULATOR:
            with pytest.warns(RuntimeWarning, match="could not be sent to the compile worker"):
                with pytest.raises(ss.SafetyError, match="depends on the thread"):
                    _compile(load_kernel_module(tmp_path, source).k)
        else:
            refused(tmp_path, source, "needs every thread of the block")
    finally:
        sys.path.remove(str(tmp_path))


def test_an_accumulator_max_keeps_the_old_value_on_a_tie(tmp_path):  # type: ignore[no-untyped-def]
    # numba-cuda's float atomic max stores only when old < new: -0.0 stays for +0.0.
    mod = load_kernel_module(
        tmp_path,
        """
from simtsafe import Accumulate

@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))
def k(acc: Accumulate[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    if i.in_bounds(a):
        acc.max(0, a[i])
        acc.min(1, a[i])
""",
    )
    start = np.array([-0.0, 0.0], F32)
    res = run_or_compile(mod.k, 1, 32, start, np.zeros(32, F32))
    if res is not None:
        assert np.signbit(res[0][0]) and not np.signbit(res[0][1]), res[0]


def test_a_global_rebound_after_the_first_compile_is_not_the_one_checked(tmp_path):  # type: ignore[no-untyped-def]
    source = sized(
        "if cuda.threadIdx.x < LIMIT:  # COND\n        return\n    ss.block.sync()  # BAD"
    ).replace("@ss.kernel", "LIMIT = 5\n\n@ss.kernel")
    mod = load_kernel_module(tmp_path, source)
    for _attempt in range(2):  # "fix the constant and retry": the frozen scope still has 5
        with pytest.raises(ss.SafetyError) as info:
            _compile(mod.k)
        assert "needs every thread of the block" in str(info.value)
        mod.LIMIT = 0


def test_a_kernel_whose_source_exists_only_in_linecache_is_checked(tmp_path):  # type: ignore[no-untyped-def]
    # A notebook cell: its text is in this process's linecache only, never on disk.
    import linecache
    import uuid

    from tests.kernels import HEADER

    filename = f"<notebook-cell-{uuid.uuid4().hex}>"
    text = HEADER + sized("out[i] = a[i] if i.in_bounds(a) else np.float32(0)").lstrip("\n")
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    namespace: dict[str, object] = {"__name__": "__main__"}
    exec(compile(text, filename, "exec"), namespace)
    k = namespace["k"]
    _compile(k)  # type: ignore[arg-type]
    res = run_or_compile(k, 1, 64, np.zeros(64, F32), np.arange(64, dtype=F32), 3)
    if res is not None:
        np.testing.assert_array_equal(res[0], np.arange(64, dtype=F32))


# ============================================================ false refusals of issue 16 (tiles)

_FILLED = """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    t = ss.shared.tile(64, np.float32)
    for w in thread.block_stride(t):
        t[w] = a[i]
{body}
"""


def test_tile_read_back_through_an_unnamed_block_local_witness(tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "good").mkdir()
    res = accepted(
        tmp_path / "good",
        _FILLED.format(body="    x = t[thread.local_index()]\n    ss.block.sync()\n    out[i] = x"),
    )
    if res is not None:
        np.testing.assert_array_equal(res, np.arange(64, dtype=F32))
    (tmp_path / "bad").mkdir()
    refused(
        tmp_path / "bad",
        _FILLED.format(body="    x = t[cuda.threadIdx.x % 3]  # BAD\n    out[i] = x"),
        "is read by index at line",
        rule="tile-phase",
    )


_HELPER_READS = """
@ss.device
def mirror(t, k):
    return t[63 - k]

{writer}
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    t = ss.shared.tile(64, np.float32)
    t[thread.local_index()] = a[i]
{body}
"""


def test_tile_passed_read_only_to_a_helper_in_its_read_phase(tmp_path):  # type: ignore[no-untyped-def]
    (tmp_path / "good").mkdir()
    res = accepted(
        tmp_path / "good",
        _HELPER_READS.format(
            writer="", body="    ss.block.sync()\n    out[i] = mirror(t, cuda.threadIdx.x)"
        ),
    )
    if res is not None:
        np.testing.assert_array_equal(res, np.arange(64, dtype=F32)[::-1])
    (tmp_path / "fill").mkdir()  # before the barrier: the read races the fill
    refused(
        tmp_path / "fill",
        _HELPER_READS.format(writer="", body="    out[i] = mirror(t, cuda.threadIdx.x)  # BAD"),
        "is read by index at line",
        rule="tile-phase",
    )
    (tmp_path / "write").mkdir()  # the helper's view is read-only: a store is refused
    refused(
        tmp_path / "write",
        _HELPER_READS.format(
            writer="@ss.device\ndef scribble(t, v):\n    t[thread.local_index()] = v  # BAD\n",
            body="    ss.block.sync()\n    scribble(t, np.float32(1))",
        ),
        "read-only there",
        rule="typing",
    )


def test_two_tiles_made_on_one_line_are_two_tiles(tmp_path):  # type: ignore[no-untyped-def]
    res = accepted(
        tmp_path,
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    t = ss.shared.tile(64, np.float32); u = ss.shared.tile(64, np.float32)  # noqa: E702
    t[thread.local_index()] = a[i]
    u[thread.local_index()] = a[i] * np.float32(2)
    ss.block.sync()
    out[i] = t[63 - cuda.threadIdx.x] + u[cuda.threadIdx.x]
""",
    )
    if res is not None:  # on the simulator: two tiles, not one shared storage
        k = np.arange(64, dtype=F32)
        np.testing.assert_array_equal(res, (63 - k) + 2 * k)


# ============================================================ 6. messages


def test_two_type_variables_of_one_name(tmp_path):  # type: ignore[no-untyped-def]
    head = "from typing import TypeVar\nT = TypeVar('T', np.float32, np.float64)\n"
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            head
            + """U = TypeVar('T', np.float32, np.float64)

@ss.kernel
def k(out: DisjointSlice[T], a: In[U]) -> None:
    out[thread.index_1d()] = a[thread.index_1d()]
""",
        )
    assert info.value.rule == "annotation"
    assert "two different type variables both named 'T'" in str(info.value)
    (tmp_path / "twin").mkdir()
    mod = load_kernel_module(
        tmp_path / "twin",
        head
        + """
@ss.kernel
def k(out: DisjointSlice[T], a: In[T]) -> None:
    out[thread.index_1d()] = a[thread.index_1d()]
""",
    )
    _compile(mod.k.instantiate(T=np.float32))


def test_simulator_limit_is_not_reported_as_a_compile_failure(tmp_path):  # type: ignore[no-untyped-def]
    if not ss.SIMULATOR:
        pytest.skip("a limit of Numba's simulator: the CUDA target compiles the kernel")
    from numba import cuda

    mod = load_kernel_module(
        tmp_path,
        """
@ss.kernel(contract=ss.LaunchContract(domain=1, block=64))
def k(out: DisjointSlice[np.float32], a: In[np.float32], n: int) -> None:
    i = thread.index_1d()
    with ss.unsafe("SAFETY: reads the mask of the lanes present, changes nothing"):
        m = cuda.activemask()  # BAD
    out[i] = m
""",
    )
    launch = mod.k.prepare(grid=1, block=64)  # the GPU verdict: it compiles
    with pytest.raises(ss.SafetyError) as info:
        launch(cuda.to_device(np.zeros(64, F32)), cuda.to_device(np.zeros(64, F32)), 3)
    assert info.value.rule == "simulator"
    assert "the simulator cannot run this line" in str(info.value)
    assert "fails to compile" not in str(info.value)
    assert info.value.lineno == line_of(tmp_path, "# BAD")
