"""CUDA graphs of checked launches: check once at capture, replay with one driver call.

::

    with simtsafe.graph() as g:      # prepared launches inside are checked and recorded,
        step1(tmp, x)                # not run
        step2(out, tmp)
    g.replay()                       # the whole sequence, one cuGraphLaunch, no re-check
    g.rebind(x, x2)                  # re-checks only the launches that used x, updates the
    g.replay()                       # executable graph's kernel nodes in place

Each recorded launch goes through every argument check of ``PreparedLaunch``
(the generated checker, else the general loop that raises), so a graph
holds only launches that passed. The graph is built by stream capture of
those launches on a private stream (``simtsafe.lowering._launching``:
``cuStreamBeginCapture`` .. ``cuGraphInstantiate``) and replayed with
``cuGraphLaunch``. Re-binding re-captures with the stored parameters of the
unchanged launches and applies it with ``cuGraphExecUpdate`` (same topology:
kernel-node parameters rewritten in place, no re-instantiation), falling
back to a new instantiation when the driver cannot update.

Ordering: a replay is, for the ledger, the launches it contains -- one
access set (the union of theirs) on the replay stream -- so it is ordered
after (or, strict, refused because of) conflicting launches on other
streams like any launch. The launches run in record order on the replay
stream; the stream each was prepared with is not used.

Soundness of "no re-check": a graph keeps its arguments alive (rebound ones
too, until the ledger knows the latest replay finished), and Numba
device arrays cannot change; CuPy arrays and PyTorch tensors can
(``resize_``, ``set_``), so a replay compares their pointer, shape, strides
and dtype with the captured ones and refuses a replay after a change
(``GraphError``; ``rebind(x, x)`` re-checks). A graph is not thread-safe.

On the simulator a replay runs the recorded launches one by one through
Numba's simulator, without re-checking them.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, final

from .._errors import GraphError
from ..lowering._compat import SIMULATOR
from ..lowering._launching import CapturedGraph, core_stream, record_event, stream_handle
from ._argfacts import array_facts, native_facts
from ._handles import LaunchHandle
from ._launch import start_recording, stop_recording
from ._streams import LEDGER, OFF, Access

if TYPE_CHECKING:
    from ._launch import Checked, LaunchPlan
    from ._prepare import PreparedLaunch

__all__ = ["Graph", "graph"]


def graph(stream: Any = None) -> Graph:
    """Record checked launches into a CUDA graph (``with simtsafe.graph() as g:``).

    Args:
        stream: the stream ``replay()`` / ``launch()`` use when given none
            (default: the default stream). Any stream ``prepare`` accepts.
    """
    return Graph._mint(stream)


@final
class _Recorded:
    """One checked launch of a graph: what to launch and what was checked."""

    __slots__ = ("access", "args", "foreign", "kernel", "params", "plan", "streams")

    def __init__(self, plan: LaunchPlan, args: tuple[Any, ...], checked: Checked) -> None:
        layouts, params, _stable, facts, _named = checked
        self.plan = plan
        self.args = args  # keeps the arrays alive as long as the graph
        self.kernel = plan.compiled_kernel(layouts)
        self.params = args if SIMULATOR else params
        self.access = plan.access(facts)
        foreign: list[tuple[int, tuple[Any, ...]]] = []
        static: list[int | None] = []
        for i, f in zip(plan.array_indices, facts, strict=True):
            if f.stable:
                static.append(f.stream)  # fixed for the object's life
            else:  # metadata can change in place: fingerprint now, compare at replay
                foreign.append((i, (f.ptr, f.shape, f.strides, f.typestr, f.readonly)))
        self.streams = tuple(v for v in static if v is not None)
        self.foreign = tuple(foreign)


def _facts(plan: LaunchPlan, i: int, obj: Any) -> Any:
    param, _typestr, itemsize = plan.expect[i]
    return native_facts(obj, itemsize) or array_facts(obj, param, plan.name, itemsize)


@final
class Graph:
    """A recorded sequence of checked launches, replayed as one CUDA graph.

    Made by ``simtsafe.graph()``; record with ``with g:`` (prepared launches
    called inside are checked and recorded, not run) or ``g.record(prepared,
    *args)``. ``replay()`` runs them all, ``launch()`` does too and returns a
    ``LaunchHandle``, ``rebind(old, new)`` swaps an array.
    """

    __slots__ = (
        "__weakref__",
        "access",
        "_default",
        "_device",
        "_dirty",
        "_exec",
        "_foreign",
        "_last",
        "_retired",
        "label",
        "_launches",
        "_recording",
        "_static",
        "_stream",
        "stamp",
    )

    access: Access  # the union of the recorded launches' accesses (for the ledger)
    label: str
    stamp: object  # the ledger stamp its access set was last checked under
    _stream: Any
    _launches: list[_Recorded]
    _device: int | None
    _exec: CapturedGraph | None
    _dirty: bool
    _recording: bool
    _static: tuple[int | None, ...]  # producer streams fixed at capture
    _foreign: list[tuple[int, _Recorded]]  # launches with CuPy/PyTorch arrays
    _default: Any  # ledger state of the default replay stream
    _last: tuple[Any, int]  # (ledger stream state, number) of the latest replay
    _retired: list[_Recorded]  # launches rebound while a replay may still use them

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a Graph is made by simtsafe.graph(stream=None)")

    @classmethod
    def _mint(cls, stream: Any) -> Graph:
        self = object.__new__(cls)
        stream_handle(stream)  # refuse what is not a stream now, not at the first replay
        self._stream = stream
        self._launches = []
        self._device = None
        self._exec = None
        self._dirty = True
        self._recording = False
        self.access = ()
        self._static = ()
        self._foreign = []
        self._default = None
        self._last = (None, 0)
        self._retired = []
        self.label = "graph"
        self.stamp = None
        return self

    # ------------------------------------------------------------------ recording

    def __enter__(self) -> Graph:
        if self._recording:
            raise GraphError("this graph is already recording (nested `with` of one graph)")
        self._recording = True
        start_recording(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stop_recording(self)
        self._recording = False
        if exc_type is None and self._launches:
            self._build()

    def record(self, prepared: PreparedLaunch, *args: Any) -> None:
        """Check one launch of ``prepared`` with ``args`` and append it (not run)."""
        plan = prepared._plan
        self.add(plan, args, plan.checked(args))

    def add(self, plan: LaunchPlan, args: tuple[Any, ...], checked: Checked) -> None:
        """Append a launch whose arguments passed every check (called by the launch path)."""
        contract = plan.kernel.contract
        if contract is not None and (contract.cooperative or contract.cluster is not None):
            what = "cooperative" if contract.cooperative else "clustered"
            raise GraphError(
                f"kernel {plan.name!r} is {what} by its launch contract; simtsafe graphs record "
                "plain launches only. Launch it directly with its PreparedLaunch",
                kernel=plan.name,
            )
        if self._device is not None and plan.device_id != self._device:
            raise GraphError(
                f"kernel {plan.name!r} was prepared on device {plan.device_id}, but this graph "
                f"records launches of device {self._device}; one graph runs on one device",
                kernel=plan.name,
                actual=plan.device_id,
                limit=self._device,
            )
        self._device = plan.device_id
        self._launches.append(_Recorded(plan, args, checked))
        self._dirty = True

    def rebind(self, old: Any, new: Any) -> int:
        """Use ``new`` wherever a recorded launch passed ``old`` (by identity).

        Only the launches that used ``old`` are checked again, with ``new``;
        if any check fails nothing changes. The executable graph is updated
        in place at the next replay. Returns how many launches changed.

        Raises:
            GraphError: no recorded launch uses ``old``.
            LaunchContractError: a re-checked launch fails a check.
        """
        changed: list[tuple[int, _Recorded]] = []
        for index, rec in enumerate(self._launches):
            if any(a is old for a in rec.args):
                args = tuple(new if a is old else a for a in rec.args)
                changed.append((index, _Recorded(rec.plan, args, rec.plan.checked(args))))
        if not changed:
            raise GraphError(
                "rebind: no launch recorded in this graph uses that array (arrays are matched "
                "by identity: pass the very object that was recorded)"
            )
        # Replays already enqueued still use the old arrays: keep them alive until the
        # ledger knows the latest replay finished.
        state, seq = self._last
        if state is not None and state.done < seq and state.live:
            self._retired += [self._launches[index] for index, _ in changed]
        else:
            self._retired = []
        for index, rec in changed:
            self._launches[index] = rec
        self._dirty = True
        return len(changed)

    def __len__(self) -> int:
        return len(self._launches)

    def __repr__(self) -> str:
        names = ", ".join(r.plan.name for r in self._launches[:4])
        more = ", ..." if len(self._launches) > 4 else ""
        return f"Graph({len(self._launches)} launches: {names}{more})"

    # ------------------------------------------------------------------ replay

    def replay(self, stream: Any = None) -> int:
        """Run every recorded launch, in order, on ``stream`` (default: the graph's).

        Returns the replay's ledger number (0 when ordering is off).

        Raises:
            GraphError: nothing recorded, still recording, or a CuPy/PyTorch
                argument changed its memory since it was checked.
            StreamOrderError: strict ordering, and a conflicting launch on
                another stream is not ordered before this replay.
        """
        if self._dirty:
            self._build()
        if stream is None:
            target = self._stream
            s = self._default
        else:
            target = stream
            s = None
        device = self._device
        assert device is not None
        led = LEDGER
        if s is None:
            s = led.state(stream_handle(target), device)
        streams = self._refresh() if self._foreign else self._static
        with led.lock:
            solo = led.solo is s  # every unfinished launch is on this stream
            ordering = not solo and led.mode is not OFF
            if ordering and (self.stamp is not led.stamp or led.current is not s):
                led.before(s, self.access, self, self.label, device)
            if streams and led.cai_sync:
                led.sync_producers(s, streams, device)
            if SIMULATOR:
                for rec in self._launches:
                    rec.plan._simulate(rec.params)
            else:
                assert self._exec is not None
                self._exec.launch(s.handle)
            seq = led.tick(s) if solo else led.after(s, self, target) if ordering else 0
        self._last = (s, seq)
        return seq

    def launch(self, stream: Any = None) -> LaunchHandle:
        """``replay`` and return a handle (an event recorded after the replay)."""
        target = self._stream if stream is None else stream
        seq = self.replay(target)
        device = self._device
        assert device is not None
        state = LEDGER.state(stream_handle(target), device)
        event = None if SIMULATOR else record_event(core_stream(target))
        return LaunchHandle._mint(state, seq, event, self.label, target)

    def _build(self) -> None:
        if self._recording:
            raise GraphError("the graph is still recording: replay it after its `with` block")
        if not self._launches:
            raise GraphError(
                "the graph recorded no launches: call prepared launches inside "
                "`with simtsafe.graph() as g:` (or g.record(prepared, *args)) first"
            )
        union: dict[tuple[int, int], tuple[bool, str]] = {}
        for n, rec in enumerate(self._launches):
            for lo, hi, writes, name in rec.access:
                label = f"{name} (kernel {rec.plan.name!r}, launch {n})"
                seen = union.get((lo, hi))
                if seen is None or (writes and not seen[0]):
                    union[(lo, hi)] = (writes, label)
        self.access = tuple((lo, hi, w, label) for (lo, hi), (w, label) in union.items())
        self.label = f"graph of {len(self._launches)} launches"
        self.stamp = None
        streams: list[int | None] = []
        for rec in self._launches:
            streams += rec.streams
        self._static = tuple(dict.fromkeys(streams))
        self._foreign = [(n, rec) for n, rec in enumerate(self._launches) if rec.foreign]
        device = self._device
        assert device is not None
        self._default = LEDGER.state(stream_handle(self._stream), device)
        if not SIMULATOR:
            launches = [(r.plan.config, r.kernel, r.params) for r in self._launches]
            if self._exec is None or not self._exec.update(device, launches):
                self._exec = CapturedGraph(device, launches)
        self._dirty = False

    def _refresh(self) -> tuple[int | None, ...]:
        """Producer streams now; refuses a CuPy/PyTorch argument that changed since capture."""
        streams = list(self._static)
        for n, rec in self._foreign:
            for i, fingerprint in rec.foreign:
                facts = _facts(rec.plan, i, rec.args[i])
                now = (facts.ptr, facts.shape, facts.strides, facts.typestr, facts.readonly)
                if now != fingerprint:
                    name = rec.plan.expect[i][0].name
                    raise GraphError(
                        f"argument {name!r} of launch {n} (kernel {rec.plan.name!r}) changed its "
                        "memory, shape, strides or dtype since the graph checked it (CuPy and "
                        "PyTorch arrays can change in place). Re-check it with "
                        "g.rebind(array, array), or record the graph again",
                        kernel=rec.plan.name,
                        argument=name,
                    )
                if facts.stream is not None:
                    streams.append(facts.stream)
        return tuple(dict.fromkeys(streams))
