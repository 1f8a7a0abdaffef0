#!/usr/bin/env python3
"""The two commands of the README, each bootstrapping its own ``.venv``.

    python3 scripts/dev.py examples   # run every example, GPU if present, else the simulator
    python3 scripts/dev.py test       # install pinned deps, run the whole test suite

Needs only Python >= 3.11 with pip and venv. The ``.venv`` is (re)installed
from pyproject.toml with requirements/constraints.txt whenever either file
changes (a stamp in the venv records their hash).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
STAMP = VENV / ".simtsafe-stamp"
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"

#: The uniformity differential: the longest single test (generated kernels, in a process pool),
#: a layer of its own so that the other layers' CPU time is spread around it.
DIFFERENTIAL = "tests/ptx/test_uniformity_differential.py"
#: Tests that spend their time in subprocesses of their own (the CI gate over the examples,
#: fresh-process cache probes, mypy / pyright / pre-commit runs, the inlining comparison's
#: fresh-process compiles): they run beside the
#: differential, so that the four layers end at about the same time on two CPUs.
SUBPROCESS_TESTS = [
    "tests/typing",
    "tests/ptx/test_check_gate_ptx.py",
    "tests/ptx/test_cache_ptx.py",
    "tests/ptx/test_precommit_hook_ptx.py",
    "tests/ptx/test_inlining_speed_ptx.py",
]
#: PTX tests whose kernels take the longest to compile (the bf16 GEMM example and its raw
#: twin, about a minute each; the race and phase differentials' generated kernels; the fill
#: emulation's sweep): beside the uniformity differential, which they balance.
LONG_COMPILES = [
    "tests/ptx/test_gemm_bf16_ptx.py",
    "tests/ptx/test_race_differential.py",
    "tests/ptx/test_phase_differential.py",
    "tests/ptx/test_fill_emulation.py",
]
#: The decode application's tests, run beside the first half of the simulator's tests: the two
#: halves then take about the same time (the other examples run in the second half).
DECODE_EXAMPLES = ["tests/examples/test_decode.py", "tests/examples/test_attacks9_decode.py"]

#: What the first half of the simulator's tests leaves to the second: test_[m-z]* but the
#: porting rounds' replays (test_port*), which the first half takes to balance the two.
NOT_FIRST_HALF = ["test_[m-o]*", "test_p[!o]*", "test_po[!r]*", "test_[q-z]*"]

#: Test layers: (title, pytest arguments, extra environment). They run side by side, one
#: process each, on a machine with two or more CPUs (CI has two); each test runs in exactly one.
LAYERS = [
    (
        "unit, PTX (NVVM, no GPU), GPU (skipped without a device), examples on GPU",
        [
            "tests",
            "--ignore=tests/sim",
            f"--ignore={DIFFERENTIAL}",
            *(f"--ignore={path}" for path in SUBPROCESS_TESTS + LONG_COMPILES),
        ],
        {},
    ),
    (
        "the uniformity differential (generated kernels, CUDA target and simulator); typing, "
        "the CI gate, the cache and pre-commit probes (subprocesses); the bf16 GEMM's PTX",
        [DIFFERENTIAL, *SUBPROCESS_TESTS, *LONG_COMPILES],
        {},
    ),
    # The simulator's tests, in two halves by file name (the porting rounds' replays with
    # the first), with the examples.
    (
        "simulator (NUMBA_ENABLE_CUDASIM=1), tests/sim/test_[a-l]*, test_port* and the decode "
        "example",
        ["tests/sim", *DECODE_EXAMPLES, *(f"--ignore-glob=tests/sim/{g}" for g in NOT_FIRST_HALF)],
        {"NUMBA_ENABLE_CUDASIM": "1"},
    ),
    (
        "simulator (NUMBA_ENABLE_CUDASIM=1), the other tests/sim/test_[m-z]* and the other "
        "examples",
        [
            "tests/sim",
            "tests/examples",
            "--ignore-glob=tests/sim/test_[a-l]*",
            "--ignore-glob=tests/sim/test_port*",
            *(f"--ignore={path}" for path in DECODE_EXAMPLES),
        ],
        {"NUMBA_ENABLE_CUDASIM": "1"},
    ),
]


def _say(message: str) -> None:
    print(f"[simtsafe] {message}", flush=True)


def _stamp() -> str:
    h = hashlib.sha256()
    stubs = sorted((ROOT / "stubs" / "numba").rglob("*.pyi"))  # installed (not editable)
    for f in (ROOT / "pyproject.toml", CONSTRAINTS, ROOT / "stubs" / "pyproject.toml", *stubs):
        if f.exists():
            h.update(f.read_bytes())
    return h.hexdigest()


def ensure_venv() -> None:
    """Create .venv and install simtsafe[dev,cu13] with pinned versions, if not up to date."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this script may run on any python3
        sys.exit(f"simtsafe needs Python >= 3.11, this is {sys.version.split()[0]}")
    if not PY.exists():
        _say(f"creating {VENV.relative_to(ROOT)} with {sys.executable}")
        subprocess.check_call([sys.executable, "-m", "venv", str(VENV)])
    if STAMP.exists() and STAMP.read_text() == _stamp():
        return
    _say("installing simtsafe and its pinned dependencies into .venv (first run: a few minutes)")
    pip = [str(PY), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.check_call([*pip, "--upgrade", "pip"])
    _drop_renamed_distributions()
    targets = ["-e", f"{ROOT}[dev,cu13]"]
    if (ROOT / "stubs" / "pyproject.toml").exists():
        targets += [str(ROOT / "stubs")]
    # Editable as a plain .pth path entry, which mypy and pyright follow (pyproject.toml's
    # `package-dir` makes setuptools choose it over an import hook).
    subprocess.check_call([*pip, "-c", str(CONSTRAINTS), *targets])
    STAMP.write_text(_stamp())


#: Earlier names of distributions this checkout installs: removed first, so that two
#: distributions never own the same files (the stubs were `numba-cuda-stubs-simtsafe`).
RENAMED = ("numba-cuda-stubs-simtsafe",)


def _drop_renamed_distributions() -> None:
    probe = "import importlib.metadata as m, sys; m.distribution(sys.argv[1])"
    for name in RENAMED:
        if subprocess.call([str(PY), "-c", probe, name], stderr=subprocess.DEVNULL) == 0:
            subprocess.check_call([str(PY), "-m", "pip", "uninstall", "--quiet", "--yes", name])


def run_examples() -> int:
    return subprocess.call([str(PY), str(ROOT / "examples" / "run_all.py")], cwd=ROOT)


def run_tests(extra: list[str]) -> int:
    """Run the test layers, side by side on a machine with two or more CPUs.

    Each layer's output is kept in a file and printed whole when it ends, in
    layer order; the exit status is the first failing layer's.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="simtsafe-layers-") as tmp:
        runs: list[tuple[str, Any, int | None]] = []
        parallel = (os.cpu_count() or 1) >= 2
        for k, (title, args, env) in enumerate(LAYERS):
            log = Path(tmp) / f"layer{k}.log"
            command = [
                str(PY), "-m", "pytest", *args, *extra,
                f"--basetemp={Path(tmp) / f'tmp{k}'}", "-o", f"cache_dir=.pytest_cache/layer{k}",
            ]  # fmt: skip
            if not parallel:
                _say(f"test layer: {title}")
                code = subprocess.call(command, cwd=ROOT, env={**os.environ, **env})
                runs.append((title, None, code))
                continue
            out = log.open("w")
            proc = subprocess.Popen(
                command, cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
            )
            runs.append((title, (proc, out, log), None))
        _say(f"running {len(runs)} test layers side by side" if parallel else "done")
        worst = 0
        for title, running, done in runs:
            rc = done
            if running is not None:
                proc, out, log = running
                rc = proc.wait()
                out.close()
                _say(f"test layer: {title}")
                sys.stdout.write(log.read_text())
                sys.stdout.flush()
            if rc == 5:  # no tests collected in this layer: not a failure of the layer
                rc = 0
            worst = worst or int(rc or 0)
    _say("all test layers passed" if worst == 0 else f"a test layer failed (exit {worst})")
    return worst


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("examples", "test"):
        print(__doc__)
        return 2
    ensure_venv()
    if argv[0] == "examples":
        return run_examples()
    return run_tests(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
