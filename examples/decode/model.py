"""The decode step on the device: weights uploaded once, every kernel prepared once, the step
a fixed list of prepared launches that reads the token and the position from device arrays.

``Decoder.step()`` runs the list launch by launch; ``Decoder.capture()`` records it once in
a ``simtsafe.graph()`` and ``step()`` then replays the graph: one replay makes one token
(the last launch writes the argmax token back into the token array, into the history at the
position, and advances the position), with no Python work per launch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import cuda

import simtsafe as ss

from . import attention as A
from . import gemv as G
from . import kernels as K
from .reference import inv_freq, prefill_values
from .weights import BF16, Weights

__all__ = ["Decoder", "Launch", "device_array", "pad_columns"]


def device_array(host: np.ndarray) -> Any:
    """A device copy of ``host``; bf16 goes through its uint16 bits (numba-cuda's copy
    refuses ml_dtypes' dtype in the buffer protocol)."""
    host = np.ascontiguousarray(host)
    if host.dtype == BF16:
        return cuda.to_device(host.view(np.uint16)).view(BF16)
    return cuda.to_device(host)


def pad_columns(a: np.ndarray, multiple: int = 8) -> np.ndarray:
    """``a`` (2D) with zero columns appended up to a multiple of ``multiple``, so that every
    row is a whole number of 16-byte bf16 runs (and the row pitch a multiple of 16 bytes)."""
    extra = -a.shape[1] % multiple
    if not extra:
        return np.ascontiguousarray(a)
    return np.concatenate([a, np.zeros((a.shape[0], extra), a.dtype)], axis=1)


def pad_heads(a: np.ndarray, heads: int, hd: int, hdp: int) -> np.ndarray:
    """The columns of ``a`` (``heads`` blocks of ``hd``) spread to blocks of ``hdp``, zero-filled."""
    if hd == hdp:
        return np.ascontiguousarray(a)
    out = np.zeros((a.shape[0], heads, hdp), a.dtype)
    out[:, :, :hd] = a.reshape(a.shape[0], heads, hd)
    return out.reshape(a.shape[0], heads * hdp)


@dataclass(frozen=True)
class Launch:
    """One launch of the step: a prepared kernel and its arguments, bound once
    (``prepared.bind``: checked when the decoder is built; a call launches them, with
    neither the memo's lookup nor its match of the arguments)."""

    name: str
    prepared: Any
    args: tuple[Any, ...]
    bound: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bound", self.prepared.bind(*self.args))

    def __call__(self) -> None:
        self.bound()


class Decoder:
    """Batch-1 greedy decode of ``weights`` with a static KV cache of ``max_len`` positions.

    Args:
        weights: the model (``weights.py``).
        max_len: cache positions (the largest position fed is ``max_len - 1``).
        gemv: ``"warp"`` (a warp per output row, the GPU's choice) or ``"thread"`` (a thread
            per row: the simulator runs one Python thread per CUDA thread, so it takes these);
            default: ``"thread"`` on the simulator, else ``"warp"``.
    """

    def __init__(self, weights: Weights, max_len: int, gemv: str | None = None) -> None:
        c = self.config = weights.config
        if gemv is None:
            gemv = "thread" if ss.SIMULATOR else "warp"
        if gemv not in ("warp", "thread"):
            raise ValueError(f"gemv={gemv!r}: expected 'warp' or 'thread'")
        if max_len < 1:
            raise ValueError(f"max_len {max_len}: a cache holds at least one position")
        self.gemv = gemv
        self.max_len = max_len
        hd = c.head_dim
        self.hdp = hdp = -(-hd // 8) * 8
        if hdp > K.MAX_HDP:
            raise ValueError(
                f"head_dim {hd} > {K.MAX_HDP}: the attention kernels take head rows of at most {K.MAX_HDP}"
            )
        if gemv == "warp":
            odd = [
                n
                for n, v in (("vocab", c.vocab), ("inter", c.inter), ("hidden", c.hidden))
                if v % 2
            ]
            staged = max(c.hidden, c.inter, c.heads * hdp) * 4
            if odd or staged > G.MAX_STAGED:
                raise ValueError(
                    f"the GPU GEMVs take two rows a warp and stage their input in at most "
                    f"{G.MAX_STAGED} B of shared memory: {odd or ''} odd, input {staged} B"
                )
        # chunk slots of the attention's grid: a long context spreads over all of them
        self.nchunks = min(-(-max_len // A.CHUNK), A.SLOTS, K.MAX_CHUNKS)
        nh, nkv, g = c.heads, c.kv_heads, c.group

        # weights, once
        up = device_array
        self.embed_w = up(pad_columns(weights.embed))
        self.head_w = self.embed_w if weights.lm_head is None else up(pad_columns(weights.lm_head))
        # the GPU GEMVs stage x * norm in float32 (a bf16 scalar read is a conversion call,
        # which the uniformity analysis does not see into before the block's barrier)
        nt = (lambda v: v.astype(np.float32)) if gemv == "warp" else (lambda v: v)
        self.norm_w = up(nt(weights.norm))
        self.layers = []
        for ly in weights.layers:
            self.layers.append(
                {
                    "in_norm": up(nt(ly.in_norm)),
                    "wqkv": up(pad_columns(ly.wqkv)),
                    "q_norm": up(ly.q_norm.astype(np.float32)),
                    "k_norm": up(ly.k_norm.astype(np.float32)),
                    "wo": up(pad_columns(pad_heads(ly.wo, nh, hd, hdp))),
                    "post_norm": up(nt(ly.post_norm)),
                    "wgu": up(pad_columns(ly.wgu)),
                    "wd": up(pad_columns(ly.wd)),
                    "kc_bits": cuda.to_device(np.zeros((max_len, nkv * hdp), np.uint16)),
                    "vc_bits": cuda.to_device(np.zeros((max_len, nkv * hdp), np.uint16)),
                }
            )
            self.layers[-1]["kc"] = self.layers[-1]["kc_bits"].view(BF16)
            self.layers[-1]["vc"] = self.layers[-1]["vc_bits"].view(BF16)
        self.weight_bytes = weights.nbytes_read_per_token()
        self.kv_bytes_per_position = c.layers * 2 * nkv * hd * 2

        # activations and state
        f32 = np.float32
        self.tok = cuda.to_device(np.zeros(1, np.int32))
        self.pos = cuda.to_device(np.zeros(1, np.int32))
        self.hist = cuda.to_device(np.zeros((max_len, 1), np.int32))
        self.x_a = cuda.device_array(c.hidden, f32)
        self.x_b = cuda.device_array(c.hidden, f32)
        self.qkv = cuda.device_array(c.qkv_rows, f32)
        self.q = cuda.device_array(nh * hdp, f32)
        self.opart = cuda.device_array((self.nchunks * nkv, g * hdp), f32)
        self.ml = cuda.device_array((self.nchunks * nkv, 2 * g), f32)
        self.o = cuda.device_array((nh, hdp), f32) if self.nchunks > 1 else None
        self.act = cuda.device_array(c.inter, f32)
        self.logits = cuda.device_array(c.vocab, f32)
        self.inv = cuda.to_device(inv_freq(c))
        if gemv == "warp":
            self.lm_blocks = G.grid(c.vocab, G.pick_split(c.vocab))
        else:
            self.lm_blocks = -(-c.vocab // K.THREAD_BLOCK)
        self.bval = cuda.device_array(self.lm_blocks, f32)
        self.bidx = cuda.device_array(self.lm_blocks, np.int32)

        self.launches = self._build()
        #: The bound launches themselves: the step calls them with no frame between.
        self._calls = tuple(launch.bound for launch in self.launches)
        self.graph: Any = None

    # ------------------------------------------------------------------ the step

    def _build(self) -> list[Launch]:
        c, hd, hdp = self.config, self.config.head_dim, self.hdp
        nh, nkv, g = c.heads, c.kv_heads, c.group
        warp = self.gemv == "warp"
        eps = np.float32(c.eps)

        def prep(kernel: Any, grid: int, block: int, shared: int = 0) -> Any:
            """One PreparedLaunch per launch of the step: a prepared launch memoizes the
            checks of a few argument sets (host/_launch.py), and one shared by the layers
            would cycle through one set per layer and re-run its checks at every launch."""
            return kernel.prepare(grid=grid, block=block, shared_mem=shared)

        def gemv(
            kind: str, rows: int, n_in: int, y: Any, *args: Any
        ) -> tuple[Any, tuple[Any, ...]]:
            """The launch of a GEMV of ``rows`` outputs over an input of ``n_in``: on the GPU
            two rows a warp (``y``, and ``res`` of the residual, viewed as pairs) with the
            input staged in shared memory, on the simulator a thread per row."""
            if warp:
                split = G.pick_split(rows)
                per = G.rows_per_block(split)
                if kind == "residual":
                    args = (*args[:2], args[2].reshape(-1, per))
                kernel = {
                    "norm": G.gemv_norm,
                    "swiglu": G.gemv_swiglu,
                    "residual": G.gemv_residual,
                    "lm_head": G.lm_head,
                }[kind]
                view = y.reshape(-1, per)
                launch = prep(kernel, G.grid(rows, split), G.BLOCK, 4 * n_in)
                return launch, (view, *args, split)
            kernel = {
                "norm": K.gemv_norm_thread,
                "swiglu": K.gemv_swiglu_thread,
                "residual": K.gemv_residual_thread,
                "lm_head": K.lm_head_thread,
            }[kind]
            return prep(kernel, -(-rows // K.THREAD_BLOCK), K.THREAD_BLOCK), (y, *args)

        out = [
            Launch(
                "embed",
                prep(K.embed, max(1, min(64, -(-c.hidden // 256))), 256),
                (self.x_a, self.embed_w, self.tok),
            )
        ]
        attn_out = self.o.reshape(-1) if self.o is not None else self.opart.reshape(-1)
        for i, ly in enumerate(self.layers):
            out.append(
                Launch(
                    f"L{i}.qkv",
                    *gemv(
                        "norm",
                        c.qkv_rows,
                        c.hidden,
                        self.qkv,
                        ly["wqkv"],
                        self.x_a,
                        ly["in_norm"],
                        eps,
                    ),
                )
            )
            out.append(
                Launch(
                    f"L{i}.qk_rope_append",
                    prep(K.qk_rope_append, nh, hdp),
                    (
                        self.q,
                        ly["kc"],
                        ly["vc"],
                        self.qkv,
                        ly["q_norm"],
                        ly["k_norm"],
                        self.inv,
                        self.pos,
                        nkv,
                        hd,
                        eps,
                    ),
                )
            )
            for g0 in range(0, g, A.GMAX):
                out.append(
                    Launch(
                        f"L{i}.attention" + (f"[{g0}]" if g > A.GMAX else ""),
                        prep(A.attention, self.nchunks * nkv, A.BLOCK),
                        (
                            self.opart,
                            self.ml,
                            self.q,
                            ly["kc"],
                            ly["vc"],
                            self.pos,
                            nkv,
                            g,
                            hd,
                            hdp,
                            g0,
                            np.float32(1.0 / math.sqrt(hd)),
                        ),
                    )
                )
            if self.o is not None:
                out.append(
                    Launch(
                        f"L{i}.combine",
                        prep(K.combine, nh, K.COMBINE_BLOCK),
                        (self.o, self.opart, self.ml, self.pos, nkv, g),
                    )
                )
            n_att = nh * hdp
            wo, wgu, wd = ly["wo"], ly["wgu"], ly["wd"]
            out.append(
                Launch(
                    f"L{i}.o_proj",
                    *gemv("residual", c.hidden, n_att, self.x_b, wo, attn_out, self.x_a),
                )
            )
            out.append(
                Launch(
                    f"L{i}.gate_up",
                    *gemv(
                        "swiglu", c.inter, c.hidden, self.act, wgu, self.x_b, ly["post_norm"], eps
                    ),
                )
            )
            out.append(
                Launch(
                    f"L{i}.down",
                    *gemv("residual", c.hidden, c.inter, self.x_a, wd, self.act, self.x_b),
                )
            )
        head = (self.bval, self.bidx, self.head_w, self.x_a, self.norm_w, eps)
        out.append(Launch("lm_head", *gemv("lm_head", c.vocab, c.hidden, self.logits, *head)))
        out.append(
            Launch(
                "finish",
                prep(K.finish, 1, K.FINISH_BLOCK),
                (self.tok, self.pos, self.hist, self.bval, self.bidx),
            )
        )
        return out

    @property
    def launches_per_token(self) -> int:
        return len(self.launches)

    def capture(self) -> None:
        """Record the step once as a simtsafe graph; ``step()`` replays it from now on."""
        with ss.graph() as g:
            for launch in self.launches:
                launch()
        self.graph = g

    def step(self) -> None:
        """One token: the step at the device-side position with the device-side token."""
        if self.graph is not None:
            self.graph.replay()
        else:
            for go in self._calls:
                go()

    # ------------------------------------------------------------------ host side

    def set_token(self, token: int) -> None:
        self.tok.copy_to_device(np.array([token], np.int32))

    def set_position(self, position: int) -> None:
        if not 0 <= position < self.max_len:
            raise ValueError(f"position {position} outside the cache [0, {self.max_len})")
        self.pos.copy_to_device(np.array([position], np.int32))

    def reset(
        self,
        context: int = 0,
        seed: int = 0,
        values: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> None:
        """Empty cache and history; positions ``[0, context)`` filled with ``values`` (per
        layer K and V of shape (kv_heads, context, head_dim)), by default the reference's
        (``reference.prefill_values``); the position set to ``context``."""
        c, hd, hdp = self.config, self.config.head_dim, self.hdp
        if context and values is None:
            values = prefill_values(c, context, seed)
        for i, ly in enumerate(self.layers):
            for name, which in (("kc", 0), ("vc", 1)):
                host = np.zeros((self.max_len, c.kv_heads, hdp), BF16)
                if context:
                    assert values is not None
                    host[:context, :, :hd] = np.asarray(values[i][which]).transpose(1, 0, 2)
                ly[name + "_bits"].copy_to_device(host.reshape(self.max_len, -1).view(np.uint16))
        self.hist.copy_to_device(np.zeros((self.max_len, 1), np.int32))
        self.set_position(context)

    def read_logits(self) -> np.ndarray:
        ss.synchronize()
        return np.asarray(self.logits.copy_to_host(), np.float32)

    def read_tokens(self, start: int, count: int) -> list[int]:
        """The history: tokens chosen at positions ``start .. start + count - 1``."""
        ss.synchronize()
        h = self.hist.copy_to_host()[start : start + count, 0]
        return [int(t) for t in h]

    def read_position(self) -> int:
        ss.synchronize()
        return int(self.pos.copy_to_host()[0])

    def generate(
        self,
        prompt: Sequence[int],
        tokens: int,
        context: int = 0,
        seed: int = 0,
        on_logits: Callable[[int, np.ndarray], None] | None = None,
        reset_cache: bool = True,
    ) -> list[int]:
        """Greedy decode as the anchor: the prompt's tokens but the last fed one step each from
        position ``context``, then ``tokens`` steps from the last prompt token; the token of
        each step is fed back on the device. ``on_logits(i, logits)`` (optional) sees the
        logits every generated token was chosen from (a host read per step)."""
        if not prompt:
            raise ValueError("the prompt is empty")
        end = context + len(prompt) - 1 + tokens
        if end > self.max_len:
            raise ValueError(
                f"context + prompt length - 1 + tokens = {end} exceeds max_len {self.max_len}"
            )
        vocab = self.config.vocab
        bad = [t for t in prompt if not 0 <= t < vocab]
        if bad:
            raise ValueError(f"prompt token(s) {bad[:4]} outside the vocabulary [0, {vocab})")
        if reset_cache:
            self.reset(context, seed)
        else:
            self.set_position(context)
        for t in prompt[:-1]:
            self.set_token(t)
            self.step()
        start = context + len(prompt) - 1
        self.set_token(prompt[-1])
        self.set_position(start)
        for i in range(tokens):
            self.step()
            if on_logits is not None:
                on_logits(i, self.read_logits())
        return self.read_tokens(start, tokens)
