"""Model shapes: the named Qwen3 configurations and a Hugging Face ``config.json`` loader.

The named shapes are those of the PyTorch anchor (``shared/anchors/decode_anchor.py``,
``CONFIGS``): the public Qwen3 0.6B/1.7B/4B ``config.json`` values, and ``tiny`` for
tests on a CPU (it keeps GQA, two query heads per KV head, and the q/k norms).
``load_hf_config`` reads a checkpoint's ``config.json`` with the anchor's refusals
(``model_type`` qwen3 only, default RoPE only, no attention bias, no sliding window,
SiLU) and the ``Qwen3Config`` defaults for absent keys.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["CONFIGS", "Config", "ConfigError", "load_hf_config"]


class ConfigError(ValueError):
    """A model configuration this decoder cannot run (the message says which key and why)."""


@dataclass(frozen=True)
class Config:
    """One decoder shape (the anchor's config dict, field for field)."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    inter: int
    vocab: int
    eps: float = 1e-6
    theta: float = 1e6
    tie: bool = True

    def __post_init__(self) -> None:
        for key in ("hidden", "layers", "heads", "kv_heads", "head_dim", "inter", "vocab"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{key} = {value!r}: expected a positive int")
        if self.heads % self.kv_heads:
            raise ConfigError(
                f"heads = {self.heads} is not a multiple of kv_heads = {self.kv_heads}: "
                "grouped-query attention maps query head h to KV head h // (heads / kv_heads)"
            )
        if self.head_dim % 2:
            raise ConfigError(
                f"head_dim = {self.head_dim} is odd: rotate-half RoPE needs an even one"
            )
        if not self.eps > 0 or not self.theta > 0:
            raise ConfigError(f"eps = {self.eps}, theta = {self.theta}: both must be > 0")

    @property
    def group(self) -> int:
        """Query heads per KV head."""
        return self.heads // self.kv_heads

    @property
    def qkv_rows(self) -> int:
        """Rows of the fused q|k|v projection."""
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The anchor's CONFIGS, unchanged.
CONFIGS: dict[str, Config] = {
    "0.6b": Config(
        hidden=1024, layers=28, heads=16, kv_heads=8, head_dim=128, inter=3072, vocab=151936
    ),
    "1.7b": Config(
        hidden=2048, layers=28, heads=16, kv_heads=8, head_dim=128, inter=6144, vocab=151936
    ),
    "4b": Config(
        hidden=2560, layers=36, heads=32, kv_heads=8, head_dim=128, inter=9728, vocab=151936
    ),
    "tiny": Config(hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, inter=192, vocab=1000),
}


def load_hf_config(directory: str | Path) -> Config:
    """The ``config.json`` of a Qwen3 checkpoint directory as a ``Config``.

    Raises:
        FileNotFoundError: no ``config.json`` in ``directory``.
        ConfigError: a model type or option this decoder does not implement.
    """
    path = Path(directory) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{directory}: no config.json there (expected a Hugging Face checkpoint directory)"
        )
    try:
        hf = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(hf, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    if hf.get("model_type") != "qwen3":
        raise ConfigError(
            f"{directory}: model_type {hf.get('model_type')!r}, only 'qwen3' is supported"
        )
    rp = hf.get("rope_parameters") or {}  # newer transformers write rope_theta here
    rs = hf.get("rope_scaling") or {}
    rtype = rs.get("rope_type", rs.get("type", rp.get("rope_type", "default")))
    if rtype != "default":
        raise ConfigError(f"{directory}: rope type {rtype!r} is not supported (default RoPE only)")
    for key, ok in (
        ("attention_bias", False),
        ("use_sliding_window", False),
        ("hidden_act", "silu"),
    ):
        if hf.get(key, ok) != ok:
            raise ConfigError(f"{directory}: {key}={hf[key]!r} is not supported")
    try:
        hidden, heads = hf["hidden_size"], hf["num_attention_heads"]
        return Config(
            hidden=hidden,
            layers=hf["num_hidden_layers"],
            heads=heads,
            kv_heads=hf.get("num_key_value_heads") or heads,
            head_dim=hf.get("head_dim") or hidden // heads,
            inter=hf["intermediate_size"],
            vocab=hf["vocab_size"],
            eps=float(hf.get("rms_norm_eps", 1e-6)),
            theta=float(hf.get("rope_theta", rp.get("rope_theta", 10000.0))),
            tie=bool(hf.get("tie_word_embeddings", False)),  # the Qwen3Config default
        )
    except KeyError as exc:
        raise ConfigError(f"{path}: missing key {exc.args[0]!r}") from None
