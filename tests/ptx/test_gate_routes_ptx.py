"""`simtsafe check` sees every kernel made while importing, wherever it is kept.

Each route hides a kernel with a compile-time (typing) error -- found only
when the gate compiles that kernel -- in a way that module attributes do not
show: in a list, in a dict, as a class attribute, behind a rebound name, made
by a factory of another module at import, or dtype-generic with a bound
TypeVar (the error only in some admitted dtype). The gate must exit 1 with
the finding at the broken line; the twin with the line fixed must exit 0.
Then: an import-time error mid-module, `simtsafe audit` on a factory kernel,
and `simtsafe.check_kernel` for a factory called after import.

In-process (``main([...])``): every route reuses the package name ``kpkg``,
so each run must import its own files afresh.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import simtsafe
from simtsafe.cli import main

HEAD = """\
import numpy as np
import simtsafe as ss
from simtsafe import DisjointSlice, In, thread
"""

BROKEN = "out[i.index + 1] = a[i]  # BROKEN"
FIXED = "out[i] = a[i]  # BROKEN"

SCALE = """
def _scale(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i.index + 1] = a[i]  # BROKEN
"""

FACTORY = (
    HEAD
    + """

def make_blur(radius):
    @ss.kernel
    def blur(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
        i = thread.index_1d()
        if radius > 100:
            out[i.index + 1] = a[i]  # BROKEN
        else:
            out[i] = a[i]
    return blur
"""
)

#: route -> (files of the package, file with the broken line, qualified kernel name).
ROUTES: dict[str, tuple[dict[str, str], str, str]] = {
    "list": (
        {"app.py": HEAD + SCALE + "\nKERNELS = [ss.kernel(_scale)]\n"},
        "app.py",
        "kpkg.app._scale",
    ),
    "dict": (
        {"app.py": HEAD + SCALE + '\nTABLE = {"scale": ss.kernel(_scale)}\n'},
        "app.py",
        "kpkg.app._scale",
    ),
    "class-attribute": (
        {
            "app.py": HEAD
            + """

class Ops:
    @ss.kernel
    def scale(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
        i = thread.index_1d()
        out[i.index + 1] = a[i]  # BROKEN
"""
        },
        "app.py",
        "kpkg.app.Ops.scale",
    ),
    "rebound-name": (
        {
            "app.py": HEAD
            + """

@ss.kernel
def scale(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i.index + 1] = a[i]  # BROKEN


def _launcher(k):
    def launch(out, a):
        k.prepare(grid=ss.cover(out.size, 128), block=128)(out, a)

    return launch


scale = _launcher(scale)  # the module attribute is a plain function now
"""
        },
        "app.py",
        "kpkg.app.scale",
    ),
    "factory-at-import": (
        {
            "factories.py": FACTORY,
            "app.py": "from .factories import make_blur\n\nBLUR = make_blur(1000)\n",
        },
        "factories.py",
        "kpkg.factories.make_blur.<locals>.blur",
    ),
    "generic-bound": (
        {
            "app.py": HEAD
            + """
from typing import TypeVar

F = TypeVar("F", bound=np.inexact)  # float16/32/64, complex64/128


@ss.kernel
def halve(out: DisjointSlice[F], a: In[F]) -> None:
    i = thread.index_1d()
    out[i] = a[i] % 2  # BROKEN for complex dtypes only
"""
        },
        "app.py",
        "kpkg.app.halve",
    ),
}


def _fixed(source: str) -> str:
    return source.replace(BROKEN, FIXED).replace("bound=np.inexact", "bound=np.floating")


def _package(tmp_path: Path, files: dict[str, str], *, broken: bool) -> Path:
    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, source in files.items():
        (pkg / name).write_text(source if broken else _fixed(source))
    return pkg


def _line(path: Path, marker: str = "# BROKEN") -> int:
    return next(n for n, text in enumerate(path.read_text().splitlines(), 1) if marker in text)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_gate_finds_a_kernel_hidden_by_route(
    route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files, where, name = ROUTES[route]
    monkeypatch.chdir(tmp_path)
    pkg = _package(tmp_path, files, broken=True)
    assert main(["check", "kpkg"]) == 1
    out = capsys.readouterr().out
    line = _line(pkg / where)
    assert f"kpkg/{where}:{line}:" in out, out  # relative to the working directory
    assert " SS-typing kernel " in out, out
    assert main(["check", "--format", "json", "kpkg"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert name in report["kernels"], report
    assert {(f["path"], f["line"], f["kernel"]) for f in report["findings"]} == {
        (f"kpkg/{where}", line, name)
    }, report
    if route == "generic-bound":  # compiled for every admitted dtype, not float32 alone
        messages = sorted(f["message"] for f in report["findings"])
        assert [m.rsplit("(", 1)[1] for m in messages] == [
            "compiled for F=complex128)",
            "compiled for F=complex64)",
        ], messages
        assert report["generic"] == 1 and report["bindings"] == 5  # float16/32/64, complex64/128


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_gate_passes_the_fixed_twin(
    route: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files, _, name = ROUTES[route]
    monkeypatch.chdir(tmp_path)
    _package(tmp_path, files, broken=False)
    assert main(["check", "--format", "json", "kpkg"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] == [] and name in report["kernels"], report


def test_generic_kernel_over_a_wide_bound_is_capped_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from simtsafe.gate._gate import MAX_BINDINGS, SCALAR_TYPES, bindings

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "wide.py").write_text(
        HEAD
        + """
from typing import TypeVar

T = TypeVar("T")
U = TypeVar("U", np.float32, np.float64)


@ss.kernel
def copy(out: DisjointSlice[T], a: In[T], b: In[U]) -> None:
    i = thread.index_1d()
    out[i] = a[i]
"""
    )
    assert main(["check", "wide.py"]) == 0
    out = capsys.readouterr().out
    total = len(SCALAR_TYPES) * 2
    assert (
        f"wide.py:{_line(tmp_path / 'wide.py', 'def copy')}: note: kernel 'wide.copy' admits "
        f"{total} dtype bindings; compiled {MAX_BINDINGS} that use every admitted type"
    ) in out, out
    assert f"(cc 9.0; 1 dtype-generic, as {MAX_BINDINGS} bindings)" in out
    import wide  # type: ignore[import-not-found]  # the file above

    chosen, admitted = bindings(wide.copy)
    assert admitted == total and len(chosen) == MAX_BINDINGS
    assert {b["T"] for b in chosen} == set(SCALAR_TYPES)
    assert {b["U"] for b in chosen} == {np.float32, np.float64}


IMPORT_ERROR = (
    HEAD
    + """

@ss.kernel
def early(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i.index + 1] = a[i]  # BROKEN


SETTINGS = load_settings()  # NameError at import


@ss.kernel
def late(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
    i = thread.index_1d()
    out[i] = a[i]
"""
)


def test_import_error_is_a_finding_and_what_came_before_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    pkg = _package(
        tmp_path,
        {"half.py": IMPORT_ERROR, "other.py": HEAD + SCALE + "\nK = ss.kernel(_scale)\n"},
        broken=True,
    )
    assert main(["check", "kpkg"]) == 1
    out = capsys.readouterr().out
    half, other = pkg / "half.py", pkg / "other.py"
    assert (
        f"kpkg/half.py:{_line(half, 'load_settings')}:1: SS-import importing kpkg.half failed: "
        "NameError: name 'load_settings' is not defined; the kernels made before this line are "
        "checked"
    ) in out, out
    assert f"kpkg/half.py:{_line(half)}:" in out  # `early`, made before the error
    assert f"kpkg/other.py:{_line(other)}:" in out  # the next module
    assert "3 finding(s) in 3 file(s): 2 kernel(s) compiled to PTX" in out
    (pkg / "half.py").write_text(_fixed(IMPORT_ERROR).replace("load_settings()", "None"))
    (pkg / "other.py").write_text(_fixed(HEAD + SCALE + "\nK = ss.kernel(_scale)\n"))
    assert main(["check", "kpkg"]) == 0
    assert "3 kernel(s) compiled to PTX" in capsys.readouterr().out


def test_syntax_error_is_one_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text("def f(:\n    pass\n")
    assert main(["check", "bad.py"]) == 1
    out = capsys.readouterr().out
    assert out.count("SS-syntax") == 1 and "bad.py:1:" in out, out


def test_audit_lists_a_factory_kernels_unsafe_region(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    factory = FACTORY.replace(
        "            out[i] = a[i]\n",
        "            out[i] = a[i]\n"
        '        with ss.unsafe("SAFETY: one barrier every thread of the block reaches"):\n'
        "            cuda.syncthreads()\n",
    ).replace("import numpy as np\n", "import numpy as np\nfrom numba import cuda\n")
    monkeypatch.chdir(tmp_path)
    pkg = _package(
        tmp_path,
        {
            "factories.py": factory,
            "app.py": "from .factories import make_blur\n\nB = make_blur(1)\n",
        },
        broken=False,
    )
    assert main(["audit", "kpkg"]) == 0  # a directory: no AssertionError
    out = capsys.readouterr().out
    line = _line(pkg / "factories.py", "SAFETY:")
    assert (
        f"kpkg/factories.py:{line}: kpkg.factories.make_blur.<locals>.blur: SAFETY: one barrier "
        "every thread of the block reaches"
    ) in out, out
    assert "1 unsafe region(s) in 1 kernel(s) and 0 helper(s)" in out
    assert "kernels a factory makes after import are not listed" in out


def test_check_kernel_checks_a_kernel_made_after_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "late_factory.py").write_text(FACTORY)
    # The gate cannot see what the factory makes later, and says so.
    assert main(["check", "late_factory.py"]) == 0
    out = capsys.readouterr().out
    assert "0 kernel(s) compiled to PTX" in out
    assert "kernels a factory makes after import are checked at their first compile" in out
    assert "simtsafe.check_kernel(kernel)" in out
    import late_factory  # type: ignore[import-not-found]  # the file above

    (finding,) = simtsafe.check_kernel(late_factory.make_blur(1000))
    assert finding.code == "SS-typing"
    assert finding.kernel == "late_factory.make_blur.<locals>.blur"
    assert (finding.path, finding.line) == ("late_factory.py", _line(tmp_path / "late_factory.py"))
    assert "ThreadIndex witness" in finding.message
    assert simtsafe.check_kernel(late_factory.make_blur(1)) == []
    with pytest.raises(TypeError, match="checks a @simtsafe.kernel or @simtsafe.device"):
        simtsafe.check_kernel(late_factory.make_blur)  # type: ignore[arg-type]


def test_an_error_inside_simtsafe_is_a_finding_and_json_stays_valid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from simtsafe._compose import Kernel
    from simtsafe.gate import _gate

    monkeypatch.chdir(tmp_path)
    (tmp_path / "one.py").write_text(
        HEAD + SCALE.replace(BROKEN, FIXED) + "\nK = ss.kernel(_scale)\n"
    )

    def explode(self: object, cc: object = None, layouts: object = None) -> str:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(Kernel, "ptx", explode)
    assert main(["check", "--format", "json", "one.py"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)["findings"]
    assert finding["code"] == "SS-internal" and finding["kernel"] == "one._scale"
    assert "checking 'one._scale' raised ZeroDivisionError: boom" in finding["message"]
    assert finding["path"] == "one.py" and finding["line"] == _line(
        tmp_path / "one.py", "def _scale"
    )

    def crash(*args: object, **kwargs: object) -> None:
        raise KeyError("gate bug")

    monkeypatch.setattr(_gate, "check_paths", crash)
    assert main(["check", "--format", "json", "one.py"]) == 1
    captured = capsys.readouterr()
    (finding,) = json.loads(captured.out)["findings"]
    assert finding["code"] == "SS-internal" and "KeyError" in finding["message"]
    assert "Traceback" in captured.err  # for the bug report, on stderr only
