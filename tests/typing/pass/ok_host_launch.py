"""Host side: prepare takes ints or tuples of ints and returns a PreparedLaunch; the
execution API (handles, bound launches, graphs, settings) is typed."""

from __future__ import annotations

from typing import Any

import numpy as np
from typing_extensions import assert_type

import simtsafe as ss
from simtsafe import DisjointSlice, In, thread


@ss.kernel(contract=ss.LaunchContract(domain=1, block=256))
def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i]


def host(n: int) -> None:
    launch = k.prepare(grid=ss.cover(n, 256), block=256)
    assert_type(launch, ss.PreparedLaunch)
    k.prepare(grid=(4, 2), block=(256, 1, 1), shared_mem=0)
    k.prepare(grid=np.int64(4), block=256)


def execution(launch: ss.PreparedLaunch, out: object, a: object) -> None:
    assert_type(launch(out, a), None)
    handle = launch.launch(out, a)
    assert_type(handle, ss.LaunchHandle)
    assert_type(handle.done(), bool)
    handle.wait(stream=0)
    bound = launch.bind(out, a)
    assert_type(bound, ss.BoundLaunch)
    assert_type(bound(), None)
    assert_type(bound.args, tuple[Any, ...])
    with ss.graph() as g:
        launch(out, a)
    assert_type(g, ss.Graph)
    assert_type(g.replay(), int)
    assert_type(g.launch(), ss.LaunchHandle)
    assert_type(g.rebind(a, out), int)
    with ss.configure(ordering="strict") as settings:
        assert_type(settings, ss.ExecutionSettings)
    ss.synchronize()
    assert_type(ss.execution_settings().cai_sync, bool)
