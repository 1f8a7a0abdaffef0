"""Block cooperation rules (issue 10): uniformity of barriers/collectives, tile phases.

Each refused kernel names the collective's line and the line that makes
control flow thread-dependent (or the two conflicting tile accesses); each has
an accepted twin. Shared by tests/sim and tests/ptx: the rules run at
decoration, identically on both paths. ``compile_twin`` compiles (PTX) or
runs (simulator) an accepted twin once the device side of the feature exists.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import simtsafe as ss
from tests.kernels import line_of, load_kernel_module

HEAD = """
import operator
B128 = ss.LaunchContract(domain=1, block=128)
UPTO128 = ss.LaunchContract(domain=1, max_threads=128)
"""
SIG = "out: DisjointSlice[np.float32], a: In[np.float32], n: int"


def _compile(kernel: ss.Kernel) -> None:  # type: ignore[type-arg]
    """The first compile (PTX on the CUDA target, prepare on the simulator): the verdict."""
    if ss.SIMULATOR:
        block = kernel.contract.block if kernel.contract and kernel.contract.block else 128
        kernel.prepare(grid=1, block=block)
    else:
        kernel.ptx()


def refused(tmp_path: Path, body: str, rule: str, fragment: str, cond: str | None = None) -> None:
    """Refused at decoration (source rules) or at the first compile (the compiled form)."""
    with pytest.raises(ss.SafetyError) as info:
        mod = load_kernel_module(tmp_path, HEAD + body)
        _compile(mod.k)
    exc = info.value
    assert exc.rule == rule, (exc.rule, str(exc))
    assert fragment in str(exc), str(exc)
    assert exc.lineno == line_of(tmp_path, "# BAD"), (exc.lineno, str(exc))
    if cond is not None:
        assert f"line {line_of(tmp_path, cond)}" in str(exc), str(exc)


def accepted(tmp_path: Path, body: str) -> None:
    mod = load_kernel_module(tmp_path, HEAD + body)
    assert isinstance(mod.k, ss.Kernel)
    _compile(mod.k)


# ============================================================ uniformity: block barriers

_UNIFORM_BAD = {
    "thread-branch": (
        "if cuda.threadIdx.x < 64:  # COND\n        ss.block.sync()  # BAD",
        "# COND",
    ),
    "witness-early-return": (
        "if not i.in_bounds(out):  # COND\n        return\n    s = ss.block.sum(a[0])  # BAD",
        "# COND",
    ),
    "thread-trip-count": (
        "for k in range(cuda.threadIdx.x):  # COND\n        ss.block.sync()  # BAD",
        "# COND",
    ),
    "loaded-data": (
        "if a[cuda.threadIdx.x] > 0:  # COND\n        ss.block.sync()  # BAD",
        "# COND",
    ),
    "assigned-under-branch": (
        "x = 0\n    if cuda.threadIdx.x < 5:\n        x = 1\n    if x > 0:  # COND\n"
        "        ss.block.sync()  # BAD",
        "# COND",
    ),
    "break-in-loop": (
        "for k in range(n):\n        ss.block.sync()  # BAD\n"
        "        if a[k + cuda.threadIdx.x] > 0:  # COND\n            break",
        "# COND",
    ),
    "return-in-loop": (
        "for k in range(n):\n        s = ss.block.max(np.float32(k))  # BAD\n"
        "        if cuda.threadIdx.x == k:  # COND\n            return",
        "# COND",
    ),
    "while-thread-cond": (
        "t = cuda.threadIdx.x\n    while t < n:  # COND\n        ss.block.sync()  # BAD\n"
        "        t += 128",
        "# COND",
    ),
    "grid-stride-body": (
        "for w in thread.grid_stride(out):  # COND\n        out[w] = ss.block.sum(a[w])  # BAD",
        "# COND",
    ),
    "scan-result": (
        "p = ss.block.scan(np.float32(1))\n    if p > 3:  # COND\n        ss.block.sync()  # BAD",
        "# COND",
    ),
    "warp-result-for-block-op": (
        "s = ss.warp.sum(np.float32(1))\n    if s > 3:  # COND\n        ss.block.sync()  # BAD",
        "# COND",
    ),
    "warp-op-thread-branch": (
        "if cuda.threadIdx.x % 2 == 0:  # COND\n        s = ss.warp.sum(np.float32(1))  # BAD",
        "# COND",
    ),
    "walrus-binds": (
        "x = (t := cuda.threadIdx.x)\n    if t < 32:  # COND\n        ss.block.sync()  # BAD",
        "# COND",
    ),
    "value-out-of-loop-left-early": (
        "m = 0\n    for k in range(n):\n        m = k\n        if a[k + cuda.threadIdx.x] > 0:  # COND\n"
        "            break\n    for j in range(m):\n        ss.block.sync()  # BAD",
        "# COND",
    ),
    "while-test-after-thread-break": (
        "k = 0\n    while ss.block.sum(np.float32(k)) < n:  # BAD\n"
        "        k += 1\n        if a[k + cuda.threadIdx.x] > 0:  # COND\n            break",
        "# COND",
    ),
    "collective-in-output-value": (
        "if cuda.threadIdx.x < 64:  # COND\n        out[i] = ss.block.sum(np.float32(0))  # BAD",
        "# COND",
    ),
}


@pytest.mark.parametrize("case", list(_UNIFORM_BAD))
def test_collective_under_thread_dependent_control_refused(tmp_path, case):  # type: ignore[no-untyped-def]
    body, cond = _UNIFORM_BAD[case]
    refused(
        tmp_path,
        f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    {body}
""",
        "uniformity",
        "needs every thread of the",
        cond,
    )


_UNIFORM_OK = {
    "scalar-param": "if n > 3:\n        ss.block.sync()",
    "block-geometry": "if cuda.blockIdx.x < n and cuda.blockDim.x == 128:\n        ss.block.sync()",
    "shape": "for k in range(a.shape[0] // 128):\n        ss.block.sync()",
    "reconverged": "x = 0\n    if cuda.threadIdx.x < 5:\n        x = 1\n    ss.block.sync()\n"
    "    out[i] = a[i] + x",
    "broadcast-result": "if ss.block.broadcast(a[0]) > 0:\n        ss.block.sync()",
    "sum-result-loop": "s = ss.block.sum(np.float32(1))\n    while s > 1:\n        s = ss.block.max(s / 2)",
    "warp-result-for-warp-op": "s = ss.warp.sum(np.float32(1))\n    if s > 3:\n"
    "        t = ss.warp.broadcast(s)",
    "uniform-break": "for k in range(n):\n        ss.block.sync()\n        if k > 3:\n            break",
    "reduce-op": "s = ss.block.reduce(np.float32(2), operator.mul) + ss.block.reduce(np.float32(1), max)",
    "walrus-uniform": "x = (t := n)\n    if t < 32:\n        ss.block.sync()",
    "for-over-uniform-values": "for v in (n, 2 * n):\n        if v > 0:\n            ss.block.sync()\n"
    "    for k, v in zip(range(n), range(4)):\n        if v > k:\n            ss.block.sync()",
    "while-test-uniform-break": "k = 0\n    while ss.block.sum(np.float32(k)) < n:\n"
    "        k += 1\n        if k > 3:\n            break",
    # An input read proven inside the input is uniform at a uniform index (reads past
    # the end are not: tests/kernels/compiled_form.py, with the contract's requires).
    "input-guarded-by-its-size": "if a.size > 0:\n        if a[0] > 0:\n            ss.block.sync()",
    "for-over-input": "for v in a:\n        if v > 0:\n            ss.block.sync()\n        break",
    "for-over-zip-of-input": "for k, v in zip(range(n), a):\n        if v > 0:\n"
    "            ss.block.sync()",
    "uniform-break-on-input": "for k in range(a.size):\n        ss.block.sync()\n"
    "        if a[k] > 0:\n            break",
    "input-broadcast": "for k in range(n):\n        if ss.block.broadcast(a[k]) > 0:\n"
    "            ss.block.sync()",
    # A name rebound to a block collective's result is uniform from there on.
    "rebound-to-collective": "m = a[cuda.threadIdx.x]\n    m = ss.block.max(m)\n"
    "    if m > 0:\n        s = ss.block.sum(m)",
    "tuple-pairs-param-and-thread": "x, t = n, cuda.threadIdx.x\n    if x > 0:\n"
    "        ss.block.sync()\n    out[i] = t",
    "grid-dim-trip-count": "for _ in range(cuda.gridDim.x):\n        ss.block.sync()",
}


@pytest.mark.parametrize("case", list(_UNIFORM_OK))
def test_collective_under_uniform_control_accepted(tmp_path, case):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    {_UNIFORM_OK[case]}
""",
    )


def test_helper_with_barrier_called_under_thread_branch_refused(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
@ss.device
def sync_twice():
    ss.block.sync()
    ss.block.sync()

@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    if cuda.threadIdx.x == 0:  # COND
        sync_twice()  # BAD
""",
        "uniformity",
        "helper sync_twice",
        "# COND",
    )


def test_helper_barrier_under_its_parameter_refused_for_thread_argument(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
@ss.device
def maybe_sync(flag):
    if flag > 0:
        ss.block.sync()  # BAD

@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    maybe_sync(cuda.threadIdx.x)
""",
        "uniformity",
        "needs every thread of the block",
    )


def test_helper_barrier_under_uniform_argument_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
@ss.device
def maybe_sync(flag):
    if flag > 0:
        ss.block.sync()

@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    maybe_sync(n)
""",
    )


def test_helper_levels_stop_at_starred_argument(tmp_path):  # type: ignore[no-untyped-def]
    # `*(t, t)` would spread over `x` and `flag`, hiding `flag`'s level: a starred argument
    # to a helper is refused outright (the taint rule runs first; the uniformity analysis
    # would also give every parameter from the `*` on the worst level).
    helper = """
@ss.device
def maybe_sync(x, flag, y):
    if flag < 32:
        ss.block.sync()
    return x + y
"""
    refused(
        tmp_path,
        helper
        + f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    t = cuda.threadIdx.x
    z = maybe_sync(*(t, t), n)  # BAD
""",
        "unsafe-escape",
        "unpacks arguments into a call of the @simtsafe.device helper `maybe_sync`",
    )
    twin = tmp_path / "twin"
    twin.mkdir()
    accepted(
        twin,
        helper
        + f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    t = cuda.threadIdx.x
    z = maybe_sync(t, n, n)
""",
    )


_EXITING_HELPER = """
@ss.device
def checked(x):
    if x >= 32:
        raise ValueError("too big")
    return 0

@ss.device
def asserted(x):
    assert x < 32
    return 0
"""

_HELPER_EXIT_BAD = {
    "raise-then-barrier": "z = checked(cuda.threadIdx.x)  # COND\n    ss.block.sync()  # BAD",
    "assert-then-collective": (
        "z = asserted(cuda.threadIdx.x)  # COND\n    s = ss.block.sum(np.float32(z))  # BAD"
    ),
    "raise-later-in-loop": (
        "for k in range(n):\n        ss.block.sync()  # BAD\n"
        "        z = checked(cuda.threadIdx.x + k)  # COND"
    ),
    "raise-in-thread-branch": (
        "if cuda.threadIdx.x < 3:  # COND\n        z = checked(n)\n    ss.block.sync()  # BAD"
    ),
    "raise-in-short-circuit": (
        "ok = cuda.threadIdx.x < 3 and checked(n) == 0  # COND\n    ss.block.sync()  # BAD"
    ),
}


@pytest.mark.parametrize("case", list(_HELPER_EXIT_BAD))
def test_helper_that_may_end_threads_refused_before_barrier(tmp_path, case):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        _EXITING_HELPER
        + f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    {_HELPER_EXIT_BAD[case]}
""",
        "uniformity",
        "needs every thread of the block",
        "# COND",
    )


def test_helper_that_ends_all_threads_alike_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        _EXITING_HELPER
        + f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    z = checked(n) + asserted(cuda.blockIdx.x)
    ss.block.sync()
    for k in range(n):
        ss.block.sync()
        z += checked(k)
""",
    )


#: The refusal of a reduction's op that does not combine its two values alone (verify._verdict).
IMPURE_OP = "must combine its two values from them alone, the same way in every thread"

# The op of a reduction runs inside the collective (on some lanes only when warps may be
# partial): the compiled form decides whether every thread still reaches the collective.
_REDUCE_OP_BAD = {
    # (op body, contract, code after the reduction, fragment)
    "raises": (
        "if x > 100:\n        raise ValueError()\n    return x + y",
        "B128",
        "",
        "the other way leaves first",
    ),
    # An op that holds a barrier or reads the thread's identity: threads would combine
    # differently, or wait inside the op (attack round 24): refused at the reduction.
    "barrier-in-partial-warps": ("ss.block.sync()\n    return x + y", "UPTO128", "", IMPURE_OP),
    "barrier-in-whole-warps": ("ss.block.sync()\n    return x + y", "B128", "", IMPURE_OP),
    "thread-dependent-result-steers-barrier": (
        "return x + y + cuda.threadIdx.x",
        "B128",
        "\n    if s > 3:\n        ss.block.sync()",
        IMPURE_OP,
    ),
    "thread-dependent-result-steers-nothing": (
        "return x + y + cuda.threadIdx.x",
        "B128",
        "\n    out[i] = s",
        IMPURE_OP,
    ),
}


@pytest.mark.parametrize("case", list(_REDUCE_OP_BAD))
@pytest.mark.parametrize("scope", ["block", "warp"])
def test_reduce_op_that_breaks_uniformity_refused(tmp_path, case, scope):  # type: ignore[no-untyped-def]
    body, contract, after, fragment = _REDUCE_OP_BAD[case]
    later = "# LATER" in after
    source = f"""
@ss.device
def op(x, y):
    {body}

@ss.kernel(contract={contract})
def k({SIG}) -> None:
    i = thread.index_1d()
    s = ss.{scope}.reduce(np.float32(1), op){"" if later else "  # BAD"}{after.replace("# LATER", "# BAD")}
"""
    refused(tmp_path, source, "uniformity", fragment, "# COND" if later else None)


def test_reduce_op_helper_of_its_arguments_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
@ss.device
def op(x, y):
    if x > y:
        return x + np.float32(1)
    return y

@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    s = ss.block.reduce(np.float32(1), op)
    t = ss.warp.reduce(np.float32(2), op=op)
    if s > 3:
        ss.block.sync()
""",
    )


def test_reduce_op_must_be_an_allowed_function(tmp_path):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    s = ss.block.reduce(np.float32(1), operator.sub)  # BAD
""",
        "collective",
        "must be one of operator.add",
    )


# ============================================================ tile phases

_PHASE_BAD = {
    "read-after-fill": (
        "w = thread.local_index()\n    tile[w] = a[i]  # FILL\n"
        "    out[i] = tile[(cuda.threadIdx.x + 1) % 128]  # BAD"
    ),
    "fill-after-read": (
        "w = thread.local_index()\n    x = tile[0]  # FILL\n    tile[w] = a[i]  # BAD"
    ),
    "missing-second-barrier": (
        "acc = np.float32(0)\n    for kk in range(n):\n"
        "        for w in thread.block_stride(tile):\n            tile[w] = a[w.index]  # BAD\n"
        "        ss.block.sync()\n        acc += tile[kk % 128]  # FILL\n    out[i] = acc"
    ),
    "barrier-on-one-branch": (
        "w = thread.local_index()\n    tile[w] = a[i]  # FILL\n    if n > 0:\n"
        "        ss.block.sync()\n    out[i] = tile[0]  # BAD"
    ),
    "accumulator-read-during-updates": (
        "h = ss.shared.accumulator(16, np.int32)\n    h.add(cuda.threadIdx.x % 16, 1)  # FILL\n"
        "    out[i] = h[0]  # BAD"
    ),
    "break-skips-barrier": (
        "w = thread.local_index()\n    for r in range(4):\n        tile[w] = a[i] + r  # FILL\n"
        "        if r >= n:\n            break\n        ss.block.sync()\n"
        "        out[i] = tile[127 - w.index]\n        ss.block.sync()\n    out[i] = tile[0]  # BAD"
    ),
    "continue-skips-barrier": (
        "w = thread.local_index()\n    acc = np.float32(0)\n    for r in range(4):\n"
        "        tile[w] = a[i] * r  # FILL\n        ss.block.sync()\n"
        "        acc += tile[127 - w.index]  # BAD\n        if r < n:\n            continue\n"
        "        ss.block.sync()\n    out[i] = acc"
    ),
    "barrier-under-short-circuit": (
        "w = thread.local_index()\n    tile[w] = a[i]  # FILL\n"
        "    ok = n > 3 and ss.block.sum(np.float32(1)) > 0\n    out[i] = tile[0]  # BAD"
    ),
    "barrier-in-one-branch-of-ifexp": (
        "w = thread.local_index()\n    tile[w] = a[i]  # FILL\n"
        "    s = ss.block.sum(np.float32(1)) if n > 3 else np.float32(0)\n    out[i] = tile[0]  # BAD"
    ),
    "read-after-barrier-in-same-expr": (
        "w = thread.local_index()\n    tile[w] = a[i]\n    ss.block.sync()\n"
        "    x = ss.block.broadcast(np.float32(0)) + tile[127 - w.index]  # FILL\n"
        "    tile[w] = np.float32(-1)  # BAD"
    ),
    "fill-and-read-on-two-branches": (
        "w = thread.local_index()\n    x = np.float32(0)\n    if cuda.threadIdx.x < 64:\n"
        "        tile[w] = a[i]  # FILL\n    else:\n        x = tile[5]  # BAD\n"
        "    ss.block.sync()\n    out[i] = x"
    ),
    "fill-then-return-while-others-read": (
        "w = thread.local_index()\n    if cuda.threadIdx.x < 64:\n"
        "        tile[w] = a[i]  # FILL\n        return\n    out[i] = tile[5]  # BAD"
    ),
    "accumulator-2d-read-during-updates": (
        "h = ss.shared.accumulator((4, 32), np.int32)\n"
        "    h.add((cuda.threadIdx.x % 4, cuda.threadIdx.x & 31), 1)  # FILL\n"
        "    out[i] = h[1, 2]  # BAD"
    ),
    "accumulator-made-again-in-loop": (
        "for r in range(2):\n        h = ss.shared.accumulator(16, np.int32)  # FILL\n"
        "        h.add(cuda.threadIdx.x % 16, 1)\n        ss.block.sync()\n"
        "        out[i] = h[cuda.threadIdx.x % 16]  # BAD"
    ),
}


@pytest.mark.parametrize("case", list(_PHASE_BAD))
def test_tile_phase_violation_refused(tmp_path, case):  # type: ignore[no-untyped-def]
    mod_body = f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    tile = ss.shared.tile(128, np.float32)
    {_PHASE_BAD[case]}
"""
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(tmp_path, HEAD + mod_body)
    exc = info.value
    assert exc.rule == "tile-phase", str(exc)
    assert "with no block barrier between them" in str(exc), str(exc)
    lines = {line_of(tmp_path, "# BAD"), line_of(tmp_path, "# FILL")}
    assert exc.lineno in lines
    for line in lines:
        assert f"line {line}" in str(exc), str(exc)


_PHASE_OK = {
    "fill-sync-read": (
        "for w in thread.block_stride(tile):\n        tile[w] = a[w.index]\n    ss.block.sync()\n"
        "    out[i] = tile[(cuda.threadIdx.x + 1) % 128]"
    ),
    "own-read-in-fill": (
        "w = thread.local_index()\n    tile[w] = a[i]\n    tile[w] = tile[w] * 2\n    ss.block.sync()\n"
        "    out[i] = tile[0]"
    ),
    "two-barriers-per-step": (
        "acc = np.float32(0)\n    for kk in range(n):\n"
        "        for w in thread.block_stride(tile):\n            tile[w] = a[w.index]\n"
        "        ss.block.sync()\n        acc += tile[kk % 128]\n        ss.block.sync()\n"
        "    out[i] = acc"
    ),
    "collective-is-a-barrier": (
        "w = thread.local_index()\n    tile[w] = a[i]\n    s = ss.block.sum(np.float32(1))\n"
        "    out[i] = tile[0] + s"
    ),
    "accumulator-sync-read": (
        "h = ss.shared.accumulator(16, np.int32)\n    h.add(cuda.threadIdx.x % 16, 1)\n"
        "    ss.block.sync()\n    out[i] = h[0]"
    ),
    "accumulator-2d-sync-read": (
        "h = ss.shared.accumulator((4, 32), np.int32)\n"
        "    h.add((cuda.threadIdx.x % 4, cuda.threadIdx.x & 31), 1)\n"
        "    ss.block.sync()\n    out[i] = h[1, 2]"
    ),
    "break-after-barrier": (
        "w = thread.local_index()\n    for r in range(4):\n        tile[w] = a[i] + r\n"
        "        ss.block.sync()\n        if r >= n:\n            break\n"
        "        out[i] = tile[127 - w.index]\n        ss.block.sync()\n    out[i] = tile[0]"
    ),
    "continue-after-barrier": (
        "w = thread.local_index()\n    acc = np.float32(0)\n    for r in range(4):\n"
        "        tile[w] = a[i] * r\n        ss.block.sync()\n        acc += tile[127 - w.index]\n"
        "        ss.block.sync()\n        if r < n:\n            continue\n        acc += 1\n"
        "    out[i] = acc"
    ),
    "barrier-first-in-short-circuit": (
        "w = thread.local_index()\n    tile[w] = a[i]\n"
        "    ok = ss.block.sum(np.float32(1)) > 0 and n > 3\n    out[i] = tile[0]"
    ),
    "read-before-barrier-in-same-expr": (
        "w = thread.local_index()\n    tile[w] = a[i]\n    ss.block.sync()\n"
        "    x = tile[127 - w.index] + ss.block.broadcast(np.float32(0))\n"
        "    tile[w] = np.float32(-1)"
    ),
    "fill-or-own-read-on-two-branches": (
        "w = thread.local_index()\n    x = np.float32(0)\n    if cuda.threadIdx.x < 64:\n"
        "        tile[w] = a[i]\n    else:\n        x = tile[w]\n"
        "    ss.block.sync()\n    out[i] = x + tile[5]"
    ),
    "accumulator-made-in-loop-synced": (
        "for r in range(2):\n        h = ss.shared.accumulator(16, np.int32)\n"
        "        h.add(cuda.threadIdx.x % 16, 1)\n        ss.block.sync()\n"
        "        out[i] = h[cuda.threadIdx.x % 16]\n        ss.block.sync()"
    ),
}


@pytest.mark.parametrize("case", list(_PHASE_OK))
def test_tile_phases_accepted(tmp_path, case):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    tile = ss.shared.tile(128, np.float32)
    {_PHASE_OK[case]}
""",
    )


@pytest.mark.parametrize(
    "line",
    [
        "t2 = tile  # BAD",
        "pair = (tile, 1)  # BAD",
        "x = (tile, tile)[0]  # BAD",
    ],
    ids=["alias", "container", "indexed-container"],  # (a list is refused as one: messages)
)
def test_tile_cannot_escape_tracking(tmp_path, line):  # type: ignore[no-untyped-def]
    refused(
        tmp_path,
        f"""
@ss.device
def helper(t):
    return 0

@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    tile = ss.shared.tile(128, np.float32)
    {line}
""",
        "tile-phase",
        "is a shared tile or accumulator",
    )


def test_dynamic_tile_needs_dynamic_shared_in_contract(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            HEAD
            + f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    tile = ss.shared.dynamic_tile(np.float32)
""",
        )
    assert info.value.rule == "contract"
    assert "declare it in the contract" in str(info.value)
    accepted(
        tmp_path / "twin" if (tmp_path / "twin").mkdir() is None else tmp_path,
        f"""
@ss.kernel(contract=ss.LaunchContract(domain=1, block=128, dynamic_shared=(0, 49152)))
def k({SIG}) -> None:
    tile = ss.shared.dynamic_tile(np.float32)
""",
    )


@pytest.mark.parametrize(
    "make", ["ss.shared.tile(32, np.float32)", "ss.shared.accumulator(16, np.int32)"]
)
def test_shared_storage_in_helpers_refused(tmp_path, make):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            HEAD
            + f"""
@ss.device
def helper(x):
    t = {make}
    return x
""",
        )
    assert info.value.rule == "tile-phase"
    assert "shared tiles and accumulators are made in the kernel itself" in str(info.value)


_MORE_UNIFORM_BAD = {
    "short-circuit-and": (
        "ok = cuda.threadIdx.x < 3 and ss.block.sum(np.float32(1)) > 0  # BAD",
        "# BAD",
    ),
    "conditional-expression": (
        "v = ss.block.max(np.float32(1)) if a[i] > 0 else np.float32(0)  # BAD",
        "# BAD",
    ),
    "raise-before": (
        "if cuda.threadIdx.x == 5:  # COND\n        raise ValueError()\n    ss.block.sync()  # BAD",
        "# COND",
    ),
    "assert-before": (
        "assert cuda.threadIdx.x < 100  # COND\n    ss.block.sync()  # BAD",
        "# COND",
    ),
}


@pytest.mark.parametrize("case", list(_MORE_UNIFORM_BAD))
def test_collective_in_evaluation_order_or_after_exit_refused(tmp_path, case):  # type: ignore[no-untyped-def]
    body, cond = _MORE_UNIFORM_BAD[case]
    refused(
        tmp_path,
        f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    {body}
""",
        "uniformity",
        "needs every thread of the",
        cond,
    )


def test_uniform_short_circuit_accepted(tmp_path):  # type: ignore[no-untyped-def]
    accepted(
        tmp_path,
        f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    ok = n > 3 and ss.block.sum(np.float32(1)) > 0
    assert n >= 0
    ss.block.sync()
""",
    )


def test_witness_name_rebound_reads_by_index(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ss.SafetyError) as info:
        load_kernel_module(
            tmp_path,
            HEAD
            + f"""
@ss.kernel(contract=B128)
def k({SIG}) -> None:
    i = thread.index_1d()
    tile = ss.shared.tile(128, np.float32)
    w = thread.local_index()
    tile[w] = a[i]  # FILL
    w = 5
    out[i] = tile[w]  # BAD
""",
        )
    assert info.value.rule == "tile-phase"
    assert info.value.lineno in (line_of(tmp_path, "# BAD"), line_of(tmp_path, "# FILL"))
