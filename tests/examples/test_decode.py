"""examples/decode: the Tier-1 decode step against its numpy reference, the checkpoint
loader, the command line, and the kernels whose edge cases the model does not reach.

Runs on the simulator (the simulator layer) or on a GPU (the examples layer with a
device): shapes are tiny, and the simulator takes smaller blocks and attention chunks
(``attention.CHUNK``, ``attention.SLOTS``), so a context of ``CHUNK + 3`` exercises the
multi-chunk merge and one of ``SLOTS * CHUNK + 5`` chunks longer than ``CHUNK`` either way.

Tolerance: the device and the reference both compute in float32 and round cached K/V to
bf16; they differ by the order of float32 additions and by rare one-step bf16 roundings of
a cached value. Logits are compared in units of the reference logits' standard deviation
(the anchor's unit): 1e-4 here, where about 1e-6 is seen; a wrong position, head mapping
or norm is of order 1 (``test_a_wrong_position_is_caught`` shows the margin).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from decode import attention as A
from decode import gemv as G
from decode import kernels as K
from decode.config import CONFIGS, Config, ConfigError, load_hf_config
from decode.model import Decoder, device_array
from decode.reference import Reference
from decode.weights import WeightsError, load_checkpoint, random_weights
from numba import cuda

import simtsafe as ss

RUN = Path(__file__).resolve().parents[2] / "examples" / "decode" / "run.py"
BF16 = ml_dtypes.bfloat16
TOL = 1e-4

#: A small shape: 2 layers, GQA with two query heads per KV head.
SMALL = Config(hidden=32, layers=2, heads=4, kv_heads=2, head_dim=16, inter=48, vocab=96)
#: Every padding path: hidden and intermediate not multiples of 8 (weight rows padded),
#: head_dim 12 (cache and q rows padded to 16), 6 query heads per KV head (> GMAX: two
#: attention launches per layer).
ODD = Config(hidden=36, layers=1, heads=6, kv_heads=1, head_dim=12, inter=20, vocab=50, theta=1e4)


def _decode(
    dec: Decoder, prompt: list[int], tokens: int, context: int = 0
) -> tuple[list[int], np.ndarray]:
    rows: list[np.ndarray] = []
    got = dec.generate(prompt, tokens, context=context, on_logits=lambda i, lg: rows.append(lg))
    return got, np.stack(rows)


def _err(logits: np.ndarray, ref: np.ndarray) -> float:
    return float((np.abs(logits - ref) / ref.std(axis=1, keepdims=True)).max())


def test_graph_replay_matches_the_reference() -> None:
    w = random_weights(SMALL, seed=1)
    dec = Decoder(w, max_len=8)
    dec.capture()
    got, logits = _decode(dec, [3, 1, 4], 2)
    want, ref = Reference(w, 8).generate([3, 1, 4], 2)
    assert got == want
    assert logits.shape == (2, SMALL.vocab) and logits.dtype == np.float32
    assert _err(logits, ref) < TOL
    assert dec.read_position() == 2 + 2  # the graph advanced the position once per step


def test_padded_shapes_long_context_and_many_heads_per_kv_head() -> None:
    w = random_weights(ODD, seed=2)
    context = A.CHUNK + 3
    dec = Decoder(w, max_len=context + 2)
    assert dec.nchunks == 2 and dec.hdp == 16
    names = [launch.name for launch in dec.launches]
    assert names.count("L0.attention[0]") == 1 and names.count("L0.attention[4]") == 1
    assert "L0.combine" in names
    got, logits = _decode(dec, [7, 2], 1, context=context)  # launch by launch, no graph
    want, ref = Reference(w, context + 2).generate([7, 2], 1, context=context)
    assert got == want
    assert _err(logits, ref) < TOL


def test_a_long_context_spreads_over_every_chunk_slot() -> None:
    """Past ``SLOTS * CHUNK`` positions a chunk is longer than ``CHUNK`` (``chunk_len``): the
    grid keeps its ``SLOTS`` chunks per KV head, and every position is still attended once."""
    w = random_weights(SMALL, seed=4)
    context = A.SLOTS * A.CHUNK + 5
    dec = Decoder(w, max_len=context + 3)
    assert dec.nchunks == A.SLOTS
    got, logits = _decode(dec, [6], 1, context=context)
    want, ref = Reference(w, context + 3).generate([6], 1, context=context)
    assert got == want
    assert _err(logits, ref) < TOL


def test_a_wrong_position_is_caught() -> None:
    """The tolerance has a margin: RoPE at the next position moves the logits by ~1 std."""
    w = random_weights(SMALL, seed=1)
    dec = Decoder(w, max_len=8)
    _, logits = _decode(dec, [5], 1)
    ref = Reference(w, 8)
    ref.reset()
    ref.pos = 1  # the token fed one position too far
    wrong = ref.step(5)[None]
    assert _err(logits, wrong) > 1000 * TOL


def test_warp_gemvs_match_the_reference() -> None:
    """The GPU's warp-per-row GEMVs (the simulator's default is a thread per row)."""
    cfg = Config(hidden=16, layers=1, heads=2, kv_heads=1, head_dim=8, inter=16, vocab=24)
    w = random_weights(cfg, seed=3)
    dec = Decoder(w, max_len=2, gemv="warp")
    assert dec.gemv == "warp"
    kernels = {launch.prepared.kernel.name for launch in dec.launches}
    assert {"gemv_norm", "gemv_swiglu", "gemv_residual", "lm_head"} <= kernels
    got, logits = _decode(dec, [4], 1)
    want, ref = Reference(w, 2).generate([4], 1)
    assert got == want and _err(logits, ref) < TOL


@pytest.mark.parametrize("split", G.SPLITS)
@pytest.mark.parametrize("k", [200, 8])
def test_pair_gemv_adds_the_warps_of_each_pair(k: int, split: int) -> None:
    """gemv.gemv_residual: pairs of rows, ``split`` warps a pair, the input staged in
    shared memory; runs past the lanes (k = 200: 25 runs) are handled."""
    per = G.rows_per_block(split)
    rows = 6 * per
    rng = np.random.default_rng(8)
    w = rng.standard_normal((rows, k)).astype(BF16)
    v = rng.standard_normal(k).astype(np.float32)
    res = rng.standard_normal(rows).astype(np.float32)
    y = cuda.to_device(np.full((rows // per, per), np.nan, np.float32))
    launch = G.gemv_residual.prepare(grid=G.grid(rows, split), block=G.BLOCK, shared_mem=4 * k)
    launch(y, device_array(w), cuda.to_device(v), cuda.to_device(res.reshape(y.shape)), split)
    want = res + w.astype(np.float64) @ v
    np.testing.assert_allclose(y.copy_to_host().reshape(-1), want, rtol=1e-5, atol=1e-4)


def test_pair_gemv_with_a_staging_area_smaller_than_the_input_reads_zeros_past_it() -> None:
    """A caller's mistake the contract cannot name (its relations do not take the dynamic
    shared size): shared_mem below 4 * k. The runs past the tile read 0, never memory past
    it, so only the first 8 columns count."""
    per = G.rows_per_block(1)
    rows, k = per, 16
    w = np.ones((rows, k), BF16)
    y = cuda.to_device(np.zeros((1, per), np.float32))
    res = cuda.to_device(np.zeros((1, per), np.float32))
    launch = G.gemv_residual.prepare(grid=1, block=G.BLOCK, shared_mem=4 * 8)
    launch(y, device_array(w), cuda.to_device(np.ones(k, np.float32)), res, 1)
    np.testing.assert_array_equal(y.copy_to_host().reshape(-1), np.full(rows, 8.0, np.float32))


@pytest.mark.parametrize("mode", ["thread", "warp"])
def test_argmax_takes_the_first_maximum(mode: str) -> None:
    """Two equal largest logits, in different lm_head blocks: the lower row wins."""
    rows, k = 3 * max(G.rows_per_block(1), 16), 8
    rng = np.random.default_rng(4)
    w = (rng.standard_normal((rows, k)) * 0.01).astype(BF16)
    x = np.ones(k, np.float32)
    w[3] = w[rows - 3] = BF16(1.0)  # the two largest rows, equal
    warp = mode == "warp"
    per = G.rows_per_block(1)
    blocks = G.grid(rows, 1) if warp else -(-rows // K.THREAD_BLOCK)
    logits = cuda.device_array(rows, np.float32)
    bval = cuda.device_array(blocks, np.float32)
    bidx = cuda.device_array(blocks, np.int32)
    if warp:
        launch = G.lm_head.prepare(grid=blocks, block=G.BLOCK, shared_mem=4 * k)
        view, nw = logits.reshape(-1, per), cuda.to_device(np.ones(k, np.float32))
        extra: tuple[int, ...] = (1,)
    else:
        launch = K.lm_head_thread.prepare(grid=blocks, block=K.THREAD_BLOCK)
        view, nw, extra = logits, device_array(np.ones(k, BF16)), ()
    launch(view, bval, bidx, device_array(w), cuda.to_device(x), nw, np.float32(1e-6), *extra)
    tok = cuda.to_device(np.zeros(1, np.int32))
    pos = cuda.to_device(np.array([2], np.int32))
    hist = cuda.to_device(np.full((4, 1), -1, np.int32))
    K.finish.prepare(grid=1, block=K.FINISH_BLOCK)(tok, pos, hist, bval, bidx)
    got = logits.copy_to_host()
    np.testing.assert_allclose(got, (w.astype(np.float32) @ x), rtol=1e-5, atol=1e-6)
    assert tok.copy_to_host()[0] == 3
    assert pos.copy_to_host()[0] == 3
    np.testing.assert_array_equal(hist.copy_to_host()[:, 0], [-1, -1, 3, -1])


def test_embed_of_a_token_outside_the_table_is_zero() -> None:
    table = np.arange(5 * 8, dtype=np.float32).reshape(5, 8).astype(BF16)
    x = cuda.to_device(np.full(8, np.nan, np.float32))
    launch = K.embed.prepare(grid=1, block=256)
    launch(x, device_array(table), cuda.to_device(np.array([2], np.int32)))
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(16, 24, dtype=np.float32))
    launch(x, device_array(table), cuda.to_device(np.array([5], np.int32)))
    np.testing.assert_array_equal(x.copy_to_host(), np.zeros(8, np.float32))


# ------------------------------------------------------------------ checkpoints


def _write_checkpoint(d: Path, cfg: Config, seed: int, shards: int = 1) -> dict[str, np.ndarray]:
    """A HF Qwen3ForCausalLM checkpoint written here, with safetensors' numpy API."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    H, q, kv, hd = cfg.hidden, cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim, cfg.head_dim

    def mat(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.05).astype(BF16)

    def norm(n: int) -> np.ndarray:
        return (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)  # F32 in the file

    t = {"model.embed_tokens.weight": mat(cfg.vocab, H), "model.norm.weight": norm(H)}
    for i in range(cfg.layers):
        a, m = f"model.layers.{i}.self_attn.", f"model.layers.{i}.mlp."
        t |= {
            f"model.layers.{i}.input_layernorm.weight": norm(H),
            f"model.layers.{i}.post_attention_layernorm.weight": norm(H),
            a + "q_proj.weight": mat(q, H),
            a + "k_proj.weight": mat(kv, H),
            a + "v_proj.weight": mat(kv, H),
            a + "o_proj.weight": mat(H, q),
            a + "q_norm.weight": norm(hd),
            a + "k_norm.weight": norm(hd),
            m + "gate_proj.weight": mat(cfg.inter, H),
            m + "up_proj.weight": mat(cfg.inter, H),
            m + "down_proj.weight": mat(H, cfg.inter),
        }
    d.mkdir(parents=True, exist_ok=True)
    config = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": H,
        "intermediate_size": cfg.inter,
        "num_hidden_layers": cfg.layers,
        "num_attention_heads": cfg.heads,
        "num_key_value_heads": cfg.kv_heads,
        "head_dim": hd,
        "vocab_size": cfg.vocab,
        "rms_norm_eps": cfg.eps,
        "rope_theta": cfg.theta,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
    }
    (d / "config.json").write_text(json.dumps(config))
    names = sorted(t)
    if shards == 1:
        save_file(t, str(d / "model.safetensors"))
    else:
        weight_map = {}
        for s in range(shards):
            part = names[s::shards]
            fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
            save_file({n: t[n] for n in part}, str(d / fname))
            weight_map |= dict.fromkeys(part, fname)
        (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return t


def test_checkpoint_tensors_load_by_their_hf_names(tmp_path: Path) -> None:
    written = _write_checkpoint(tmp_path, SMALL, seed=5, shards=2)
    w = load_checkpoint(tmp_path)
    assert w.config == SMALL
    back = w.hf_state_dict()
    assert set(back) == set(written)
    for name, a in written.items():  # F32 norms come back as bf16 of the same values
        np.testing.assert_array_equal(back[name], a.astype(BF16), err_msg=name)


def test_cli_round_trip_dump_logits_and_check(tmp_path: Path) -> None:
    ck = tmp_path / "ck"
    _write_checkpoint(ck, SMALL, seed=6)
    out = tmp_path / "logits.npy"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--weights", str(ck), "--prompt-ids", "3,1", "--tokens", "2"]
        + ["--dump-logits", str(out), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CHECK PASSED" in proc.stdout
    logits = np.load(out)
    assert logits.dtype == np.float32 and logits.shape == (2, SMALL.vocab)
    want_tokens, ref = Reference(load_checkpoint(ck), 3).generate([3, 1], 2)
    assert _err(logits, ref) < TOL
    assert f"tokens: {want_tokens}" in proc.stdout


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: None, "no config.json there"),
        (lambda d: (d / "config.json").write_text('{"model_type": "llama"}'), "model_type 'llama'"),
    ],
)
def test_cli_refuses_a_bad_weights_dir(tmp_path: Path, setup, message: str) -> None:  # type: ignore[no-untyped-def]
    setup(tmp_path)
    proc = subprocess.run(
        [sys.executable, str(RUN), "--weights", str(tmp_path), "--tokens", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 2
    assert message in proc.stderr and str(tmp_path) in proc.stderr
    assert "Traceback" not in proc.stderr


def test_loader_names_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a directory"):
        load_checkpoint(tmp_path / "nowhere")
    written = _write_checkpoint(tmp_path / "a", SMALL, seed=7)
    from safetensors.numpy import save_file

    del written["model.layers.1.mlp.up_proj.weight"]
    save_file(written, str(tmp_path / "a" / "model.safetensors"))
    with pytest.raises(
        WeightsError, match=r"tensor model\.layers\.1\.mlp\.up_proj\.weight is not in"
    ):
        load_checkpoint(tmp_path / "a")
    written["model.layers.1.mlp.up_proj.weight"] = np.zeros((3, 3), BF16)
    save_file(written, str(tmp_path / "a" / "model.safetensors"))
    with pytest.raises(WeightsError, match=r"has shape \(3, 3\), expected \(48, 32\)"):
        load_checkpoint(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "config.json").write_text(
        json.dumps({"model_type": "qwen3", "rope_scaling": {"type": "yarn"}})
    )
    with pytest.raises(ConfigError, match="rope type 'yarn' is not supported"):
        load_hf_config(tmp_path / "b")


def test_every_kernel_is_tier_1() -> None:
    """No ``simtsafe.unsafe`` region in any kernel or helper (``simtsafe audit`` agrees)."""
    made = [
        v
        for module in (K, G, A)
        for v in vars(module).values()
        if isinstance(v, ss.Kernel | ss.DeviceFunction)
    ]
    assert len(made) >= 20
    assert [(f.name, f.unsafe_regions) for f in made if f.unsafe_regions] == []


def test_named_shapes_are_the_anchors() -> None:
    c = CONFIGS["4b"]
    assert (c.hidden, c.layers, c.heads, c.kv_heads, c.head_dim, c.inter, c.vocab) == (
        2560, 36, 32, 8, 128, 9728, 151936
    )  # fmt: skip
    assert CONFIGS["tiny"].group == 2 and CONFIGS["0.6b"].qkv_rows == 4096
    assert ss.bfloat16 is BF16
