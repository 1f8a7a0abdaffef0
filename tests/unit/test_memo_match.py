"""The memoized launch path's generated key and matcher (``host._launch.key_function``,
``matcher_factory``) against the general loop they replace (``_Memo.matches``): on every
argument set below, same answer. A wrong "match" would skip every argument check."""

from __future__ import annotations

import gc
import itertools
import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from simtsafe.host._launch import _Memo, key_function, matcher_factory


class Arr:
    """An object standing in for a device array (weakly referenceable, compared by identity)."""


def _memo(args: tuple[Any, ...], array_idx: tuple[int, ...]) -> _Memo:
    scalar_idx = tuple(i for i in range(len(args)) if i not in array_idx)
    make = matcher_factory(len(args), array_idx, scalar_idx)
    facts = tuple(SimpleNamespace(stream=None) for _ in array_idx)  # no producer stream
    return _Memo(args, array_idx, scalar_idx, None, (), (), facts, {}, "k", lambda: None, make)  # type: ignore[arg-type]


def test_the_key_is_the_array_arguments_ids() -> None:
    a, b = Arr(), Arr()
    assert key_function((0, 2))((a, 3, b)) == (id(a), id(b))
    assert key_function((1,))((4, a)) == (id(a),)
    assert key_function(())((1, 2)) == ()


def test_a_memo_without_fingerprints_uses_the_generated_matcher() -> None:
    args = (Arr(), np.int64(3), Arr(), 0.5)
    memo = _memo(args, (0, 2))
    assert memo.match is not memo.matches  # the generated one
    assert memo.match(args) and memo.matches(args)


NAN = math.nan
ARR = [Arr(), Arr(), Arr()]
#: Recorded argument sets: arrays at 0 and 2, scalars of several kinds between and after.
RECORDED = [
    (ARR[0], np.int64(8), ARR[1], 4, np.float32(0.125), True),
    (ARR[0], 0, ARR[1], -1, 2.5, False),
    (ARR[0], np.int32(7), ARR[1], np.uint64(2**63), NAN, 1),
]


def _variants(rec: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The recorded set, and sets that differ from it in one way each."""
    out = [rec, rec[:-1], (*rec, 0)]
    for i, v in enumerate(rec):
        others: list[Any] = []
        if isinstance(v, Arr):
            others = [ARR[2], None, 3]
        else:
            others = [v + 1 if not isinstance(v, bool) else not v, float(v), np.float64(v)]
            others += [int(v) if not (isinstance(v, float) and math.isnan(v)) else NAN]
            others += [np.int64(v) if not isinstance(v, float) else np.float32(v)]
        for o in others:
            out.append(rec[:i] + (o,) + rec[i + 1 :])
    return out


@pytest.mark.parametrize("rec", RECORDED, ids=["numpy-ints", "python", "wide-and-nan"])
def test_the_generated_matcher_agrees_with_the_loop(rec: tuple[Any, ...]) -> None:
    memo = _memo(rec, (0, 2))
    for args in _variants(rec):
        with np.errstate(all="ignore"):
            assert memo.match(args) == memo.matches(args), args


def test_a_dead_array_never_matches() -> None:
    a = Arr()
    memo = _memo((a, 1), (0,))
    assert memo.match((a, 1))
    stranger = Arr()
    del a
    gc.collect()
    assert not memo.match((stranger, 1)) and not memo.matches((stranger, 1))


def test_every_argument_position_is_tested() -> None:
    # 12 arguments, arrays wherever the pattern puts them: changing any one misses.
    for pattern in itertools.islice(itertools.product((0, 1), repeat=12), 0, 4096, 257):
        arrays = tuple(i for i, p in enumerate(pattern) if p)
        args = tuple(Arr() if p else i for i, p in enumerate(pattern))
        memo = _memo(args, arrays)
        assert memo.match(args)
        for i in range(12):
            changed = args[:i] + ((Arr() if pattern[i] else i + 100),) + args[i + 1 :]
            assert not memo.match(changed) and not memo.matches(changed), (pattern, i)


@pytest.mark.parametrize(
    ("recorded", "other"),
    [
        (0.0, -0.0),
        (-0.0, 0.0),
        (np.float32(0.0), np.float32(-0.0)),
        (np.float64(-0.0), np.float64(0.0)),
        (complex(1.0, 0.0), complex(1.0, -0.0)),
        (np.complex64(complex(-0.0, 2.0)), np.complex64(complex(0.0, 2.0))),
    ],
)
def test_a_zero_of_the_other_sign_is_another_argument(recorded: Any, other: Any) -> None:
    # -0.0 == 0.0, yet a kernel can tell them apart (1 / x, copysign): a memo recorded for one
    # must not launch with the other's value.
    memo = _memo((ARR[0], recorded), (0,))
    assert memo.match((ARR[0], recorded)) and memo.matches((ARR[0], recorded))
    assert not memo.match((ARR[0], other)) and not memo.matches((ARR[0], other))
