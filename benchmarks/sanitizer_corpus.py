"""Launch checker-corpus kernels on a real GPU, alone or under compute-sanitizer.

    python benchmarks/sanitizer_corpus.py NAME [--variant bug|ok]   # one launch (GPU)
    python benchmarks/sanitizer_corpus.py --list
    python benchmarks/sanitizer_corpus.py --all --sanitize [--tools racecheck,...] [--jobs 8]

One launch: the case's kernel (``tests/checker/cases.py``) with its test
arguments, so that it can be run as
``compute-sanitizer --tool racecheck python benchmarks/sanitizer_corpus.py NAME``.

``--all --sanitize`` does that for every case and tool, each launch in its
own process with a time limit (a divergent grid sync hangs the GPU kernel),
also replays each case with ``simtsafe.sim.check`` on the CPU, and writes
``sanitizer_corpus.{json,md}`` (under $OUT, else benchmarks/results): per
bug, which tool reported it and whether the checker did.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOOLS = ("racecheck", "synccheck", "memcheck", "initcheck")
ERROR_EXIT = 97  # --error-exitcode: the tool found errors


def launch(name: str, variant: str) -> None:
    """Run one case's kernel once on the current GPU and wait for it."""
    from numba import cuda

    import simtsafe as ss
    from tests.checker.cases import BY_NAME

    case = BY_NAME[name]
    kernel = case.bug if variant == "bug" else case.ok
    dargs = [cuda.to_device(a) if hasattr(a, "shape") else a for a in case.args()]
    config = (case.grid, case.block, 0, case.shared_mem)
    if case.tier == "simtsafe":
        with ss.unsafe("SAFETY: corpus replay for compute-sanitizer; the bug is the point"):
            kernel.unchecked[config](*dargs)
    else:
        kernel[config](*dargs)
    cuda.synchronize()


def _sanitize(name: str, variant: str, tool: str, timeout: float) -> dict[str, Any]:
    cmd = [
        "compute-sanitizer",
        "--tool",
        tool,
        "--error-exitcode",
        str(ERROR_EXIT),
        sys.executable,
        str(Path(__file__).resolve()),
        name,
        "--variant",
        variant,
    ]
    if tool == "racecheck":
        cmd[3:3] = ["--racecheck-report", "all"]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"verdict": "hang", "seconds": timeout}
    text = proc.stdout + proc.stderr
    errors = re.search(r"ERROR SUMMARY: (\d+) error", text)
    hazards = re.search(r"RACECHECK SUMMARY: (\d+) hazard", text)
    count = int(errors.group(1)) if errors else 0
    count += int(hazards.group(1)) if hazards else 0
    if proc.returncode == ERROR_EXIT or count:
        verdict = "reported"
    elif proc.returncode == 0:
        verdict = "clean"
    else:
        verdict = f"crash (exit {proc.returncode})"
    return {
        "verdict": verdict,
        "errors": count,
        "seconds": round(time.perf_counter() - start, 2),
        "tail": text[-800:],
    }


def _checker(name: str, variant: str) -> dict[str, Any]:
    from simtsafe import sim
    from tests.checker.cases import BY_NAME

    case = BY_NAME[name]
    kernel = case.bug if variant == "bug" else case.ok
    report = sim.check(kernel, case.grid, case.block, *case.args(), shared_mem=case.shared_mem)
    kinds = sorted({f.kind for f in report.findings})
    hit = case.kind in kinds and bool(
        {ln for f in report.findings if f.kind == case.kind for ln in f.lines} & case.bug_lines()
    )
    return {
        "kinds": kinds,
        "right_kind_and_line": hit,
        "ok": report.ok,
        "seconds": report.stats["time_s"],
    }


def sanitize_all(tools: list[str], timeout: float, workers: int) -> int:
    from tests.checker.cases import CASES

    if shutil.which("compute-sanitizer") is None:
        print("compute-sanitizer is not on PATH (it ships with the CUDA toolkit)")
        return 2
    # Sanitized launches are independent processes: run them side by side.
    jobs = {
        (case.name, variant, tool): (case.name, variant, tool, timeout)
        for case in CASES
        for variant in ("bug", "ok")
        for tool in tools
    }
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = dict(zip(jobs, pool.map(lambda a: _sanitize(*a), jobs.values()), strict=True))
    rows: list[dict[str, Any]] = []
    for case in CASES:
        row: dict[str, Any] = {"case": case.name, "tier": case.tier, "kind": case.kind}
        for variant in ("bug", "ok"):
            row[variant] = {t: results[(case.name, variant, t)] for t in tools}
            row[f"checker_{variant}"] = _checker(case.name, variant)
        rows.append(row)
        found = [t for t in tools if row["bug"][t]["verdict"] == "reported"]
        print(f"{case.name}: sanitizer {found or 'nothing'}; checker {row['checker_bug']}")
    out = Path(os.environ.get("OUT") or Path(__file__).parent / "results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "sanitizer_corpus.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = [
        f"compute-sanitizer ({', '.join(tools)}) vs simtsafe.sim.check on the checker corpus",
        "",
        "| case | tier | planted bug | "
        + " | ".join(tools)
        + " | sim.check | fixed twin: sanitizer / sim.check |",
        "|---|---|---|" + "---|" * len(tools) + "---|---|",
    ]
    sanitizer_hits = checker_hits = false_alarms = checker_false = 0
    for r in rows:
        verdicts = [r["bug"][t]["verdict"] for t in tools]
        hit = any(v == "reported" for v in verdicts)
        sanitizer_hits += hit
        checker_hits += r["checker_bug"]["right_kind_and_line"]
        ok_noise = [
            t if r["ok"][t]["verdict"] == "reported" else f"{t}: {r['ok'][t]['verdict']}"
            for t in tools
            if r["ok"][t]["verdict"] != "clean"
        ]
        false_alarms += any(r["ok"][t]["verdict"] == "reported" for t in tools)
        checker_false += not r["checker_ok"]["ok"]
        lines.append(
            f"| {r['case']} | {r['tier']} | {r['kind']} | "
            + " | ".join(verdicts)
            + f" | {'reported' if r['checker_bug']['right_kind_and_line'] else 'missed'} | "
            + f"{', '.join(ok_noise) or 'clean'} / {'clean' if r['checker_ok']['ok'] else 'FINDINGS'} |"
        )
    lines += [
        "",
        f"planted bugs reported: compute-sanitizer {sanitizer_hits} of {len(rows)}, "
        f"simtsafe.sim.check {checker_hits} of {len(rows)}; fixed twins with findings: "
        f"compute-sanitizer {false_alarms}, simtsafe.sim.check {checker_false}",
    ]
    table = "\n".join(lines)
    (out / "sanitizer_corpus.md").write_text(table + "\n")
    print(table)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("name", nargs="?", help="a case of tests/checker/cases.py")
    p.add_argument("--variant", choices=("bug", "ok"), default="bug")
    p.add_argument("--list", action="store_true", help="list the cases")
    p.add_argument("--all", action="store_true", help="every case (with --sanitize)")
    p.add_argument("--sanitize", action="store_true", help="run under compute-sanitizer")
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per sanitized launch")
    p.add_argument("--jobs", type=int, default=8, help="sanitized launches run side by side")
    args = p.parse_args(argv)
    if args.list:
        from tests.checker.cases import CASES

        for case in CASES:
            print(f"{case.name}\t{case.tier}\t{case.kind}")
        return 0
    if args.all:
        if not args.sanitize:
            from tests.checker.cases import CASES

            for case in CASES:
                for variant in ("bug", "ok"):
                    launch(case.name, variant)
            print(f"launched {2 * len(CASES)} kernels")
            return 0
        return sanitize_all([t for t in args.tools.split(",") if t], args.timeout, args.jobs)
    if not args.name:
        p.error("name a case, or use --list / --all")
    if args.sanitize:
        for tool in args.tools.split(","):
            print(tool, _sanitize(args.name, args.variant, tool, args.timeout)["verdict"])
        return 0
    launch(args.name, args.variant)
    return 0


if __name__ == "__main__":
    sys.exit(main())
