"""The compiled form of a kernel: the LLVM IR Numba hands to NVVM, normalized for analysis.

``compiled_form(texts, root)`` takes the IR modules of a code library (the
kernel's module and the modules of every device function it links), and
returns the root function as plain Python data (``FunctionForm``) after
LLVM itself has

* inlined every function the root calls (helpers, Numba-internal functions),
* promoted local variables to SSA values (SROA; ``instcombine`` in between
  folds the aggregate packing that Numba emits around arrays and tuples).

These transformations preserve the program's meaning (LLVM keeps convergent
operations where they are), so what the analysis proves of the form holds of
the code NVVM compiles: the same text in its wrapping form (``wrapping_form``,
which ``_nvvminput`` also hands to NVVM). The passes run in llvmlite's own
LLVM; NVVM never sees their result.

Before parsing, a result marked ``!ss.uniform`` by simtsafe's lowering
(``_provenance.declare_uniform``) is routed through a call to an opaque
declaration ``@__ss.uniform.N``, so that the marker survives SROA (which
would otherwise replace a marked load by an unmarked phi).

Likewise a store tagged ``!ss.own`` (a witness store into a shared tile) gets a
call ``@__ss.own.K`` of its address right before it: what the tile phase
check (``verify._tilephases``) reads as "the thread's own element"; each write
of a fill (``!ss.fill``) a call ``@__ss.fill.<label>.K`` of its address, and the
start of an asynchronous fill a call ``@__ss.fillstart`` of the tile's address.

Only this module imports ``llvmlite.binding``; the analysis (``simtsafe.verify``)
works on the dataclasses below.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._shims import SHIM_PREFIX, status_zero_shims

__all__ = [
    "WRAPPING_MARK",
    "PRIVATE_ARRAY",
    "Block",
    "FunctionForm",
    "GlobalInfo",
    "Instr",
    "Opaque",
    "compiled_form",
    "constant_globals",
    "global_names",
    "is_local",
    "split_operands",
    "laid_out",
    "phi_values",
    "plain_type_bytes",
    "static_shared_globals",
    "wrapping_form",
]

#: The LLVM name of a Tier-1 ``cuda.local.array``'s alloca (``_localarrays``): every access to
#: it is bounds-checked by its lowering, so a load through it stays inside it, and Numba
#: zero-fills it where the function starts. A Python name cannot spell it (the dot), so no
#: user variable's alloca carries it; inlining and uniquing only append to it.
PRIVATE_ARRAY = "__ss.lmem"

_LOCAL = r'%(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*|[0-9]+)'
_GLOBAL = r'@(?:"(?:[^"\\]|\\.)*"|[-a-zA-Z$._][-a-zA-Z$._0-9]*|[0-9]+)'
_LOCAL_RE = re.compile(_LOCAL)
_GLOBAL_RE = re.compile(_GLOBAL)
_POINTER_RE = re.compile(
    r"\bptr(?: addrspace\(\d+\))?(?:\s+(?:noundef|nonnull|align \d+|[a-z_]+))*\s+(" + _LOCAL + ")"
)
_LABEL_RE = re.compile(r"\blabel (" + _LOCAL + ")")
_ATTACH_RE = re.compile(r"((?:, ![-\w.]+ !\d+)+)\s*$")
_ONE_ATTACH_RE = re.compile(r"!([-\w.]+) !(\d+)")
_MD_DEF_RE = re.compile(r"^!(\d+) = (?:distinct )?!\{(.*)\}\s*$")
_MD_ITEM_RE = re.compile(r'!"((?:[^"\\]|\\.)*)"|i32 (-?\d+)')
_BLOCK_RE = re.compile(r'^("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+):')
_DEFINE_RE = re.compile(r"^define\b.*?(" + _GLOBAL + r")\((.*)\)[^()]*\{\s*$")
_GLOBAL_DEF_RE = re.compile(r"^(" + _GLOBAL + r") = (.*)$")
_RESULT_RE = re.compile(r"^\s*(" + _LOCAL + r") = (.*)$")
_PHI_RE = re.compile(r"\[\s*([^,\]]+?)\s*,\s*(" + _LOCAL + r")\s*\]")
#: Opcodes whose pointer operands the analysis reads (memory and provenance).
_POINTER_OPCODES = frozenset(
    {"load", "store", "atomicrmw", "cmpxchg", "getelementptr", "call", "select", "bitcast"}
)


@dataclass(frozen=True, slots=True)
class Instr:
    """One instruction of the compiled form.

    ``operands`` are the local values it uses, in textual order (for a phi,
    the incoming values); ``pointers`` those of them in pointer position
    (``ptr %p``), which for a ``store`` ends with the address stored to.
    """

    result: str | None
    opcode: str
    operands: tuple[str, ...]
    pointers: tuple[str, ...]
    globals: tuple[str, ...]
    callee: str | None  # a direct call's function, "asm" for inline assembly
    asm: str | None  # the inline assembly template
    targets: tuple[str, ...]  # successor blocks of a terminator
    incoming: tuple[tuple[str | None, str], ...]  # phi: (value or None for a constant, block)
    loc: tuple[str, int] | None
    site: tuple[str, str, int] | None  # (api, scope, site id) of a Tier-1 collective
    uniform: tuple[str, int] | None  # (scope, site id): a collective's declared result
    text: str
    gridread: bool = False  # emitted by simtsafe.grid.read (``!ss.gridread``)
    #: ``!range [lo, hi)`` of the instruction (``lowering._blockgeo.bound_sreg``'s thread-index
    #: reads: what LLVM folds with, so the proofs read it too)
    bounds: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Block:
    name: str
    instrs: tuple[Instr, ...]

    @property
    def terminator(self) -> Instr:
        return self.instrs[-1]


@dataclass(frozen=True, slots=True)
class GlobalInfo:
    addrspace: int
    constant: bool


@dataclass(frozen=True)
class FunctionForm:
    """The root function after inlining, as data."""

    name: str
    params: tuple[str, ...]  # argument names, in order ("%a.4" is parameter a's data pointer)
    blocks: tuple[Block, ...]  # the entry block first
    globals: dict[str, GlobalInfo] = field(default_factory=dict)
    #: site id -> functions a collective calls (a reduction's user operator), before inlining
    site_callees: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: K -> the function called where ``call @__ss.at.K()`` stands (inlined since)
    call_markers: tuple[str, ...] = ()
    #: defined functions still called after inlining (recursion) -> what they reach
    opaque: dict[str, Opaque] = field(default_factory=dict)


@dataclass(frozen=True)
class Opaque:
    """What a function the inliner could not inline (a recursive one) reaches, transitively."""

    sites: bool  # a Tier-1 collective of simtsafe's lowering (``!ss.site``)
    calls: frozenset[str]  # the declared functions it calls (barriers, shuffles...)


def is_local(text: str) -> bool:
    """Whether ``text`` is, whole, one local value or block name (``%x``, ``%"a b"``, ``%7``)."""
    return _LOCAL_RE.fullmatch(text) is not None


def phi_values(ins: Instr) -> tuple[tuple[str, str], ...]:
    """A phi's incoming (value as written -- a local, a constant, ``poison`` -- , block)."""
    rest = ins.text.partition(" phi ")[2]
    return tuple((v, b) for v, b in _PHI_RE.findall(rest))


def split_operands(text: str) -> list[str]:
    """Split at commas that are not nested in brackets or quotes."""
    parts: list[str] = []
    depth = 0
    quoted = False
    start = 0
    i = 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


# --------------------------------------------------------------------------- metadata


def _metadata(text: str) -> dict[int, tuple[str | int, ...]]:
    """Metadata nodes of a module text: number -> its string and i32 items."""
    nodes: dict[int, tuple[str | int, ...]] = {}
    for line in text.splitlines():
        if not line.startswith("!"):
            continue
        m = _MD_DEF_RE.match(line)
        if m is None:
            continue
        items: list[str | int] = []
        for s, n in _MD_ITEM_RE.findall(m.group(2)):
            items.append(int(n) if n else s)
        nodes[int(m.group(1))] = tuple(items)
    return nodes


_UNIFORM_LINE = re.compile(r'^(\s*)%"((?:[^"\\]|\\.)*)" = (.*!ss\.uniform !(\d+).*)$')


#: A frozen round-toward-zero float-to-integer conversion of NVVM (``_saturating``).
_FROZEN_CONVERSION_RE = re.compile(r"__ss\.nvvm\.([fd]2u?(?:i|ll))\.rz\b")


def _freeze_intrinsics(text: str) -> str:
    """Rename NVVM intrinsics to opaque declarations: LLVM neither upgrades nor folds them.

    llvmlite's LLVM auto-upgrades old NVVM intrinsics (``barrier0``) by
    replacing the call, which drops its metadata; an opaque ``__ss.nvvm.*``
    declaration keeps the call, its tags and its place.
    """
    text = text.replace('@"llvm.nvvm.', '@"__ss.nvvm.').replace("@llvm.nvvm.", "@__ss.nvvm.")
    # Special registers stay intrinsics: LLVM knows their ranges (ntid.x >= 1, tid.x < 1024)
    # and folds the checks Numba emits on them (a range step of ntid.x is never 0); so do the
    # float-to-integer conversions of the wrapping form (``_saturating``), which LLVM folds
    # as PTX computes them and the analysis reads as the conversions they are.
    text = text.replace("__ss.nvvm.read.ptx.sreg.", "llvm.nvvm.read.ptx.sreg.")
    return _FROZEN_CONVERSION_RE.sub(r"llvm.nvvm.\1.rz", text)


_SHIM_CALL_RE = re.compile(
    r'^(\s*)%"((?:[^"\\]|\\.)*)" = ((?:tail |notail )?call i32 @"'
    + re.escape(SHIM_PREFIX)
    + r".*)$"
)
_DEFINED_RE = re.compile(r"^define\b[^@]*(" + _GLOBAL + r")\(", re.M)
_CALL_RE = re.compile(
    r"^(\s*)(?:%\S+ = )?(?:tail |notail |musttail )?call [^@]*?(" + _GLOBAL + r")\("
)
_LOC_ATTACH_RE = re.compile(r"!ss\.loc !\d+")


def _name_status_zero_shims(text: str, defined: set[str]) -> str:
    """Rename each call of a status-0 C++ shim of numba-cuda's float16/bf16/fp8 bindings
    (``lowering._shims``; never a function defined in the module) ``__ss.shim.NAME``, and
    give its status the value 0 (``add i32 0, 0``, folded into the checks Numba makes of it,
    so that the exception exits behind them are branches on a constant, which ``_instr``
    gives one target). The analyses read its writes as its operands'
    memory."""
    renamed = False
    for name in status_zero_shims() - defined:
        if name in text:
            text = re.sub(
                r'@(?:"' + re.escape(name) + r'"|' + re.escape(name) + r")(?=[\s(])",
                f'@"{SHIM_PREFIX}{name}"',
                text,
            )
            renamed = True
    if not renamed:
        return text
    out = []
    for line in text.splitlines():
        m = _SHIM_CALL_RE.match(line)
        if m is None:
            out.append(line)
            continue
        indent, result, rest = m.groups()
        out.append(f'{indent}%"{result}.ssstatus" = {rest}')
        out.append(f'{indent}%"{result}" = add i32 0, 0')
    return "\n".join(out) + "\n"


def _mark_calls(text: str, defined: set[str], callees: list[str]) -> str:
    """Put ``call void @__ss.at.K()`` before each call of a defined function.

    After inlining, the marker stays where the call was, carrying the call's
    ``!ss.loc``: the nearest marker dominating an inlined instruction names
    the call it came from (``FunctionForm.call_markers``).
    """
    out: list[str] = []
    used: set[int] = set()
    for line in text.splitlines():
        m = _CALL_RE.match(line) if "call " in line else None
        if m is not None and _unquote(m.group(2)) in defined:
            k = len(callees)
            callees.append(_unquote(m.group(2)))
            used.add(k)
            loc = _LOC_ATTACH_RE.search(line)
            out.append(
                f'{m.group(1)}call void @"__ss.at.{k}"()' + (f", {loc.group(0)}" if loc else "")
            )
        out.append(line)
    out.extend(f'declare void @"__ss.at.{k}"()' for k in sorted(used))
    return "\n".join(out) + "\n"


_NO_INLINE_RE = re.compile(r"\b(?:noinline|optnone)\b")


def global_names(text: str) -> tuple[str, ...]:
    """The globals an instruction's text (or a part of it) names, as ``FunctionForm.globals``
    keys them."""
    return tuple(_unquote(g) for g in _GLOBAL_RE.findall(text))


_CONSTANT_GLOBAL_RE = re.compile(r"^(" + _GLOBAL + r" = .*?\baddrspace\(4\) )constant\b")


#: The flags that make an instruction's result poison (undefined) where it would wrap, lose
#: bits or break a float assumption -- ``nsw``, ``nuw``, ``exact``, ``nneg``, ``disjoint``,
#: ``samesign``, a ``getelementptr``'s ``inbounds``/``nusw``, fast-math -- each followed by
#: its space. Numba writes ``nsw`` on every signed ``+ - *``; the GPU wraps.
_POISON_FLAGS_RE = re.compile(
    r"\b(?:nsw|nuw|nusw|exact|nneg|disjoint|samesign|inbounds"
    r"|fast|nnan|ninf|nsz|arcp|contract|afn|reassoc) +"
)


#: The first line of a module in its wrapping form (``wrapping_form`` leaves such a text as is).
WRAPPING_MARK = "; simtsafe: wrapping form"


def wrapping_form(text: str) -> str:
    """``text`` with every instruction that LLVM may make poison written as the GPU computes
    it: what NVVM compiles for a simtsafe kernel (``_nvvminput``) and what the analysis
    reads. A text already in that form is returned as it is."""
    if text.startswith(WRAPPING_MARK):
        return text
    return WRAPPING_MARK + "\n" + _wrapping(text)


def _wrapping(text: str) -> str:
    """Drop the poison-generating flags from every instruction of the analysed copy.

    ``_normalize``'s instcombine folds through them as LLVM's semantics allow (``smin(x
    +nsw 7, 5)`` to ``smin(x, -2) +nsw 7``; ``(x *nsw 6) srem 3`` to 0), and the proofs would
    then read folds that NVVM, compiling the original, need not make: on the GPU the
    arithmetic wraps and a thread takes the branch the analysed copy deleted (attack round
    31). Without the flags every fold holds for wrapping arithmetic and exact IEEE floats,
    as the analysis assumes. NVVM compiles this form too (``_nvvminput``): with the flags,
    it could fold one half of an identity that holds only in wrapping arithmetic, ``(v +
    1) > v`` against ``v != INT64_MAX``, and keep the other (attack round 34).

    The other instructions whose result LLVM makes poison where the GPU computes a value
    are written as the GPU computes them: a shift by a run-time amount or by a literal one
    of the width or more (``_clamped_shift``, ``_literal_shift``), and a float-to-integer
    conversion out of range (``_saturating``; attack round 33).
    """
    out = []
    needed: set[str] = set()
    for line in text.splitlines():
        if line.startswith((" ", "\t")):  # an instruction (metadata, names: column 0)
            line = _POISON_FLAGS_RE.sub("", line)
            shift = _SHIFT_RE.match(line)
            if shift is not None:
                out.extend(_clamped_shift(*shift.groups()))
                continue
            literal = _LITERAL_SHIFT_RE.match(line)
            if literal is not None:
                out.append(_literal_shift(*literal.groups()))
                continue
            conv = _FPTOI_RE.match(line)
            if (
                conv is not None
                and conv.group(4) in _FP_TYPES
                and int(conv.group(6)) in (8, 16, 32, 64)
            ):
                lines, declarations = _saturating(*conv.groups())
                out.extend(lines)
                needed |= declarations
                continue
        out.append(line)
    out.extend(sorted(d for d in needed if d.split(" @", 1)[1].split("(", 1)[0] not in text))
    return "\n".join(out) + "\n"


#: ``%"x" = shl|lshr|ashr iN A, %"amount"``: a shift by a value (not a literal).
_SHIFT_RE = re.compile(
    r'^(\s*)%"((?:[^"\\]|\\.)*)" = (shl|lshr|ashr) i(\d+) ([^,]+), (%"(?:[^"\\]|\\.)*")(.*)$'
)
#: ``%"x" = shl|lshr|ashr iN A, 70``: a shift by a literal amount.
_LITERAL_SHIFT_RE = re.compile(
    r'^(\s*)%"((?:[^"\\]|\\.)*)" = (shl|lshr|ashr) i(\d+) ([^,]+), (-?\d+)(.*)$'
)
#: ``%"x" = fptosi|fptoui FT V to iN``: a float-to-integer conversion.
_FPTOI_RE = re.compile(r'^(\s*)%"((?:[^"\\]|\\.)*)" = (fptosi|fptoui) (\w+) (\S+) to i(\d+)(.*)$')
#: LLVM's float types a conversion to an integer is written for (half and bfloat widened).
_FP_TYPES = ("half", "bfloat", "float", "double")


def _ptx_amount(width: int) -> int:
    """The bits of a shift amount PTX reads: a ``.b64`` shift takes its amount as ``.u32``
    (NVVM truncates an i64 amount with ``cvt.u32.u64``, at ``-opt=0`` and by default)."""
    return 32 if width > 32 else width


def _clamped_shift(
    indent: str, name: str, op: str, width: str, value: str, amount: str, rest: str
) -> list[str]:
    """A shift by a run-time amount as the GPU computes it: PTX clamps the amount to the
    width (``shl``/``lshr`` give 0, ``ashr`` the sign), where LLVM makes an amount of the
    width or more poison and folds through it (``(1 << t) != 0`` to true; NVVM at
    ``-opt=0`` computes it: attack round 31). An i64 shift's amount is its low 32 bits
    first (``cvt.u32.u64``): ``v << (n | 2**32)`` shifts by ``n`` on the GPU (round 33)."""
    w = int(width)
    ty = f"i{w}"
    fallback = "0" if op != "ashr" else f'%"{name}.sssign"'
    lines = []
    if _ptx_amount(w) < w:
        lines.append(f'{indent}%"{name}.ssu32" = and {ty} {amount}, 4294967295{rest}')
        amount = f'%"{name}.ssu32"'
    lines += [
        f'{indent}%"{name}.ssamt" = and {ty} {amount}, {w - 1}{rest}',
        f'{indent}%"{name}.ssraw" = {op} {ty} {value}, %"{name}.ssamt"{rest}',
        f'{indent}%"{name}.ssok" = icmp ult {ty} {amount}, {w}{rest}',
    ]
    if op == "ashr":
        lines.append(f'{indent}%"{name}.sssign" = ashr {ty} {value}, {w - 1}{rest}')
    lines.append(
        f'{indent}%"{name}" = select i1 %"{name}.ssok", {ty} %"{name}.ssraw", {ty} {fallback}{rest}'
    )
    return lines


def _literal_shift(
    indent: str, name: str, op: str, width: str, value: str, amount: str, rest: str
) -> str:
    """A shift by a literal amount as the GPU computes it (the amount's low bits PTX reads,
    clamped to the width): LLVM makes ``v >> 70`` poison, NVVM at ``-opt=0`` emits
    ``shr.s64 %rd, %rd, 70`` -- the sign (attack round 33)."""
    w = int(width)
    k = (int(amount) % (1 << w)) % (1 << _ptx_amount(w))
    if k >= w:
        if op != "ashr":
            return f'{indent}%"{name}" = and i{w} {value}, 0{rest}'
        k = w - 1
    return f'{indent}%"{name}" = {op} i{w} {value}, {k}{rest}'


def _saturating(
    indent: str, name: str, op: str, fty: str, value: str, width: str, rest: str
) -> tuple[list[str], set[str]]:
    """A float-to-integer conversion as PTX's ``cvt.rzi`` computes it: saturated to the
    integer's range, NaN to 0. LLVM makes an out-of-range value poison: ``np.int64(
    np.float64(1e300)) if c else 0`` folded to 0, where NVVM at ``-opt=0`` gives 2**63 - 1
    (attack round 33). Written with NVVM's own round-toward-zero conversions (NVVM knows
    them; ``llvm.fpto[su]i.sat``, which it does not, became a call of an undefined
    function), a narrower integer clamped from the 32-bit one as ``cvt.rzi.s16`` saturates.
    Returns the lines and the declarations they need; other widths keep the conversion."""
    w = int(width)
    signed = op == "fptosi"
    lines: list[str] = []
    if fty in ("half", "bfloat"):
        lines.append(f'{indent}%"{name}.ssext" = fpext {fty} {value} to float{rest}')
        fty, value = "float", f'%"{name}.ssext"'
    wide = w == 64
    kind = ("ll" if wide else "i") if signed else ("ull" if wide else "ui")
    fn = f"llvm.nvvm.{'d' if fty == 'double' else 'f'}2{kind}.rz"
    out = 64 if wide else 32
    declaration = {f"declare i{out} @{fn}({fty})"}
    if w in (32, 64):
        return [*lines, f'{indent}%"{name}" = call i{w} @{fn}({fty} {value}){rest}'], declaration
    full = f'%"{name}.ss32"'
    lines.append(f"{indent}{full} = call i32 @{fn}({fty} {value}){rest}")
    if signed:
        lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
        lines += [
            f'{indent}%"{name}.sslow" = icmp slt i32 {full}, {lo}{rest}',
            f'{indent}%"{name}.ssup" = select i1 %"{name}.sslow", i32 {lo}, i32 {full}{rest}',
            f'{indent}%"{name}.sshigh" = icmp sgt i32 %"{name}.ssup", {hi}{rest}',
            f'{indent}%"{name}.ssin" = select i1 %"{name}.sshigh", i32 {hi}, i32 %"{name}.ssup"'
            f"{rest}",
        ]
    else:
        hi = (1 << w) - 1
        lines += [
            f'{indent}%"{name}.sshigh" = icmp ugt i32 {full}, {hi}{rest}',
            f'{indent}%"{name}.ssin" = select i1 %"{name}.sshigh", i32 {hi}, i32 {full}{rest}',
        ]
    lines.append(f'{indent}%"{name}" = trunc i32 %"{name}.ssin" to i{w}{rest}')
    return lines, declaration


def _writable_constants(text: str) -> str:
    """Declare constant-memory globals ``global`` instead of ``constant`` in the analysed copy.

    LLVM deletes a store to a ``constant`` global as undefined behaviour (instcombine), so
    the analysed copy would hide exactly the writes ``verify._constmem`` must see; NVVM's
    text keeps ``constant``, and NVVM need not delete them. Reads keep their address space, which
    is what the analyses key constant memory by.
    """
    return "\n".join(_CONSTANT_GLOBAL_RE.sub(r"\1global", line) for line in text.splitlines())


def _inlinable(text: str) -> str:
    """Drop ``noinline``/``optnone`` (a debug build puts them on every device function).

    Only the analysed copy changes (NVVM's text keeps them). A function the
    inliner still cannot inline (recursion) stays a call: ``FunctionForm.opaque``.
    """
    out = []
    for line in text.splitlines():
        if line.startswith("attributes #"):
            line = _NO_INLINE_RE.sub("", line)
        elif line.startswith("define "):  # attributes written after the parameter list
            head, paren, tail = line.rpartition(")")
            line = head + paren + _NO_INLINE_RE.sub("", tail)
        out.append(line)
    return "\n".join(out) + "\n"


def _opaque(text: str, root: str) -> dict[str, Opaque]:
    """Every defined function but ``root`` in the normalized module, with what it reaches."""
    bodies: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        m = _DEFINED_RE.match(line)
        if m is not None:
            name = _unquote(m.group(1))
            current = bodies.setdefault(name, []) if name != root else None
            continue
        if line.startswith("}"):
            current = None
        elif current is not None:
            current.append(line)
    direct: dict[str, tuple[bool, set[str]]] = {}
    for name, lines in bodies.items():
        calls = {
            _unquote(m.group(2)) for ln in lines if "call " in ln for m in [_CALL_RE.match(ln)] if m
        }
        direct[name] = (any("!ss.site" in ln for ln in lines), calls)
    out: dict[str, Opaque] = {}
    for name in bodies:
        sites, seen, todo = False, set(), [name]
        while todo:
            fn = todo.pop()
            if fn in seen:
                continue
            seen.add(fn)
            if fn in direct:
                sites = sites or direct[fn][0]
                todo.extend(direct[fn][1])
        out[name] = Opaque(sites, frozenset(seen - set(bodies)))
    return out


_OWN_STORE_RE = re.compile(r"^(\s*)store (.*?)((?:, ![-\w.]+ !\d+)+)\s*$")
_DEF_OPCODE_RE = re.compile(r"^\s*(" + _LOCAL + r") = (\w+)")


def _opcodes(text: str) -> dict[str, str]:
    """Each local value of a module text -> the opcode that defines it."""
    return {
        m.group(1): m.group(2)
        for line in text.splitlines()
        if "=" in line
        for m in [_DEF_OPCODE_RE.match(line)]
        if m is not None
    }


def _mark_own_stores(text: str) -> str:
    """Put ``call void @__ss.own.K(ptr %p)`` before each store tagged ``!ss.own``.

    A witness store into a shared tile (``tile[w] = v``) is tagged by the
    lowering; a call is what no pass strips of its meaning (a store's tags
    instcombine may drop when it rebuilds it), and its operand stays the
    store's address, computed by the same instructions. Only a store whose
    address is a ``getelementptr`` is marked (never an alloca's: the marker
    would keep SROA from promoting it).
    """
    if "!ss.own" not in text:
        return text
    opcode = _opcodes(text)
    decls: dict[str, str] = {}
    out: list[str] = []
    for line in text.splitlines():
        m = _OWN_STORE_RE.match(line) if "!ss.own" in line else None
        parts = split_operands(m.group(2)) if m is not None else []
        if m is not None and len(parts) >= 2 and "!ss.own" in m.group(3):
            ptype, _, ptr = parts[1].rpartition(" ")
            if ptype and opcode.get(ptr) == "getelementptr":
                fn = decls.setdefault(ptype, f'@"__ss.own.{len(decls)}"')
                out.append(f"{m.group(1)}call void {fn}({ptype} {ptr})")
        out.append(line)
    out.extend(f"declare void {fn}({ptype})" for ptype, fn in decls.items())
    return "\n".join(out) + "\n"


_FILL_ASM_RE = re.compile(
    r'^([ \t]*)call void asm sideeffect "((?:[^"\\]|\\.)*)", "[^"]*"\((i32 ' + _LOCAL + r")"
    r"[^()\n]*\)((?:, ![-\w.]+ !\d+)+)[ \t]*$",
    re.M,
)
_FILL_START_RE = re.compile(r"^(\s*)(" + _LOCAL + r") = ptrtoint .* to i64\b.*!ss\.fillstart !\d+")
_FILL_TAG_RE = re.compile(r"!ss\.fill !(\d+)")


def _fill_label(attached: str, nodes: dict[int, tuple[str | int, ...]]) -> str | None:
    """The label of a ``!ss.fill`` attachment (letters and digits), or None."""
    m = _FILL_TAG_RE.search(attached)
    items = nodes.get(int(m.group(1)), ()) if m is not None else ()
    label = str(items[0]) if len(items) == 1 else ""
    return label if label.isalnum() else None


def _mark_fill_writes(text: str) -> str:
    """Put ``call void @__ss.fill.<label>.K(<address>)`` before each write of a fill: a store
    tagged ``!ss.fill`` whose address is a ``getelementptr``, and a ``cp.async`` (inline
    assembly whose first operand is its shared destination); and ``call void
    @__ss.fillstart(i64 %t)`` after the tagged ``ptrtoint`` that starts an asynchronous fill.

    What the tile phase check (``verify._tilephases``) reads as "this write belongs to a fill
    of that label". A call keeps its place (no pass moves a store or an inline assembly
    across an unknown call) and its operand, which no pass strips as it may a tag.
    """
    if "!ss.fill" not in text:
        return text
    nodes = _metadata(text)
    opcode = _opcodes(text)
    decls: dict[tuple[str, str], str] = {}

    def marker(indent: str, label: str, ptype: str, value: str) -> str:
        fn = decls.setdefault((label, ptype), f'@"__ss.fill.{label}.{len(decls)}"')
        return f"{indent}call void {fn}({ptype} {value})\n"

    # the copies: inline assembly spans lines (its template holds newlines)
    pieces: list[str] = []
    done = 0
    for copy in _FILL_ASM_RE.finditer(text):
        label = _fill_label(copy.group(4), nodes)
        if label is None or "cp.async." not in copy.group(2):
            continue
        ptype, _, value = copy.group(3).rpartition(" ")
        pieces += [text[done : copy.start()], marker(copy.group(1), label, ptype, value)]
        done = copy.start()
    text = "".join([*pieces, text[done:]])
    out: list[str] = []
    for line in text.splitlines():
        m = _OWN_STORE_RE.match(line) if "!ss.fill" in line else None
        parts = split_operands(m.group(2)) if m is not None else []
        label = _fill_label(m.group(3), nodes) if m is not None else None
        if m is not None and label is not None and len(parts) >= 2:
            ptype, _, ptr = parts[1].rpartition(" ")
            if ptype and opcode.get(ptr) == "getelementptr":
                out.append(marker(m.group(1), label, ptype, ptr).rstrip("\n"))
        out.append(line)
        s = _FILL_START_RE.match(line) if "!ss.fillstart" in line else None
        if s is not None:
            out.append(f'{s.group(1)}call void @"__ss.fillstart"(i64 {s.group(2)})')
            decls.setdefault(("", "i64"), '@"__ss.fillstart"')
    out.extend(f"declare void {fn}({ptype})" for (_, ptype), fn in decls.items())
    return "\n".join(out) + "\n"


_WITNESS_LINE = re.compile(r'^(\s*)%"((?:[^"\\]|\\.)*)" = (add (i\d+) .*!ss\.witness !(\d+).*)$')


def _route_witness_markers(text: str) -> str:
    """Send each ``!ss.witness`` index through an opaque call ``@__ss.witness.<space>.<axis>``:
    what the tile phase check reads as "a block-local witness's index" (an ``add 0``
    instcombine would fold away)."""
    if "!ss.witness" not in text:
        return text
    nodes = _metadata(text)
    decls: dict[str, str] = {}  # callee -> its type
    out: list[str] = []
    for line in text.splitlines():
        m = _WITNESS_LINE.match(line) if "!ss.witness" in line else None
        items = nodes.get(int(m.group(5)), ()) if m is not None else ()
        if m is None or len(items) != 2:
            out.append(line)
            continue
        indent, name, rest, ty = m.group(1), m.group(2), m.group(3), m.group(4)
        fn = f'@"__ss.witness.{items[0]}.{items[1]}.{ty}"'
        decls[fn] = ty
        out.append(f'{indent}%"{name}.ssraw" = {rest}')
        out.append(f'{indent}%"{name}" = call {ty} {fn}({ty} %"{name}.ssraw")')
    out.extend(f"declare {ty} {fn}({ty})" for fn, ty in decls.items())
    return "\n".join(out) + "\n"


def _route_uniform_markers(text: str) -> str:
    """Send each ``!ss.uniform`` result through an opaque call that no pass removes."""
    if "!ss.uniform" not in text:
        return text
    nodes = _metadata(text)
    decls: dict[str, str] = {}
    out: list[str] = []
    for line in text.splitlines():
        m = _UNIFORM_LINE.match(line)
        if m is None:
            out.append(line)
            continue
        indent, name, rest, node = m.groups()
        items = nodes.get(int(node), ())
        lty = str(items[0]) if items else ""
        if not lty:
            out.append(line)
            continue
        fn = decls.setdefault(lty, f'@"__ss.uniform.{len(decls)}"')
        out.append(f'{indent}%"{name}.ssraw" = {rest}')
        out.append(
            f'{indent}%"{name}" = call {lty} {fn}({lty} %"{name}.ssraw"), !ss.uniform !{node}'
        )
    out.extend(f"declare {lty} {fn}({lty})" for lty, fn in decls.items())
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- LLVM


_LLVM_LOCK = threading.Lock()


@functools.cache
def _pass_builder_parts() -> tuple[object, object]:
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    tm = llvm.Target.from_default_triple().create_target_machine()
    return tm, llvm.create_pipeline_tuning_options()


def _normalize(texts: Sequence[str], root: str, callees: list[str]) -> str:
    """Link, inline everything into ``root``, promote locals; the module's text.

    ``callees`` receives the function each ``__ss.at.K`` marker stands before.
    """
    import llvmlite.binding as llvm

    defined = {_unquote(m.group(1)) for t in texts for m in _DEFINED_RE.finditer(t)}
    prepared = [
        _mark_calls(
            _mark_fill_writes(
                _mark_own_stores(
                    _route_witness_markers(
                        _route_uniform_markers(
                            _freeze_intrinsics(
                                _name_status_zero_shims(
                                    _inlinable(_writable_constants(wrapping_form(t))), defined
                                )
                            )
                        )
                    )
                )
            ),
            defined,
            callees,
        )
        for t in texts
    ]
    with _LLVM_LOCK:
        modules = [llvm.parse_assembly(t) for t in prepared]
        mod = modules[0]
        for other in modules[1:]:
            mod.link_in(other)
        for fn in mod.functions:
            if fn.is_declaration or fn.name == root:
                continue
            fn.linkage = "internal"
            fn.add_function_attribute("alwaysinline")
        tm, pto = _pass_builder_parts()
        pb = llvm.create_pass_builder(tm, pto)
        mpm = llvm.create_new_module_pass_manager()
        mpm.add_always_inliner_pass()
        mpm.run(mod, pb)
        fpm = llvm.create_new_function_pass_manager()
        fpm.add_sroa_pass()
        fpm.add_instruction_combine_pass()
        fpm.add_sroa_pass()
        fpm.run(mod.get_function(root), pb)
        return str(mod)


def _site_callees(texts: Sequence[str]) -> dict[int, tuple[str, ...]]:
    """Defined functions called from inside a collective (a user operator), by site id."""
    defined = {_unquote(m.group(1)) for t in texts for m in _DEFINED_RE.finditer(t)}
    found: dict[int, list[str]] = {}
    for text in texts:
        if "!ss.opcall" not in text:
            continue
        nodes = _metadata(text)
        for line in text.splitlines():
            if " call " not in line and not line.lstrip().startswith("call"):
                continue
            m = re.search(r"!ss\.opcall !(\d+)", line)
            if m is None:
                continue
            callee = _GLOBAL_RE.search(line.split("call", 1)[1])
            if callee is None or _unquote(callee.group(0)) not in defined:
                continue
            items = nodes.get(int(m.group(1)), ())
            if len(items) == 1 and isinstance(items[0], int):
                found.setdefault(items[0], []).append(_unquote(callee.group(0)))
    return {k: tuple(v) for k, v in found.items()}


def _unquote(name: str) -> str:
    """``@"a b"`` / ``%x`` -> the bare name, as llvmlite.binding reports it."""
    body = name[1:]
    if body.startswith('"'):
        body = body[1:-1]
    return body


# --------------------------------------------------------------------------- parsing


def _instr(line: str, nodes: dict[int, tuple[str | int, ...]]) -> Instr:
    tags: dict[str, tuple[str | int, ...]] = {}
    m = _ATTACH_RE.search(line) if ", !" in line else None
    if m is not None:
        for kind, num in _ONE_ATTACH_RE.findall(m.group(1)):
            if kind.startswith("ss.") or kind == "range":
                tags[kind] = nodes.get(int(num), ())
        line = line[: m.start()]
    body = line.strip()
    result: str | None = None
    rm = _RESULT_RE.match(body)
    if rm is not None:
        result, body = rm.group(1), rm.group(2)
    words = body.split(None, 1)
    while words and words[0] in ("tail", "musttail", "notail"):
        words = words[1].split(None, 1) if len(words) > 1 else []
    opcode = words[0] if words else ""
    rest = words[1] if len(words) > 1 else ""
    callee = asm = None
    if opcode == "call":
        head = rest.split("(", 1)[0]
        if re.search(r"\basm\b", head) or rest.lstrip().startswith("asm") or " asm " in head:
            callee = "asm"
            am = re.search(
                r'asm(?: sideeffect| inteldialect| alignstack)*\s+"((?:[^"\\]|\\.)*)"', rest
            )
            asm = am.group(1) if am else ""
        else:
            cm = _GLOBAL_RE.search(rest)
            callee = _unquote(cm.group(0)) if cm else None
    incoming: tuple[tuple[str | None, str], ...] = ()
    terminator = opcode in ("br", "switch", "indirectbr")
    if opcode == "phi":
        pairs = _PHI_RE.findall(rest)
        incoming = tuple((v if v.startswith("%") else None, b) for v, b in pairs)
        operands = tuple(v for v, _ in incoming if v is not None)
    elif terminator:
        labels = set(_LABEL_RE.findall(rest))
        operands = tuple(n for n in _LOCAL_RE.findall(rest) if n not in labels)
    else:
        operands = tuple(_LOCAL_RE.findall(rest)) if "%" in rest else ()
    targets = tuple(_LABEL_RE.findall(rest)) if terminator else ()
    constant = re.match(r"i1 (true|false), label", rest) if opcode == "br" else None
    if constant is not None and len(targets) == 2:
        # A branch on a constant (Numba's status check after a call that cannot fail)
        # goes one way only: its other edge is not part of the program.
        targets = (targets[0] if constant.group(1) == "true" else targets[1],)
    pointers = tuple(_POINTER_RE.findall(rest)) if opcode in _POINTER_OPCODES else ()
    loc = tags.get("ss.loc")
    site = tags.get("ss.site")
    uni = tags.get("ss.uniform")
    return Instr(
        result=result,
        opcode=opcode,
        operands=operands,
        pointers=pointers,
        globals=(
            tuple(_unquote(g) for g in _GLOBAL_RE.findall(rest) if _unquote(g) != callee)
            if "@" in rest
            else ()
        ),
        callee=callee,
        asm=asm,
        targets=targets,
        incoming=incoming,
        loc=(str(loc[0]), int(loc[1])) if loc and len(loc) == 2 else None,
        site=(str(site[0]), str(site[1]), int(site[2])) if site and len(site) == 3 else None,
        uniform=(str(uni[1]), int(uni[2])) if uni and len(uni) == 3 else None,
        text=line.strip(),
        gridread="ss.gridread" in tags,
        bounds=_bounds(tags.get("range")),
    )


def _bounds(node: tuple[str | int, ...] | None) -> tuple[int, int] | None:
    """``!{i32 lo, i32 hi}`` as ``(lo, hi)`` when it is one plain interval ``0 <= lo < hi``."""
    if node is None or len(node) != 2 or not all(isinstance(v, int) for v in node):
        return None
    lo, hi = int(node[0]), int(node[1])
    return (lo, hi) if 0 <= lo < hi else None


def _parse(text: str, root: str) -> FunctionForm:
    nodes = _metadata(text)
    globals_: dict[str, GlobalInfo] = {}
    lines = text.splitlines()
    body: list[str] | None = None
    params: tuple[str, ...] = ()
    for line in lines:
        if body is None:
            gm = _GLOBAL_DEF_RE.match(line)
            if gm is not None:
                rest = gm.group(2)
                am = re.search(
                    r"addrspace\((\d+)\)", rest.split(" global ")[0].split(" constant ")[0]
                )
                globals_[_unquote(gm.group(1))] = GlobalInfo(
                    int(am.group(1)) if am else 0, " constant " in f" {rest} "
                )
                continue
            dm = _DEFINE_RE.match(line)
            if dm is not None and _unquote(dm.group(1)) == root:
                params = tuple(
                    n for part in split_operands(dm.group(2)) for n in _LOCAL_RE.findall(part)[-1:]
                )
                body = []
            continue
        if line.startswith("}"):
            break
        body.append(line)
    if body is None:
        raise LookupError(f"function {root!r} is not defined in the compiled module")
    blocks: list[Block] = []
    name = "entry"
    current: list[Instr] = []
    pending = ""
    for raw in body:
        line = raw.rstrip()  # instructions carry no comments; block labels may (`; preds`)
        if not line.strip() or line.lstrip().startswith(";"):
            continue
        if pending:  # a switch's case list spans lines
            pending += " " + line.strip()
            if line.strip().startswith("]"):
                current.append(_instr(pending, nodes))
                pending = ""
            continue
        bm = _BLOCK_RE.match(line)
        if bm is not None and not line.startswith((" ", "\t")):
            if current:
                blocks.append(Block(name, tuple(current)))
            name = "%" + bm.group(1)
            current = []
            continue
        if line.strip().startswith("switch") and line.rstrip().endswith("["):
            pending = line.strip()
            continue
        current.append(_instr(line, nodes))
    if current:
        blocks.append(Block(name, tuple(current)))
    if blocks and blocks[0].name == "entry":
        blocks[0] = Block("%entry", blocks[0].instrs)
    return FunctionForm(name=root, params=params, blocks=tuple(blocks), globals=globals_)


def compiled_form(texts: Sequence[str], root: str) -> FunctionForm:
    """The function ``root`` of the modules ``texts``, everything inlined into it.

    Raises:
        LookupError: ``root`` is not defined in the modules.
    """
    markers: list[str] = []
    normalized = _normalize(texts, root, markers)
    form = _parse(normalized, root)
    opaque = _opaque(normalized, root)
    called = {i.callee for b in form.blocks for i in b.instrs if i.opcode == "call"}
    return FunctionForm(
        form.name,
        form.params,
        form.blocks,
        form.globals,
        site_callees=_site_callees(texts),
        call_markers=tuple(markers),
        opaque={name: o for name, o in opaque.items() if name in called},
    )


# --------------------------------------------------------------------------- shared globals

#: ``@name = ... addrspace(3) global <type> <init>``: a sized shared global.
_SHARED_DEF = re.compile(
    r'^@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+) = [^=]*?addrspace\(3\) global (.*?) '
    r"(?:undef|zeroinitializer|poison)\b"
)
_ALIGN = re.compile(r", align (\d+)")
_SCALAR_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "i128": 16, "half": 2,
                 "bfloat": 2, "float": 4, "double": 8}  # fmt: skip
_ARRAY = re.compile(r"^\[(\d+) x (.*)\]$")


@functools.cache
def plain_type_bytes(ty: str) -> int | None:
    """The bytes of a scalar LLVM type or a (nested) array of one; None for anything else."""
    ty = ty.strip()
    if ty in _SCALAR_BYTES:
        return _SCALAR_BYTES[ty]
    m = _ARRAY.match(ty)
    if m is None:
        return None
    inner = plain_type_bytes(m.group(2))
    return None if inner is None else int(m.group(1)) * inner


def _type_bytes(ty: str) -> int:
    """The bytes of an LLVM type: arrays of scalars by hand, anything else by llvmlite."""
    plain = plain_type_bytes(ty)
    if plain is not None:
        return plain
    ty = ty.strip()
    import llvmlite.binding as llvm

    module = llvm.parse_assembly(f"@g = global {ty} zeroinitializer\n")
    data = llvm.create_target_data("e-i64:64-i128:128-v16:16-v32:32-n16:32:64")
    return int(data.get_abi_size(module.get_global_variable("g").global_value_type))


def _named_globals(texts: Sequence[str], definition: re.Pattern[str]) -> list[tuple[str, str, str]]:
    """The globals of the IR modules ``texts`` whose definition line matches ``definition``
    (groups: the name, the type) and that their code names besides it (LLVM drops the
    others): (module's name of it, type, the definition line), module by module."""
    found = []
    for text in texts:
        for line in text.splitlines():
            m = definition.match(line)
            if m is not None and text.count(f"@{m.group(1)}") > 1:
                found.append((_unquote("@" + m.group(1)), m.group(2), line))
    return found


def static_shared_globals(texts: Sequence[str]) -> list[tuple[str, int, int]]:
    """The sized ``addrspace(3)`` globals of the IR modules ``texts`` that their code names,
    in the order they are defined: (name, bytes, alignment)."""
    found: dict[str, tuple[str, int, int]] = {}
    for bare, ty, line in _named_globals(texts, _SHARED_DEF):
        align = int(a.group(1)) if (a := _ALIGN.search(line)) else 1
        found[bare] = (bare, _type_bytes(ty), align)
    return list(found.values())


_CONST_DEF = re.compile(
    r'^@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+) = [^=]*?addrspace\(4\) '
    r"(?:global|constant) (\[[^=]*?\]|[a-z][a-z0-9]*) "
)


def constant_globals(texts: Sequence[str]) -> list[tuple[str, int]]:
    """The sized ``addrspace(4)`` (constant memory) globals of the IR modules ``texts`` that
    their code names, in the order they are defined: (name, bytes). Each module's are its
    own (an internal global of one module is another object than one of the same name in
    another: the linker renames it)."""
    return [(bare, _type_bytes(ty)) for bare, ty, _ in _named_globals(texts, _CONST_DEF)]


def laid_out(objects: Sequence[tuple[int, int]]) -> int:
    """The bytes ``(size, alignment)`` objects take laid out one after another, each starting
    at a multiple of its alignment, as ptxas places a kernel's shared globals (attack round
    26: a 1-byte tile beside a 49144-byte one takes 49160 bytes, not 49145)."""
    end = 0
    for size, align in objects:
        end = -(-end // align) * align + size
    return end
