"""Divergence analysis of a compiled kernel: which values and blocks are uniform, at what scope.

The compiled form (``lowering._irform``) is the kernel after LLVM inlined
every helper and promoted locals to SSA values; every way a Python source
can be spelled has become the same few operations here, and exceptions are
ordinary branches to a ``ret``.

Levels, from most to least uniform: ``GRID`` (the same in every thread of
the launch), ``BLOCK``, ``WARP``, ``THREAD`` (may differ between any two
threads). A value's level is the join of

* its *sources*: kernel arguments and ``ntid``/``nctaid`` are GRID;
  ``ctaid`` is BLOCK; ``tid``, ``laneid``, clocks, any other special
  register, results of atomics, inline assembly and unknown calls are THREAD,
  except the thread's warp within its block where the contract's exact block
  makes it so (``WarpIndex``): ``tid.x >> k`` (k >= 5) and its kin,
  ``tid.y``, ``tid.z`` are WARP;
  a load is THREAD unless it reads memory nothing writes during the launch
  at an address of a lower level: constant memory, or an input's data that
  no store, atomic or unknown code can reach, read at a constant offset the
  contract guarantees in range (a read past an input's end is not checked
  and may land in an output other threads write);
* its operands (SSA data flow), and the declared level of a collective's
  result (``!ss.uniform``; only simtsafe's lowering emits it);
* *sync dependence*: a phi's value depends on the edges threads arrive by;
  an edge's level is that of the branch taking it and of its block's
  execution;
* *temporal divergence*: a value defined in a loop and used outside it
  carries the level of the loop's exits (threads that leave at different
  iterations see different values).

A block's *control level* is the join of the branch levels it is (transitively)
control dependent on: every thread of a scope at least as wide as that level
runs the block the same number of times. A barrier or collective of scope S
is legal only in a block whose control level is at most S's level -- every
thread of S reaches it, or none does.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..lowering._irform import Block, FunctionForm, Instr, phi_values, split_operands
from ._cfg import Graph
from ._feasible import feasible_successors
from ._private import private_allocas
from ._ranges import InputInfo, Ranges

__all__ = [
    "BLOCK",
    "GRID",
    "LEVEL_NAMES",
    "SCOPE_LEVEL",
    "THREAD",
    "UNKNOWN",
    "WARP",
    "Divergence",
    "analyze",
    "callee_scope",
    "convergent_scope",
    "pointer_roots",
    "warp_uniform_axes",
    "written_by",
]

GRID, BLOCK, WARP, THREAD = 0, 1, 2, 3
#: A block shape (x, y, z).
Dim3 = tuple[int, int, int]
LEVEL_NAMES = ("grid-uniform", "block-uniform", "warp-uniform", "thread-dependent")
#: ``coalesced``: the participants are the lanes that make the call together, by
#: construction (``activemask``: an append buffer's aggregated claim), so any control
#: flow reaches it soundly.
SCOPE_LEVEL = {"grid": GRID, "block": BLOCK, "warp": WARP, "coalesced": THREAD}

#: Provenance of a pointer that the analysis cannot follow.
UNKNOWN = "<unknown>"

#: Functions whose result is their operands' (and whose writes are their pointer operands'
#: memory): LLVM's and libdevice's, and numba-cuda's float16/bf16/fp8 C++ shims whose
#: status is 0 by their source (``lowering._shims``: renamed ``__ss.shim.NAME``).
_PURE_PREFIXES = ("llvm.", "__nv_", "__ss.shim.")
#: The analysed copy's float-to-integer conversions (``lowering._irform._saturating``: PTX's
#: ``cvt.rzi`` saturates where LLVM's ``fptosi``/``fptoui`` give poison): pure, and read by
#: the warp-index rule as the conversions they stand for.
_SATURATING = frozenset(
    f"llvm.nvvm.{src}2{dst}.rz" for src in ("f", "d") for dst in ("i", "ui", "ll", "ull")
)
#: Numba's atomic read-modify-writes that are calls (float add: an NVVM intrinsic, renamed by
#: lowering._irform; float min/max and the f64 add of old GPUs: Numba's own functions): each
#: reads and writes what its pointer points to, atomically, and nothing else.
ATOMIC_CALLS = ("__ss.nvvm.atomic.", "___numba_atomic_")
_NO_VALUE = (
    "llvm.lifetime.",
    "llvm.dbg.",
    "llvm.assume",
    "llvm.experimental.noalias",
    "__ss.at.",  # call-site markers (lowering._irform)
    "__ss.own.",  # a witness store's address (lowering._irform); the store follows it
    "__ss.witness.",  # a block-local witness's index (lowering._irform): the value itself
    "__ss.fill.",  # a fill's write's address (lowering._irform); the write follows it
    "__ss.fillstart",  # where an asynchronous fill starts (lowering._irform): its tile
)
_WRITES_DEST = ("llvm.memcpy", "llvm.memmove", "llvm.memset")
_SREG = "llvm.nvvm.read.ptx.sreg."
_GRID_SREGS = (
    "ntid.",
    "nctaid.",
    "nclusterid.",
    "cluster_nctaid.",
    "cluster_nctarank",
    "nsmid",
    "warpsize",  # 32 on every GPU (attack round 26: an op using it was refused as impure)
)
_BLOCK_SREGS = ("ctaid.", "clusterid.", "cluster_ctaid.", "cluster_ctarank")
#: NVVM operations every thread of a block / warp must reach together (raw: Tier 2).
BLOCK_CONVERGENT = ("__ss.nvvm.barrier", "__ss.nvvm.bar.sync", "__ss.nvvm.bar.red")
WARP_CONVERGENT = (
    "__ss.nvvm.shfl.",
    "__ss.nvvm.vote.",
    "__ss.nvvm.match.",
    "__ss.nvvm.bar.warp.sync",
    "__ss.nvvm.redux.sync",
)
GRID_CONVERGENT = ("cudaCGSynchronize", "__ss.grid.sync")
_ASM_WRITES = ("st.", "atom", "red.", "cp.", "stmatrix", "mbarrier", "membar", "fence")
_PURE_ASM_OPS = ("add.", "sub.", "mul.", "fma.", "neg.", "abs.", "min.", "max.", "cvt.", "mov.b")


def convergent_scope(instr: Instr) -> str | None:
    """The scope a call synchronizes (``"block"``, ``"warp"``, ``"grid"``; ``"warpgroup"``
    for wgmma, no barrier), or None."""
    name = instr.callee
    if instr.opcode != "call" or name is None:
        return None
    if name == "asm":
        text = instr.asm or ""
        if "bar.sync" in text or "barrier" in text:
            return "block"
        # simtsafe.wgmma's operations need their whole warpgroup: the site's tag asks for
        # block-uniform control (lowering/_wgmma). Not "block": they are no barrier.
        if "wgmma." in text:
            return "warpgroup"
        # simtsafe.mma's tensor-core operations need every lane of the warp (lowering/_mma).
        return "warp" if "mma.sync" in text or "ldmatrix.sync" in text else None
    return callee_scope(name)


def callee_scope(name: str) -> str | None:
    """The scope a call of the function ``name`` synchronizes, or None."""
    if name.startswith(BLOCK_CONVERGENT):
        return "block"
    if name.startswith(WARP_CONVERGENT):
        return "warp"
    if name.startswith(GRID_CONVERGENT):
        return "grid"
    return None


@dataclass(frozen=True)
class Reason:
    """Why a value (or a block) has its level: the kind of source and where."""

    kind: str  # thread-id, block-id, load, read-range, atomic, asm, call, collective, join...
    instr: Instr | None
    via: str | None = None  # the operand (or branch block) the level came through
    #: read-range: (input parameter, elements the read needs, or 0 for a computed index)
    read: tuple[str, int] | None = None


@dataclass
class Divergence:
    """The analysis' result for one function."""

    form: FunctionForm
    graph: Graph
    levels: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, Reason] = field(default_factory=dict)
    branch: dict[str, int] = field(default_factory=dict)  # block -> its branch's level
    control: dict[str, int] = field(default_factory=dict)  # block -> control level
    defs: dict[str, Instr] = field(default_factory=dict)
    def_block: dict[str, str] = field(default_factory=dict)
    blocks: dict[str, Block] = field(default_factory=dict)
    immutable: frozenset[str] = frozenset()
    #: data pointer ("%a.4") -> the 1D input it points into
    readable: dict[str, InputInfo] = field(default_factory=dict)

    def level(self, value: str | None) -> int:
        return GRID if value is None else self.levels.get(value, GRID)

    def edge_level(self, src: str) -> int:
        lv = self.control.get(src, GRID)
        if len(self.graph.succs.get(src, ())) > 1:
            lv = max(lv, self.branch.get(src, GRID))
        return lv

    def control_sources(
        self, blocks: Iterable[str], skip_site: int | None = None
    ) -> dict[str, int]:
        """Branch blocks that the given blocks are (transitively) control dependent on.

        Branches emitted by the collective ``skip_site`` itself are passed
        through, not counted: simtsafe's lowering of a collective is trusted
        to bring every participating thread through its own branches.
        """
        out: dict[str, int] = {}
        seen: set[str] = set()
        work = list(blocks)
        while work:
            b = work.pop()
            for dep in self.graph.deps.get(b, ()):
                if dep in seen:
                    continue
                seen.add(dep)
                work.append(dep)
                term = self.blocks[dep].terminator
                if skip_site is not None and term.site is not None and term.site[2] == skip_site:
                    continue
                out[dep] = self.branch.get(dep, GRID)
        return out


# --------------------------------------------------------------------------- memory


def _select_values(ins: Instr) -> list[str]:
    """The local values a ``select`` chooses between (not its condition)."""
    parts = split_operands(ins.text.partition("select ")[2])
    return [w for p in parts[1:3] for w in p.split(" ")[-1:] if w.startswith("%")]


def _provenance(form: FunctionForm) -> tuple[dict[str, frozenset[str]], set[str]]:
    """Pointer provenance of every value, and the provenances that may be written."""
    prov: dict[str, frozenset[str]] = {p: frozenset({p}) for p in form.params}
    written: set[str] = set()
    instrs = [i for b in form.blocks for i in b.instrs]
    changed = True
    while changed:
        changed = False
        for ins in instrs:
            if ins.result is None:
                continue
            if ins.opcode == "alloca":
                new: frozenset[str] = frozenset({ins.result})
            elif ins.callee == "asm" and _COPY_ASM_RE.match(ins.asm or "") and ins.operands:
                new = prov.get(ins.operands[-1], frozenset())  # a copy: its operand's
            elif (ins.callee or "").startswith("__ss.witness.") and ins.operands:
                new = prov.get(ins.operands[-1], frozenset())  # the index itself
            elif ins.opcode == "select":
                # One of its two values; the condition chooses, it points nowhere.
                chosen = [prov.get(v, frozenset()) for v in _select_values(ins)]
                named = frozenset(g for g in ins.globals if g in form.globals)  # select c, @g, %p
                new = named.union(*chosen)
            elif ins.opcode == "call" and (ins.callee or "").startswith(_SREG):
                # A special register (%tid, %ctaid, ...) is a number that points nowhere,
                # like a constant: an address computed from it and a tile's address is the
                # tile's (ldmatrix takes an integer address: offset + ptrtoint @tile).
                new = frozenset()
            elif ins.opcode in ("load", "atomicrmw", "cmpxchg") or (
                ins.opcode == "call" and not (ins.callee or "").startswith("__ss.uniform.")
            ):
                new = frozenset({UNKNOWN})
            elif ins.opcode == "getelementptr":
                # The address is its base's plus an offset: the indices point nowhere.
                if ins.pointers:
                    new = prov.get(ins.pointers[0], frozenset())
                else:
                    new = frozenset(g for g in ins.globals if g in form.globals)
            else:
                acc: set[str] = set(g for g in ins.globals if g in form.globals)
                for op in ins.operands:
                    acc |= prov.get(op, frozenset())
                new = frozenset(acc)
            if prov.get(ins.result) != new:
                prov[ins.result] = new
                changed = True

    def of(ptr: str) -> frozenset[str]:
        p = prov.get(ptr, frozenset())
        return p if p else frozenset({UNKNOWN})

    for ins in instrs:
        written |= written_by(ins, of)
    return prov, written


def written_by(ins: Instr, of: Callable[[str], frozenset[str]]) -> frozenset[str]:
    """The provenances ``ins`` may write (``of``: a pointer's provenance; empty: none)."""
    if ins.opcode in ("store", "atomicrmw", "cmpxchg"):
        if ins.pointers:
            return of(ins.pointers[-1])
        # a store to a global or constant expression address
        return frozenset(ins.globals) or frozenset({UNKNOWN})
    if ins.opcode != "call":
        return frozenset()
    name = ins.callee or ""
    if name.startswith(_NO_VALUE) or name.startswith(_SREG) or name.startswith("__ss.uniform."):
        return frozenset()
    if name == "asm":
        text = ins.asm or ""
        if any(op in text for op in _ASM_WRITES) or "memory" in ins.text:
            return frozenset({UNKNOWN})
        return frozenset()
    if name.startswith(("__ss.nvvm.ldg", "__ss.nvvm.ldu")) or name == "vprintf":
        return frozenset()  # loads; print's formatting reads its argument buffer only
    if name.startswith(ATOMIC_CALLS):
        return frozenset().union(*(of(p) for p in ins.pointers))
    if name.startswith(_PURE_PREFIXES) and not name.startswith(_WRITES_DEST):
        # e.g. __nv_sincosf(x, ptr, ptr) writes its results
        return frozenset().union(*(of(p) for p in ins.pointers))
    if name.startswith(_WRITES_DEST):
        return of(ins.pointers[0]) if ins.pointers else frozenset()
    if name.startswith("__ss.nvvm.") and not ins.pointers:
        return frozenset()  # barriers, shuffles, votes, fences: no memory argument
    return frozenset({UNKNOWN})  # an unknown function may write anything it can reach


def pointer_roots(form: FunctionForm) -> Callable[[str], frozenset[str]]:
    """A pointer value's provenance in ``form`` (``UNKNOWN`` when it cannot be followed)."""
    prov, _ = _provenance(form)

    def of(ptr: str) -> frozenset[str]:
        p = prov.get(ptr, frozenset())
        return p if p else frozenset({UNKNOWN})

    return of


# --------------------------------------------------------------------------- levels


def _sreg_level(name: str, block: Dim3 | None = None) -> int:
    reg = name[len(_SREG) :]
    if reg.startswith(_GRID_SREGS):
        return GRID
    if reg.startswith(_BLOCK_SREGS):
        return BLOCK
    if reg in ("tid.y", "tid.z") and reg[-1] in warp_uniform_axes(block):
        return WARP
    return THREAD  # tid, laneid, warpid, lanemask, clocks, smid...


# --------------------------------------------------------------------------- warp index


#: A block of unknown width the launch proves one-dimensional (``warp_uniform_axes``).
ONE_D_BLOCK: Dim3 = (0, 1, 1)


def warp_uniform_axes(block: Dim3 | None) -> str:
    """The axes ``a`` for which ``tid.a // 32`` (``"x"``) or ``tid.a`` itself (``"y"``,
    ``"z"``) is the same in every lane of a warp, in every launch with ``block``.

    A warp is 32 consecutive linear thread ids, ``x + bx * (y + by * z)``, starting at
    a multiple of 32. With ``bx % 32 == 0`` each warp lies inside one row: one ``y`` and
    ``z``, and ``x`` runs over ``[32 q, 32 q + 32)``, so ``x >> k`` (k >= 5) is one
    value. With ``by * bz == 1`` the linear id is ``x`` itself: the same. With
    ``bx * by % 32 == 0`` each warp lies inside one ``z`` plane. Without an exact
    block (``None``) nothing is known: ``""``. ``ONE_D_BLOCK`` (``bx`` 0: unknown) is a
    block the launch proves 1D (``domain=1``, which ``prepare`` enforces): ``tid.y`` and
    ``tid.z`` are 0 and the linear id is ``x``, so every axis is warp-uniform.
    """
    if block is None:
        return ""
    bx, by, bz = block
    axes = ""
    if bx % 32 == 0 or by * bz == 1:
        axes += "x"
    if bx % 32 == 0:
        axes += "y"
    if bx * by % 32 == 0:
        axes += "z"
    return axes


_LOCAL_RE = r"(%[-\w.$]+|%\"[^\"]+\")"
_INT_BINOP_RE = re.compile(
    r"^(?:lshr|ashr|udiv|sdiv|and|add|sub)\s+(?:(?:exact|nuw|nsw|disjoint)\s+)*i(\d+)\s+"
    + _LOCAL_RE
    + r",\s*(-?\d+)$"
)
_ICMP_RE = re.compile(r"^icmp\s+(?:samesign\s+)?([a-z]+)\s+i(\d+)\s+" + _LOCAL_RE + r",\s*(-?\d+)$")
_FP_BINOP_RE = re.compile(
    r"^(?:fmul|fdiv)\s+(?:[a-z]+\s+)*(?:float|double)\s+" + _LOCAL_RE + r",\s*(\S+)$"
)


def _body(ins: Instr) -> str:
    """The instruction's text after ``%r = `` and before its metadata."""
    text = ins.text.partition(" = ")[2] if ins.result is not None else ins.text
    return text.split(", !", 1)[0].strip()


def _fp_constant(text: str) -> float | None:
    try:
        if text.startswith("0x") and len(text) == 18:  # a double's bits, as LLVM prints them
            return float(struct.unpack(">d", bytes.fromhex(text[2:]))[0])
        return float(text)
    except ValueError:
        return None


class WarpIndex:
    """Values the same in every lane of a warp because they are ``tid.x`` over 32 or more.

    Only where ``"x"`` is in ``warp_uniform_axes(block)``: within a warp ``tid.x`` then
    lies in one *aligned run* ``[32 q, 32 q + 32)``. ``tid.x`` is in ``[0, bx)`` with
    ``bx <= 1024`` (no device allows more).

    * *Copies* of ``tid.x`` (``copy``): ``tid.x`` through ``zext``, ``sext`` and ``trunc``
      to 16 bits or more, each of which keeps a value in ``[0, 1024)``: non-negative.
    * *Aligned* values (``aligned``): copies, and an aligned value through ``zext``,
      ``sext``, ``trunc`` (to 6 bits or more) or ``add``/``sub`` of a constant multiple of
      32. Within a warp they lie in one aligned run of the type's values, read unsigned
      or signed alike (2**w and 2**(w-1) are multiples of 32, so no run straddles a wrap
      or the sign change).

    One value in every lane of the warp (``warp_uniform``):

    * ``lshr``/``ashr`` of an aligned value by a constant k with 5 <= k < width,
      ``udiv`` by a constant 2**k (k >= 5): the run's common high bits;
      ``sdiv`` of a copy by 2**k (k >= 5): on a non-negative value it is ``udiv``;
    * ``and`` of an aligned value with a constant whose low 5 bits are 0;
    * ``icmp`` of an aligned value with a constant that does not split a run:
      ``ult``/``uge``/``slt``/``sge`` K with K % 32 == 0, ``ule``/``ugt``/``sle``/``sgt``
      K with (K + 1) % 32 == 0 (what LLVM makes of ``tid.x // 32 == c``);
    * ``fptosi``/``fptoui`` of ``fmul X, 2**-k`` or ``fdiv X, 2**k`` (k >= 5), where X
      is ``uitofp``/``sitofp`` of a copy into ``float`` or ``double``: X is ``tid.x``
      exactly (< 2**24), scaling by a power of two is exact, and truncating a
      non-negative number is ``tid.x >> k`` (``int(threadIdx.x / 32)``).
    """

    def __init__(self, defs: Mapping[str, Instr], block: Dim3 | None) -> None:
        self.defs = defs
        self.on = "x" in warp_uniform_axes(block)

    def _walk(self, name: str, shifts: bool) -> bool:
        for _depth in range(16):
            ins = self.defs.get(name)
            if ins is None or (ins.opcode != "call" and len(ins.operands) != 1):
                return False
            op = ins.opcode
            if op == "call":
                return ins.callee == _SREG + "tid.x" and not ins.operands
            if op == "trunc":
                to = _body(ins).rpartition(" to ")[2]
                # 6 bits at least: the sign bit's weight 2**(w-1) must be a multiple of 32
                # (an i5 run [0, 32) is [-16, 16) read signed: it straddles the sign change)
                least = 6 if shifts else 16
                if not (to.startswith("i") and to[1:].isdigit() and int(to[1:]) >= least):
                    return False
            elif op in ("add", "sub") and shifts:
                m = _INT_BINOP_RE.match(_body(ins))
                if m is None or m.group(2) != ins.operands[0] or int(m.group(3)) % 32:
                    return False
            elif op not in ("zext", "sext"):
                return False
            name = ins.operands[0]
        return False

    def copy(self, name: str) -> bool:
        return self._walk(name, shifts=False)

    def aligned(self, name: str) -> bool:
        return self._walk(name, shifts=True)

    def warp_uniform(self, ins: Instr) -> bool:
        if not self.on or len(ins.operands) != 1:
            return False
        op = ins.opcode
        if op in ("lshr", "ashr", "udiv", "sdiv", "and"):
            m = _INT_BINOP_RE.match(_body(ins))
            if m is None or m.group(2) != ins.operands[0]:
                return False
            width, c = int(m.group(1)), int(m.group(3))
            if op == "sdiv":
                return c >= 32 and c & (c - 1) == 0 and self.copy(m.group(2))
            if not self.aligned(m.group(2)):
                return False
            if op in ("lshr", "ashr"):
                return 5 <= c < width
            if op == "and":
                return c & 31 == 0
            return c >= 32 and c & (c - 1) == 0
        if op == "icmp":
            m = _ICMP_RE.match(_body(ins))
            if m is None or m.group(3) != ins.operands[0] or not self.aligned(m.group(3)):
                return False
            pred, k = m.group(1), int(m.group(4))
            if pred in ("ult", "uge", "slt", "sge"):
                return k % 32 == 0
            return pred in ("ule", "ugt", "sle", "sgt") and (k + 1) % 32 == 0
        if op in ("fptosi", "fptoui") or (ins.callee or "") in _SATURATING:
            scaled = self.defs.get(ins.operands[0])
            if scaled is None or scaled.opcode not in ("fmul", "fdiv"):
                return False
            m = _FP_BINOP_RE.match(_body(scaled))
            if m is None or len(scaled.operands) != 1 or m.group(1) != scaled.operands[0]:
                return False
            factor = _fp_constant(m.group(2))
            if factor is None or factor <= 0:
                return False
            scale = factor if scaled.opcode == "fdiv" else 1 / factor
            k = math.frexp(scale)[1] - 1
            if scale != 2.0**k or k < 5:
                return False
            conv = self.defs.get(m.group(1))
            return (
                conv is not None
                and conv.opcode in ("uitofp", "sitofp")
                and len(conv.operands) == 1
                and _body(conv).rpartition(" to ")[2] in ("float", "double")
                and self.copy(conv.operands[0])
            )
        return False


#: Sizes in bytes of the scalar types a proven-in-range read may load.
_SCALAR_BYTES = {
    "i8": 1,
    "i16": 2,
    "i32": 4,
    "i64": 8,
    "half": 2,
    "bfloat": 2,
    "float": 4,
    "double": 8,
}
_GEP_FLAGS = ("inbounds", "nuw", "nusw")


def _gep_step(ins: Instr) -> tuple[str, int] | None:
    """``(base, byte offset)`` of a one-index GEP over a scalar type with a constant index."""
    head, _, rest = ins.text.partition("getelementptr ")
    words = rest.split(" ")
    while words and words[0] in _GEP_FLAGS:
        words.pop(0)
    parts = split_operands(" ".join(words))
    if len(parts) != 3 or len(ins.pointers) != 1:
        return None
    size = _SCALAR_BYTES.get(parts[0].strip())
    index = parts[2].strip().split(" ")
    if size is None or len(index) != 2 or not index[0].startswith("i"):
        return None
    try:
        return ins.pointers[0], size * int(index[1])
    except ValueError:
        return None  # a computed index


#: ``mov.b64 $0, $1;``: a copy (lowering hides a scratch address from NVVM with it).
_COPY_ASM_RE = re.compile(r"^\s*mov\.b(?:32|64)\s+\$0\s*,\s*\$1\s*;?\s*$")
_ASM_LOAD_RE = re.compile(
    r"^\s*ld\.global(?:\.(?:ca|cg|cs|lu|cv|nc))?\.[bfsu](8|16|32|64)\s+\$0\s*,\s*\[\$1\]\s*;?\s*$"
)


def _asm_load_bytes(text: str) -> int | None:
    """The bytes one ``ld.global[.hint].T $0, [$1];`` (numba's ``cuda.ldcg``...) reads."""
    m = _ASM_LOAD_RE.match(text)
    return int(m.group(1)) // 8 if m else None


def _loaded_bytes(ins: Instr) -> int | None:
    """How many bytes a ``load`` reads (scalars, and vectors of them: ``<2 x float>``)."""
    words = ins.text.partition("load ")[2].split(" ")
    while words and words[0] in ("volatile", "atomic"):
        words.pop(0)
    if len(words) >= 3 and words[0].startswith("<") and words[1] == "x":
        lanes, scalar = words[0][1:], words[2].rstrip(",").rstrip(">")
        size = _SCALAR_BYTES.get(scalar)
        return size * int(lanes) if size is not None and lanes.isdigit() else None
    return _SCALAR_BYTES.get(words[0].rstrip(",")) if words else None


class _Solver:
    def __init__(
        self,
        form: FunctionForm,
        graph: Graph,
        trust_memory: bool = True,
        readable: Mapping[str, InputInfo] | None = None,
        block: Dim3 | None = None,
        trust_const: bool = True,
    ) -> None:
        self.trust_memory = trust_memory
        self.trust_const = trust_const
        self.block = block
        self.d = Divergence(form, graph)
        d = self.d
        d.readable = dict(readable or {})
        d.blocks = {b.name: b for b in form.blocks}
        for b in form.blocks:
            for ins in b.instrs:
                if ins.result is not None:
                    d.defs[ins.result] = ins
                    d.def_block[ins.result] = b.name
        self.prov, written = _provenance(form)
        self.ranges = Ranges(form, graph, d.defs, d.def_block, d.readable)
        self.warp_index = WarpIndex(d.defs, block)
        # Constant memory (address space 4): nothing writes it during a launch, wherever
        # a read in it lands. Any other memory is trusted only where a read is proven in
        # range (``in_range``): out of range, a read may land in an array being written.
        self.const_space = frozenset(g for g, i in form.globals.items() if i.addrspace == 4)
        if not self.trust_const:
            # A raw store in an unsafe region: the author's, unchecked, it may land in any
            # memory -- constant memory too (its bytes have a global address; attack round
            # 23). Nothing read from memory is trusted.
            d.immutable = frozenset()
        elif UNKNOWN in written or not self.trust_memory:
            # Still constant memory: no write may reach it (``_constmem`` refuses the kernel
            # before this analysis runs if one may; Tier-1 writes are bounds-checked).
            d.immutable = frozenset(self.const_space - written)
        else:
            d.immutable = frozenset((set(d.readable) | self.const_space) - written)
        # this thread's own memory, all of it stored before it is read (_private)
        trust = self.trust_memory and self.trust_const and UNKNOWN not in written
        self.private = private_allocas(form, graph, self.prov, _gep_step, trust)
        self.site_purity: dict[int, int] = {}
        self._joins: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
        self._position = {b: k for k, b in enumerate(graph.order)}
        # loops containing each block, innermost last
        self.loops_of: dict[str, list[int]] = {}
        for idx, loop in enumerate(graph.loops):
            for blk in loop.blocks:
                self.loops_of.setdefault(blk, []).append(idx)

    # value levels ---------------------------------------------------------

    def raise_to(self, name: str, level: int, reason: Reason) -> bool:
        if level > self.d.levels.get(name, GRID):
            self.d.levels[name] = level
            self.d.reasons[name] = reason
            return True
        return False

    def use_level(self, op: str, use_block: str) -> tuple[int, Reason | None]:
        """An operand's level as seen in ``use_block`` (with temporal divergence)."""
        d = self.d
        lv = d.levels.get(op, GRID)
        why: Reason | None = None
        home = d.def_block.get(op)
        if home is None or home == use_block:
            return lv, why
        outer = set(self.loops_of.get(use_block, ()))
        for idx in self.loops_of.get(home, ()):
            if idx in outer:
                continue
            loop = d.graph.loops[idx]
            for src, _dst in loop.exits:
                el = d.edge_level(src)
                if el > lv:
                    lv = el
                    why = Reason("loop-exit", d.blocks[src].terminator, via=op)
        return lv, why

    def instr_level(self, ins: Instr, block: str) -> tuple[int, Reason | None]:
        d = self.d
        op = ins.opcode
        if op == "phi":
            lv, why = GRID, None
            for value, pred in ins.incoming:
                if value is not None:
                    # at the edge's end and at the phi: an edge that leaves a loop carries the
                    # instance of the value of the iteration each thread left at (the exits'
                    # level; attack round 37: an iteration count merged from the exits)
                    for at in (pred, block):
                        vl, vwhy = self.use_level(value, at)
                        if vl > lv:
                            lv, why = vl, vwhy or Reason("operand", ins, via=value)
            for _pred, x in self.join_branches(ins, block):
                bl = d.branch.get(x, GRID)
                if bl > lv:
                    lv, why = bl, Reason("join", ins, via=x)
            return lv, why
        if op == "call" and (ins.callee or "") not in _SATURATING:
            return self.call_level(ins, block)
        if op in ("atomicrmw", "cmpxchg"):
            return THREAD, Reason("atomic", ins)
        if self.warp_index.warp_uniform(ins):
            # a pure function of tid.x alone (no phi on the way): its level is WARP
            # wherever tid.x was read
            return WARP, Reason("warp-id", ins)
        lv, why = GRID, None
        for operand in ins.operands:
            vl, vwhy = self.use_level(operand, block)
            if vl > lv:
                lv, why = vl, vwhy or Reason("operand", ins, via=operand)
        if op == "load":
            ptr = ins.pointers[-1] if ins.pointers else None
            if lv == THREAD:  # at a thread-dependent address: that is the cause to name
                return lv, why
            roots = self.prov.get(ptr, frozenset()) if ptr else frozenset(ins.globals)
            if roots and all(r in self.private for r in roots):
                return self.private_level(ins, roots, lv, why, block)
            if not roots or not roots <= d.immutable:
                # Numba's strided address (data + k * stride) mixes in the stride
                base = self.ranges.inside(ptr, _loaded_bytes(ins), block) if ptr else None
                if base is not None and base in d.immutable:
                    return lv, why
                return THREAD, self.untrusted_load(ins, roots)
            unproven = self.unproven_read(ptr, roots, _loaded_bytes(ins), block)
            if unproven is not None:
                return THREAD, Reason("read-range", ins, read=unproven)
        if op == "alloca":
            return GRID, None
        return lv, why

    def join_branches(self, ins: Instr, block: str) -> tuple[tuple[str, str], ...]:
        """The branches whose direction may decide which value the phi ``ins`` takes, as
        (edge's source, branch), for each edge the branches nearest it first.

        Sync dependence: the branches the phi's incoming edges are (transitively) control
        dependent on, and an edge's own branch. A branch counts only if two of its ways reach
        ``block`` (before reaching it again) and the edges into it that they reach carry two
        different values (``_separates``): where every way on from it brings the same value
        (Python 3.12's two ``return`` of a conditional expression, each with the same
        status), which way a thread went does not change what it reads. ``poison`` is a
        value of its own on each edge (undefined: it may differ between threads).
        """
        key = (ins.result or ins.text, block)
        hit = self._joins.get(key)
        if hit is not None:
            return hit
        g = self.d.graph
        # every edge into the block; one whose value the text does not give (an aggregate
        # constant has commas) is a value of its own
        written = {pred: value for value, pred in phi_values(ins)}
        values: dict[str, tuple[str, str]] = {}
        for pred in g.preds.get(block, ()):
            v = written.get(pred, "?")
            values[pred] = (v, pred) if v in ("?", "poison", "undef") else (v, "")
        found: list[tuple[str, str]] = []
        if len(set(values.values())) > 1:
            separates: dict[str, bool] = {}
            # the edges in the phi's order, then any the text does not give
            for pred in dict.fromkeys([*written, *values]):
                if pred not in values:
                    continue
                near = [pred] if len(g.succs.get(pred, ())) > 1 else []
                seen, frontier = {pred}, [pred]
                while frontier:  # breadth first: the branches nearest the edge first
                    step = sorted(
                        {dep for b in frontier for dep in g.deps.get(b, ())} - seen,
                        key=self._position.__getitem__,
                    )
                    seen.update(step)
                    near += step
                    frontier = step
                for x in near:
                    if x not in separates:
                        separates[x] = self._separates(x, block, values)
                    if separates[x]:
                        found.append((pred, x))
        self._joins[key] = tuple(found)
        return self._joins[key]

    def _separates(self, branch: str, join: str, values: Mapping[str, tuple[str, str]]) -> bool:
        """May threads leaving ``branch`` by different successors reach ``join`` (before they
        reach it again) by edges that carry two different values?

        Where only one successor reaches ``join`` at all, a later branch on that side
        chooses the edge -- one of the phi's own candidates --, not this one.
        """
        g = self.d.graph
        reached: list[set[tuple[str, str]]] = []
        for start in g.succs.get(branch, ()):
            got: set[tuple[str, str]] = set()
            if start == join:
                got.add(values.get(branch, ("?", branch)))
            else:
                seen = {start}
                work = [start]
                while work:
                    node = work.pop()
                    for nxt in g.succs.get(node, ()):
                        if nxt == join:
                            got.add(values.get(node, ("?", node)))
                        elif nxt not in seen:
                            seen.add(nxt)
                            work.append(nxt)
            if got:
                reached.append(got)
        return len(reached) > 1 and len(set().union(*reached)) > 1

    def private_level(
        self, ins: Instr, roots: frozenset[str], lv: int, why: Reason | None, block: str
    ) -> tuple[int, Reason | None]:
        """A load (in ``block``) of this thread's own memory: as uniform as its address
        (``lv``) and every store into that memory -- the value, the address, and whether the
        store runs. A stored value is used at the store and, through the memory, at the
        load: where either is after a loop the value was made in, it has the loop's exits'
        level (attack round 38: an iteration count stored after its loop was uniform)."""
        d = self.d
        for root in sorted(roots):
            for blk, store in self.private[root]:
                for operand in store.operands:
                    for at in (blk, block):
                        vl, vwhy = self.use_level(operand, at)
                        if vl > lv:
                            lv, why = vl, vwhy or Reason("operand", ins, via=operand)
                cl = d.control.get(blk, GRID)
                if cl > lv:
                    lv, why = cl, Reason("join", ins, via=self._control_block(blk))
        return lv, why

    def _control_block(self, blk: str) -> str:
        """The branch ``blk`` is control dependent on at its control level (for messages)."""
        d = self.d
        level = d.control.get(blk, GRID)
        for dep in d.graph.deps.get(blk, ()):
            if d.branch.get(dep, GRID) >= level:
                return dep
        return blk

    def untrusted_load(self, ins: Instr, roots: frozenset[str]) -> Reason:
        """Why a load is thread-dependent: written memory, or an input's address unproven.

        An address computed from an input's data pointer and plain parameters
        (its strides, an index) reads that input, but not provably in range.
        """
        data = roots & set(self.d.readable)
        if data and UNKNOWN not in roots and roots - data <= set(self.d.form.params):
            param = self.d.readable[next(iter(sorted(data)))].param
            return Reason("read-range", ins, read=(param, 0))
        return Reason("load", ins)

    def unproven_read(
        self, ptr: str | None, roots: frozenset[str], size: int | None, block: str
    ) -> tuple[str, int] | None:
        """None when a read of ``size`` bytes at ``ptr`` stays inside memory nothing writes.

        Reads by plain int are not bounds-checked, so a read past an input's end may
        land in an output other threads are writing. A read is trusted when it is in
        constant memory, at a constant offset from an input's data pointer that the
        contract's ``requires`` guarantee in range, or at an index ``_ranges`` proves
        inside the input in ``block``. Otherwise the (parameter, elements needed -- 0
        for a computed index) it would need.
        """
        if roots <= self.const_space:
            return None
        base, offset = ptr, 0
        for _depth in range(64):
            if base is None or base in self.d.readable:
                break
            defn = self.d.defs.get(base)
            step = _gep_step(defn) if defn is not None and defn.opcode == "getelementptr" else None
            if step is None:
                base = None
                break
            base, delta = step
            offset += delta
        root = next(iter(roots - self.const_space), "")
        info = self.d.readable.get(base or root)
        param = info.param if info is not None else root
        if base is None or info is None or size is None or offset < 0:
            if ptr is not None and self.ranges.inside(ptr, size, block) in self.d.immutable:
                return None
            return param, 0
        if offset + size <= info.itemsize * info.elements:
            return None
        index, rest = divmod(offset, info.itemsize)
        if size == info.itemsize and not rest and self.ranges.constant_inside(base, index, block):
            return None
        return param, -(-(offset + size) // info.itemsize)

    def call_level(self, ins: Instr, block: str) -> tuple[int, Reason | None]:
        name = ins.callee or ""
        args = GRID
        why: Reason | None = None
        for operand in ins.operands:
            vl, vwhy = self.use_level(operand, block)
            if vl > args:
                args, why = vl, vwhy or Reason("operand", ins, via=operand)
        if name.startswith("__ss.witness."):
            return args, why  # the witness's index itself (lowering._irform)
        if name.startswith("__ss.uniform."):
            scope, ident = ins.uniform or ("thread", 0)
            declared = SCOPE_LEVEL.get(scope, THREAD)
            declared = max(declared, self.site_purity.get(ident, GRID))
            if declared >= args:
                return args, why
            return declared, Reason("collective", ins)
        if name.startswith(_SREG):
            lv = _sreg_level(name, self.block)
            kind = {BLOCK: "block-id", WARP: "warp-id", THREAD: "thread-id"}.get(lv)
            return lv, (Reason(kind, ins) if kind else None)
        if name.startswith(("__ss.nvvm.ldg", "__ss.nvvm.ldu")):
            ptr = ins.pointers[-1] if ins.pointers else None
            roots = self.prov.get(ptr, frozenset()) if ptr else frozenset()
            if not roots or not roots <= self.d.immutable:
                return THREAD, Reason("load", ins)
            size = _SCALAR_BYTES.get((ins.text.partition(" @")[0].split(" ") or [""])[-1])
            unproven = self.unproven_read(ptr, roots, size, block)
            if unproven is not None:
                return THREAD, Reason("read-range", ins, read=unproven)
            return args, why
        if name.startswith(_PURE_PREFIXES) and not name.startswith(_WRITES_DEST):
            return args, why
        if name == "asm":
            text = ins.asm or ""
            loaded = _asm_load_bytes(text)
            if loaded is not None and len(ins.pointers) == 1:
                # cuda.ldcg/ldca/ldcs/ldlu/ldcv: a cache-hinted load, like any other load
                roots = self.prov.get(ins.pointers[0], frozenset())
                if not roots or not roots <= self.d.immutable:
                    return THREAD, Reason("load", ins)
                unproven = self.unproven_read(ins.pointers[0], roots, loaded, block)
                if unproven is not None:
                    return THREAD, Reason("read-range", ins, read=unproven)
                return args, why
            ops = [w for w in text.replace("{", " ").replace(";", " ").split() if "." in w]
            if ops and all(w.startswith(_PURE_ASM_OPS) for w in ops) and "%" not in text:
                return args, why
            return THREAD, Reason("asm", ins)
        if ins.site is not None and ins.site[1] == "coalesced":
            return THREAD, Reason("atomic", ins)  # the shuffle of an aggregated claim's slot
        return THREAD, Reason("call", ins)

    # fixpoint -------------------------------------------------------------

    def solve(self) -> Divergence:
        d = self.d
        g = d.graph
        order = [d.blocks[b] for b in g.order]
        for _round in range(64):
            changed = False
            for blk in order:
                for ins in blk.instrs:
                    if ins.result is None:
                        continue
                    lv, why = self.instr_level(ins, blk.name)
                    if lv and self.raise_to(ins.result, lv, why or Reason("operand", ins)):
                        changed = True
                term = blk.terminator
                if len(g.succs.get(blk.name, ())) > 1:
                    lv = GRID
                    for operand in term.operands[:1]:
                        lv = max(lv, self.use_level(operand, blk.name)[0])
                    if lv > d.branch.get(blk.name, GRID):
                        d.branch[blk.name] = lv
                        changed = True
            for b in g.order:
                lv = GRID
                for dep in g.deps.get(b, ()):
                    lv = max(lv, d.branch.get(dep, GRID), d.control.get(dep, GRID))
                if lv > d.control.get(b, GRID):
                    d.control[b] = lv
                    changed = True
            if not changed:
                break
        else:  # pragma: no cover - the lattice has height 4: this cannot happen
            raise AssertionError("divergence analysis did not converge")
        return d


def analyze(
    form: FunctionForm,
    site_purity: dict[int, int] | None = None,
    *,
    trust_memory: bool = True,
    readable: Mapping[str, InputInfo] | None = None,
    block: Dim3 | None = None,
    trust_const: bool = True,
) -> Divergence:
    """Levels of every value and block of ``form``.

    Args:
        site_purity: for a collective whose lowering calls a user operator,
            the level of that operator's result for uniform arguments (its own
            analysis); the collective's declared result is no more uniform.
        trust_memory: whether memory no instruction writes stays unchanged during
            the launch. False for a kernel with unsafe regions: an out-of-bounds
            unchecked store there may land in any array, so no load is uniform.
        readable: the inputs whose reads may be trusted, by data pointer
            (``"%a.4"``). Without an entry, no read of a parameter is uniform.
        block: the exact block shape every launch has (the contract's ``block``,
            which ``prepare`` enforces), or None: what makes the thread's warp
            within its block warp-uniform (``warp_uniform_axes``).
        trust_const: whether constant memory stays unchanged: False where an unsafe
            region stores (an unchecked store may land anywhere, constant memory too).
    """
    # a switch default its masked condition cannot reach is no edge (_feasible)
    graph = Graph.build(form.blocks[0].name, feasible_successors(form))
    solver = _Solver(form, graph, trust_memory, readable, block, trust_const)
    solver.site_purity = dict(site_purity or {})
    if graph.irreducible:  # not produced from Python source; refuse to guess
        d = solver.d
        for b in form.blocks:
            d.control[b.name] = THREAD
            d.branch[b.name] = THREAD
        return d
    return solver.solve()
