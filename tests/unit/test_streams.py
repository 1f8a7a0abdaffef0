"""The stream-ordering ledger on fake streams: what it orders, refuses, remembers and forgets.

A fake driver records every ``order_streams(waiter, producer)`` call, so each
test states exactly which device-side waits a sequence of launches needs.
Streams are plain int handles (1 = legacy default); accesses are byte ranges.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from simtsafe import StreamOrderError
from simtsafe.host._streams import (
    AUTO,
    OFF,
    RECORD_CAP,
    STRICT,
    Ledger,
    StreamState,
    stream_key,
)

DEV = 0


class FakeDriver:
    def __init__(self) -> None:
        self.waits: list[tuple[int, int]] = []
        self.synced: list[int] = []

    def order_streams(self, waiter: int, producer: int, device_id: int) -> None:
        self.waits.append((waiter, producer))

    def synchronize_stream(self, handle: int) -> None:
        self.synced.append(handle)

    def synchronize_device(self) -> None:
        self.synced.append(-1)


class Holder:
    """A memo-entry-like record key (identity hashed, with access and label)."""

    def __init__(self, access: Any, label: str) -> None:
        self.access = access
        self.label = label
        self.stamp: object = None


def W(lo: int, hi: int, name: str = "out") -> tuple[int, int, bool, str]:
    return (lo, hi, True, name)


def R(lo: int, hi: int, name: str = "a") -> tuple[int, int, bool, str]:
    return (lo, hi, False, name)


def make(mode: str = AUTO, solo: bool = False) -> tuple[Ledger, FakeDriver]:
    """A ledger on a fake driver; without ``solo`` it keeps precise records from the start.

    (The single-stream shortcut is off while the host-read debug check is on.)
    """
    driver = FakeDriver()
    ledger = Ledger(driver)
    ledger.mode = mode
    ledger.host_reads = not solo
    return ledger, driver


def launch(
    ledger: Ledger, s: StreamState, *access: Any, kernel: str = "k", holder: Any = None
) -> int:
    """What LaunchPlan does around one launch (minus the driver launch)."""
    acc = tuple(access)
    if ledger.solo is s:
        return ledger.tick(s)
    ledger.before(s, acc, holder, kernel, DEV)
    return ledger.after(s, holder if holder is not None else (kernel, acc))


# ---------------------------------------------------------------------------- identity


def test_default_and_legacy_handles_are_one_stream_per_device() -> None:
    assert stream_key(0, 0) == stream_key(1, 0)
    assert stream_key(0, 0) != stream_key(0, 1)
    assert stream_key(0x7000, 0) == 0x7000


def test_per_thread_default_stream_is_one_per_host_thread() -> None:
    here = stream_key(2, 0)
    other: list[Any] = []
    t = threading.Thread(target=lambda: other.append(stream_key(2, 0)))
    t.start()
    t.join()
    assert here != other[0]
    assert here == stream_key(2, 0)


# ---------------------------------------------------------------------------- auto mode


def test_read_after_write_on_another_stream_waits_once() -> None:
    led, drv = make()
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    launch(led, s1, W(0, 100))
    launch(led, s2, R(0, 100), W(200, 300))
    assert drv.waits == [(0x20, 0x10)]
    launch(led, s2, R(0, 100), W(300, 400))  # already ordered after s1's launches so far
    assert drv.waits == [(0x20, 0x10)]


def test_same_stream_and_disjoint_or_read_only_sharing_need_no_wait() -> None:
    led, drv = make()
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    launch(led, s1, W(0, 100), R(500, 600))
    launch(led, s1, R(0, 100), W(100, 200))  # same stream: stream order suffices
    launch(led, s2, W(1000, 1100), R(500, 600))  # disjoint writes, shared read-only input
    assert drv.waits == []


def test_write_after_read_and_write_after_write_wait() -> None:
    led, drv = make()
    s1, s2, s3 = (led.state(h, DEV) for h in (0x10, 0x20, 0x30))
    launch(led, s1, R(0, 100), W(100, 200))
    launch(led, s2, W(50, 60))  # overwrites bytes s1 may still be reading
    assert drv.waits == [(0x20, 0x10)]
    launch(led, s3, W(150, 160))  # overwrites bytes s1 wrote (and s2 is ordered after)
    assert (0x30, 0x10) in drv.waits


def test_ordering_is_transitive() -> None:
    led, drv = make()
    s1, s2, s3 = (led.state(h, DEV) for h in (0x10, 0x20, 0x30))
    launch(led, s1, W(0, 100))
    launch(led, s2, R(0, 100), W(100, 200))  # s2 after s1
    launch(led, s3, R(100, 200), R(0, 100))  # waits for s2, which already waited for s1
    assert drv.waits == [(0x20, 0x10), (0x30, 0x20)]


def test_host_completion_forgets_records() -> None:
    led, drv = make()
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    seq = launch(led, s1, W(0, 100))
    led.complete(s1, seq)
    assert s1 not in led.live and not s1.recs
    launch(led, s2, R(0, 100))
    assert drv.waits == []


def test_partial_completion_keeps_later_launches() -> None:
    led, drv = make(STRICT)
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    first = launch(led, s1, W(0, 100))
    launch(led, s1, W(500, 600))
    led.complete(s1, first)
    launch(led, s2, R(0, 100))  # the writer of [0, 100) has finished
    with pytest.raises(StreamOrderError):
        launch(led, s2, R(500, 600))


def test_too_many_records_fold_into_one_that_covers_everything() -> None:
    led, drv = make(STRICT)
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    for i in range(RECORD_CAP + 1):
        launch(led, s1, W(i * 10, i * 10 + 10))
    assert not s1.recs and s1.wild == s1.tail
    with pytest.raises(StreamOrderError, match="earlier launches"):
        launch(led, s2, W(10**9, 10**9 + 4))  # far away, yet refused: conservative


def test_single_stream_programs_record_only_a_sequence_number() -> None:
    led, drv = make(solo=True)
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    launch(led, s1, W(0, 100))
    assert led.solo is s1
    recs = dict(s1.recs)
    for _ in range(5):
        launch(led, s1, W(0, 100))
    assert s1.recs == recs  # nothing recorded while solo
    launch(led, s2, W(10**6, 10**6 + 8))  # unrelated bytes, but s1's unrecorded work counts
    assert drv.waits == [(0x20, 0x10)]  # as touching everything: one conservative wait
    assert led.solo is None
    launch(led, s1, W(0, 100))
    launch(led, s2, W(2 * 10**6, 2 * 10**6 + 8))  # precise again: disjoint, no wait
    assert drv.waits == [(0x20, 0x10)]


def test_strict_mode_never_goes_solo() -> None:
    led, _ = make(STRICT, solo=True)
    s1 = led.state(0x10, DEV)
    launch(led, s1, W(0, 100))
    assert led.solo is None


def test_a_checked_holder_is_not_checked_again_until_another_stream_launches() -> None:
    led, drv = make(STRICT)
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    memo = Holder((R(0, 100), W(100, 200)), "consumer")
    launch(led, s1, W(0, 100), kernel="producer")
    with pytest.raises(StreamOrderError):
        launch(led, s2, *memo.access, holder=memo)
    led.ordered(s2, s1, s1.tail)
    launch(led, s2, *memo.access, holder=memo)
    assert memo.stamp is led.stamp
    launch(led, s2, *memo.access, holder=memo)  # same stamp: no check at all
    led.ordered(s1, s2, s2.tail)  # the producer may overwrite what the consumer read
    launch(led, s1, W(0, 100), kernel="producer")  # another stream: new stamp
    assert memo.stamp is not led.stamp
    with pytest.raises(StreamOrderError):
        launch(led, s2, *memo.access, holder=memo)


# ---------------------------------------------------------------------------- strict mode


def test_strict_refusal_names_both_streams_kernels_and_the_fix() -> None:
    led, drv = make(STRICT)
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    launch(led, s1, W(0, 100, "out"), kernel="produce")
    with pytest.raises(StreamOrderError) as info:
        launch(led, s2, R(0, 100, "a"), kernel="consume")
    err = info.value
    text = str(err)
    assert "kernel 'consume' on stream 0x20 reads argument 'a'" in text
    assert "stream 0x10 wrote as argument 'out' of kernel 'produce'" in text
    assert "h.wait(stream=consumer_stream)" in text and "ordering='auto'" in text
    assert (err.kernel, err.argument, err.other, err.other_kernel) == (
        "consume",
        "a",
        "out",
        "produce",
    )
    assert (err.stream, err.other_stream) == ("stream 0x20", "stream 0x10")
    assert drv.waits == []  # refused: nothing enqueued
    assert s2.tail == 0


def test_strict_accepts_an_ordering_it_was_told_of() -> None:
    led, drv = make(STRICT)
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    seq = launch(led, s1, W(0, 100))
    led.ordered(s2, s1, seq)  # what LaunchHandle.wait(stream=s2) reports
    launch(led, s2, R(0, 100))
    assert drv.waits == []


def test_strict_write_after_read_message() -> None:
    led, _ = make(STRICT)
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    launch(led, s1, R(0, 100, "a"), kernel="reader")
    with pytest.raises(StreamOrderError, match="writes argument 'out' .* reads as argument 'a'"):
        launch(led, s2, W(0, 100, "out"), kernel="writer")


def test_another_threads_per_thread_stream_cannot_be_waited_on() -> None:
    led, _ = make()
    theirs: list[StreamState] = []

    def other() -> None:
        st = led.state(2, DEV)
        launch(led, st, W(0, 100))
        theirs.append(st)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    mine = led.state(0x20, DEV)
    with pytest.raises(StreamOrderError, match="another thread's per-thread default stream"):
        launch(led, mine, R(0, 100))


# ---------------------------------------------------------------------------- producers


def test_producer_streams_are_waited_for_unless_they_are_the_launch_stream() -> None:
    led, drv = make()
    s = led.state(0, DEV)  # the default stream
    assert not led.sync_producers(s, (None, 1, 1), DEV)  # CAI 1: legacy default = the launch stream
    assert drv.waits == []
    assert led.sync_producers(s, (0x50, None, 0x50, 0x60), DEV)
    assert drv.waits == [(1, 0x50), (1, 0x60)]
    assert led.waits == 2


def test_a_producer_wait_covers_simtsafe_launches_on_that_stream() -> None:
    led, drv = make(STRICT)
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    launch(led, s1, W(0, 100))
    led.sync_producers(s2, (0x10,), DEV)  # s2 waits on everything enqueued on s1 so far
    launch(led, s2, R(0, 100))  # so strict mode accepts the read


def test_writers_names_the_unfinished_writers_of_a_range() -> None:
    led, _ = make()
    s1, s2 = led.state(0x10, DEV), led.state(0x20, DEV)
    launch(led, s1, W(0, 100, "out"), kernel="k1")
    launch(led, s2, R(0, 100), W(200, 300, "res"), kernel="k2")
    assert [(t.key, k, n) for t, _, k, n in led.writers(0, 50)] == [(0x10, "k1", "out")]
    assert [(t.key, k, n) for t, _, k, n in led.writers(0, 100)] == [(0x10, "k1", "out")]
    assert [(t.key, k, n) for t, _, k, n in led.writers(250, 260)] == [(0x20, "k2", "res")]
    assert led.writers(100, 200) == []


def test_off_mode_is_not_consulted_by_launch_paths() -> None:
    led, _ = make(OFF)
    assert led.mode is OFF and led.solo is None
