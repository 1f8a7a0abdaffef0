"""Compiled form of the whole-tile fills: ``shared.fill_async`` (``cp.async``) and
``shared.fill_transposed``, and the group operations ``commit_group`` / ``wait_group`` /
``wait_all``.

``__ss_shared_fill_async(t, a, origin)`` copies ``a[r0 + i, c0 + j]`` into
``t[i, j]`` for every element of the tile (1D: ``a[start + j]`` into
``t[j]``), 0 where the input has no such element. The tile is cut into runs
of 16, 8 or 4 bytes (``_fillrule.run_bytes``); thread ``tid`` copies runs
``tid, tid + T, ...``. A run whose first element lies inside the input and
whose source address is a multiple of the run's size is ONE ``cp.async``
(``.cg`` for 16 bytes, ``.ca`` for 4 and 8) whose src-size operand is the
bytes that lie inside the input's row: the hardware zero-fills the rest, and
never reads past the row's end. Any other run (misaligned, starting outside
the input) is copied element by element with plain loads and stores, 0
outside: no address outside the input is ever read. The copies are in
flight until the thread waits for their group (``cp.async.wait_group n``);
the phase analysis (``decoration._phases``) refuses a read before that wait
and a block barrier after it.

``__ss_shared_fill_transposed(t, a, origin)`` fills the 2D tile ``t`` of
shape ``(K, M)`` with ``t[c, r] = a[r0 + r, c0 + c]``: the source rectangle
of ``M`` rows by ``K`` columns is cut into runs along its rows (coalesced
loads, one ``ld.global.v4`` when whole and aligned), and the thread that
loads a run writes its ``n`` elements down one column of the tile. Plain
stores: the tile is filled when the thread has run the call.

Origins are compared before any addition that could wrap: an origin beyond
``+-2**62`` reads as outside the input.

A fixed-shape tile first tests, once, whether every run's source is aligned
and no row's start or end cuts a run (``a[0, 0]``'s and ``a[0, c0]``'s addresses, the row
pitch and the row's end address multiples of the run size: ``_Source.whole_runs``). Then each run is one
``cp.async`` of its whole size whose ignore-src predicate is "the run's row or first
column lies outside the input": the hardware zero-fills it and reads nothing, so a tile at
an edge needs no branch. Where the contract pins the block (``.reqntid``: the runs of a
thread are a constant count), they are straight-line copies, each a predicated instruction
whose predicate is the test (``@p cp.async``: where the test fails it reads and writes
nothing), and the per-run path follows under a branch taken where the test fails: no
branch goes around the copies, so the compiler computes their addresses ahead (before a
barrier that precedes the fill). Without a pinned block the test branches between the two
paths. Where the block's ``T`` threads are a whole number of tile rows of runs (and, in a
swizzled tile, of 8 rows: the swizzle's period), run ``k + T`` lies the same number of rows
below run ``k`` at the same place in its row: the thread's first source and tile addresses
are computed once, each further run's by one add, and each run's row test is one compare
with a constant. Both paths copy the same bytes. An input the launch found aligned for
runs (``_runaligned``) makes the test a fact of the origin alone: where the origin steps by
whole runs NVVM folds it, and the per-run path is gone.

``__ss_shared_fill_async_pair(t1, a1, o1, t2, a2, o2, line2)`` is two consecutive calls
(``decoration._fillpairs``): where both tiles' copies are predicated, every copy of both
comes first and one branch after them leads to the per-run paths, each under its own
tile's test (a branch between the two tiles' copies would keep the compiler from issuing
the second's right after the first's); otherwise the two fills in order. The second
fill's instructions carry its own source line (``line2``), as its refusal does.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.core import errors
from numba.cuda.np.arrayobj import make_array

from . import _tilebase as tb
from ._fillrule import dynamic_run_bytes, fill_refusal, run_bytes, second_call, wait_refusal
from ._provenance import at_line, fill_start, fill_writes
from ._swizzle import BLOCK_COLS, SwizzledTileType, chunk_offset, only_fill_and_wgmma

__all__ = ["builtins"]

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_LIMIT = 2**62


def _c(v: int) -> ir.Constant:
    return ir.Constant(_I64, v)


def _clamp30(b: ir.IRBuilder, v: Any) -> Any:
    """An i64 clamped to ``[0, 2**30]``, as an i32."""
    v = b.select(b.icmp_signed("<", v, _c(0)), _c(0), v)
    return b.trunc(b.select(b.icmp_signed(">", v, _c(2**30)), _c(2**30), v), _I32)


def _origin_types(origin: Any, ndim: int) -> tuple[Any, ...] | None:
    if ndim == 1:
        return (origin,) if isinstance(origin, types.Integer) else None
    if isinstance(origin, types.BaseTuple) and len(origin) == 2:
        if all(isinstance(t, types.Integer) for t in origin):
            return tuple(origin)
    return None


def _source_kind(a: Any) -> str:
    if isinstance(a, types.Array):
        return "input" if not a.mutable else "a writable array"
    return str(a)


def _type_fill(what: str, t: Any, a: Any, origin: Any) -> tuple[int, tuple[Any, ...]]:
    """Check the arguments; returns (run bytes, origin element types)."""
    from ._tiles import SharedTileType  # imports _cuda: bound late

    if isinstance(t, SwizzledTileType) and what != "shared.fill_async":
        raise errors.TypingError("simtsafe: " + only_fill_and_wgmma(t, what))
    if not isinstance(t, SharedTileType | SwizzledTileType):
        raise errors.TypingError(f"simtsafe: {what} fills a shared tile (shared.tile); got {t}")
    array = isinstance(a, types.Array)
    origin_types = _origin_types(origin, t.ndim)
    itemsize = t.dtype.bitwidth // 8 if hasattr(t.dtype, "bitwidth") else 0
    run = None
    if t.shape is None and itemsize:  # a dynamic tile: 1D, its length known at launch
        run = dynamic_run_bytes(itemsize)
    elif t.shape is not None and t.storage is not None and itemsize:
        if what == "shared.fill_transposed":
            run = run_bytes(t.shape[0], t.shape[0], itemsize)  # a source row: K elements
        else:
            run = run_bytes(t.shape[-1], t.storage[-1], itemsize)
    # A swizzled tile's rows are 128 bytes of 16-bit elements: runs of 16 bytes, one chunk each.
    assert not isinstance(t, SwizzledTileType) or run == 16
    refusal = fill_refusal(
        what,
        tile_ndim=t.ndim,
        dynamic=t.shape is None,
        readonly=t.readonly,
        source=_source_kind(a),
        source_ndim=a.ndim if array else 0,
        contiguous=array and a.layout == "C",
        same_dtype=array and a.dtype == t.dtype,
        origin_ok=origin_types is not None,
        run=run,
    )
    if refusal is not None:
        raise errors.TypingError("simtsafe: " + refusal)
    assert run is not None and origin_types is not None
    return run, origin_types


def _origin_value(context: Any, builder: ir.IRBuilder, v: Any, ty: Any) -> Any:
    """An origin as int64. An unsigned 64-bit value of 2**62 or more becomes ``_LIMIT`` (out
    of range: the fill reads nothing, every element 0) rather than wrapping to a negative
    number that would read the input's first elements."""
    value = context.cast(builder, v, ty, types.int64)
    if isinstance(ty, types.Integer) and not ty.signed and ty.bitwidth == 64:
        big = builder.icmp_unsigned(">=", v, ir.Constant(v.type, _LIMIT))
        value = builder.select(big, _c(_LIMIT), value)
    return value


class _Source:
    """The input's rows, its row pointer and guarded element loads."""

    def __init__(
        self, context: Any, builder: ir.IRBuilder, aty: Any, aval: Any, origin: list[Any]
    ) -> None:
        ary = make_array(aty)(context, builder, aval)
        self.builder = builder
        self.mem = context.get_data_type(aty.dtype)
        self.itemsize = aty.dtype.bitwidth // 8
        # A record's data type is an array of bytes, whose store LLVM splits into one store a
        # byte: pieces without their fill's marker (``lowering._irform``), which the tile
        # phase check reads as writes of no fill. An element is copied as one integer of its
        # size instead (1 to 16 bytes: the runs hold whole elements), read from the input
        # with alignment 1, as Numba reads a record (its arrays are unaligned), and stored
        # into the tile aligned to its size: a tile starts at a multiple of 16 bytes
        # (``_tiles``) and its elements lie at multiples of their size from it.
        record = isinstance(self.mem, ir.ArrayType)
        self.word = ir.IntType(8 * self.itemsize) if record else self.mem
        self.word_align = 1 if record else None
        self.tile_align = self.itemsize if record else None
        shape = cgutils.unpack_tuple(builder, ary.shape, aty.ndim)
        self.cols = shape[-1]
        self.rows = shape[0] if aty.ndim == 2 else _c(1)
        self.stride0 = cgutils.unpack_tuple(builder, ary.strides, aty.ndim)[0]
        self.bytes = builder.bitcast(ary.data, ir.IntType(8).as_pointer())
        if aty.ndim == 1:
            origin = [_c(0), *origin]
        ok = cgutils.true_bit
        for v in origin:  # |origin| < 2**62: origin + tile index never wraps
            ok = builder.and_(ok, builder.icmp_signed("<", v, _c(_LIMIT)))
            ok = builder.and_(ok, builder.icmp_signed(">", v, _c(-_LIMIT)))
        self.origin_ok = ok
        self.r0, self.c0 = origin

    def whole_runs(self, rows: int, size: int) -> Any:
        """True when every row of the input starts and ends ``size``-aligned and every run
        of ``size`` bytes from the origin's row starts ``size``-aligned: then each run lies
        wholly inside a row or wholly outside it (its row or its first column outside the
        input), no run is cut by a row's start or end. (A row whose start is not aligned
        -- a view from an element offset -- cuts the run holding its first column: that
        run's first column lies before the row, and the ignore-src copy would zero-fill the
        row's first elements; attack round 13.)"""
        b = self.builder
        if rows > 1:
            # a[r, 0], a[r, c0] and a[r, cols] for every r are size-aligned exactly when the
            # pitch and a[0, 0]'s, a[0, c0]'s and a[0, cols]'s addresses are (size divides
            # 2**64, so r * pitch is a multiple of size whenever the pitch is, wrap or not):
            # a test with no product of the row, the same in every step of a loop that moves
            # the origin along the rows
            r = _c(0)
            both = self.stride0
        else:
            r = self.r0
            both = _c(0)
        for c in (_c(0), self.c0, self.cols):
            both = b.or_(both, b.ptrtoint(self.element_pointer(r, c), _I64))
        return b.icmp_unsigned("==", b.and_(both, _c(size - 1)), _c(0))

    def row_inside(self, gr: Any) -> Any:
        b = self.builder
        return b.and_(self.origin_ok, b.icmp_unsigned("<", gr, self.rows))

    def element_pointer(self, gr: Any, gc: Any) -> Any:
        """Address of ``a[gr, gc]``; dereferenced only where it lies inside the input."""
        b = self.builder
        row = b.gep(self.bytes, [b.mul(gr, self.stride0)])
        return b.gep(b.bitcast(row, self.mem.as_pointer()), [gc])

    def element(self, gr: Any, gc: Any, row_ok: Any) -> Any:
        """``a[gr, gc]`` as a ``self.word``, or 0 outside the input."""
        b = self.builder
        slot = cgutils.alloca_once_value(b, ir.Constant(self.word, None))
        inside = b.and_(row_ok, b.icmp_unsigned("<", gc, self.cols))
        with b.if_then(inside, likely=True):
            at = self.element_pointer(gr, gc)
            if self.word is not self.mem:
                at = b.bitcast(at, self.word.as_pointer())
            b.store(b.load(at, align=self.word_align), slot)
        return b.load(slot)

    def store(self, value: Any, dst: Any, e: int) -> None:
        """Store ``value`` (a ``self.word``) into element ``e`` of the run at ``dst``, a tile
        element: one store whose address is a ``getelementptr`` (what the fill's marker
        names)."""
        b = self.builder
        if self.word is not self.mem:
            dst = b.bitcast(dst, self.word.as_pointer())
        b.store(value, b.gep(dst, [_c(e)]), align=self.tile_align)


def _copy_element(
    builder: ir.IRBuilder,
    src: _Source,
    dst: Any,
    gr: Any,
    gc: Any,
    e: int,
    row_ok: Any,
    j: Any,
    length: Any,
    dynamic: bool,
) -> None:
    """Element ``e`` of a run by a plain load and store (0 outside the input); in a dynamic
    tile only where the tile has it (``j + e < length``)."""

    def copy() -> None:
        src.store(src.element(gr, builder.add(gc, _c(e)), row_ok), dst, e)

    if not dynamic:
        copy()
        return
    with builder.if_then(builder.icmp_unsigned("<", builder.add(j, _c(e)), length)):
        copy()


def _runs(builder: ir.IRBuilder, total: Any, body: Any) -> None:
    """``body(k)`` for the runs ``k = tid, tid + T, ... < total`` (an int or an i64) of
    this thread."""
    start = tb.linear_tid(builder)
    step = tb.threads_per_block(builder)
    end = _c(total) if isinstance(total, int) else total
    with cgutils.for_range_slice(builder, start, end, step, _I64) as (k, _):
        body(k)


def _runs_pinned(builder: ir.IRBuilder, total: int, body: Any, lined_up: Any = None) -> None:
    """``_runs`` over a constant count of runs: where the contract pins the block to ``T``
    threads, the ``ceil(total / T)`` runs of a thread one after another (the last tested
    against ``total`` when ``T`` does not divide it), else the loop.

    ``lined_up(tid, T)``, where given, may return ``run(q)``: the thread's run ``q`` (run
    ``tid + q * T``) emitted from addresses it computed once; else each run is ``body(k)``.
    """
    block = tb.required_block(builder)
    if block is None:
        _runs(builder, total, body)
        return
    threads = block[0] * block[1] * block[2]
    tid = tb.linear_tid(builder)
    run = lined_up(tid, threads) if lined_up is not None else None
    for q in range(-(-total // threads)):
        k = builder.add(tid, _c(q * threads))
        last = (q + 1) * threads > total  # T does not divide total: tested
        with builder.if_then(builder.icmp_unsigned("<", k, _c(total))) if last else nullcontext():
            if run is not None:
                run(q)
            else:
                body(k)


def _cp_async(
    builder: ir.IRBuilder,
    dst: Any,
    src: Any,
    size: int,
    *,
    src_bytes: Any = None,
    ignore: Any = None,
    guard: Any = None,
) -> None:
    """``cp.async`` of ``size`` bytes from ``src`` to ``dst``, a tile element: given to the
    instruction as its 32-bit address in the shared window (the tile is a shared object, so
    the generic round trip folds away and the address arithmetic can stay in 32 bits).
    ``src_bytes`` (an ``i32``): that many bytes read, the rest zero-filled; or ``ignore`` (an
    ``i1``): where true the source is not read at all and the run is zero-filled. With
    ``guard`` (an ``i1``), the copy is a predicated instruction: it reads and writes nothing
    where the guard is false."""
    kind = "cg" if size == 16 else "ca"
    regs = ["\t.reg .u64 %ssg;\n"]
    sets = []
    args = [_I32, _I64]
    values = [
        builder.ptrtoint(builder.addrspacecast(dst, ir.PointerType(dst.type.pointee, 3)), _I32),
        builder.ptrtoint(src, _I64),
    ]
    if ignore is not None:
        regs.append("\t.reg .pred %ssi;\n")
        sets.append(f"\tsetp.ne.b32 %ssi, ${len(values)}, 0;\n")
        tail = "%ssi"
        values.append(builder.zext(ignore, _I32))
    else:
        tail = f"${len(values)}"
        values.append(src_bytes)
    args.append(_I32)
    predicate = ""
    if guard is not None:
        regs.append("\t.reg .pred %ssp;\n")
        sets.append(f"\tsetp.ne.b32 %ssp, ${len(values)}, 0;\n")
        predicate = "@%ssp "
        values.append(builder.zext(guard, _I32))
        args.append(_I32)
    copy = f"{predicate}cp.async.{kind}.shared.global [$0], [%ssg], {size}, {tail};"
    text = "{\n" + "".join(regs + sets) + f"\tcvta.to.global.u64 %ssg, $1;\n\t{copy}\n}}"
    constraints = ",".join(["r", "l"] + ["r"] * (len(values) - 2) + ["~{memory}"])
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), args), text, constraints, side_effect=True)
    builder.call(asm, values)


def _plain_asm(builder: ir.IRBuilder, text: str) -> None:
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), text, "~{memory}", side_effect=True)
    builder.call(asm, [])


class _Fill:
    """One ``fill_async`` call's lowering: its source, its tile and, for a fixed-shape tile,
    the test that every run's source is aligned and no row's end cuts a run."""

    def __init__(
        self,
        context: Any,
        builder: ir.IRBuilder,
        types_: tuple[Any, Any, Any],
        checked: tuple[int, tuple[Any, ...]],
        args: Any,
    ) -> None:
        t, a, origin = types_
        size, origin_types = checked  # what the typer's _type_fill returned
        self.builder = builder
        self.size = size
        self.itemsize = t.dtype.bitwidth // 8
        self.n = n = size // self.itemsize
        self.dynamic = t.shape is None
        self.rows = 1 if self.dynamic else t.shape[0] if t.ndim == 2 else 1
        self.per_row = 0 if self.dynamic else t.shape[-1] // n
        self.storage_row = 0 if self.dynamic else t.storage[-1]
        self.swizzled = isinstance(t, SwizzledTileType)
        raw = [args[2]] if t.ndim == 1 else cgutils.unpack_tuple(builder, args[2], 2)
        origin_vals = [
            _origin_value(context, builder, v, ty) for v, ty in zip(raw, origin_types, strict=True)
        ]
        self.src = _Source(context, builder, a, args[1], origin_vals)
        data, shape, _ = tb.holder_parts(context, builder, t, args[0])
        self.tile = builder.bitcast(data, context.get_data_type(t.dtype).as_pointer())
        self.length = shape[0]  # a dynamic tile's runs: ceil(length / n), the last one partial
        # A fixed-shape tile's alignment test; where the contract pins the block, the copies
        # are predicated on it (see ``copies``).
        self.aligned = None if self.dynamic else self.src.whole_runs(self.rows, size)
        self.predicated = self.aligned is not None and tb.required_block(builder) is not None

    def writes(self) -> Any:
        """The context of this fill's writes: every copy and store tagged with the map that
        gives the tile's elements to threads (run ``k`` of ``size`` bytes to thread ``k mod
        T``), so the compiled-form check knows two fills of a tile by one map apart from a
        fill of another kind (``verify._tilephases``)."""
        return fill_writes(f"async{self.size}")

    def start(self) -> None:
        """Mark where this fill's copies begin (the compiled-form check asks there whether an
        earlier copy of this thread into the tile may still be in flight)."""
        fill_start(self.builder, self.tile)

    def place(self, k: Any) -> tuple[Any, Any, Any]:
        """Run ``k`` of a fixed-shape tile: its row, first column and tile address."""
        b = self.builder
        i = b.udiv(k, _c(self.per_row))
        c = b.urem(k, _c(self.per_row))
        j = b.mul(c, _c(self.n))
        if self.swizzled:  # run = chunk c of row i (16 bytes, n = 8): placed by the swizzle
            return i, j, b.gep(self.tile, [chunk_offset(b, self.rows, i, c)])
        return i, j, b.gep(self.tile, [b.add(b.mul(i, _c(self.storage_row)), j)])

    def run(self, k: Any) -> None:
        """The per-run path of run ``k``: one ``cp.async`` where the run starts inside the
        input, aligned (and, in a dynamic tile, is whole), else element by element."""
        b, src, n, size = self.builder, self.src, self.n, self.size
        if self.dynamic:
            i, j = _c(0), b.mul(k, _c(n))
            dst = b.gep(self.tile, [j])
            whole = b.icmp_unsigned("<=", b.add(j, _c(n)), self.length)
        else:
            i, j, dst = self.place(k)
            whole = cgutils.true_bit
        gr = b.add(src.r0, i)
        gc = b.add(src.c0, j)
        row_ok = src.row_inside(gr)
        start_ok = b.and_(row_ok, b.icmp_unsigned("<", gc, src.cols))
        first = src.element_pointer(gr, gc)
        misalign = b.and_(b.ptrtoint(first, _I64), _c(size - 1))
        fast = b.and_(start_ok, b.icmp_unsigned("==", misalign, _c(0)))
        fast = b.and_(fast, whole)
        with b.if_else(fast, likely=True) as (then, otherwise):
            with then:
                left = b.sub(src.cols, gc)  # >= 1 here
                inside = b.select(b.icmp_unsigned("<", left, _c(n)), left, _c(n))
                nbytes = b.trunc(b.mul(inside, _c(self.itemsize)), _I32)
                _cp_async(b, dst, first, size, src_bytes=nbytes)
            with otherwise:
                for e in range(n):
                    _copy_element(b, src, dst, gr, gc, e, row_ok, j, self.length, self.dynamic)

    def per_run(self) -> None:
        """Every run of this thread by the per-run path."""
        b = self.builder
        if self.dynamic:
            _runs(b, b.udiv(b.add(self.length, _c(self.n - 1)), _c(self.n)), self.run)
        else:
            _runs(b, self.rows * self.per_row, self.run)

    def copies(self) -> None:
        """Every run of a fixed-shape tile one ``cp.async`` whose ignore-src predicate is "the
        run's row or first column lies outside the input" (then the hardware zero-fills it
        and reads nothing: its computed source address, which may lie outside the input, is
        never dereferenced), no branch: correct where every run's source is aligned and no
        row's end cuts a run (``self.aligned``), and predicated on that test where the block
        is pinned (``self.predicated``)."""
        b, src, size = self.builder, self.src, self.size
        guard = self.aligned if self.predicated else None

        def whole(k: Any) -> None:
            i, j, dst = self.place(k)
            gr, gc = b.add(src.r0, i), b.add(src.c0, j)
            inside = b.and_(src.row_inside(gr), b.icmp_unsigned("<", gc, src.cols))
            first = src.element_pointer(gr, gc)
            _cp_async(b, dst, first, size, ignore=b.not_(inside), guard=guard)

        def lined_up(tid: Any, threads: int) -> Any:
            """Where run ``k + T`` lies ``T / per_row`` rows below run ``k`` at the same place
            of its row's swizzle: ``run(q)`` from the thread's first run's addresses and its
            column's and rows' bounds (computed once here) by one add each; else None."""
            if threads % self.per_row:
                return None
            step_rows = threads // self.per_row
            if self.swizzled and step_rows % 8:  # the swizzle repeats every 8 rows
                return None
            i0, j0, dst0 = self.place(tid)
            gr0, gc0 = b.add(src.r0, i0), b.add(src.c0, j0)
            # Run q's row is gr0 + q * step_rows: inside where the origin is in range, the
            # column (the same in every run of the thread) is, and -gr0 <= q * step_rows <
            # rows - gr0 (no wrap: |gr0| < 2**62 where the origin is in range). Both bounds
            # clamped once to [0, 2**30] and cut to 32 bits (every q * step_rows is below
            # 2**30: the answers stay the same), the upper one 0 where the origin or the
            # column is outside (no run inside then), so each run is two 32-bit compares of
            # a number with a constant.
            ok = b.and_(src.origin_ok, b.icmp_unsigned("<", gc0, src.cols))
            low = _clamp30(b, b.sub(_c(0), gr0))
            left = b.select(ok, _clamp30(b, b.sub(src.rows, gr0)), ir.Constant(_I32, 0))
            assert -(-self.rows * self.per_row // threads) * step_rows < 2**30
            first = b.bitcast(src.element_pointer(gr0, gc0), ir.IntType(8).as_pointer())
            src_step = b.mul(src.stride0, _c(step_rows))  # bytes
            dst_step = step_rows * (BLOCK_COLS if self.swizzled else self.storage_row)

            def run(q: int) -> None:
                at = b.gep(first, [b.mul(src_step, _c(q))]) if q else first
                dst = b.gep(dst0, [_c(q * dst_step)]) if q else dst0
                below = b.icmp_signed(">", left, ir.Constant(_I32, q * step_rows))
                above = b.icmp_signed("<=", low, ir.Constant(_I32, q * step_rows))
                inside = b.and_(below, above)
                source = b.bitcast(at, src.mem.as_pointer())
                _cp_async(b, dst, source, size, ignore=b.not_(inside), guard=guard)

            return run

        _runs_pinned(b, self.rows * self.per_row, whole, lined_up)

    def fallback(self) -> None:
        """After predicated copies: the per-run path where a run's source is misaligned."""
        with self.builder.if_then(self.builder.not_(self.aligned), likely=False):
            self.per_run()

    def emit(self) -> None:
        """The whole fill: a dynamic tile's runs one by one; a fixed tile's copies where its
        runs' sources are aligned, else the per-run path."""
        b = self.builder
        self.start()
        if self.dynamic:
            self.per_run()
        elif self.predicated:
            # straight-line copies predicated on the test (no branch around them, so the
            # compiler computes their addresses ahead, before a barrier that precedes the
            # fill, and issues the copies back to back); the per-run path after them
            self.copies()
            self.fallback()
        else:
            with b.if_else(self.aligned, likely=True) as (then, otherwise):
                with then:
                    self.copies()
                with otherwise:
                    self.per_run()


def _fill_async(typingctx: Any, t: Any, a: Any, origin: Any) -> Any:
    checked = _type_fill("shared.fill_async", t, a, origin)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        fill = _Fill(context, builder, (t, a, origin), checked, args)
        with fill.writes():
            fill.emit()
        return context.get_dummy_value()

    return types.none(t, a, origin), codegen


def _fill_async_pair(
    typingctx: Any, t1: Any, a1: Any, o1: Any, t2: Any, a2: Any, o2: Any, line2: Any
) -> Any:
    """Two consecutive ``fill_async`` calls (``decoration._fillpairs``), the second written on
    source line ``line2``. Where both tiles' copies are predicated, every copy of both comes
    before either per-run path (one branch, taken where a test fails, after the copies of
    both): the compiler issues the second tile's copies right after the first's. Else the two
    fills one after the other, as written."""
    if not isinstance(line2, types.IntegerLiteral):
        return None  # the literal attempt's answer stands
    checked1 = _type_fill("shared.fill_async", t1, a1, o1)
    try:
        checked2 = _type_fill("shared.fill_async", t2, a2, o2)
    except errors.TypingError as e:
        raise errors.TypingError(second_call(str(e.args[0]), line2.literal_value)) from None

    line = line2.literal_value

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        # The second fill's instructions carry its own line (the compiled-form checks name it)
        first = _Fill(context, builder, (t1, a1, o1), checked1, args[0:3])
        with at_line(line):
            second = _Fill(context, builder, (t2, a2, o2), checked2, args[3:6])
        if not (first.predicated and second.predicated):
            with first.writes():
                first.emit()
            with at_line(line), second.writes():
                second.emit()
            return context.get_dummy_value()
        with first.writes():
            first.start()
            first.copies()
        with at_line(line), second.writes():
            second.start()
            second.copies()
        both = builder.and_(first.aligned, second.aligned)
        with builder.if_then(builder.not_(both), likely=False):
            with first.writes():
                first.fallback()
            with at_line(line), second.writes():
                second.fallback()
        return context.get_dummy_value()

    return types.none(t1, a1, o1, t2, a2, o2, line2), codegen


def _fill_transposed(typingctx: Any, t: Any, a: Any, origin: Any) -> Any:
    size, origin_types = _type_fill("shared.fill_transposed", t, a, origin)
    itemsize = t.dtype.bitwidth // 8
    n = size // itemsize
    k_len, m_len = t.shape  # the tile is (K, M); the source rectangle M rows x K columns
    per_row = k_len // n
    storage_row = t.storage[-1]

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        raw = cgutils.unpack_tuple(builder, args[2], 2)
        origin_vals = [
            _origin_value(context, builder, v, ty) for v, ty in zip(raw, origin_types, strict=True)
        ]
        src = _Source(context, builder, a, args[1], origin_vals)
        data, _, _ = tb.holder_parts(context, builder, t, args[0])
        mem = src.word  # a record as one integer (see ``_Source``)
        tile = builder.bitcast(data, mem.as_pointer())

        def body(k: Any) -> None:
            r = builder.udiv(k, _c(per_row))  # the source row (the tile's column)
            c = builder.mul(builder.urem(k, _c(per_row)), _c(n))  # its first source column
            gr = builder.add(src.r0, r)
            gc = builder.add(src.c0, c)
            row_ok = src.row_inside(gr)
            whole = builder.and_(
                row_ok,
                builder.and_(
                    builder.icmp_unsigned("<", gc, src.cols),
                    builder.icmp_unsigned("<=", _c(n), builder.sub(src.cols, gc)),
                ),
            )
            first = src.element_pointer(gr, gc)
            misalign = builder.and_(builder.ptrtoint(first, _I64), _c(size - 1))
            fast = builder.and_(whole, builder.icmp_unsigned("==", misalign, _c(0)))
            slots = [cgutils.alloca_once(builder, mem) for _ in range(n)]
            with builder.if_else(fast, likely=True) as (then, otherwise):
                with then:
                    vty = ir.VectorType(mem, n)
                    vec = builder.load(builder.bitcast(first, vty.as_pointer()), align=size)
                    for e, slot in enumerate(slots):
                        builder.store(builder.extract_element(vec, ir.Constant(_I32, e)), slot)
                with otherwise:
                    for e, slot in enumerate(slots):
                        builder.store(src.element(gr, builder.add(gc, _c(e)), row_ok), slot)
            for e, slot in enumerate(slots):
                at = builder.add(builder.mul(builder.add(c, _c(e)), _c(storage_row)), r)
                builder.store(builder.load(slot), builder.gep(tile, [at]), align=src.tile_align)

        # run k (n elements down one column) to thread k mod T: one map per tile
        with fill_writes(f"tfill{n}"):
            _runs(builder, m_len * per_row, body)
        return context.get_dummy_value()

    return types.none(t, a, origin), codegen


def _commit_group(typingctx: Any) -> Any:
    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        _plain_asm(builder, "cp.async.commit_group;")
        return context.get_dummy_value()

    return types.none(), codegen


#: After a wait in a kernel that uses wgmma.mma: the copies (generic proxy) made visible to
#: the tensor cores' reads (the async proxy: lowering._wgmma).
_FENCE = "\n\tfence.proxy.async.shared::cta;"


def _wait_group(fenced: bool) -> Any:
    """The typer of ``wait_group(n)`` (``fenced``: in a kernel that uses wgmma.mma)."""

    def typer(typingctx: Any, n: Any) -> Any:
        if not isinstance(n, types.IntegerLiteral):
            if isinstance(n, types.Integer):
                return None  # the literal attempt's message stands
            raise errors.TypingError("simtsafe: " + str(wait_refusal(n)))
        count = n.literal_value
        refusal = wait_refusal(count)
        if refusal is not None:
            raise errors.TypingError("simtsafe: " + refusal)

        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            _plain_asm(builder, f"cp.async.wait_group {count};" + (_FENCE if fenced else ""))
            return context.get_dummy_value()

        return types.none(n), codegen

    return typer


def _wait_all(fenced: bool) -> Any:
    """The typer of ``wait_all()`` (``fenced``: in a kernel that uses wgmma.mma)."""

    def typer(typingctx: Any) -> Any:
        def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
            _plain_asm(builder, "cp.async.wait_all;" + (_FENCE if fenced else ""))
            return context.get_dummy_value()

        return types.none(), codegen

    return typer


_BUILTINS = {
    "__ss_shared_fill_async": tb.literal_intrinsic(_fill_async),
    "__ss_shared_fill_async_pair": tb.literal_intrinsic(_fill_async_pair),
    "__ss_shared_fill_transposed": tb.literal_intrinsic(_fill_transposed),
    "__ss_shared_commit_group": tb.literal_intrinsic(_commit_group),
    "__ss_shared_wait_group": tb.literal_intrinsic(_wait_group(False)),
    "__ss_shared_wait_all": tb.literal_intrinsic(_wait_all(False)),
    # what the decorator calls for wait_group / wait_all in a kernel that uses wgmma.mma
    "__ss_shared_wait_group_fenced": tb.literal_intrinsic(_wait_group(True)),
    "__ss_shared_wait_all_fenced": tb.literal_intrinsic(_wait_all(True)),
}


def builtins() -> dict[str, Any]:
    """The ``__ss_shared_*`` names of the whole-tile fills and the copy groups."""
    return dict(_BUILTINS)
