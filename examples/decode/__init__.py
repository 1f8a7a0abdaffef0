"""Batch-1 greedy decode of a Qwen3-shaped transformer on simtsafe, every kernel Tier 1.

Modules: ``config`` (shapes, HF ``config.json``), ``weights`` (HF checkpoints, seeded
random weights), ``reference`` (the numpy decode), ``kernels`` (the Tier-1 kernels),
``model`` (the step as prepared launches, captured as one graph), ``run`` (the command
line). ``run()`` below is the entry of ``examples/run_all.py``.
"""

from __future__ import annotations

from typing import Any


def run(config: str = "tiny", tokens: int = 4, context: int = 0, **shape: Any) -> bool:
    """Decode ``tokens`` tokens of seeded random weights of the named shape (fields of
    ``shape`` override it: the simulator runs a smaller one), one graph replay per token,
    and compare tokens and logits with the numpy reference."""
    import dataclasses

    import numpy as np

    from .config import CONFIGS
    from .model import Decoder
    from .reference import CHECK_TOL_STD, Reference
    from .weights import random_weights

    cfg = dataclasses.replace(CONFIGS[config], **shape)
    weights = random_weights(cfg, seed=0)
    prompt = [3, 1, 4]
    max_len = context + len(prompt) - 1 + tokens
    dec = Decoder(weights, max_len)
    dec.capture()
    rows: list[np.ndarray] = []
    got = dec.generate(prompt, tokens, context=context, on_logits=lambda i, lg: rows.append(lg))
    want, ref_logits = Reference(weights, max_len).generate(prompt, tokens, context=context)
    err = np.abs(np.stack(rows) - ref_logits) / ref_logits.std(axis=1, keepdims=True)
    return bool(got == want and err.max() < CHECK_TOL_STD)
