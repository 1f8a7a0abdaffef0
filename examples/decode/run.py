"""Greedy batch-1 decode of a Qwen3-shaped model on simtsafe (every kernel Tier 1).

    python examples/decode/run.py [--weights DIR | --config NAME] [--prompt-ids 3,1,4] --tokens N
                                  [--dump-logits FILE.npy] [--context P] [--check]

* ``--weights DIR``: a Hugging Face Qwen3 checkpoint (``config.json`` + ``*.safetensors``);
  ``--config NAME``: seeded random weights of a named shape (tiny, 0.6b, 1.7b, 4b; default
  0.6b on a GPU, tiny on the simulator).
* ``--prompt-ids``: the prompt (default: the anchor's one-token prompt 9707, modulo the
  vocabulary); all its tokens but the last are fed one step each before decoding starts.
* ``--tokens N``: tokens generated; each step's argmax is fed back on the device, and the
  step is one replay of a simtsafe graph.
* ``--dump-logits F.npy``: float32 (N, vocab), the logits each generated token was chosen
  from (row 0 from the last prompt token).
* ``--context P``: cache positions [0, P) filled with seeded random K/V; decoding starts at P.
* ``--check``: run on the CPU simulator (the tiny shape unless given weights or a config) and
  compare tokens and logits with the numpy reference (``reference.py``); exit 1 on mismatch.

Without a GPU the decode runs on Numba's CUDA simulator (slow: use the tiny shape).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The anchor's default one-token prompt (``--prompt-token 9707``, modulo the vocabulary).
DEFAULT_PROMPT_TOKEN = 9707


def gpu_present() -> bool:
    """Whether numba-cuda sees a CUDA GPU (asked in a child process, without the simulator)."""
    probe = "from numba import cuda; import sys; sys.exit(0 if cuda.is_available() else 1)"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    return subprocess.call([sys.executable, "-c", probe], env=env, stderr=subprocess.DEVNULL) == 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--weights", metavar="DIR", help="Hugging Face Qwen3 checkpoint directory")
    src.add_argument(
        "--config",
        metavar="NAME",
        help="named shape with seeded random weights: tiny, 0.6b, 1.7b, 4b",
    )
    ap.add_argument("--prompt-ids", default=None, help="comma-separated prompt token ids")
    ap.add_argument("--tokens", type=int, required=True, help="tokens to generate")
    ap.add_argument(
        "--dump-logits", metavar="FILE.npy", help="write float32 (tokens, vocab) logits"
    )
    ap.add_argument(
        "--context", type=int, default=0, help="start at this position, cache [0, P) random"
    )
    ap.add_argument(
        "--check", action="store_true", help="simulator run compared with the numpy reference"
    )
    ap.add_argument(
        "--seed", type=int, default=0, help="seed of the random weights and the context"
    )
    ap.add_argument(
        "--per-launch", action="store_true", help="run the step launch by launch, no graph"
    )
    args = ap.parse_args(argv)
    if args.tokens < 1:
        ap.error(f"--tokens {args.tokens}: expected >= 1")
    if args.context < 0:
        ap.error(f"--context {args.context}: expected >= 0")
    if args.prompt_ids is not None:
        try:
            args.prompt = [int(t) for t in args.prompt_ids.split(",") if t.strip()]
        except ValueError:
            ap.error(f"--prompt-ids {args.prompt_ids!r}: expected comma-separated integers")
        if not args.prompt:
            ap.error("--prompt-ids is empty")
    else:
        args.prompt = None
    if args.weights is not None and not Path(args.weights, "config.json").is_file():
        what = "not a directory" if not Path(args.weights).is_dir() else "no config.json there"
        ap.error(
            f"--weights {args.weights}: {what} (expected a Hugging Face Qwen3 checkpoint directory)"
        )
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The simulator is chosen before numba is imported: --check always, else without a GPU.
    if args.check:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    elif "NUMBA_ENABLE_CUDASIM" not in os.environ and not gpu_present():
        print(
            "no CUDA GPU found: running on the CUDA simulator (slow; use the tiny shape)",
            flush=True,
        )
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    if str(HERE.parent) not in sys.path:
        sys.path.insert(0, str(HERE.parent))
    import numpy as np

    import simtsafe as ss
    from decode.config import ConfigError
    from decode.model import Decoder
    from decode.reference import CHECK_TOL_STD, Reference
    from decode.weights import WeightsError, load_checkpoint, random_weights

    where = "the CUDA simulator" if ss.SIMULATOR else "the GPU"
    try:
        if args.weights is not None:
            weights = load_checkpoint(args.weights)
            name = f"weights {args.weights}"
        else:
            cname = args.config or ("tiny" if ss.SIMULATOR else "0.6b")
            weights = random_weights(cname, args.seed)
            name = f"config {cname} (seeded random weights, seed {args.seed})"
    except (ConfigError, WeightsError, FileNotFoundError) as exc:
        print(f"run.py: error: {exc}", file=sys.stderr)
        return 2
    c = weights.config
    prompt = args.prompt if args.prompt is not None else [DEFAULT_PROMPT_TOKEN % c.vocab]
    bad = [t for t in prompt if not 0 <= t < c.vocab]
    if bad:
        print(
            f"run.py: error: --prompt-ids {bad[:4]} outside the vocabulary [0, {c.vocab})",
            file=sys.stderr,
        )
        return 2
    max_len = args.context + len(prompt) - 1 + args.tokens
    try:
        dec = Decoder(weights, max_len=max_len)
    except ValueError as exc:
        print(f"run.py: error: {exc}", file=sys.stderr)
        return 2
    mode = "launch by launch" if args.per_launch else "one graph replay per token"
    print(
        f"decode on {where}: {name}; {c.layers} layers, hidden {c.hidden}, heads {c.heads}/{c.kv_heads}, "
        f"vocab {c.vocab}; prompt {prompt}, context {args.context}, {args.tokens} tokens; "
        f"{dec.launches_per_token} launches per token ({dec.gemv} GEMVs), {mode}",
        flush=True,
    )
    if not args.per_launch:
        dec.capture()
    want_logits = args.dump_logits is not None or args.check
    rows: list[np.ndarray] = []
    t0 = time.perf_counter()
    tokens = dec.generate(
        prompt,
        args.tokens,
        context=args.context,
        seed=args.seed,
        on_logits=(lambda i, lg: rows.append(lg)) if want_logits else None,
    )
    dt = time.perf_counter() - t0
    print(f"tokens: {tokens}")
    print(
        f"{args.tokens} tokens in {dt:.3f} s ({args.tokens / dt:.2f} tok/s, prompt feeding included)"
    )
    logits = np.stack(rows).astype(np.float32) if rows else None
    if args.dump_logits is not None:
        assert logits is not None
        np.save(args.dump_logits, logits)
        print(f"wrote {args.dump_logits}: float32 {list(logits.shape)}")
    if not args.check:
        return 0
    assert logits is not None
    ref = Reference(weights, max_len)
    ref_tokens, ref_logits = ref.generate(prompt, args.tokens, context=args.context, seed=args.seed)
    first = next(
        (i for i, (a, b) in enumerate(zip(tokens, ref_tokens, strict=True)) if a != b), None
    )
    same = args.tokens if first is None else first + 1  # steps fed the same tokens
    std = ref_logits[:same].std(axis=1, keepdims=True)
    err = float((np.abs(logits[:same] - ref_logits[:same]) / std).max())
    ok_logits = err < CHECK_TOL_STD
    near_tie = False
    if first is not None:
        row = ref_logits[first]
        gap = float(row[ref_tokens[first]] - row[tokens[first]]) / float(row.std())
        near_tie = gap < CHECK_TOL_STD
    print(f"reference tokens: {ref_tokens}")
    print(
        f"logits: max |device - reference| = {err:.2e} std of the reference logits "
        f"(tolerance {CHECK_TOL_STD:.0e}): {'ok' if ok_logits else 'MISMATCH'}"
    )
    if first is None:
        print(f"tokens: all {args.tokens} equal")
    else:
        why = "at a near-tie of the reference's top two logits" if near_tie else "at a clear margin"
        print(
            f"tokens: first differ at step {first} ({tokens[first]} vs {ref_tokens[first]}), {why}"
        )
    ok = ok_logits and (first is None or near_tie)
    print("CHECK PASSED: the device decode matches the numpy reference" if ok else "CHECK FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.path[0] = str(HERE.parent)  # the package's directory, not its modules, on the path
    sys.exit(main())
