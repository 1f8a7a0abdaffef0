"""Attack round 14 helper: a small PTX interpreter for the straight-line/branchy subset that
``shared.fill_async`` emits, used to emulate a fill thread by thread on the host (no GPU) and
compare each ``cp.async``'s reads against the input's bounds and the tile's bytes against
numpy's ``t[i, j] = a[r0 + i, c0 + j]`` (0 outside).

Each thread runs from the kernel's entry until its first ``cp.async.commit_group``,
``cp.async.wait_*``, ``bar.sync`` or ``ret``: everything the fill does before then is
recorded (``cp.async`` copies, plain global loads, shared stores).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

M64 = (1 << 64) - 1


def _mask(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def _signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


_TYPE_BITS = {
    "u8": 8,
    "s8": 8,
    "b8": 8,
    "u16": 16,
    "s16": 16,
    "b16": 16,
    "f16": 16,
    "u32": 32,
    "s32": 32,
    "b32": 32,
    "f32": 32,
    "u64": 64,
    "s64": 64,
    "b64": 64,
    "f64": 64,
    "pred": 1,
}


class Stop(Exception):
    pass


@dataclass
class Kernel:
    name: str
    params: list[str]
    body: list[tuple[str, Any]]  # ("label", name) | ("ins", (pred, neg, opcode, operands))
    labels: dict[str, int]
    shared: dict[str, int]  # symbol -> byte size
    reqntid: tuple[int, int, int] | None


def parse(ptx: str) -> Kernel:
    shared = {}
    for m in re.finditer(r"\.shared \.align \d+ \.b8 (\w+)\[(\d+)\];", ptx):
        shared[m.group(1)] = int(m.group(2))
    m = re.search(r"\.visible \.entry (\w+)\(\s*(.*?)\)", ptx, re.S)
    assert m
    name = m.group(1)
    params = re.findall(r"\.param \.\w+ (\w+)", m.group(2))
    rq = re.search(r"\.reqntid (\d+), (\d+), (\d+)", ptx)
    reqntid = tuple(int(x) for x in rq.groups()) if rq else None
    start = ptx.index("{", m.end())
    text = ptx[start + 1 :]
    # drop comments
    text = re.sub(r"//[^\n]*", "", text)
    body: list[tuple[str, Any]] = []
    labels: dict[str, int] = {}
    for stmt in re.split(r"[;\n]", text):
        s = stmt.strip()
        if not s or s in ("{", "}"):
            continue
        while s.startswith("{") or s.startswith("}"):
            s = s[1:].strip()
        if not s:
            continue
        lm = re.match(r"^(\$?[\w$]+):\s*(.*)$", s)
        if lm:
            labels[lm.group(1)] = len(body)
            body.append(("label", lm.group(1)))
            s = lm.group(2).strip()
            if not s:
                continue
        if s.startswith(".reg") or s.startswith(".local") or s.startswith(".shared"):
            continue
        pred, neg = None, False
        pm = re.match(r"^@(!?)(%\w+)\s+(.*)$", s)
        if pm:
            neg = pm.group(1) == "!"
            pred = pm.group(2)
            s = pm.group(3)
        parts = s.split(None, 1)
        opcode = parts[0]
        ops = [o.strip() for o in _split_ops(parts[1])] if len(parts) > 1 else []
        body.append(("ins", (pred, neg, opcode, ops)))
    return Kernel(name, params, body, labels, shared, reqntid)


def _split_ops(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


@dataclass
class Memory:
    """Global memory: a base allocation; the input is a set of byte ranges in it."""

    base: int
    data: bytes
    inside: list[tuple[int, int]]  # the input's bytes: [lo, hi) ranges

    def is_inside(self, addr: int, n: int) -> bool:
        return any(lo <= addr and addr + n <= hi for lo, hi in self.inside)

    def read(self, addr: int, n: int) -> bytes:
        off = addr - self.base
        if off < 0 or off + n > len(self.data):
            return b"\xee" * n  # outside the allocation entirely (flagged by is_inside anyway)
        return self.data[off : off + n]


@dataclass
class Events:
    copies: list[dict] = field(default_factory=list)
    loads: list[tuple[int, int]] = field(default_factory=list)
    oob: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def run_thread(
    k: Kernel,
    params: dict[int, int],
    tid: tuple[int, int, int],
    ntid: tuple[int, int, int],
    mem: Memory,
    smem: bytearray,
    writes: list[int],
    sym_addr: dict[str, int],
    ev: Events,
    max_steps: int = 200000,
) -> None:
    regs: dict[str, int] = {}
    special = {
        "%tid.x": tid[0],
        "%tid.y": tid[1],
        "%tid.z": tid[2],
        "%ntid.x": ntid[0],
        "%ntid.y": ntid[1],
        "%ntid.z": ntid[2],
        "%ctaid.x": 0,
        "%ctaid.y": 0,
        "%ctaid.z": 0,
        "%nctaid.x": 1,
        "%nctaid.y": 1,
        "%nctaid.z": 1,
    }
    pindex = {p: i for i, p in enumerate(k.params)}

    def val(op: str, bits: int) -> int:
        op = op.strip()
        if op in special:
            return _mask(special[op], bits)
        if op.startswith("%"):
            if op not in regs:
                raise KeyError(f"undefined register {op}")
            return _mask(regs[op], bits)
        if re.fullmatch(r"0[fF][0-9a-fA-F]{8}", op) or re.fullmatch(r"0[dD][0-9a-fA-F]{16}", op):
            return int(op[2:], 16)
        if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)[uU]?", op):
            return _mask(int(op.rstrip("uU"), 0), bits)
        if op in sym_addr:
            return _mask(sym_addr[op], bits)
        raise KeyError(f"operand {op}")

    def addr_of(op: str) -> int:
        m = re.fullmatch(r"\[\s*([%\w$.]+)\s*(?:\+\s*(-?\d+))?\s*\]", op.strip())
        assert m, op
        base = m.group(1)
        off = int(m.group(2) or 0)
        if base in pindex:
            return ("param", pindex[base], off)  # type: ignore[return-value]
        return _mask(val(base, 64) + off, 64)

    def setr(d: str, v: int, bits: int) -> None:
        regs[d] = _mask(v, bits)

    pc = 0
    steps = 0
    while pc < len(k.body):
        steps += 1
        if steps > max_steps:
            raise RuntimeError("too many steps")
        kind, item = k.body[pc]
        pc += 1
        if kind == "label":
            continue
        pred, neg, opc, ops = item
        if pred is not None:
            p = regs[pred] & 1
            if neg:
                p ^= 1
            if not p:
                continue
        parts = opc.split(".")
        base = parts[0]
        tys = [p for p in parts[1:] if p in _TYPE_BITS]
        bits = _TYPE_BITS[tys[-1]] if tys else 64
        if base in ("bra",):
            pc = k.labels[ops[0]]
            continue
        if base == "ret" or base == "exit" or base == "bar" or base == "barrier":
            return
        if opc.startswith("cp.async.commit_group") or opc.startswith("cp.async.wait"):
            return
        if base == "fence":
            continue
        if opc.startswith("cp.async.c"):  # cp.async.cg/ca.shared.global
            dst = addr_of(ops[0])
            src = addr_of(ops[1])
            size = val(ops[2], 32)
            last = ops[3]
            ign = last.startswith("%p") or last == "%ssi"
            if ign:
                ignore = bool(regs[last] & 1)
                srcsize = 0 if ignore else size
            else:
                ignore = False
                srcsize = val(last, 32)
            rec = {
                "dst": dst,
                "src": src,
                "size": size,
                "srcsize": srcsize,
                "ignore": ignore,
                "tid": tid,
            }
            if ign:
                rec["ign"] = True
            ev.copies.append(rec)
            if dst % size:
                ev.oob.append(f"misaligned cp.async dst {dst:#x} size {size} tid {tid}")
            if srcsize:
                if src % size:
                    ev.oob.append(f"misaligned cp.async src {src:#x} size {size} tid {tid}")
                if not mem.is_inside(src, srcsize):
                    ev.oob.append(
                        f"cp.async reads [{src:#x}, +{srcsize}) outside the input, tid {tid}"
                    )
                data = mem.read(src, srcsize) + b"\x00" * (size - srcsize)
            else:
                data = b"\x00" * size
            for i in range(size):
                smem[dst + i] = data[i]
                writes[dst + i] += 1
            continue
        if base == "ld":
            space = parts[1]
            d = ops[0]
            a = addr_of(ops[1])
            if space == "param":
                assert isinstance(a, tuple)
                v = params[a[1]]
                setr(d, v, bits)
                continue
            if space == "global":
                nb = bits // 8
                if d.startswith("{"):
                    dests = [x.strip() for x in d.strip("{}").split(",")]
                else:
                    dests = [d]
                for idx, dd in enumerate(dests):
                    ad = a + idx * nb
                    ev.loads.append((ad, nb))
                    if not mem.is_inside(ad, nb):
                        ev.oob.append(f"ld.global [{ad:#x}, +{nb}) outside the input, tid {tid}")
                    setr(dd, int.from_bytes(mem.read(ad, nb), "little"), bits)
                continue
            raise NotImplementedError(opc)
        if base == "st":
            space = parts[1]
            a = addr_of(ops[0])
            if space == "shared":
                nb = bits // 8
                srcs = ops[1]
                if srcs.startswith("{"):
                    vals = [x.strip() for x in srcs.strip("{}").split(",")]
                else:
                    vals = [srcs]
                for idx, s in enumerate(vals):
                    v = val(s, bits)
                    ad = a + idx * nb
                    for i in range(nb):
                        smem[ad + i] = (v >> (8 * i)) & 0xFF
                        writes[ad + i] += 1
                continue
            return  # a global store: the fill is over
        if base == "mov" and bits > 1:
            setr(ops[0], val(ops[1], bits), bits)
            continue
        if base == "cvta":
            setr(ops[0], val(ops[1], 64), bits)
            continue
        if base == "cvt":
            dty, sty = tys[0], tys[1]
            db, sb = _TYPE_BITS[dty], _TYPE_BITS[sty]
            if dty[0] == "f" or sty[0] == "f":
                raise NotImplementedError(opc)
            v = val(ops[1], sb)
            if sty[0] == "s":
                v = _signed(v, sb)
            setr(ops[0], v, db)
            continue
        if base == "setp":
            cmp = parts[1]
            ty = tys[0]
            b = _TYPE_BITS[ty]
            x, y = val(ops[1], b), val(ops[2], b)
            if ty[0] == "s":
                x, y = _signed(x, b), _signed(y, b)
            r = {
                "eq": x == y,
                "ne": x != y,
                "lt": x < y,
                "le": x <= y,
                "gt": x > y,
                "ge": x >= y,
                "lo": x < y,
                "ls": x <= y,
                "hi": x > y,
                "hs": x >= y,
            }[cmp]
            if len(parts) > 3 and parts[3] in ("and", "or", "xor"):
                q = regs[ops[3].lstrip("!")] & 1
                if ops[3].startswith("!"):
                    q ^= 1
                r = {"and": r and q, "or": r or q, "xor": r ^ q}[parts[3]]
            dst = ops[0].split("|")
            regs[dst[0]] = int(bool(r))
            if len(dst) > 1:
                regs[dst[1]] = int(not r)
            continue
        if bits == 1 or (tys and tys[-1] == "pred"):

            def pv(o: str) -> int:
                if o.startswith("!"):
                    return 1 - (regs[o[1:]] & 1)
                return regs[o] & 1

            if base == "and":
                regs[ops[0]] = pv(ops[1]) & pv(ops[2])
            elif base == "or":
                regs[ops[0]] = pv(ops[1]) | pv(ops[2])
            elif base == "xor":
                regs[ops[0]] = pv(ops[1]) ^ pv(ops[2])
            elif base == "not":
                regs[ops[0]] = 1 - pv(ops[1])
            elif base == "mov":
                regs[ops[0]] = pv(ops[1])
            else:
                raise NotImplementedError(opc)
            continue
        if base == "selp":
            p = regs[ops[3]] & 1
            setr(ops[0], val(ops[1], bits) if p else val(ops[2], bits), bits)
            continue
        signed = bool(tys) and tys[-1][0] == "s"
        if base in ("add", "sub", "mul", "mad", "and", "or", "xor", "min", "max", "div", "rem"):
            mode = parts[1] if len(parts) > 1 and parts[1] in ("lo", "hi", "wide") else None
            x, y = val(ops[1], bits), val(ops[2], bits)
            if signed:
                xs, ys = _signed(x, bits), _signed(y, bits)
            else:
                xs, ys = x, y
            ob = bits
            if base == "add":
                r = x + y
            elif base == "sub":
                r = x - y
            elif base in ("mul", "mad"):
                full = xs * ys
                if mode == "wide":
                    ob = 2 * bits
                    r = full
                elif mode == "hi":
                    r = full >> bits
                else:
                    r = full
                if base == "mad":
                    r = r + val(ops[3], ob)
            elif base == "and":
                r = x & y
            elif base == "or":
                r = x | y
            elif base == "xor":
                r = x ^ y
            elif base == "min":
                r = min(xs, ys)
            elif base == "max":
                r = max(xs, ys)
            elif base == "div":
                r = int(xs / ys) if signed else xs // ys
            elif base == "rem":
                r = xs - int(xs / ys) * ys if signed else xs % ys
            setr(ops[0], r, ob)
            continue
        if base in ("neg", "not", "abs"):
            x = val(ops[1], bits)
            r = {"neg": -x, "not": ~x, "abs": abs(_signed(x, bits))}[base]
            setr(ops[0], r, bits)
            continue
        if base in ("shl", "shr"):
            x = val(ops[1], bits)
            s = val(ops[2], 32)
            if base == "shl":
                r = x << s if s < bits else 0
            elif signed:
                r = _signed(x, bits) >> min(s, bits - 1)
            else:
                r = x >> s if s < bits else 0
            setr(ops[0], r, bits)
            continue
        if base == "bfe":
            x = val(ops[1], bits)
            pos, ln = val(ops[2], 32) & 0xFF, val(ops[3], 32) & 0xFF
            r = (x >> pos) & ((1 << ln) - 1) if ln else 0
            if signed and ln and (r >> (ln - 1)) & 1:
                r -= 1 << ln
            setr(ops[0], r, bits)
            continue
        if base == "bfi":  # b with bits [pos, pos + len) replaced by a's low len bits
            a, b = val(ops[1], bits), val(ops[2], bits)
            pos, ln = val(ops[3], 32) & 0xFF, val(ops[4], 32) & 0xFF
            ln = min(ln, max(bits - pos, 0))
            field = ((1 << ln) - 1) << pos
            setr(ops[0], (b & ~field) | ((a << pos) & field), bits)
            continue
        raise NotImplementedError(f"{opc} {ops}")


def regs_is_pred(name: str) -> bool:
    return name in ("%ssi",)
