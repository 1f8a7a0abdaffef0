"""Attack round 9 on block claims (``buf.block_claim(keep)``): attacks the rules refuse, and
accepted twins whose behaviour the simulator checks.

Kernels use the common signature of tests/kernels/append_rules.py (``out``/``out2`` with
counters ``n``/``n2``, ``o``, ``x``); refused ones mark the refused line ``# BAD``. Each
refused case names the fragment of its refusal, the same on the compiled form (tests/ptx)
and on the simulator's source-level check (tests/sim).
"""

from __future__ import annotations

from .append_rules import source
from .block_claim_rules import _uniform

__all__ = ["ACCEPTED", "REFUSED"]

_BLOCK = "block_claim` needs every thread of the block to reach it"
_RAISES = (
    "@ss.device\ndef chk(v):\n    if v > 5:\n        raise ValueError('big')\n    return v\n\n\n"
)

#: case -> (kernel source, fragment of the refusal)
REFUSED: dict[str, tuple[str, str]] = {
    # a warp collective's result is the same in a warp only: the block's warps may differ
    "under-a-warp-uniform-branch": (
        source(
            "wi = ss.warp.broadcast(cuda.threadIdx.x // 32)\n"
            "if wi == 0:\n"
            "    s = out.block_claim(True)  # BAD\n"
            "    out[s] = np.float32(1)"
        ),
        "control flow here is warp-uniform",
    ),
    "in-a-loop-counted-by-a-warp-sum": (
        source(
            "t = ss.warp.sum(cuda.threadIdx.x)\n"
            "for r in range(t % 3):\n"
            "    s = out.block_claim(True)  # BAD\n"
            "    out[s] = np.float32(1)"
        ),
        "control flow here is warp-uniform",
    ),
    # a raise ends the thread: the threads that raised never reach the claim's barriers
    "after-a-helper-that-may-raise": (
        source(
            _uniform("    v = chk(v)\n    s = out.block_claim(v > 0)  # BAD\n    out[s] = v"),
            before=_RAISES,
        ),
        _BLOCK,
    ),
    "after-a-data-dependent-raise": (
        source(
            "if x[cuda.threadIdx.x] > 0:\n"
            "    raise ValueError('x')\n"
            "s = out.block_claim(True)  # BAD\n"
            "out[s] = np.float32(1)"
        ),
        _BLOCK,
    ),
    # the next round's claim is skipped by the threads that left
    "break-after-the-claim": (
        source(
            _uniform(
                "    s = out.block_claim(v > 0)  # BAD\n"
                "    out[s] = v\n"
                "    if v > 5:\n"
                "        break"
            )
        ),
        _BLOCK,
    ),
    "return-after-the-claim": (
        source(
            "for r in range(4):\n"
            "    s = out.block_claim(x[r] > 0)  # BAD\n"
            "    out[s] = np.float32(r)\n"
            "    if x[cuda.threadIdx.x] > 3:\n"
            "        return"
        ),
        _BLOCK,
    ),
    "one-call-in-each-arm": (
        # the same number of calls per thread, but two call sites: two exchanges
        source(
            "if cuda.threadIdx.x < 32:\n"
            "    s = out.block_claim(True)\n"
            "else:\n"
            "    s = out.block_claim(False)  # BAD (the first call the check meets)\n"
            "out[s] = np.float32(1)"
        ),
        _BLOCK,
    ),
}

#: case -> accepted twin (its behaviour: see tests/sim/test_attacks9_sim.py)
ACCEPTED: dict[str, str] = {
    # a break on a block collective's result: every thread leaves at the same round
    "break-on-a-block-maximum": source(
        _uniform(
            "    m = ss.block.max(v)\n"
            "    if m > 1000:\n"
            "        break\n"
            "    s = out.block_claim(v > 0)\n"
            "    out[s] = v"
        )
    ),
    # a choice between two witnesses of the thread's own slots: still its own
    "select-between-two-witnesses": source(
        _uniform(
            "    a = out.block_claim(v > 0)\n"
            "    b = out.block_claim(v > 0)\n"
            "    s = a if v > 10 else b\n"
            "    out[s] = v"
        )
    ),
    # keep from a float: bool(NaN) is True (as on the device: une 0.0)
    "keep-is-bool-of-a-float": source(_uniform("    s = out.block_claim(bool(v))\n    out[s] = v")),
}
