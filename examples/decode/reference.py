"""A plain numpy decode step, the reference of ``run.py --check`` and of the tests.

The model of the anchor (``decode_anchor.py``, ``Qwen3Decoder.step_static``),
written out with float32 arithmetic on the weights as given (bf16 values
widened exactly):

* RMSNorm: ``x / sqrt(mean(x^2) + eps) * w``;
* q|k|v projection, per-head RMSNorm of q and k (``q_norm``/``k_norm``), then
  rotate-half RoPE at the position (``inv_freq = 1 / theta^(2i/hd)`` in
  float32, angle ``pos * inv_freq`` in float32, as the anchor's tables before
  their cast);
* the KV cache holds bf16 values (as the anchor's and the device's caches): k
  and v are rounded to bf16 when appended;
* attention of query head ``h`` over KV head ``h // group``, positions ``0..pos``,
  scale ``1/sqrt(hd)``, softmax in float32;
* o_proj + residual, RMSNorm, SwiGLU ``silu(gate) * up``, down_proj + residual;
* final RMSNorm, logits from the tied embedding (or ``lm_head``), greedy argmax
  (the first maximum).

The anchor computes in bf16 between the matrix products (each ``F.linear``
rounds its output); this reference and the device keep float32 activations,
so both differ from the anchor by bf16 rounding only.
"""

from __future__ import annotations

import numpy as np

from .config import Config
from .weights import BF16, Weights

__all__ = ["CHECK_TOL_STD", "Reference", "inv_freq", "prefill_values", "rms_norm"]

#: Tolerance of ``--check`` on the logits, in units of the reference logits' standard
#: deviation (the anchor's unit). The device and the reference compute in float32 and both
#: round K and V to bf16 in the cache; they differ by the order of float32 additions
#: (relative 1e-6 .. 1e-5 of a row's sum) and, rarely, by one bf16 step of a cached value
#: whose float32 values straddle a rounding boundary (a 2**-8 relative change of one element).
#: Both stay below 1e-3 std by a wide margin (the tests see about 1e-6); the anchor's own
#: bf16 rounding is about 0.07 std, and a wrong position, mask or head mapping gives ~1 std.
CHECK_TOL_STD = 1e-3

F32 = np.float32


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm over the last axis, float32."""
    x = x.astype(F32)
    ms = (x * x).mean(axis=-1, keepdims=True, dtype=F32)
    return (x / np.sqrt(ms + F32(eps))) * w.astype(F32)


def inv_freq(config: Config) -> np.ndarray:
    """RoPE inverse frequencies ``1 / theta^(2i/hd)``, float32 as the anchor computes them."""
    hd = config.head_dim
    exps = np.arange(0, hd, 2, dtype=F32) / F32(hd)
    return (F32(1.0) / (F32(config.theta) ** exps)).astype(F32)


def prefill_values(config: Config, context: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random K and V for cache positions ``[0, context)`` of every layer, as bf16 arrays of
    shape (kv_heads, context, head_dim): N(0, 1) from numpy's generator seeded ``seed + 1``,
    per layer K then V (the anchor's ``reset_cache`` recipe; torch's values differ)."""
    rng = np.random.default_rng(seed + 1)
    shape = (config.kv_heads, context, config.head_dim)
    out = []
    for _ in range(config.layers):
        k = rng.standard_normal(shape, dtype=F32).astype(BF16)
        v = rng.standard_normal(shape, dtype=F32).astype(BF16)
        out.append((k, v))
    return out


class Reference:
    """Batch-1 decode in numpy: ``step(token)`` at the current position returns the logits
    (float32, (vocab,)) and advances the position."""

    def __init__(self, weights: Weights, max_len: int) -> None:
        c = self.config = weights.config
        self.w = weights
        self.max_len = max_len
        f = lambda a: a.astype(F32)  # noqa: E731
        self.embed = f(weights.embed)
        self.head = self.embed if weights.lm_head is None else f(weights.lm_head)
        self.layers = [{k: f(v) for k, v in vars(ly).items()} for ly in weights.layers]
        self.norm = f(weights.norm)
        self.inv = inv_freq(c)
        shape = (c.layers, c.kv_heads, max_len, c.head_dim)
        self.k = np.zeros(shape, F32)
        self.v = np.zeros(shape, F32)
        self.pos = 0

    def reset(self, context: int = 0, seed: int = 0) -> None:
        """Zero the cache, fill positions ``[0, context)`` (``prefill_values``), start at ``context``."""
        if not 0 <= context < self.max_len:
            raise ValueError(f"context {context} outside [0, max_len={self.max_len})")
        self.k[:] = 0
        self.v[:] = 0
        if context:
            for i, (k, v) in enumerate(prefill_values(self.config, context, seed)):
                self.k[i, :, :context] = k.astype(F32)
                self.v[i, :, :context] = v.astype(F32)
        self.pos = context

    def _rope(self, x: np.ndarray, pos: int) -> np.ndarray:
        ang = F32(pos) * self.inv  # (hd/2,)
        cos = np.cos(np.concatenate([ang, ang])).astype(F32)
        sin = np.sin(np.concatenate([ang, ang])).astype(F32)
        half = x.shape[-1] // 2
        rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
        return (x * cos + rot * sin).astype(F32)

    def step(self, token: int) -> np.ndarray:
        """Feed ``token`` at the current position; the logits of the next token."""
        c, p = self.config, self.pos
        if p >= self.max_len:
            raise ValueError(f"position {p} is past the cache (max_len {self.max_len})")
        nh, nkv, hd, g = c.heads, c.kv_heads, c.head_dim, c.group
        x = self.embed[token].copy()
        for i, ly in enumerate(self.layers):
            h = rms_norm(x, ly["in_norm"], c.eps)
            qkv = ly["wqkv"] @ h
            q = qkv[: nh * hd].reshape(nh, hd)
            k = qkv[nh * hd : (nh + nkv) * hd].reshape(nkv, hd)
            v = qkv[(nh + nkv) * hd :].reshape(nkv, hd)
            q = self._rope(rms_norm(q, ly["q_norm"], c.eps), p)
            k = self._rope(rms_norm(k, ly["k_norm"], c.eps), p)
            self.k[i, :, p] = k.astype(BF16).astype(F32)
            self.v[i, :, p] = v.astype(BF16).astype(F32)
            kc, vc = self.k[i, :, : p + 1], self.v[i, :, : p + 1]  # (nkv, p+1, hd)
            o = np.empty((nh, hd), F32)
            for head in range(nh):
                s = (kc[head // g] @ q[head]) / F32(np.sqrt(hd))
                e = np.exp(s - s.max())
                o[head] = (e / e.sum(dtype=F32)) @ vc[head // g]
            x = x + ly["wo"] @ o.reshape(-1)
            h = rms_norm(x, ly["post_norm"], c.eps)
            gu = ly["wgu"] @ h
            gate, up = gu[: c.inter], gu[c.inter :]
            act = gate / (F32(1) + np.exp(-gate)) * up
            x = x + ly["wd"] @ act
        logits = (self.head @ rms_norm(x, self.norm, c.eps)).astype(F32)
        self.pos = p + 1
        return logits

    def generate(
        self, prompt: list[int], tokens: int, context: int = 0, seed: int = 0
    ) -> tuple[list[int], np.ndarray]:
        """Greedy decode as the anchor: the prompt's tokens but the last fed one step each from
        position ``context``, then ``tokens`` steps from the last one. Returns the generated
        tokens and the logits each was chosen from, float32 (tokens, vocab)."""
        self.reset(context, seed)
        for t in prompt[:-1]:
            self.step(t)
        tok = prompt[-1]
        out, rows = [], []
        for _ in range(tokens):
            logits = self.step(tok)
            tok = int(np.argmax(logits))
            out.append(tok)
            rows.append(logits)
        return out, np.stack(rows).astype(F32)
