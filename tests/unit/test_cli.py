"""The `simtsafe` command line: contracts/ drift, audit, check."""

from __future__ import annotations

from pathlib import Path

import pytest

from simtsafe.cli import generated_files, main

ROOT = Path(__file__).resolve().parents[2]


def test_committed_contracts_match_the_code() -> None:
    files = generated_files(ROOT / "examples")
    for name, text in files.items():
        committed = (ROOT / "contracts" / name).read_text()
        assert committed == text, f"contracts/{name} drifted: run `simtsafe schema` and commit"


def test_lock_lists_every_example_kernel() -> None:
    import json

    lock = json.loads(generated_files(ROOT / "examples")["examples.lock.json"])["kernels"]
    assert {"vecadd.vecadd", "saxpy.saxpy", "jacobi.jacobi_step", "matmul.matmul"} <= set(lock)
    assert lock["vecadd.vecadd"]["contract"]["block"] == [256, 1, 1]


def test_schema_check_fails_on_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "contracts"
    assert main(["schema", "--out", str(out), "--examples", str(ROOT / "examples")]) == 0
    assert main(["schema", "--check", "--out", str(out), "--examples", str(ROOT / "examples")]) == 0
    (out / "launch_config.schema.json").write_text("{}\n")
    assert main(["schema", "--check", "--out", str(out), "--examples", str(ROOT / "examples")]) == 1
    assert "launch_config.schema.json is out of date" in capsys.readouterr().out


RAW_LAUNCHES = """
import simtsafe as ss
def go(k, a):
    k.unchecked[1, 32](a)                 # flagged
    with ss.unsafe("SAFETY: block matches the kernel's reqntid; a is a fresh buffer"):
        k.unchecked[1, 32](a)             # fine
"""


def test_check_flags_raw_launches_outside_unsafe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = tmp_path / "app.py"
    app.write_text(RAW_LAUNCHES)
    assert main(["check", str(app)]) == 1
    out = capsys.readouterr().out
    assert f"{app}:4:5: SS-raw-launch raw launch" in out
    assert ":6:" not in out
    app.write_text(
        RAW_LAUNCHES.replace("    k.unchecked[1, 32](a)                 # flagged\n", "")
    )
    assert main(["check", str(app)]) == 0


def test_audit_lists_unsafe_regions_with_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(ROOT / "tests" / "gpu" / "gpu_kernels.py")]) == 0
    out = capsys.readouterr().out
    assert "shared_copy: SAFETY: each thread writes and reads back only its own slot" in out
    assert "3 unsafe region(s)" in out
    assert "coop_reverse: SAFETY: every thread reaches grid.sync()" in out
