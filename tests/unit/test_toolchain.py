"""Recognising numba-cuda's "library not found" errors (simtsafe/_toolchain.py)."""

from __future__ import annotations

import pytest

from simtsafe import SafetyError
from simtsafe._toolchain import CudaLibrariesMissing, invoked_as_cli, missing_library


def _error_class(module: str, name: str, base: type[Exception]) -> type[Exception]:
    return type(name, (base,), {"__module__": module})


NotFound = _error_class(
    "cuda.pathfinder._dynamic_libs.load_dl_common", "DynamicLibNotFoundError", RuntimeError
)


def test_pathfinder_error_names_the_library_and_the_fix() -> None:
    missing = missing_library(NotFound('Failure finding "libnvvm.so.4": No such file: ...'))
    assert isinstance(missing, CudaLibrariesMissing) and isinstance(missing, ImportError)
    assert str(missing) == (
        "simtsafe: a CUDA library numba-cuda compiles with is not installed (libnvvm.so.4 not "
        'found): pip install "simtsafe[cu13]" (for a CUDA 12 driver: "simtsafe[cu12]")'
    )


def test_found_through_the_cause_chain_and_translated_errors() -> None:
    try:
        try:
            raise _error_class("numba.cuda.cudadrv.error", "NvvmSupportError", ImportError)(
                "libNVVM is not available"
            )
        except ImportError:
            raise SafetyError("kernel 'k': Numba cannot type ...") from None
    except SafetyError as exc:
        missing = missing_library(exc)
    assert missing is not None and "(libNVVM is not available not found)" in str(missing)
    libdevice = RuntimeError("Missing libdevice file.\n``cuda-nvcc`` and ``cuda-nvrtc``")
    assert "(libdevice not found)" in str(missing_library(libdevice))


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("something else"),
        _error_class("my_lib", "DynamicLibNotFoundError", RuntimeError)("a user class"),
        ValueError("Failure finding x"),
    ],
)
def test_other_errors_are_not_mistaken_for_missing_libraries(exc: Exception) -> None:
    assert missing_library(exc) is None


def test_invoked_as_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.argv", ["/venv/bin/simtsafe", "check", "x"])
    assert invoked_as_cli()
    monkeypatch.setattr("sys.argv", ["-m"])
    monkeypatch.setattr("sys.orig_argv", ["python", "-m", "simtsafe", "check"])
    assert invoked_as_cli()
    monkeypatch.setattr("sys.argv", ["app.py"])
    monkeypatch.setattr("sys.orig_argv", ["python", "app.py"])
    assert not invoked_as_cli()
