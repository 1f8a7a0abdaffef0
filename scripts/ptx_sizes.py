"""PTX instruction counts of the examples' kernels (sm_90, NVVM from the cu13 wheels, no GPU).

Compares two trees (each a checkout with its own ``simtsafe`` and ``examples``), kernel by
kernel: how a change to what NVVM is given shows in the code it makes.

    python scripts/ptx_sizes.py OUT.json OLD_TREE NEW_TREE
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MODULES = (
    "saxpy histogram_vec sgemm sgemm_async gemm_bf16 gemm_bf16_wgmma scan softmax rmsnorm "
    "layernorm sum_vec compact matmul decode.kernels decode.attention decode.gemv"
).split()

_COUNT = r"""
import importlib, json, re, sys
counts = {}
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    for attr, obj in vars(module).items():
        if hasattr(obj, "ptx") and hasattr(obj, "prepare"):
            ptx = obj.ptx(cc=(9, 0))
            body = [line for line in ptx.splitlines() if re.match(r"\s+[a-z@]", line)
                    and not line.strip().startswith(("//", ".reg", ".param", ".local", ".shared"))]
            counts[f"{name}.{attr}"] = len(body)
print(json.dumps(counts))
"""


def counts(tree: Path) -> dict[str, int]:
    """Instructions per kernel of ``tree``'s examples, compiled by ``tree``'s simtsafe."""
    env = {**os.environ, "PYTHONPATH": f"{tree}:{tree / 'examples'}"}
    env.pop("SIMTSAFE_CACHE_DIR", None)
    import tempfile

    with tempfile.TemporaryDirectory() as cache:
        env["SIMTSAFE_CACHE_DIR"] = cache
        done = subprocess.run(
            [sys.executable, "-c", _COUNT, *MODULES], env=env, cwd=tree, check=True,
            capture_output=True, text=True,
        )  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    out, old, new = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    before, after = counts(old), counts(new)
    rows = {k: {"before": before[k], "after": after.get(k)} for k in before}
    out.write_text(
        json.dumps({"command": " ".join(["python", *sys.argv]), "kernels": rows}, indent=1) + "\n"
    )
    for k, v in rows.items():
        print(f"{k:40s} {v['before']:>6} {v['after']!s:>6}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
