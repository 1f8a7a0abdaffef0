"""The README's test command runs every test file, and each in one layer (scripts/dev.py's
LAYERS), but for the examples: their GPU tests run in the first layer (skipped without a
device) and their simulator runs in a simulator layer."""

from __future__ import annotations

import fnmatch
import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("simtsafe_dev", ROOT / "scripts" / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _runs(args: list[str], path: str) -> bool:
    """Would pytest, given ``args``, collect the test file ``path`` (relative to the root)?"""
    roots = [a for a in args if not a.startswith("-")]
    ignored = [a.split("=", 1)[1] for a in args if a.startswith("--ignore=")]
    globs = [a.split("=", 1)[1] for a in args if a.startswith("--ignore-glob=")]
    inside = any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)
    dropped = any(path == i or path.startswith(i.rstrip("/") + "/") for i in ignored)
    return inside and not dropped and not any(fnmatch.fnmatch(path, g) for g in globs)


def test_every_test_file_runs_in_one_layer() -> None:
    layers = _dev().LAYERS
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py"))
    assert len(files) > 250
    for path in files:
        where = [k for k, (_title, args, _env) in enumerate(layers) if _runs(args, path)]
        if path.startswith("tests/examples/"):
            assert where[:1] == [0] and len(where) == 2, (path, where)
            assert all(layers[k][2].get("NUMBA_ENABLE_CUDASIM") == "1" for k in where[1:])
        else:
            assert len(where) == 1, (path, where)


def test_the_porting_replays_run_with_the_first_simulator_half() -> None:
    layers = _dev().LAYERS
    for path, layer in [
        ("tests/sim/test_port21_sim.py", 2),
        ("tests/sim/test_porting.py", 2),
        ("tests/sim/test_positions33_sim.py", 3),
        ("tests/sim/test_mma_sim.py", 3),
        ("tests/sim/test_append_sim.py", 2),
    ]:
        assert [k for k, (_t, args, _e) in enumerate(layers) if _runs(args, path)] == [layer]
