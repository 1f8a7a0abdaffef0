"""Batch-1 Qwen3 decode: simtsafe (graph replay, per launch) vs the PyTorch anchor, one run.

    python benchmarks/decode.py --configs 0.6b --contexts 0        # one (shape, context) pair
    python benchmarks/decode.py --configs 0.6b,4b --contexts 0,4096 [--tokens 128] [--repeats 5]
    python benchmarks/decode.py --merge                            # the side-by-side table of
                                                                   # every decode_*.json in $OUT
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/decode.py --configs tiny --contexts 0,40 --tokens 4

For each shape and context, in one process on one GPU:

1. The anchor (``shared/anchors/decode_anchor.py``, found next to or inside the repository
   root, or ``--anchor PATH``) runs as a subprocess on the same shape, positions and cache
   length (``--max-len`` = context + tokens: every variant's static window is the task's):
   eager, eager_sliced, its CUDA graph (two SDPA backends) and torch.compile (each mode in
   its own subprocess with a timeout). At the first context of a shape it writes its seeded
   weights as a Hugging Face checkpoint (``--save-weights``); the later contexts, and this
   decoder, load that checkpoint (``--weights``): both decode the same weights.
2. This decoder (``examples/decode``) loads the checkpoint and fills the cache positions
   ``[0, context)`` with the anchor's values (torch's generator, seeded ``seed + 1``, as its
   ``reset_cache``; numpy's when torch is absent, and then tokens at a context are not
   comparable).
3. Tokens: this decoder's first 16 greedy tokens against the anchor's eager ones (its
   ``--dump-logits``), the first step that differs and eager's top-2 gap there, and a
   teacher-forced comparison (eager's tokens fed here, logits compared in units of eager's
   logit std): ``check`` is ``ok``, ``ok-near-tie`` (the first difference at an eager top-2
   gap under 0.1 std: random weights give near-flat logits, and bf16 rounding between the
   matrix products -- the anchor's, not this decoder's -- flips such ties) or ``FAIL``
   (a teacher-forced error of 0.5 std or more, or a flip at a clear margin): the anchor's
   rules. With ``--ref-steps`` the numpy reference checks a few steps too.
4. Time: ``--tokens`` tokens after ``--warmup`` runs, median of ``--repeats`` runs, host
   clock around the run (as the anchor): one ``simtsafe.graph()`` replay per token, and the
   same launches one by one.
5. Roofline: bytes a token must read (every weight once, the tied embedding once, K and V
   of positions ``0..pos``) over the copy rate measured in the same run (a 2 GiB device
   copy, (read + write) / time, as the anchor); the larger of this process's and the
   anchor's measured rates is used (the higher roofline).

Results: $OUT (else benchmarks/results)/decode_<shape>_c<context>.{json,md}, and decode.md
with every pair found there side by side.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "examples"))

from _common import device_name, out_dir, time_gpu  # noqa: E402
from decode.config import CONFIGS  # noqa: E402
from decode.model import Decoder  # noqa: E402
from decode.reference import Reference  # noqa: E402
from decode.weights import BF16, Weights, load_checkpoint, random_weights  # noqa: E402
from numba import cuda  # noqa: E402

import simtsafe as ss  # noqa: E402

try:
    import torch
except ImportError:  # no anchor cache values: tokens at a context are not compared
    torch = None

ANCHOR_CANDIDATES = ("../shared/anchors/decode_anchor.py", "shared/anchors/decode_anchor.py")
PROMPT = 9707  # the anchor's default one-token prompt
NEAR_TIE = 0.1  # std: the anchor's near-tie gap
TF_FAIL = 0.5  # std: the anchor's teacher-forced failure


def find_anchor(given: str | None) -> Path | None:
    if given:
        p = Path(given)
        return p if p.is_file() else None
    for rel in ANCHOR_CANDIDATES:
        p = (ROOT / rel).resolve()
        if p.is_file():
            return p
    return None


def copy_rate(nbytes: int, reps: int) -> float:
    """Device-to-device copy rate in bytes/s, (read + write) / time, as the anchor counts."""
    src = cuda.device_array(nbytes // 4, np.float32)
    dst = cuda.device_array(nbytes // 4, np.float32)
    t = time_gpu(lambda: dst.copy_to_device(src), reps)
    return 2 * src.nbytes / t if t > 0 else float("nan")  # the simulator's clock may not move


# ------------------------------------------------------------------------------ the anchor


def run_anchor(
    anchor: Path,
    cfg: str,
    ck: Path,
    context: int,
    max_len: int,
    args: argparse.Namespace,
    work: Path,
) -> dict[str, Any]:
    """The anchor on this shape and context; its JSON, plus its eager logits (``logits``)."""
    out = work / f"anchor_{cfg}_c{context}.json"
    dump = work / f"anchor_{cfg}_c{context}_logits.npy"
    cmd = [
        sys.executable,
        str(anchor),
        "--tokens",
        str(args.tokens),
        "--repeats",
        str(args.repeats),
    ]
    cmd += ["--warmup", str(args.warmup), "--context", str(context), "--max-len", str(max_len)]
    cmd += ["--prompt-ids", str(PROMPT), "--dump-logits", str(dump), "--out", str(out)]
    cmd += ["--seed", str(args.seed)]
    if (ck / "config.json").is_file():
        cmd += ["--weights", str(ck)]
    else:
        cmd += ["--config", cfg, "--save-weights", str(ck)]
    if ss.SIMULATOR:
        cmd += ["--device", "cpu", "--skip-compile", "--no-profile"]
    cmd += args.anchor_args.split()
    print("anchor:", " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.anchor_timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": f"did not finish within {args.anchor_timeout} s"}
    wall = time.perf_counter() - t0
    sys.stdout.write("".join(f"  | {line}\n" for line in proc.stdout.splitlines()[-40:]))
    if proc.returncode != 0 or not out.is_file():
        tail = (proc.stderr or proc.stdout)[-1500:]
        print(f"anchor failed (exit {proc.returncode}):\n{tail}", flush=True)
        return {"status": "failed", "error": f"exit {proc.returncode}: {tail[-300:]}"}
    res: dict[str, Any] = json.loads(out.read_text())
    res["status"] = "ok"
    res["wall_s"] = round(wall, 1)
    if dump.is_file():
        res["logits"] = np.load(dump)
    return res


def anchor_prefill(
    w: Weights, context: int, seed: int
) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """The anchor's cache values for ``[0, context)``: torch's CUDA generator seeded ``seed+1``,
    per layer K then V of shape (kv_heads, context, head_dim), rounded to bf16 (its cache)."""
    if torch is None or not torch.cuda.is_available() or not context:
        return None
    c = w.config
    g = torch.Generator(device="cuda")
    g.manual_seed(seed + 1)
    out = []
    for _ in range(c.layers):
        pair = []
        for _ in range(2):
            t = torch.randn(c.kv_heads, context, c.head_dim, generator=g, device="cuda")
            bits = t.to(torch.bfloat16).view(torch.int16).cpu().numpy().view(np.uint16)
            pair.append(bits.view(BF16))
        out.append((pair[0], pair[1]))
    return out


# ------------------------------------------------------------------------------ this decoder


def greedy(dec: Decoder, start: int, tok0: int, steps: int) -> tuple[list[int], np.ndarray]:
    """Free-running greedy tokens from ``start`` (cache already filled) and their logits."""
    dec.set_position(start)
    dec.set_token(tok0)
    rows = []
    for _ in range(steps):
        dec.step()
        rows.append(dec.read_logits())
    return dec.read_tokens(start, steps), np.stack(rows)


def teacher_forced(dec: Decoder, start: int, inputs: list[int]) -> np.ndarray:
    """Logits with the given input tokens, one per step from ``start``."""
    dec.set_position(start)
    rows = []
    for t in inputs:
        dec.set_token(t)
        dec.step()
        rows.append(dec.read_logits())
    return np.stack(rows)


def compare(
    ref_tokens: list[int], ref_logits: np.ndarray, toks: list[int], tf: np.ndarray
) -> dict[str, Any]:
    """The anchor's token and teacher-forced checks of ``toks``/``tf`` against eager's."""
    n = min(16, len(ref_tokens), len(toks))
    first = next((i for i in range(n) if toks[i] != ref_tokens[i]), None)
    res: dict[str, Any] = {"agree_first16": first is None, "first_divergence": first}
    m = tf.shape[0]
    std = ref_logits[:m].std(axis=1)
    err = np.abs(tf - ref_logits[:m]).max(axis=1) / std
    res["tf_max_err_sigma"] = float(err.max())
    res["tf_argmax_agree"] = int((tf.argmax(1) == ref_logits[:m].argmax(1)).sum())
    res["tf_steps"] = int(m)
    if first is not None:
        lg = ref_logits[first]
        gap = float((lg[ref_tokens[first]] - lg[toks[first]]) / lg.std())
        res["divergence_gap_sigma"] = gap
    near = first is not None and abs(res["divergence_gap_sigma"]) < NEAR_TIE
    res["check"] = "ok" if first is None else "ok-near-tie" if near else "FAIL"
    if res["tf_max_err_sigma"] >= TF_FAIL:
        res["check"] = "FAIL"
    return res


def time_runs(dec: Decoder, start: int, tok0: int, args: argparse.Namespace) -> dict[str, Any]:
    """Median host time of ``--tokens`` steps (one replay or the launches each), as the anchor."""
    times = []
    for r in range(args.warmup + args.repeats):
        dec.set_position(start)
        dec.set_token(tok0)
        ss.synchronize()
        cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(args.tokens):
            dec.step()
        ss.synchronize()
        cuda.synchronize()
        if r >= args.warmup:
            times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    # host time to submit one step (no wait): what the launches cost the host in the loop
    submit = []
    for _ in range(1 if ss.SIMULATOR else 5):
        dec.set_position(start)
        ss.synchronize()
        cuda.synchronize()
        t0 = time.perf_counter()
        dec.step()
        submit.append(time.perf_counter() - t0)
    # device time of the run (events around --tokens steps: launch gaps included)
    dec.set_position(start)
    dec.set_token(tok0)
    cuda.synchronize()
    begin, end = cuda.event(), cuda.event()
    begin.record()
    for _ in range(args.tokens):
        dec.step()
    end.record()
    end.synchronize()
    ss.synchronize()
    return {
        "tok_s": args.tokens / med,
        "ms_per_token": med / args.tokens * 1e3,
        "ms_per_token_runs": [round(t / args.tokens * 1e3, 4) for t in times],
        "host_submit_us_per_step": statistics.median(submit) * 1e6,
        "device_ms_per_token": begin.elapsed_time(end) / args.tokens,
    }


def alone_submit(dec: Decoder, start: int, reps: int = 32) -> dict[str, Any]:
    """Host time of each launch of the step repeated ``reps`` times alone (no wait), as
    ``benchmarks/launch_latency.py`` times one launch: the same launches, outside the step.
    Every launch writes only its outputs, so repeating one leaves the step's state as one
    launch would; the position is set back afterwards (``finish`` advances it)."""
    per: list[float] = []
    for launch in dec.launches:
        dec.set_position(start)
        ss.synchronize()
        cuda.synchronize()
        go = launch.bound
        t0 = time.perf_counter()
        for _ in range(reps):
            go()
        per.append((time.perf_counter() - t0) / reps)
    ss.synchronize()
    cuda.synchronize()
    dec.set_position(start)
    return {
        "host_alone_us_per_launch": statistics.fmean(per) * 1e6,
        "host_alone_us_per_launch_max": max(per) * 1e6,
    }


def _weights(dec: Decoder) -> list[Any]:
    """The decoder's weight matrices (a GEMV launch's weight is the argument that is one)."""
    mats = [ly[k] for ly in dec.layers for k in ("wqkv", "wo", "wgu", "wd")]
    return [*mats, dec.head_w]


def profile_kernels(dec: Decoder, start: int, tok0: int, reps: int) -> list[dict[str, Any]]:
    """Device time of each kind of launch of the step (events around repeated launches, the
    position reset first), summed over the layers; GEMVs also as weight bytes per second."""
    groups: dict[str, dict[str, Any]] = {}
    mats = _weights(dec)
    for launch in dec.launches:
        dec.set_position(start)
        dec.set_token(tok0)
        t = time_gpu(launch, reps=reps, warmup=1)
        kind = launch.name.split(".", 1)[-1].split("[")[0]
        g = groups.setdefault(kind, {"kernel": kind, "launches": 0, "us": 0.0, "weight_bytes": 0})
        g["launches"] += 1
        g["us"] += t * 1e6
        g["weight_bytes"] += sum(a.nbytes for a in launch.args if any(a is m for m in mats))
    # The same launches inside the step's graph: each kind's launches captured alone, in
    # order, as one graph (no host launch between them; the gap between graph nodes kept).
    for kind, g in groups.items():
        mine = [la for la in dec.launches if la.name.split(".", 1)[-1].split("[")[0] == kind]
        dec.set_position(start)
        dec.set_token(tok0)
        try:
            with ss.graph() as sub:
                for launch in mine:
                    launch()
            g["graph_us"] = time_gpu(sub.replay, reps=reps, warmup=2) * 1e6
            g["graph_us_per_launch"] = g["graph_us"] / len(mine)
        except Exception as exc:  # a diagnostic: keep the launched-alone figures
            g["graph_error"] = f"{type(exc).__name__}: {exc}"[:200]
    dec.set_position(start)
    out = list(groups.values())
    for g in out:
        g["us_per_launch"] = g["us"] / g["launches"]
        if g["weight_bytes"]:
            g["weight_GBps"] = g["weight_bytes"] / (g["us"] * 1e-6) / 1e9
    return out


def bench_pair(
    cfg: str, context: int, args: argparse.Namespace, anchor: Path | None, work: Path, bw: float
) -> dict[str, Any]:
    T = args.tokens
    max_len = context + T
    ck = work / f"ck_{cfg}"
    res: dict[str, Any] = {"config": cfg, "context": context, "tokens": T, "max_len": max_len}
    a: dict[str, Any] = {"status": "skipped", "error": "--skip-anchor"}
    if anchor is None and not args.skip_anchor:
        a = {"status": "skipped", "error": "decode_anchor.py not found (--anchor PATH)"}
    elif not args.skip_anchor:
        assert anchor is not None
        a = run_anchor(anchor, cfg, ck, context, max_len, args, work)
    logits_a = a.pop("logits", None)
    res["anchor"] = a
    if (ck / "config.json").is_file():
        t0 = time.perf_counter()
        w = load_checkpoint(ck)
        res["weights"] = f"the anchor's checkpoint ({time.perf_counter() - t0:.1f} s to load)"
    else:
        w = random_weights(cfg, args.seed)
        res["weights"] = "numpy seeded random (no anchor checkpoint: tokens not comparable)"
    c = w.config
    res["params"] = int(sum(v.size for v in w.hf_state_dict().values()))
    W = w.nbytes_read_per_token()
    kvp = c.layers * 2 * c.kv_heads * c.head_dim * 2
    per_token = [W + kvp * (context + i + 1) for i in range(T)]
    rates = [r for r in (bw, float(a.get("copy_bw_Bps") or 0.0)) if math.isfinite(r) and r > 0]
    bw_used = max(rates) if rates else float("nan")  # nan: no rate (the simulator)
    roof = T / (sum(per_token) / bw_used)
    res.update(
        weight_bytes=W,
        kv_bytes_per_position=kvp,
        bytes_per_token_avg=sum(per_token) / T,
        copy_bw_Bps_here=bw,
        copy_bw_Bps_anchor=a.get("copy_bw_Bps"),
        copy_bw_Bps_used=bw_used,
        roofline_tok_s=roof,
    )
    print(
        f"{cfg} context {context}: {res['params'] / 1e6:.0f} M params, {W / 1e6:.1f} MB weights + "
        f"{kvp / 1e3:.1f} kB KV per position; roofline {roof:.0f} tok/s at {bw_used / 1e12:.3f} TB/s",
        flush=True,
    )
    t0 = time.perf_counter()
    dec = Decoder(w, max_len)
    res["build_s"] = round(time.perf_counter() - t0, 1)
    res["launches_per_token"] = dec.launches_per_token
    values = anchor_prefill(w, context, args.seed)
    res["prefill"] = (
        "anchor's (torch)" if values is not None else "numpy (reference.prefill_values)"
    )
    dec.reset(context, args.seed, values)
    start = context  # the one-token prompt: decode starts at the context
    tok0 = PROMPT % c.vocab
    variants: dict[str, dict[str, Any]] = {}
    for name in ("graph", "per_launch"):
        try:
            if name == "graph":
                dec.capture()
            else:
                dec.graph = None
            v: dict[str, Any] = {"status": "ok"}
            n = min(16, T)
            toks, _ = greedy(dec, start, tok0, n)
            v["tokens_first16"] = toks
            if logits_a is not None and (context == 0 or values is not None):
                ref_tokens = [int(t) for t in logits_a.argmax(1)]
                tf = teacher_forced(dec, start, [tok0, *ref_tokens[: n - 1]])
                v.update(compare(ref_tokens, logits_a, toks, tf))
            v.update(time_runs(dec, start, tok0, args))
            v["frac_roofline"] = v["tok_s"] / roof
            v["host_launches_per_token"] = 1 if name == "graph" else dec.launches_per_token
            v["host_submit_us_per_launch"] = (
                v["host_submit_us_per_step"] / v["host_launches_per_token"]
            )
            if name == "per_launch" and not ss.SIMULATOR:
                v.update(alone_submit(dec, start))
            print(
                f"  simtsafe {name}: {v['tok_s']:.1f} tok/s, {v['ms_per_token']:.3f} ms/token, "
                f"{100 * v['frac_roofline']:.1f}% of roofline, check {v.get('check', '-')}",
                flush=True,
            )
        except Exception as exc:  # report, keep going
            traceback.print_exc()
            v = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"[:500]}
        variants[name] = v
    res["simtsafe"] = variants
    if not ss.SIMULATOR:
        try:
            res["kernels"] = profile_kernels(dec, start, tok0, reps=20)
            for g in res["kernels"]:
                rate = f", {g['weight_GBps']:.0f} GB/s of weights" if "weight_GBps" in g else ""
                print(
                    f"    {g['kernel']:16s} x{g['launches']:3d}: {g['us_per_launch']:8.2f} us each"
                    f" ({_fmt(g.get('graph_us_per_launch'), '.2f')} in a graph of them){rate}"
                )
        except Exception as exc:  # a diagnostic: never the run's failure
            res["kernels_error"] = f"{type(exc).__name__}: {exc}"[:300]
    if args.ref_steps and (args.ref_steps_all or res["params"] < 1e9):
        n = min(args.ref_steps, T)
        toks16 = variants["graph"].get("tokens_first16") or [tok0] * n
        ref = Reference(w, max_len)
        ref.reset(context, args.seed)
        if values is not None:
            for i, (k, v2) in enumerate(values):
                ref.k[i, :, :context] = k.astype(np.float32)
                ref.v[i, :, :context] = v2.astype(np.float32)
        inputs = [tok0, *toks16[: n - 1]]
        want = np.stack([ref.step(t) for t in inputs])
        dec.graph = None
        got = teacher_forced(dec, start, inputs)
        err = float((np.abs(got - want) / want.std(axis=1, keepdims=True)).max())
        res["numpy_reference"] = {"steps": n, "max_err_sigma": err}
        print(f"  numpy reference, {n} teacher-forced steps: max error {err:.2e} std", flush=True)
    del dec
    gc.collect()
    if not ss.SIMULATOR:
        cuda.current_context().deallocations.clear()  # free the device memory now
    return res


# ------------------------------------------------------------------------------ tables


def _cell(text: Any, width: int = 100) -> str:
    """One table cell: a single line, no pipes, at most ``width`` characters."""
    return " ".join(str(text).replace("|", "/").split())[:width]


def _fmt(x: Any, spec: str) -> str:
    return format(x, spec) if isinstance(x, int | float) and not isinstance(x, bool) else "-"


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "Batch-1 Qwen3 decode, bf16, greedy; simtsafe (examples/decode) vs the PyTorch anchor "
        "(shared/anchors/decode_anchor.py) on the same weights, positions and cache length",
        "",
        "| shape | context | variant | tok/s | ms/token | % of roofline | kernels/token | "
        "host launches/token | agree16 | tf-err (std) | check |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in results:
        head = f"| {r['config']} | {r['context']} "
        roof = r["roofline_tok_s"]
        lines.append(
            head + f"| HBM roofline ({r['bytes_per_token_avg'] / 1e6:.1f} MB/token at "
            f"{r['copy_bw_Bps_used'] / 1e12:.3f} TB/s) | {roof:.1f} | {1e3 / roof:.3f} | 100.0 | | | | | |"
        )
        for name, v in r.get("simtsafe", {}).items():
            if v.get("status") != "ok":
                lines.append(
                    head + f"| simtsafe {name} | {_cell(v.get('error', ''))} | | | | | | | |"
                )
                continue
            lines.append(
                head
                + f"| simtsafe {name.replace('_', '-')} | {v['tok_s']:.1f} | {v['ms_per_token']:.3f} "
                f"| {100 * v['tok_s'] / roof:.1f} | {r['launches_per_token']} | "
                f"{v['host_launches_per_token']} | {v.get('agree_first16', '-')} | "
                f"{_fmt(v.get('tf_max_err_sigma'), '.3f')} | {v.get('check', '-')} |"
            )
        a = r.get("anchor", {})
        if a.get("status") != "ok":
            lines.append(
                head + f"| anchor | {a.get('status')}: {_cell(a.get('error', ''))} | | | | | | | |"
            )
            continue
        for name, v in a.get("variants", {}).items():
            if v.get("status") != "ok":
                lines.append(
                    head
                    + f"| torch {name} | {v.get('status')}: {_cell(v.get('error', ''))} | | | | | | | |"
                )
                continue
            lines.append(
                head + f"| torch {name} | {v['tok_s']:.1f} | {v['ms_per_token']:.3f} | "
                f"{100 * v['tok_s'] / roof:.1f} | {_fmt(v.get('gpu_ops_per_token'), '.0f')} | "
                f"{_fmt(v.get('launch_calls_per_token'), '.0f')} | {v.get('agree_first16', '-')} | "
                f"{_fmt(v.get('tf_max_err_sigma'), '.3f')} | {v.get('check', '-')} |"
            )
    for r in results:
        per = r.get("simtsafe", {}).get("per_launch", {})
        graph = r.get("simtsafe", {}).get("graph", {})
        if "host_submit_us_per_launch" in per:
            lines += [
                "",
                f"{r['config']} context {r['context']}: host time to submit one step launch by "
                f"launch {per['host_submit_us_per_step']:.1f} us = "
                f"{per['host_submit_us_per_launch']:.2f} us per launch; the same launches each "
                f"repeated alone {_fmt(per.get('host_alone_us_per_launch'), '.2f')} us per launch "
                "(mean over the step's launches; benchmarks/launch_latency.py times one launch "
                "alone the same way); one graph replay "
                f"{_fmt(graph.get('host_submit_us_per_step'), '.1f')} us; device time per token "
                f"{_fmt(graph.get('device_ms_per_token'), '.3f')} ms (graph), "
                f"{_fmt(per.get('device_ms_per_token'), '.3f')} ms (per launch)",
            ]
        if r.get("kernels"):
            lines += [
                "",
                f"Device time per kernel kind, {r['config']} context {r['context']} (launched "
                "alone, median of 20; and the kind's launches of one step replayed as one graph "
                "of them alone, median of 20):",
                "",
                "| kernel | launches/token | us each | us/token | GB/s of weights "
                "| us each in a graph | us/token in a graph |",
                "|---|---:|---:|---:|---:|---:|---:|",
            ]
            for g in r["kernels"]:
                lines.append(
                    f"| {g['kernel']} | {g['launches']} | {g['us_per_launch']:.2f} | "
                    f"{g['us']:.1f} | {_fmt(g.get('weight_GBps'), '.0f')} | "
                    f"{_fmt(g.get('graph_us_per_launch'), '.2f')} | {_fmt(g.get('graph_us'), '.1f')} |"
                )
    lines += [
        "",
        "Roofline: every weight once (the tied embedding once) plus K and V of positions 0..pos, "
        "over the larger of the two device-copy rates measured in the run ((read + write) / time). "
        "agree16 / tf-err / check: against the anchor's eager variant (the anchor's rules: "
        "ok-near-tie when the first differing token is at an eager top-2 gap under 0.1 std; "
        "FAIL at tf-err >= 0.5 std). kernels/token for torch: GPU ops per token from its profiler.",
    ]
    return "\n".join(lines)


def write(results: list[dict[str, Any]], stem: str) -> None:
    d = out_dir()
    (d / f"{stem}.json").write_text(json.dumps(results, indent=1, default=str))
    (d / f"{stem}.md").write_text(table(results) + "\n")


def merge() -> None:
    d = out_dir()
    results = []
    for p in sorted(d.glob("decode_*_c*.json")):
        results += json.loads(p.read_text())
    order = {name: i for i, name in enumerate(CONFIGS)}
    results.sort(key=lambda r: (order.get(r["config"], 99), r["context"]))
    (d / "decode.md").write_text(table(results) + "\n")
    print(table(results))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="tiny" if ss.SIMULATOR else "0.6b,4b")
    ap.add_argument("--contexts", default="0,40" if ss.SIMULATOR else "0,4096")
    ap.add_argument("--tokens", type=int, default=2 if ss.SIMULATOR else 128)
    ap.add_argument("--repeats", type=int, default=1 if ss.SIMULATOR else 5)
    ap.add_argument("--warmup", type=int, default=0 if ss.SIMULATOR else 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--anchor",
        default=None,
        help="decode_anchor.py (default: searched in "
        + " and ".join(ANCHOR_CANDIDATES)
        + " of the repository root)",
    )
    ap.add_argument(
        "--anchor-args",
        default="",
        help="more arguments for the anchor, e.g. '--compile-timeout 150 --deadline 240'",
    )
    ap.add_argument("--anchor-timeout", type=float, default=540.0)
    ap.add_argument("--skip-anchor", action="store_true")
    ap.add_argument(
        "--work",
        default=None,
        help="where the checkpoints go (default: a temp dir "
        "that persists, $TMPDIR/simtsafe_decode_bench)",
    )
    ap.add_argument(
        "--ref-steps",
        type=int,
        default=2,
        help="teacher-forced steps checked "
        "against the numpy reference (shapes under 1e9 parameters; 0: none)",
    )
    ap.add_argument("--ref-steps-all", action="store_true", help="--ref-steps for every shape")
    ap.add_argument("--copy-bytes", type=int, default=2**20 if ss.SIMULATOR else 2**31)
    ap.add_argument(
        "--merge", action="store_true", help="only rebuild decode.md from decode_*.json"
    )
    args = ap.parse_args(argv)
    if args.merge:
        merge()
        return 0
    work = Path(args.work or Path(tempfile.gettempdir()) / "simtsafe_decode_bench")
    work.mkdir(parents=True, exist_ok=True)
    anchor = find_anchor(args.anchor)
    configs = [c for c in args.configs.split(",") if c]
    contexts = [int(c) for c in args.contexts.split(",") if c]
    device = "the CUDA simulator" if ss.SIMULATOR else device_name()
    bw = copy_rate(args.copy_bytes, 3 if ss.SIMULATOR else 10)
    print(
        f"decode benchmark on {device}: copy rate {bw / 1e12:.3f} TB/s (read + write); "
        f"anchor {anchor or 'not found'}",
        flush=True,
    )
    failed = 0
    for cfg in configs:
        for context in contexts:
            r = bench_pair(cfg, context, args, anchor, work, bw)
            r["device"] = device
            write([r], f"decode_{cfg}_c{context}")
            failed += any(
                v.get("check") == "FAIL" or v.get("status") != "ok" for v in r["simtsafe"].values()
            )
            err = r.get("numpy_reference", {}).get("max_err_sigma", 0.0)
            failed += not (math.isfinite(err) and err < 1e-2)
    merge()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
