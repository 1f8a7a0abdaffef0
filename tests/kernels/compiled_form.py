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
        if a[k] > 40:
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
            "m = 0\n    for k in range(n):\n        m = k\n        if a[k] > 40:\n"
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
    ("bad", "good"),
    [
        (  # a tuple index out of range raises in the threads it is out of range for
            "t = (1.0, 2.0, 3.0)\n    x = t[cuda.threadIdx.x]  # COND\n    ss.block.sync()  # BAD\n"
            "    out[i] = x",
            "t = (1.0, 2.0, 3.0)\n    x = t[n % 3]\n    ss.block.sync()\n    out[i] = x",
        ),
        (  # range() raises for a step of 0
            "for q in range(0, n, cuda.threadIdx.x):  # COND\n        pass\n"
            "    ss.block.sync()  # BAD",
            "for q in range(0, 64, n):\n        pass\n    ss.block.sync()",
        ),
    ],
    ids=["tuple-index", "range-step"],
)
def test_operation_that_fails_for_some_threads_before_a_barrier(tmp_path, bad, good):  # type: ignore[no-untyped-def]
    pair(tmp_path, kernel(bad), kernel(good), "the other way leaves first")


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
