"""Compiled form of ``simtsafe.vec.load`` / ``vec.store``: one vector access when the run is
whole and aligned.

``__ss_vec_load(a, j, n)`` (1D) / ``__ss_vec_load(a, (r, j), n)`` (2D) reads
the run ``[j*n, (j+1)*n)`` of the last axis. When the run lies inside the
array and its address is a multiple of its size, one ``load <n x T>`` with
that alignment (``ld.global.v2/v4``); otherwise one guarded scalar load per
element, 0 outside the array. Indices are compared before any multiplication
that could wrap, so no address outside the array is ever read. A run of elements
under 4 bytes (bf16, fp16, int8) meets its two paths as the 32-bit words it was loaded
as and is unpacked after the merge: the fast path then holds only the loads (nothing in
it waits for them), a run in flight keeps 4 registers rather than one an element, and
LLVM folds the unpacking (a bf16's high half is ``word & 0xffff0000``). The range tests
are unsigned compares against the extents (``0 <= i < n`` as one compare), the alignment
test one per row (a run starts ``j * nbytes`` bytes past its row), and ``vec.load_runs``'
checked path reads every run element by element (a per-run vector path there would be
the fast path's own code, which LLVM merges with it, splitting its block of loads).

Every element goes through :func:`element_value` (memory form -> value); a
new element type (bf16 read as float32) plugs in there and in
:func:`value_type`.

``__ss_vec_store(t, values)`` writes a 1D output tile (``thread.tile_1d(out,
n)``): when the tile is ``full`` (inside the output, decided when it was
made) and its first element's address is a multiple of the run's size, one
``store <n x T>``; otherwise the tile's own element stores, each checked
against the output's shape. The tile is the thread's by construction
(lowering/_outtiles.py), so the vector store writes nothing another thread
owns.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.core import errors
from numba.cuda.extending import intrinsic
from numba.cuda.np.arrayobj import make_array

from ._bf16 import bf16_to_f32, is_bf16, stored_element
from ._vecrule import MAX_RUNS, vec_refusal, vec_store_at_refusal, vec_store_refusal

__all__ = ["TILE_ALIGN", "builtins", "element_value", "value_type"]

#: The alignment of every static shared tile (``_tiles``), in bytes.
TILE_ALIGN = 16


def value_type(dtype: Any) -> Any:
    """The Numba type a kernel sees for one element of ``dtype`` (bf16: float32)."""
    return types.float32 if is_bf16(dtype) else dtype


def element_value(context: Any, builder: ir.IRBuilder, dtype: Any, raw: Any) -> Any:
    """One element as loaded from memory -> its value (bf16: the exact float32)."""
    return bf16_to_f32(builder, raw) if is_bf16(dtype) else raw


def _kind(dtype: Any) -> str:
    if isinstance(dtype, types.Float) or is_bf16(dtype):
        return "f"
    if isinstance(dtype, types.Integer) and not isinstance(dtype, types.Boolean):
        return "i" if dtype.signed else "u"
    if isinstance(dtype, types.Complex):
        return "c"
    return "b" if isinstance(dtype, types.Boolean) else "V"


def _literal(ty: Any) -> object:
    return getattr(ty, "literal_value", ty)


def _shared_tile(a: Any) -> Any:
    """``a`` if it is a shared tile (read in its read phase: ``decoration._phases``)."""
    from ._tiles import SharedTileType  # imports _cuda: bound late

    return a if isinstance(a, SharedTileType) else None


def _source(a: Any, what: str) -> tuple[Any, Any]:
    """``(tile or None, array type)`` of what ``vec.load`` reads: an input or a shared tile."""
    tile = _shared_tile(a)
    if tile is not None:
        return tile, tile.arr_type  # its array (a padded tile's rows are longer: `_Run`)
    from ._swizzle import SwizzledTileType, only_fill_and_wgmma

    if isinstance(a, SwizzledTileType):
        raise errors.TypingError("simtsafe: " + only_fill_and_wgmma(a, what))
    if not isinstance(a, types.Array):
        raise errors.TypingError(
            f"simtsafe: {what} reads an In[...] input array or a shared tile; got {a}"
        )
    return None, a


def _index_types(a: Any, idx: Any, what: str) -> tuple[Any, ...]:
    """The int types of one run's index: ``(j,)`` (1D) or ``(r, j)`` (2D)."""
    if a.ndim == 1:
        ok = isinstance(idx, types.Integer)
        idx_types: tuple[Any, ...] = (idx,)
    else:
        ok = isinstance(idx, types.BaseTuple) and len(idx) == 2
        ok = ok and all(isinstance(t, types.Integer) for t in idx)
        idx_types = tuple(idx) if ok else ()
    if not ok:
        want = "an int j" if a.ndim == 1 else "a pair (row, j) of ints"
        raise errors.TypingError(
            f"simtsafe: {what} of a {a.ndim}D input takes {want} as its index; got {idx}"
        )
    return idx_types


class _Reads:
    """Runs of ``n`` elements of one array (an input or a shared tile) and how to read them:
    the typing-time facts, shared by ``vec.load`` and ``vec.load_runs``."""

    def __init__(self, a: Any, n: Any, what: str) -> None:
        self.tile, self.a = _source(a, what)
        itemsize = self.a.dtype.bitwidth // 8 if hasattr(self.a.dtype, "bitwidth") else 0
        refusal = vec_refusal(
            self.a.ndim, self.a.layout == "C", _kind(self.a.dtype), itemsize, _literal(n), what
        )
        if refusal is not None:
            raise errors.TypingError("simtsafe: " + refusal)
        self.count: int = _literal(n)  # type: ignore[assignment]
        self.itemsize = itemsize
        self.nbytes = self.count * itemsize
        self.run_type = types.UniTuple(value_type(self.a.dtype), self.count)
        tile = self.tile
        # A static tile starts at a multiple of 16 bytes (lowering/_tiles) and its storage
        # rows are a multiple of the run: every run j starts aligned.
        self.aligned_runs = (
            tile is not None
            and tile.storage is not None
            and self.nbytes <= TILE_ALIGN
            and (tile.storage[-1] * itemsize) % self.nbytes == 0
        )

    def array(self, context: Any, builder: ir.IRBuilder, value: Any) -> Any:
        if self.tile is not None:
            value = cgutils.create_struct_proxy(self.tile)(context, builder, value=value).arr
        return make_array(self.a)(context, builder, value)


class _Run:
    """One run ``[j*n, (j+1)*n)`` (of row ``r``): where it starts, whether it is whole and
    aligned (``fast``: one vector access), whether it touches the array at all. Indices are
    compared before any multiplication that could wrap."""

    def __init__(
        self, context: Any, builder: ir.IRBuilder, reads: _Reads, ary: Any, ints: list[Any]
    ) -> None:
        a, tile = reads.a, reads.tile
        intp = context.get_value_type(types.intp)
        shape = cgutils.unpack_tuple(builder, ary.shape, a.ndim)
        if tile is not None and tile.shape is not None:
            # The tile's logical extents, not its storage's (padding is never read).
            shape = [ir.Constant(intp, d) for d in tile.shape]
        zero = ir.Constant(intp, 0)
        nconst = ir.Constant(intp, reads.count)
        self.mem = mem = context.get_data_type(a.dtype)
        data = builder.bitcast(ary.data, mem.as_pointer())
        j, self.length = ints[-1], shape[-1]
        # Extents are >= 0, so `0 <= i < extent` is one unsigned compare (`i` as unsigned:
        # a negative `i` is past every extent), `0 <= j <= runs` likewise.
        in_row = cgutils.true_bit
        if a.ndim == 2:
            r = ints[0]
            in_row = builder.icmp_unsigned("<", r, shape[0])
            stride0 = cgutils.unpack_tuple(builder, ary.strides, 2)[0]
            row = builder.gep(
                builder.bitcast(data, ir.IntType(8).as_pointer()), [builder.mul(r, stride0)]
            )
            data = builder.bitcast(row, mem.as_pointer())
        self.data = data
        runs = builder.sdiv(self.length, nconst)  # whole runs in the row (length >= 0)
        whole = builder.and_(in_row, builder.icmp_unsigned("<", j, runs))
        self._in_row, self._j, self._runs = in_row, j, runs  # `touches`: the checked path's
        self.start = builder.mul(j, nconst)  # used only where j <= runs: no wrap
        self.first = builder.gep(data, [self.start])
        if reads.aligned_runs:
            self.fast = whole
        else:
            # The run starts `j * nbytes` bytes past the row's start: it is aligned to its
            # size exactly when the row's start is (one test a row, shared by its runs).
            misalign = builder.and_(
                builder.ptrtoint(data, intp), ir.Constant(intp, reads.nbytes - 1)
            )
            self.fast = builder.and_(whole, builder.icmp_unsigned("==", misalign, zero))

    def touches(self, builder: ir.IRBuilder) -> Any:
        """Whether the run touches the array at all (``0 <= j <= runs``: a partial tail),
        computed where the checked path needs it, not ahead of the fast path's branch."""
        return builder.and_(self._in_row, builder.icmp_unsigned("<=", self._j, self._runs))

    def vector(self, builder: ir.IRBuilder, reads: _Reads) -> Any:
        """The vector load of the whole, aligned run (its elements: ``elements``)."""
        if reads.itemsize < 4:  # NVPTX splits <8 x half> in two: load 32-bit words
            words = reads.nbytes // 4
            wty = ir.IntType(32) if words == 1 else ir.VectorType(ir.IntType(32), words)
        else:
            wty = ir.VectorType(self.mem, reads.count)
        return builder.load(builder.bitcast(self.first, wty.as_pointer()), align=reads.nbytes)

    def elements(self, builder: ir.IRBuilder, reads: _Reads, raw: Any) -> list[Any]:
        """The run's elements in memory form, out of its vector load ``raw``."""
        if reads.itemsize < 4:
            return _split_words(builder, raw, self.mem, reads.count, reads.itemsize)
        i32 = ir.IntType(32)
        return [builder.extract_element(raw, ir.Constant(i32, k)) for k in range(reads.count)]

    def one_by_one(self, context: Any, builder: ir.IRBuilder, slots: list[Any]) -> None:
        """Each element into its slot by a guarded scalar load, 0 outside the array."""
        intp = context.get_value_type(types.intp)
        touches = self.touches(builder)
        for k, slot in enumerate(slots):
            builder.store(ir.Constant(self.mem, None), slot)  # 0 outside the array
            at = builder.add(self.start, ir.Constant(intp, k))
            inside = builder.and_(touches, builder.icmp_signed("<", at, self.length))
            with builder.if_then(inside):
                builder.store(builder.load(builder.gep(self.data, [at])), slot)

    def into(self, context: Any, builder: ir.IRBuilder, reads: _Reads, slots: list[Any]) -> None:
        """The run into ``slots``: one vector access when whole and aligned, else one by one
        (``slots``: ``_slots``'s, the run's 32-bit words for elements under 4 bytes)."""
        with builder.if_else(self.fast, likely=True) as (then, otherwise):
            with then:
                self.store_vector(builder, reads, self.vector(builder, reads), slots)
            with otherwise:
                self.checked(context, builder, reads, slots)

    def store_vector(
        self, builder: ir.IRBuilder, reads: _Reads, raw: Any, slots: list[Any]
    ) -> None:
        """The vector load ``raw`` into the run's ``slots`` as it came: the words of a run of
        elements under 4 bytes stay packed until after the branches meet (``unpack``), so that
        the fast path holds no instruction that waits for the load and a run in flight keeps
        4 registers, not one an element."""
        if reads.itemsize < 4:
            words = (
                [raw]
                if isinstance(raw.type, ir.IntType)
                else [
                    builder.extract_element(raw, ir.Constant(ir.IntType(32), w))
                    for w in range(reads.nbytes // 4)
                ]
            )
            for word, slot in zip(words, slots, strict=True):
                builder.store(word, slot)
            return
        for elem, slot in zip(self.elements(builder, reads, raw), slots, strict=True):
            builder.store(elem, slot)

    def checked(self, context: Any, builder: ir.IRBuilder, reads: _Reads, slots: list[Any]) -> None:
        """The guarded scalar loads of ``one_by_one`` into the run's ``slots`` (packed into
        words for elements under 4 bytes, as ``store_vector`` leaves them)."""
        if reads.itemsize >= 4:
            self.one_by_one(context, builder, slots)
            return
        elems = [cgutils.alloca_once(builder, self.mem) for _ in range(reads.count)]
        self.one_by_one(context, builder, elems)
        per = 4 // reads.itemsize
        i32 = ir.IntType(32)
        for w, slot in enumerate(slots):
            word = ir.Constant(i32, 0)
            for k in range(per):
                raw = builder.load(elems[w * per + k])
                bits = (
                    raw
                    if isinstance(raw.type, ir.IntType)
                    else builder.bitcast(raw, ir.IntType(8 * reads.itemsize))
                )
                part = builder.zext(bits, i32)
                if k:
                    part = builder.shl(part, ir.Constant(i32, 8 * reads.itemsize * k))
                word = builder.or_(word, part)
            builder.store(word, slot)


def _slots(builder: ir.IRBuilder, reads: _Reads, run: _Run) -> list[Any]:
    """Where a run's value meets after its fast and checked paths: its 32-bit words for
    elements under 4 bytes (unpacked after the merge: ``_values``), else its elements."""
    if reads.itemsize < 4:
        return [cgutils.alloca_once(builder, ir.IntType(32)) for _ in range(reads.nbytes // 4)]
    return [cgutils.alloca_once(builder, run.mem) for _ in range(reads.count)]


def _index_ints(context: Any, builder: ir.IRBuilder, a: Any, value: Any, tys: Any) -> list[Any]:
    raw = [value] if a.ndim == 1 else cgutils.unpack_tuple(builder, value, 2)
    return [context.cast(builder, v, t, types.intp) for v, t in zip(raw, tys, strict=True)]


def _values(context: Any, builder: ir.IRBuilder, reads: _Reads, run: _Run, slots: list[Any]) -> Any:
    """The run's value tuple out of its ``_slots`` (words split here, after the merge)."""
    loaded = [builder.load(s) for s in slots]
    if reads.itemsize < 4:
        if len(loaded) == 1:
            raw = loaded[0]
        else:
            raw = ir.Constant(ir.VectorType(ir.IntType(32), len(loaded)), None)
            for w, word in enumerate(loaded):
                raw = builder.insert_element(raw, word, ir.Constant(ir.IntType(32), w))
        loaded = _split_words(builder, raw, run.mem, reads.count, reads.itemsize)
    values = [element_value(context, builder, reads.a.dtype, v) for v in loaded]
    return context.make_tuple(builder, reads.run_type, values)


@intrinsic
def _vec_load(typingctx: Any, a: Any, idx: Any, n: Any) -> Any:
    if not isinstance(n, types.IntegerLiteral) and isinstance(n, types.Integer):
        # Numba retries a call with non-literal types after the literal attempt fails: no
        # match here keeps the literal attempt's message (a non-constant n: the rewrite's).
        _source(a, "vec.load")
        return None
    reads = _Reads(a, n, "vec.load")
    idx_types = _index_types(reads.a, idx, "vec.load")

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        ary = reads.array(context, builder, args[0])
        ints = _index_ints(context, builder, reads.a, args[1], idx_types)
        run = _Run(context, builder, reads, ary, ints)
        slots = _slots(builder, reads, run)
        run.into(context, builder, reads, slots)
        return _values(context, builder, reads, run, slots)

    return reads.run_type(reads.tile if reads.tile is not None else a, idx, n), codegen


@intrinsic
def _vec_load_runs(typingctx: Any, a: Any, idxs: Any, n: Any) -> Any:
    """``vec.load_runs(a, idxs, n)``: ``vec.load(a, i, n)`` for each index ``i`` of the tuple
    ``idxs``; when every run is whole and aligned, all their vector loads are issued in one
    straight-line block (in flight together), then unpacked; else each run as vec.load."""
    if not isinstance(n, types.IntegerLiteral) and isinstance(n, types.Integer):
        _source(a, "vec.load_runs")
        return None
    reads = _Reads(a, n, "vec.load_runs")
    if not isinstance(idxs, types.BaseTuple) or not 1 <= len(idxs) <= MAX_RUNS:
        raise errors.TypingError(
            f"simtsafe: vec.load_runs takes a tuple of 1 to {MAX_RUNS} run indices; got {idxs}"
        )
    idx_types = [_index_types(reads.a, t, "vec.load_runs") for t in idxs]
    rt = types.UniTuple(reads.run_type, len(idxs))

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        ary = reads.array(context, builder, args[0])
        packed = cgutils.unpack_tuple(builder, args[1], len(idx_types))
        runs = [
            _Run(context, builder, reads, ary, _index_ints(context, builder, reads.a, v, t))
            for v, t in zip(packed, idx_types, strict=True)
        ]
        slots = [_slots(builder, reads, run) for run in runs]
        every = runs[0].fast
        for run in runs[1:]:
            every = builder.and_(every, run.fast)
        with builder.if_else(every, likely=True) as (then, otherwise):
            with then:  # every load first, then the unpacking: all in flight together
                raws = [run.vector(builder, reads) for run in runs]
                for run, raw, run_slots in zip(runs, raws, slots, strict=True):
                    run.store_vector(builder, reads, raw, run_slots)
            with otherwise:  # element by element (a per-run vector path here would be
                # the fast path's own code, which LLVM merges with it, splitting its block)
                for run, run_slots in zip(runs, slots, strict=True):
                    run.checked(context, builder, reads, run_slots)
        values = [
            _values(context, builder, reads, run, run_slots)
            for run, run_slots in zip(runs, slots, strict=True)
        ]
        return context.make_tuple(builder, rt, values)

    return rt(reads.tile if reads.tile is not None else a, idxs, n), codegen


def _split_words(builder: ir.IRBuilder, raw: Any, mem: Any, count: int, itemsize: int) -> list[Any]:
    """A run of 1- or 2-byte elements loaded as 32-bit words (``raw``: one word or a vector
    of them), element by element (little-endian)."""
    i32 = ir.IntType(32)
    bits = ir.IntType(8 * itemsize)
    out = []
    for k in range(count):
        w, shift = divmod(k * itemsize, 4)
        word = (
            raw
            if isinstance(raw.type, ir.IntType)
            else builder.extract_element(raw, ir.Constant(i32, w))
        )
        if shift:
            word = builder.lshr(word, ir.Constant(i32, 8 * shift))
        elem = builder.trunc(word, bits)
        out.append(elem if isinstance(mem, ir.IntType) else builder.bitcast(elem, mem))
    return out


@intrinsic
def _vec_store(typingctx: Any, t: Any, values: Any) -> Any:
    from ._outtiles import OutTileType, element_store  # imports _cuda: bound late

    if not isinstance(t, OutTileType):
        raise errors.TypingError(
            f"simtsafe: vec.store writes a 1D output tile (t = thread.tile_1d(out, n)); got {t}"
        )
    if not isinstance(values, types.BaseTuple):
        raise errors.TypingError(
            f"simtsafe: vec.store takes a tuple of {t.tile[0]} values; got {values}"
        )
    itemsize = t.dtype.bitwidth // 8 if hasattr(t.dtype, "bitwidth") else 0
    refusal = vec_store_refusal(t.kind, t.tile, _kind(t.dtype), itemsize, len(values))
    if refusal is not None:
        raise errors.TypingError("simtsafe: " + refusal)
    for vty in values:  # what `t[k] = v` takes: reals, bools, numba-cuda's bf16 scalar
        if not isinstance(vty, (types.Integer, types.Float, types.Boolean)) and not is_bf16(vty):
            raise errors.TypingError(
                f"simtsafe: vec.store writes int, float or bool values; got {vty} in {values}"
            )
    count, nbytes = t.tile[0], t.tile[0] * itemsize

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        intp = context.get_value_type(types.intp)
        tile = cgutils.create_struct_proxy(t)(context, builder, value=args[0])
        mem = context.get_data_type(t.dtype)
        elems = [
            stored_element(context, builder, t.dtype, vty, v)
            for vty, v in zip(values, cgutils.unpack_tuple(builder, args[1], count), strict=True)
        ]
        ary = make_array(t.arr_type)(context, builder, tile.arr)
        # Only dereferenced on a full tile: origin0 .. origin0 + n - 1 are then inside.
        first = builder.gep(builder.bitcast(ary.data, mem.as_pointer()), [tile.origin0])
        misalign = builder.and_(builder.ptrtoint(first, intp), ir.Constant(intp, nbytes - 1))
        fast = builder.and_(tile.full, builder.icmp_unsigned("==", misalign, ir.Constant(intp, 0)))
        with builder.if_else(fast, likely=True) as (then, otherwise):
            with then:
                if itemsize < 4:  # NVPTX splits <8 x half> in two: store 32-bit words
                    _store_words(builder, first, elems, itemsize, nbytes)
                else:
                    vty = ir.VectorType(mem, count)
                    vec = ir.Constant(vty, None)
                    for k, elem in enumerate(elems):
                        vec = builder.insert_element(vec, elem, ir.Constant(ir.IntType(32), k))
                    builder.store(vec, builder.bitcast(first, vty.as_pointer()), align=nbytes)
            with otherwise:
                for k, elem in enumerate(elems):
                    element_store(context, builder, t, args[0], [ir.Constant(intp, k)], elem)
        return context.get_dummy_value()

    return types.none(t, values), codegen


def _store_words(
    builder: ir.IRBuilder, first: Any, elems: list[Any], itemsize: int, nbytes: int
) -> None:
    """Store a run of 1- or 2-byte elements at ``first`` as 32-bit words (little-endian)."""
    i32 = ir.IntType(32)
    words = nbytes // 4
    per_word = 4 // itemsize
    bits = ir.IntType(8 * itemsize)
    packed = []
    for w in range(words):
        word = ir.Constant(i32, 0)
        for k in range(per_word):
            elem = elems[w * per_word + k]
            raw = elem if isinstance(elem.type, ir.IntType) else builder.bitcast(elem, bits)
            part = builder.zext(raw, i32)
            if k:
                part = builder.shl(part, ir.Constant(i32, 8 * itemsize * k))
            word = builder.or_(word, part)
        packed.append(word)
    if words == 1:
        builder.store(packed[0], builder.bitcast(first, i32.as_pointer()), align=nbytes)
        return
    vty = ir.VectorType(i32, words)
    vec = ir.Constant(vty, None)
    for w, word in enumerate(packed):
        vec = builder.insert_element(vec, word, ir.Constant(i32, w))
    builder.store(vec, builder.bitcast(first, vty.as_pointer()), align=nbytes)


def _store_at_target(a: Any) -> str:
    """What ``vec.store_at`` was given, for its refusal: "raw", "input", "view" or a type."""
    from ._cuda import DisjointSliceType  # imports this module's siblings: bound late

    if isinstance(a, DisjointSliceType):
        return "view"
    if isinstance(a, types.Array):
        return "raw" if a.mutable else "input"
    return str(a)


@intrinsic
def _vec_store_at(typingctx: Any, a: Any, j: Any, values: Any) -> Any:
    what = _store_at_target(a)
    ok = what == "raw"
    itemsize = a.dtype.bitwidth // 8 if ok and hasattr(a.dtype, "bitwidth") else 0
    count = len(values) if isinstance(values, types.BaseTuple) else 0
    if not isinstance(values, types.BaseTuple) and ok:
        raise errors.TypingError(
            f"simtsafe: vec.store_at takes a tuple of 2, 4 or 8 values; got {values}"
        )
    refusal = vec_store_at_refusal(
        what,
        a.ndim if ok else 0,
        ok and a.layout == "C",
        _kind(a.dtype) if ok else "",
        itemsize,
        count,
    )
    if refusal is not None:
        raise errors.TypingError("simtsafe: " + refusal)
    if not isinstance(j, types.Integer):
        raise errors.TypingError(f"simtsafe: vec.store_at takes an int run index j; got {j}")
    for vty in values:  # what `raw[k] = v` takes: reals, bools, numba-cuda's bf16 scalar
        if not isinstance(vty, (types.Integer, types.Float, types.Boolean)) and not is_bf16(vty):
            raise errors.TypingError(
                f"simtsafe: vec.store_at writes int, float or bool values; got {vty} in {values}"
            )
    nbytes = count * itemsize

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        intp = context.get_value_type(types.intp)
        mem = context.get_data_type(a.dtype)
        elems = [
            stored_element(context, builder, a.dtype, vty, v)
            for vty, v in zip(values, cgutils.unpack_tuple(builder, args[2], count), strict=True)
        ]
        ary = make_array(a)(context, builder, args[0])
        (length,) = cgutils.unpack_tuple(builder, ary.shape, 1)
        data = builder.bitcast(ary.data, mem.as_pointer())
        jj = context.cast(builder, args[1], j, types.intp)
        zero = ir.Constant(intp, 0)
        nconst = ir.Constant(intp, count)
        runs = builder.sdiv(length, nconst)  # whole runs in the array
        j_ok = builder.icmp_signed(">=", jj, zero)
        whole = builder.and_(j_ok, builder.icmp_signed("<", jj, runs))
        touches = builder.and_(j_ok, builder.icmp_signed("<=", jj, runs))  # a partial tail
        start = builder.mul(jj, nconst)  # used only where j <= runs: no wrap
        first = builder.gep(data, [start])
        misalign = builder.and_(builder.ptrtoint(first, intp), ir.Constant(intp, nbytes - 1))
        fast = builder.and_(whole, builder.icmp_unsigned("==", misalign, zero))
        with builder.if_else(fast, likely=True) as (then, otherwise):
            with then:
                if itemsize < 4:  # NVPTX splits <8 x half> in two: store 32-bit words
                    _store_words(builder, first, elems, itemsize, nbytes)
                else:
                    vty = ir.VectorType(mem, count)
                    vec = ir.Constant(vty, None)
                    for k, elem in enumerate(elems):
                        vec = builder.insert_element(vec, elem, ir.Constant(ir.IntType(32), k))
                    builder.store(vec, builder.bitcast(first, vty.as_pointer()), align=nbytes)
            with otherwise:
                for k, elem in enumerate(elems):
                    at = builder.add(start, ir.Constant(intp, k))
                    inside = builder.and_(touches, builder.icmp_signed("<", at, length))
                    with builder.if_then(inside):
                        builder.store(elem, builder.gep(data, [at]))
        return context.get_dummy_value()

    return types.none(a, j, values), codegen


def builtins() -> dict[str, Any]:
    """The ``__ss_vec_*`` names for compiled kernels."""
    return {
        "__ss_vec_load": _vec_load,
        "__ss_vec_load_runs": _vec_load_runs,
        "__ss_vec_store": _vec_store,
        "__ss_vec_store_at": _vec_store_at,
    }
