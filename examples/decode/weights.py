"""Weights: a Hugging Face Qwen3 checkpoint directory, or seeded random values for a named shape.

A checkpoint is ``config.json`` plus ``*.safetensors`` (every file that
``model.safetensors.index.json`` names, else every ``*.safetensors`` in the
directory) with the tensor names of ``Qwen3ForCausalLM``, read with the
``safetensors`` package's numpy API. Every tensor is converted to bf16
(``ml_dtypes.bfloat16``, which is ``simtsafe.bfloat16``). On load, q|k|v and
gate|up are fused into one matrix each (one GEMV each per layer), exactly as
the anchor's ``--proj fused``.

Random weights follow the anchor's recipe (matrices N(0, 0.02), norm weights
1 + 0.1 N(0, 1), drawn in the anchor's order) from numpy's generator, so they
are reproducible here but are not the anchor's values (torch's generator):
to run both on the same weights, let the anchor write them (``--save-weights
DIR``) and load them here (``--weights DIR``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from .config import CONFIGS, Config, ConfigError, load_hf_config

__all__ = [
    "BF16",
    "LayerWeights",
    "Weights",
    "WeightsError",
    "load_checkpoint",
    "random_weights",
    "save_checkpoint",
]

BF16 = np.dtype(ml_dtypes.bfloat16)


class WeightsError(ValueError):
    """A checkpoint that cannot be loaded (the message names the directory, the tensor and why)."""


@dataclass
class LayerWeights:
    """One decoder layer, bf16, fused as the kernels read it."""

    in_norm: np.ndarray  # (hidden,)
    wqkv: np.ndarray  # (heads*hd + 2*kv_heads*hd, hidden): q_proj | k_proj | v_proj
    q_norm: np.ndarray  # (hd,)
    k_norm: np.ndarray  # (hd,)
    wo: np.ndarray  # (hidden, heads*hd)
    post_norm: np.ndarray  # (hidden,)
    wgu: np.ndarray  # (2*inter, hidden): gate_proj | up_proj
    wd: np.ndarray  # (hidden, inter)


@dataclass
class Weights:
    """All weights of a decoder; ``lm_head`` is None when tied to ``embed``."""

    config: Config
    embed: np.ndarray  # (vocab, hidden)
    layers: list[LayerWeights]
    norm: np.ndarray  # (hidden,)
    lm_head: np.ndarray | None = None

    @property
    def head(self) -> np.ndarray:
        """The matrix of the logits (the embedding when tied)."""
        return self.embed if self.lm_head is None else self.lm_head

    def nbytes_read_per_token(self) -> int:
        """Bytes of weights a decode step reads: every matrix and norm once, the tied
        embedding once (as the lm_head), an untied embedding only as one gathered row."""
        total = sum(a.nbytes for ly in self.layers for a in vars(ly).values()) + self.norm.nbytes
        total += (
            self.embed.nbytes
            if self.lm_head is None
            else self.lm_head.nbytes + self.embed[0].nbytes
        )
        return int(total)

    def hf_state_dict(self) -> dict[str, np.ndarray]:
        """The weights under the tensor names of HF ``Qwen3ForCausalLM`` (fused matrices split back)."""
        c = self.config
        q, kv = c.heads * c.head_dim, c.kv_heads * c.head_dim
        sd = {"model.embed_tokens.weight": self.embed}
        for i, ly in enumerate(self.layers):
            a, m = f"model.layers.{i}.self_attn.", f"model.layers.{i}.mlp."
            sd[f"model.layers.{i}.input_layernorm.weight"] = ly.in_norm
            sd[a + "q_proj.weight"] = ly.wqkv[:q]
            sd[a + "k_proj.weight"] = ly.wqkv[q : q + kv]
            sd[a + "v_proj.weight"] = ly.wqkv[q + kv :]
            sd[a + "o_proj.weight"] = ly.wo
            sd[a + "q_norm.weight"] = ly.q_norm
            sd[a + "k_norm.weight"] = ly.k_norm
            sd[f"model.layers.{i}.post_attention_layernorm.weight"] = ly.post_norm
            sd[m + "gate_proj.weight"] = ly.wgu[: c.inter]
            sd[m + "up_proj.weight"] = ly.wgu[c.inter :]
            sd[m + "down_proj.weight"] = ly.wd
        sd["model.norm.weight"] = self.norm
        if self.lm_head is not None:
            sd["lm_head.weight"] = self.lm_head
        return {k: np.ascontiguousarray(v) for k, v in sd.items()}


def _build(config: Config, take: Callable[[str, tuple[int, ...], bool], np.ndarray]) -> Weights:
    """Weights from ``take(hf_name, shape, is_norm)``, called in the anchor's draw order."""
    c = config
    hd, q, kv = c.head_dim, c.heads * c.head_dim, c.kv_heads * c.head_dim
    embed = take("model.embed_tokens.weight", (c.vocab, c.hidden), False)
    layers = []
    for i in range(c.layers):
        a, m = f"model.layers.{i}.self_attn.", f"model.layers.{i}.mlp."
        in_norm = take(f"model.layers.{i}.input_layernorm.weight", (c.hidden,), True)
        wq = take(a + "q_proj.weight", (q, c.hidden), False)
        wk = take(a + "k_proj.weight", (kv, c.hidden), False)
        wv = take(a + "v_proj.weight", (kv, c.hidden), False)
        q_norm = take(a + "q_norm.weight", (hd,), True)
        k_norm = take(a + "k_norm.weight", (hd,), True)
        wo = take(a + "o_proj.weight", (c.hidden, q), False)
        post_norm = take(f"model.layers.{i}.post_attention_layernorm.weight", (c.hidden,), True)
        wg = take(m + "gate_proj.weight", (c.inter, c.hidden), False)
        wu = take(m + "up_proj.weight", (c.inter, c.hidden), False)
        wd = take(m + "down_proj.weight", (c.hidden, c.inter), False)
        layers.append(
            LayerWeights(
                in_norm=in_norm,
                wqkv=np.concatenate([wq, wk, wv], axis=0),
                q_norm=q_norm,
                k_norm=k_norm,
                wo=wo,
                post_norm=post_norm,
                wgu=np.concatenate([wg, wu], axis=0),
                wd=wd,
            )
        )
    norm = take("model.norm.weight", (c.hidden,), True)
    lm_head = None if c.tie else take("lm_head.weight", (c.vocab, c.hidden), False)
    return Weights(config=c, embed=embed, layers=layers, norm=norm, lm_head=lm_head)


def random_weights(config: Config | str, seed: int = 0) -> Weights:
    """Seeded random bf16 weights for a shape (a ``Config`` or a name of ``CONFIGS``)."""
    if isinstance(config, str):
        if config not in CONFIGS:
            raise ConfigError(
                f"unknown config {config!r}; the named shapes are {', '.join(CONFIGS)}"
            )
        config = CONFIGS[config]
    rng = np.random.default_rng(seed)

    def take(name: str, shape: tuple[int, ...], is_norm: bool) -> np.ndarray:
        values = rng.standard_normal(shape, dtype=np.float32)
        if is_norm:
            values = 1.0 + np.float32(0.1) * values  # near 1, not 1: a dropped weight shows
        else:
            values *= np.float32(0.02)
        return values.astype(BF16)

    return _build(config, take)


def _checkpoint_files(directory: Path) -> list[Path]:
    index = directory / "model.safetensors.index.json"
    if index.exists():
        try:
            names = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        except (json.JSONDecodeError, KeyError, AttributeError) as exc:
            raise WeightsError(
                f"{index}: not a safetensors index ({type(exc).__name__}: {exc})"
            ) from None
        files = [directory / n for n in names]
        missing = [str(f.name) for f in files if not f.is_file()]
        if missing:
            raise WeightsError(f"{index} names files that are not there: {', '.join(missing[:4])}")
        return files
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        raise WeightsError(
            f"{directory}: no *.safetensors files (and no model.safetensors.index.json)"
        )
    return files


def load_checkpoint(directory: str | Path) -> Weights:
    """The weights of a HF Qwen3 checkpoint directory, converted to bf16.

    Raises:
        FileNotFoundError: ``directory`` or its ``config.json`` does not exist.
        ConfigError: the config is not one this decoder runs.
        WeightsError: a missing tensor, a tensor of the wrong shape, an unreadable file.
    """
    from safetensors import SafetensorError, safe_open

    d = Path(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"--weights {directory}: not a directory")
    config = load_hf_config(d)
    where: dict[str, Path] = {}
    for path in _checkpoint_files(d):
        try:
            with safe_open(str(path), framework="np") as f:
                for name in f.keys():
                    where[name] = path
        except (SafetensorError, OSError) as exc:
            raise WeightsError(f"{path}: not a readable safetensors file ({exc})") from None

    def take(name: str, shape: tuple[int, ...], is_norm: bool) -> np.ndarray:
        if name not in where:
            raise WeightsError(
                f"{d}: tensor {name} is not in the checkpoint ({len(set(where.values()))} file(s))"
            )
        try:
            with safe_open(str(where[name]), framework="np") as f:
                t = f.get_tensor(name)
        except (SafetensorError, TypeError, ValueError) as exc:
            raise WeightsError(
                f"{where[name]}: tensor {name} cannot be read as numpy ({exc})"
            ) from None
        if tuple(t.shape) != shape:
            raise WeightsError(
                f"{d}: tensor {name} has shape {tuple(t.shape)}, expected {shape} by config.json"
            )
        if t.dtype.kind not in "fV" and t.dtype != BF16:
            raise WeightsError(f"{d}: tensor {name} has dtype {t.dtype}, expected a float type")
        return np.ascontiguousarray(t.astype(BF16) if t.dtype != BF16 else t)

    return _build(config, take)


def save_checkpoint(weights: Weights, directory: str | Path, max_len: int = 40960) -> None:
    """Write ``weights`` as a HF checkpoint: ``config.json`` and ``model.safetensors`` (bf16)."""
    from safetensors.numpy import save_file

    c = weights.config
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    cfg = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": c.hidden,
        "intermediate_size": c.inter,
        "num_hidden_layers": c.layers,
        "num_attention_heads": c.heads,
        "num_key_value_heads": c.kv_heads,
        "head_dim": c.head_dim,
        "vocab_size": c.vocab,
        "rms_norm_eps": c.eps,
        "rope_theta": c.theta,
        "rope_scaling": None,
        "tie_word_embeddings": c.tie,
        "max_position_embeddings": max(40960, max_len),
        "hidden_act": "silu",
        "attention_bias": False,
        "use_sliding_window": False,
        "torch_dtype": "bfloat16",
    }
    (d / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    save_file(weights.hf_state_dict(), str(d / "model.safetensors"), metadata={"format": "pt"})
