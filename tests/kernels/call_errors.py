"""Kernel code that Numba would refuse with a raw error about its own internals, and the
SafetyError simtsafe gives instead: the kernel's name, the line marked ``# BAD``, what was
seen and the fix. Shared by tests/ptx (the CUDA target) and tests/sim (the simulator, whose
compile worker types the kernel for the CUDA target).

Every kernel is ``k(a, x)``: a 1D contract of 32 threads, ``a`` a float32 output and ``x`` a
float32 input of 32 elements; the accepted twins write ``a[i] = f(x[i])``.
"""

from __future__ import annotations

__all__ = ["ACCEPTED", "REFUSED"]

_GLOBALS = "SCALE = 2.0\nMESSAGE = 'index out of range'\n"


def _k(body: str) -> str:
    return (
        _GLOBALS + "@ss.kernel(contract=ss.LaunchContract(domain=1, block=32))\n"
        "def k(a: DisjointSlice[np.float32], x: In[np.float32]) -> None:\n"
        "    w = thread.index_1d()\n"
        "    i = w.index\n" + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    )


def _call(expr: str) -> str:
    return _k(f"a[w] = {expr}  # BAD")


_ARITY = "Call it as `{form}`"

#: case: (source, fragments every one of which the message holds).
REFUSED: dict[str, tuple[str, tuple[str, ...]]] = {
    # 1. an extra argument to a collective (the typer's TypeError, before)
    "warp.broadcast-extra": (
        _call("ss.warp.broadcast(x[i], 0)"),
        (
            "kernel 'k'",
            "warp.broadcast takes 1 argument",
            "got 2 positional",
            _ARITY.format(form="warp.broadcast(v)"),
        ),
    ),
    "warp.broadcast-keyword": (
        _call("ss.warp.broadcast(x[i], lane=0)"),
        (
            "warp.broadcast takes 1 argument",
            "it has no parameter 'lane'",
            _ARITY.format(form="warp.broadcast(v)"),
        ),
    ),
    "warp.sum-extra": (
        _call("ss.warp.sum(x[i], 1)"),
        (
            "warp.sum takes 1 argument",
            "too many positional arguments",
            _ARITY.format(form="warp.sum(v)"),
        ),
    ),
    "warp.sum-keyword": (
        _call("ss.warp.sum(value=x[i])"),
        ("warp.sum takes 1 argument", "it has no parameter 'value'"),
    ),
    "block.sum-extra": (
        _call("ss.block.sum(x[i], 1)"),
        ("block.sum takes 1 argument", _ARITY.format(form="block.sum(v)")),
    ),
    "block.max-none": (
        _call("ss.block.max()"),
        ("block.max takes 1 argument", "got 0 positional", "missing a required argument: 'v'"),
    ),
    "block.max-two": (
        _call("ss.block.max(x[i], x[0])"),
        ("block.max takes 1 argument", "got 2 positional"),
    ),
    "warp.scan-three": (
        _call("ss.warp.scan(x[i], True, 1)"),
        ("warp.scan takes 1 to 2 arguments", _ARITY.format(form="warp.scan(v, inclusive=True)")),
    ),
    "thread.index_1d-argument": (
        _k("j = thread.index_1d(3)  # BAD\na[w] = x[i]"),
        ("thread.index_1d takes no arguments", _ARITY.format(form="thread.index_1d()")),
    ),
    # a non-number to a collective (refused by the typer already; pinned here)
    "block.sum-array": (
        _call("ss.block.sum(x)"),
        ("block.sum(v) takes a number", "got readonly array(float32, 1d, C)"),
    ),
    # 2. an assert or raise whose message is known only at run time (AttributeError
    #    'CUDACallConv' object has no attribute 'return_dynamic_user_exc', before)
    "assert-value-message": (
        _k("assert i < 32, x[0]  # BAD\na[w] = x[i]"),
        (
            "kernel 'k'",
            "this assert's message is a value known only at run time",
            'assert cond, "what went wrong"',
        ),
    ),
    "assert-tuple-message": (
        _k("assert i < 32, ('bad index', i)  # BAD\na[w] = x[i]"),
        ("this assert's message is a value known only at run time",),
    ),
    "assert-branch-message": (
        _k("m = 'high' if i > 16 else 'low'\nassert i < 32, m  # BAD\na[w] = x[i]"),
        ("this assert's message is a value known only at run time (built from `m`)",),
    ),
    "raise-value": (
        _k("if i > 40:\n    raise ValueError(i)  # BAD\na[w] = x[i]"),
        ("this raise's message is a value known only at run time",),
    ),
    "assert-f-string": (
        _k("assert i < 32, f'bad index {i}'  # BAD\na[w] = x[i]"),
        (
            "a kernel cannot build a string at run time",
            "`str(int64)`",
            "an assert or raise message must be a constant string",
        ),
    ),
    "assert-f-string-float": (
        _k("assert i < 32, f'bad value {x[0]}'  # BAD\na[w] = x[i]"),
        ("a kernel cannot build a string at run time",),
    ),
    # 3. a global read before the function's own binding of that name (NotDefinedError)
    "global-read-before-local": (
        _k("v = SCALE  # BAD\nSCALE = 3.0\na[w] = x[i] * v * SCALE"),
        (
            "kernel 'k'",
            "`SCALE` has no value where it is read",
            "a name assigned anywhere in a function is local to the whole function",
            "Give the local variable another name",
        ),
    ),
}

#: case: (source, a[i] as a function of x[i] for the test's x).
ACCEPTED: dict[str, str] = {
    "warp.broadcast": _k("a[w] = ss.warp.broadcast(x[i])"),
    "block.sum-keyword": _k("a[w] = ss.block.sum(v=x[i])"),
    "warp.scan-keyword": _k("a[w] = ss.warp.scan(x[i], inclusive=True)"),
    "assert-constant": _k("assert i < 32, 'index out of range'\na[w] = x[i]"),
    "assert-global-message": _k("assert i < 32, MESSAGE\na[w] = x[i]"),
    "assert-name-of-a-constant": _k("m = 'bad'\nassert i < 32, m\na[w] = x[i]"),
    "global-read": _k("v = SCALE\na[w] = x[i] * v"),
}
