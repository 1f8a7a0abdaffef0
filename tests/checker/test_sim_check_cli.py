"""``simtsafe sim-check``: arguments from annotations or a spec, report, exit status."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simtsafe.cli import main
from simtsafe.sim._cli import UsageError, parse_args_spec

RAW = str(Path(__file__).with_name("corpus_raw.py"))


def test_raw_kernel_with_findings_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["sim-check", f"{RAW}:hist_global_bug", "--grid", "2", "--block", "64",
         "--args", "i32[16]=0,i32[128]=randint:0:16"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert "race on hist[" in out and "hist[data[i]] += 1  # BUG" in out


def test_raw_kernel_clean_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["sim-check", f"{RAW}:hist_global_ok", "--grid", "2", "--block", "64",
         "--args", "i32[16]=0,i32[128]=randint:0:16", "--format", "json"]
    )  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["ok"] is True and data["stats"]["threads"] == 128


def test_simtsafe_kernel_arguments_from_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--grid", "2", "--block", "64", "--size", "128"]
    assert main(["sim-check", "tests.checker.corpus_ss:ss_scan_bug", *args]) == 1
    assert "race on shared[" in capsys.readouterr().out
    assert main(["sim-check", "tests.checker.corpus_ss:ss_scan_ok", *args]) == 0
    assert "no findings" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ([f"{RAW}:hist_global_bug", "--grid", "2", "--block", "64"], "--args"),
        ([f"{RAW}:nope", "--grid", "1", "--block", "1", "--args", "i32:1"], "no attribute"),
        ([f"{RAW}:hist_global_bug", "--grid", "2", "--block", "64", "--args", "q9[3]"], "unknown type"),
        ([f"{RAW}:hist_global_bug", "--grid", "2", "--block", "64", "--args", "i32[16]"], "takes 2"),
        (["no_colon", "--grid", "1", "--block", "1"], "module:kernel"),
    ],
)  # fmt: skip
def test_usage_errors_exit_2(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sim-check", *argv]) == 2
    assert fragment in capsys.readouterr().err


def test_step_limit_option(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(Path(__file__).with_name("semantics_kernels.py"))
    code = main(["sim-check", f"{path}:spin", "--grid", "1", "--block", "1",
                 "--args", "i32[1]=0", "--max-steps", "100"])  # fmt: skip
    assert code == 1 and "INCOMPLETE" in capsys.readouterr().out


def test_args_spec() -> None:
    rng = np.random.default_rng(0)
    a, b, c, d, e = parse_args_spec("f32[4,2],i32[8],u8[3]=7,i64[5]=arange,f64:0.5", rng)
    assert a.shape == (4, 2) and a.dtype == np.float32
    assert b.dtype == np.int32 and b.min() >= 0 and b.max() < 8
    assert list(c) == [7, 7, 7] and list(d) == [0, 1, 2, 3, 4]
    assert e == np.float64(0.5) and isinstance(e, np.float64)
    with pytest.raises(UsageError, match="neither"):
        parse_args_spec("f32(3)", rng)
