"""Kernels with a simtsafe value that may be unbound where it is used (refused, the use
marked ``# BAD``) and their twins (accepted): tests/ptx/test_unbound_ptx.py compiles them,
tests/sim/test_unbound_sim.py prepares them on the simulator."""

from __future__ import annotations

__all__ = ["ACCEPTED", "FRAGMENT", "REFUSED"]

_K = "@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1)))\n"
_SIG = "def k(out: DisjointSlice[np.float32], x: In[np.float32], n: int) -> None:\n"
FRAGMENT = "may be unbound where it is used"


def _src(body: str, sig: str = _SIG, contract: str = _K) -> str:
    return contract + sig + "".join(f"    {line}\n" for line in body.splitlines())


REFUSED = {
    "target-of-a-loop-that-may-not-run": _src(
        "for w in thread.grid_stride(out):\n    pass\nout[w] = np.float32(1.0)  # BAD"
    ),
    "bound-under-an-if": _src(
        "if n > 0:\n    w = thread.index_1d()\nout[w] = np.float32(1.0)  # BAD"
    ),
    "bound-after-a-break": _src(
        "for i in range(n):\n"
        "    if i > 2:\n"
        "        break\n"
        "    w = thread.index_1d()\n"
        "out[w] = np.float32(2.0)  # BAD"
    ),
    "a-witness-in-a-tuple": _src(
        "if n > 0:\n    p = (thread.index_1d(), 1)\nout[p[0]] = np.float32(1.0)  # BAD"
    ),
    "a-helper-gets-it": "@ss.device\ndef put(o, w):\n    o[w] = np.float32(1.0)\n\n\n"
    + _src("if n > 0:\n    w = thread.index_1d()\nput(out, w)  # BAD"),
    "a-claimed-slot": _src(
        "for w in thread.grid_stride(x):\n"
        "    if x[w] > 0:\n"
        "        s = out.claim()\n"
        "out[s] = np.float32(1.0)  # BAD",
        sig="def k(out: ss.AppendBuffer[np.float32], count: ss.Counter, x: In[np.float32]) -> None:\n",
        contract="@ss.kernel(contract=ss.LaunchContract(domain=1, block=(64, 1, 1), "
        'appends={"out": "count"}))\n',
    ),
}

ACCEPTED = {
    "bound-before-the-branch": _src(
        "w = thread.index_1d()\nif n > 0:\n    w = thread.index_1d()\nout[w] = np.float32(1.0)"
    ),
    "used-inside-the-loop": _src("for w in thread.grid_stride(out):\n    out[w] = x[w]"),
    "a-fragment-may-be-unbound": (
        "@ss.kernel(contract=ss.LaunchContract(domain=2, block=(64, 1, 1)))\n"
        "def k(c: DisjointSlice2D[np.float32], a: In2D[ss.bfloat16], n: int) -> None:\n"
        "    ta = ss.shared.tile((16, 16), ss.bfloat16)\n"
        "    for w in thread.block_stride(ta):\n"
        "        ta[w] = a[w.row, w.col]\n"
        "    ss.block.sync()\n"
        "    o = ss.mma.out_tile(c, 16, 16, 16, 8)\n"
        "    acc = ss.mma.zeros()\n"
        "    for i in range(n):\n"
        "        fa = ss.mma.load_a(ta, (0, 0))\n"
        "    acc = ss.mma.mma(fa, ss.mma.load_b(ta, (0, 0)), acc)\n"
        "    ss.mma.store(o, 0, 0, acc)\n"
    ),
    "a-number-may-be-unbound": _src(
        "for i in range(n):\n"
        "    v = np.float32(i)\n"
        "w = thread.index_1d()\n"
        "if n > 0:\n"
        "    out[w] = v"
    ),
}
