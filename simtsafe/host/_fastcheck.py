"""A per-launch argument checker generated for one kernel signature.

The general check loop in ``_launch`` interprets the kernel's parameter list
at every launch. For a given ``LaunchPlan`` the list never changes, so this
module writes it out once as straight-line Python -- one block per argument,
the aliasing pairs, the ``requires`` relations and the ``covers`` bound --
and compiles it. The generated function returns ``(layouts, params,
stable, facts, named_streams)`` when every check passes and ``None`` as soon as
one fails; the launch then runs the general loop, which raises the precise
error. So the generated code only has to be *sound* (never accept what the
general loop refuses); the general loop stays the single source of every
message.

Facts come from the per-object cache (Numba device arrays), else from the
array library's own attributes (``native_facts``: CuPy, PyTorch), else from
``__cuda_array_interface__`` -- the general loop always reads the latter,
and ``native_facts`` equals it (tested), so both see the same facts.

Invariant: the generated checks are the general loop's checks, in the same
order, on the same facts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._errors import ArgumentTypeError
from ._argfacts import (
    FACTS_CACHE,
    array_facts,
    input_layout,
    native_facts,
    record_dtype,
    unaligned,
)
from ._requires import launch_env

if TYPE_CHECKING:
    from ._launch import Checked, LaunchPlan

__all__ = ["FastCheck", "build_fast_check"]

#: args -> (input layouts, packed kernel parameters, all arrays cacheable, each array's
#: facts, does any array name a producer stream) or None.
FastCheck = Callable[[tuple[Any, ...]], "Checked | None"]


def build_fast_check(plan: LaunchPlan, check_devices: bool) -> FastCheck:
    """Generate and compile the checker for ``plan`` (see the module docstring)."""
    expect = plan.expect
    names: dict[str, Any] = {
        "array_facts": array_facts,
        "native_facts": native_facts,
        "ArgumentTypeError": ArgumentTypeError,
        "CACHE": FACTS_CACHE,
    }
    code = ["def fast_check(args):", f"    if len(args) != {len(expect)}:", "        return None"]
    if expect:
        code.append(f"    ({', '.join(f'x{i}' for i in range(len(expect)))},) = args")
    if plan.run_layouts:
        names["LAYOUT"] = input_layout
    arrays: list[int] = []
    layouts: list[str] = []
    packed: list[str] = []
    env: list[str] = []
    for i, (param, typestr, itemsize) in enumerate(expect):
        names[f"P{i}"] = param
        if param.kind == "scalar":
            names[f"scalar{i}"] = plan.scalar_packer(param)
            code += [
                "    try:",
                f"        s{i} = scalar{i}(x{i})",
                "    except ArgumentTypeError:",
                "        return None",
            ]
            packed.append(f"*s{i}")
            env.append(f"{param.name!r}: x{i}")
            continue
        arrays.append(i)
        code += [  # the facts cache lookup of array_facts, inlined
            f"    h{i} = CACHE.get(id(x{i}))",
            f"    if h{i} is not None and h{i}[0]() is x{i}:",
            f"        f{i} = h{i}[1]",
            "    else:",
            f"        f{i} = native_facts(x{i}, {itemsize}) or "
            f"array_facts(x{i}, P{i}, NAME, {itemsize})",
        ]
        cond = [f"f{i}.typestr != {typestr!r}", f"len(f{i}.shape) != {param.ndim}"]
        align = plan.aligns[i]
        if align > 1:  # the element accesses' alignment (_launch.unaligned)
            names["UNALIGNED"] = unaligned
            # (a C-contiguous array's strides are multiples of its itemsize: of the alignment)
            cond.append(
                f"(f{i}.ptr % {align} or (not f{i}.c_contiguous and "
                f"UNALIGNED(f{i}, {align}) is not None)) and f{i}.size"
            )
        if param.dtype.names is not None:  # a record: the whole layout, not just its size
            names["record_dtype"] = record_dtype
            cond.append(f"record_dtype(x{i}) != P{i}.dtype")
        if param.kind in ("out", "acc"):
            cond += [f"not f{i}.c_contiguous", f"f{i}.readonly"]
        else:
            if plan.run_layouts:  # "C16" where aligned for runs (_argfacts.input_layout)
                layouts.append(f"LAYOUT(f{i}, {itemsize}, True)")
            else:  # input_layout(f, itemsize, False), inline
                layouts.append(f"('C' if f{i}.c_contiguous else 'A')")
        if check_devices:
            cond.append(f"(f{i}.device is not None and f{i}.device != DEVICE)")
        code += [f"    if {' or '.join(cond)}:", "        return None"]
        packed.append(f"*f{i}.packed")
        env.append(f"{param.name!r}: f{i}.shape")
    for n, i in enumerate(arrays):
        for j in arrays[n + 1 :]:
            if {"out", "acc"} & {expect[i][0].kind, expect[j][0].kind}:
                code += [
                    f"    if f{i}.size and f{j}.size and f{i}.lo < f{j}.hi and f{j}.lo < f{i}.hi:",
                    "        return None",
                ]
    bound = plan.kernel.bound
    if bound is not None and bound.per_launch:
        names["_prod"] = math.prod
        env += [f"{k!r}: {v}" for k, v in launch_env(plan.grid, plan.block).items()]
        code.append(f"    e = {{{', '.join(env)}}}")
        for relation in bound.per_launch:  # validated sources over `e` (see _requires)
            code += [f"    if not ({relation.source}):", "        return None"]
    if plan.capacity is not None:
        i = next(i for i, (p, _, _) in enumerate(expect) if p.name == plan.covers)
        names["CAPACITY"] = plan.capacity
        names["EXTENT"] = plan.extent
        code += [
            f"    if not all(n <= c for n, c in zip(EXTENT(f{i}.shape), CAPACITY)):",
            "        return None",
        ]
    stable = " and ".join(f"f{i}.stable" for i in arrays) or "True"
    facts = "".join(f"f{i}, " for i in arrays)
    named = " or ".join(f"f{i}.stream is not None" for i in arrays) or "False"
    code.append(
        f"    return (({', '.join(layouts)}{',' if len(layouts) == 1 else ''}), "
        f"({', '.join(packed)}{',' if len(packed) == 1 else ''}), {stable}, ({facts}), "
        f"{named})"
    )
    names["NAME"] = plan.name
    names["DEVICE"] = plan.device_id
    namespace: dict[str, Any] = dict(names)
    exec(compile("\n".join(code), f"<simtsafe fast check for {plan.name}>", "exec"), namespace)
    fast: FastCheck = namespace["fast_check"]
    return fast
