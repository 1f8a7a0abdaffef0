"""Inputs the launch found aligned for 16-byte runs: the type that says so, and what the
compiled code may then assume.

A kernel that fills shared tiles from its inputs (``shared.fill_async``) copies them in runs
of up to 16 bytes. Where an input's data pointer, row pitch and row length in bytes are all
multiples of 16, every run of a fill whose origin column is a multiple of the run lies
wholly inside a row or wholly outside it, aligned: the fill's test of that
(``_asyncfill._Source.whole_runs``) is then a fact of the origin alone, and where the
origin is a multiple of the run by construction (a loop stepping by tiles) NVVM folds the
test and drops the per-run path the fill keeps for misaligned runs.

The launch checks those three numbers of every input of such a kernel
(``host._argfacts.input_layout``): an input that has them is given to the compiled kernel
as ``RunAlignedArray`` (layout code ``"C16"``, its own specialization), any other as a plain
array. The input's view (``_cuda._make_view``) states the facts to LLVM with
``llvm.assume`` on the values the kernel received; NVVM may then fold any test of them. An
input whose facts the launch did not check is never of this type.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba.cuda import cgutils, types
from numba.cuda.datamodel.models import ArrayModel
from numba.cuda.extending import register_model
from numba.cuda.np.arrayobj import make_array

__all__ = ["RUN", "RunAlignedArray", "assume_run_aligned"]

#: The run the facts are about, in bytes.
RUN = 16


class RunAlignedArray(types.Array):  # type: ignore[misc]
    """A C-contiguous input whose data pointer, row pitch (2D) and row length in bytes the
    launch checked to be multiples of ``RUN``."""

    def __init__(self, dtype: Any, ndim: int, readonly: bool = False) -> None:
        kind = "readonly run-aligned array" if readonly else "run-aligned array"
        super().__init__(dtype, ndim, "C", readonly=readonly, name=f"{kind}({dtype}, {ndim}d, C)")

    @property
    def key(self) -> Any:
        return (*super().key, RUN)


register_model(RunAlignedArray)(ArrayModel)


def _assume(builder: ir.IRBuilder, fact: Any) -> None:
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [ir.IntType(1)]), "llvm.assume"
    )
    builder.call(fn, [fact])


def assume_run_aligned(context: Any, builder: ir.IRBuilder, aty: Any, value: Any) -> None:
    """State to LLVM what the launch checked of ``value``, an input of type ``aty``: its data
    pointer, row pitch and row length in bytes are multiples of ``RUN``. Nothing for another
    type.

    Safety:
        Sound only because the launch gives an input this type after checking those numbers
        (``host._argfacts.input_layout``); an ``llvm.assume`` that does not hold is undefined
        behaviour.
    """
    if not isinstance(aty, RunAlignedArray):
        return
    i64 = ir.IntType(64)
    ary = make_array(aty)(context, builder, value)
    itemsize = context.get_abi_sizeof(context.get_data_type(aty.dtype))
    zero = ir.Constant(i64, 0)

    def multiple(v: Any, of: int) -> Any:
        return builder.icmp_unsigned("==", builder.and_(v, ir.Constant(i64, of - 1)), zero)

    _assume(builder, multiple(builder.ptrtoint(ary.data, i64), RUN))
    if aty.ndim == 2:
        _assume(builder, multiple(cgutils.unpack_tuple(builder, ary.strides, 2)[0], RUN))
    if 0 < itemsize <= RUN and RUN % itemsize == 0:
        cols = cgutils.unpack_tuple(builder, ary.shape, aty.ndim)[-1]
        _assume(builder, multiple(cols, RUN // itemsize))
