"""The replay follows CUDA semantics: warp collectives, block votes, atomics, bit intrinsics,
memory spaces, and what does and does not order memory."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from simtsafe import sim

from . import semantics_kernels as K

FULL = 0xFFFFFFFF


def _run(kernel, grid, block, *args, **kw):  # type: ignore[no-untyped-def]
    return sim.check(kernel, grid, block, *args, **kw)


def _line_of(fn: object, text: str) -> int:
    """The line number of the first source line of ``fn`` containing ``text``."""
    lines, first = inspect.getsourcelines(fn)  # type: ignore[arg-type]
    return next(first + k for k, line in enumerate(lines) if text in line)


def test_shuffles_follow_cuda() -> None:
    r = _run(K.shuffles, 1, 32, np.zeros((32, 6), np.int64))
    assert r.ok, str(r)
    out = r.outputs["out"]
    lanes = np.arange(32)
    assert list(out[:, 0]) == list(((lanes + 3) % 32) * 10)
    assert list(out[:, 1]) == [0] + list(lanes[:-1] * 10)  # lane 0 keeps its own value
    assert list(out[:, 2]) == list(lanes[1:] * 10) + [310]  # lane 31 keeps its own value
    assert list(out[:, 3]) == list((lanes ^ 1) * 10)
    # width 8: segments of 8 lanes; down by 2 past a segment's end keeps the own value
    want = [(ln + 2) * 10 if ln % 8 < 6 else ln * 10 for ln in lanes]
    assert list(out[:, 4]) == want
    # width 8: source lane 9 % 8 = 1 of each segment
    assert list(out[:, 5]) == [(ln - ln % 8 + 1) * 10 for ln in lanes]


def test_votes_and_masks() -> None:
    r = _run(K.votes, 1, 32, np.zeros((32, 10), np.int64))
    assert r.ok, str(r)
    out = r.outputs["out"]
    assert set(out[:, 0]) == {0x55555555}
    assert set(out[:, 1]) == {1} and set(out[:, 2]) == {1} and set(out[:, 3]) == {0}
    assert [int(v) for v in out[:, 4]] == [0xFF << (8 * (ln // 8)) for ln in range(32)]
    assert set(out[:, 5]) == {FULL} and set(out[:, 6]) == {1}
    assert set(out[:, 7]) == {0}
    assert [int(v) for v in out[:, 8]] == [(1 << ln) - 1 for ln in range(32)]
    # activemask inside `if lane < 10`: the lanes that took the branch
    assert [int(v) for v in out[:, 9]] == [0x3FF] * 10 + [0] * 22


def test_block_votes() -> None:
    x = np.array([1, -1] * 32, np.int32)
    r = _run(K.block_votes, 1, 64, np.zeros((64, 3), np.int32), x)
    assert r.ok, str(r)
    out = r.outputs["out"]
    assert set(out[:, 0]) == {32} and set(out[:, 1]) == {1} and set(out[:, 2]) == {0}
    assert r.stats["barriers"] == 3


def test_atomics_return_the_old_value() -> None:
    a = np.array([1, 5, 3, 3, 0, 3, 0, 7, 5, 5, 5, 11, 0], np.int32)
    f = np.array([np.nan, 1.0], np.float32)
    r = _run(K.atomics, 1, 1, np.zeros(12, np.int32), a, f)
    assert r.ok, str(r)
    assert list(r.outputs["old"]) == [1, 5, 3, 3, 0, 3, 0, 7, 5, 5, 5, 11]
    assert list(r.outputs["a"]) == [6, 3, 9, -9, 42, 0, 3, 70, 4, 7, 3, 110, 1]
    assert list(r.outputs["f"]) == [3.0, -3.0]
    assert list(a) == [1, 5, 3, 3, 0, 3, 0, 7, 5, 5, 5, 11, 0]  # the caller's array is untouched


def test_bit_intrinsics() -> None:
    v = np.array([0b1011000, 1], np.uint32)
    r = _run(K.bits, 1, 1, np.zeros(6, np.int64), v)
    assert list(r.outputs["out"]) == [3, 25, 4, 1 << 31, 11, 177]


def test_negative_index_is_out_of_bounds_not_wrapped() -> None:
    r = _run(K.negative_index, 1, 4, np.zeros(4, np.float32), np.ones(4, np.float32))
    [f] = r.findings
    assert f.kind == "out_of_bounds" and f.array == "x" and f.index == (-1,)
    assert f.threads[0].thread == (0, 0, 0) and f.accesses == ("read", "read")
    assert "negative index" in f.message and "wrap" in f.message
    assert list(r.outputs["out"]) == [0, 1, 1, 1]  # the skipped read gave 0


def test_each_axis_is_bounds_checked() -> None:
    r = _run(K.column_overflow, 1, 1, np.zeros(1, np.float32), np.ones((16, 16), np.float32))
    [f] = r.findings
    assert f.kind == "out_of_bounds" and f.index == (0, 20)
    assert "shape (16, 16)" in f.message


def test_dynamic_shared_arrays_alias() -> None:
    r = _run(K.dynamic_alias, 1, 8, np.zeros(8, np.float32), shared_mem=32)
    assert r.ok, str(r)
    assert list(r.outputs["out"]) == list(range(8))


def test_dynamic_shared_memory_too_small_is_out_of_bounds() -> None:
    r = _run(K.dynamic_alias, 1, 8, np.zeros(8, np.float32), shared_mem=16)
    assert {f.kind for f in r.findings} == {"out_of_bounds"}
    assert all(f.array == "shared" for f in r.findings)


def test_global_array_is_a_checked_constant() -> None:
    r = _run(K.global_table, 1, 8, np.zeros(8, np.int32))
    [f] = r.findings
    assert f.kind == "out_of_bounds" and f.array == "TABLE" and f.index == (4,)


def test_const_array_like() -> None:
    r = _run(K.const_table, 1, 8, np.zeros(8, np.float32), np.arange(4, dtype=np.float32))
    assert r.ok, str(r)
    assert list(r.outputs["out"]) == [0, 1, 2, 3] * 2


def test_race_inside_a_raw_device_function_points_at_its_line() -> None:
    r = _run(K.via_device_function, 1, 2, np.zeros(1, np.float32))
    [f] = r.findings
    assert f.kind == "race" and f.array == "out"
    line = _line_of(K.bump.py_func, "arr[k] += 1")
    assert f.locations[0][1] == line and f.locations[1][1] == line


def test_barrier_imported_by_name() -> None:
    r = _run(K.aliased_barrier, 1, 64, np.zeros(64, np.float32), np.arange(64, dtype=np.float32))
    assert r.ok, str(r)
    assert list(r.outputs["out"]) == list(range(63, -1, -1))


def test_a_shuffle_does_not_order_memory_syncwarp_does() -> None:
    racy = _run(K.shuffle_is_no_fence, 1, 32, np.zeros(32, np.int32))
    assert {f.kind for f in racy.findings} == {"race"}
    assert "lanes of one warp" in racy.findings[0].message
    clean = _run(K.syncwarp_fences, 1, 32, np.zeros(32, np.int32))
    assert clean.ok, str(clean)


def test_threads_at_different_barriers() -> None:
    r = _run(K.different_barriers, 1, 32, np.zeros(32, np.int32))
    [f] = r.findings
    assert f.kind == "barrier_divergence" and "different barriers" in f.message
    assert f.locations[0][1] != f.locations[1][1]
    assert f.accesses == ("syncthreads", "syncthreads")


def test_simtsafe_device_helper_is_replayed() -> None:
    x = np.arange(32, dtype=np.float32)
    r = _run(K.ss_calls_helper, 1, 32, np.zeros(32, np.float32), x)
    assert {f.kind for f in r.findings} == {"race"}
    helper_line = _line_of(K.ss_bump.py_func, "out.unchecked[0] += 1")
    assert any(helper_line in f.lines for f in r.findings), str(r)


@pytest.mark.parametrize(
    ("mask", "block", "fragment"),
    [
        (0x0000FFFF, 32, "does not name the calling lane"),
        (FULL, 16, "do not exist"),
    ],
)
def test_warp_mask_messages(mask: int, block: int, fragment: str) -> None:
    from . import corpus_raw as R

    kernel = R.warp_wrong_mask_bug if mask != FULL else R.warp_partial_bug
    r = _run(kernel, 1, block, np.zeros(2, np.float32), np.ones(block, np.float32))
    assert any(f.kind == "warp_mask" and fragment in f.message for f in r.findings), str(r)


def test_atomic_exch_initializes_shared_memory_an_add_does_not() -> None:
    clean = _run(K.exch_initializes, 1, 8, np.zeros(8, np.int32))
    assert clean.ok, str(clean)
    assert list(clean.outputs["out"]) == [8] * 8
    garbage = _run(K.add_on_garbage, 1, 8, np.zeros(8, np.int32))
    [f] = garbage.findings
    assert f.kind == "uninitialized" and f.array == "shared" and f.index == (0,)
    assert f.lines[0] == _line_of(K.add_on_garbage.py_func, "cuda.atomic.add(flag, 0, 1)")


def test_a_spinning_thread_yields_to_a_later_block() -> None:
    r = _run(K.wait_for_next_block, 2, 1, np.zeros(1, np.int32), np.zeros(1, np.int32))
    assert r.ok, str(r)
    assert list(r.outputs["out"]) == [1]


def test_spinners_do_not_starve_a_block_waiting_at_a_barrier() -> None:
    r = _run(K.ping_pong_blocks, 2, 2, np.zeros(2, np.int32), np.zeros(1, np.int32))
    assert r.ok, str(r)
    assert list(r.outputs["out"]) == [7] and list(r.outputs["flags"]) == [1, 1]
