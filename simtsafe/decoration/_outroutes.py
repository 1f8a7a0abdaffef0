"""Output tiles own their output: one tile call site per output, no other route to it.

``thread.tile_1d(out, n)`` gives thread ``g`` the elements ``[g*n, (g+1)*n)``
of ``out``; ``out[thread.index_1d()]`` gives it element ``g``; a second tile
of another size another partition again. Each scheme is disjoint on its own,
but two of them over one output are not disjoint from each other (thread 1's
witness addresses ``out[1]``, which is in thread 0's tile of 2). So an output
given to a ``thread.tile_*`` call in a kernel is reached only through that
one call site:

* no subscript of it (``out[i] = v`` and ``out[i]`` alike: the element may be
  another thread's tile element), no second ``thread.tile_*`` call on it;
* no other use as a value (bound to another name, rebound, passed to a
  helper or to ``grid_stride``, stored): only its attributes ``.shape``,
  ``.size``, ``.ndim``, ``.dtype``, ``len()`` and ``simtsafe.grid.read(out,
  ...)`` beside the tile (a read of any element in a grid phase that writes
  none: the compiled-form check proves that, ``verify/_verdict.py``);
* the tile call takes the kernel's output parameter itself, by its name,
  and only a kernel makes tiles (a helper's tile would be out of sight of
  the kernel that also reaches the output).

The call site may run many times (in a loop): it makes the same tile each
time. Checked on the kernel's source at decoration, like the phases of
shared tiles (``_phases``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Literal

from .._errors import SafetyError

__all__ = ["TENSOR_CORE_TILES", "check_output_tiles"]

#: The tensor-core output tile constructors -> the names of their size arguments.
TENSOR_CORE_TILES = {"mma.out_tile": ("bm", "bn", "wm", "wn"), "wgmma.out_tile": ("bm", "bn")}
_OUT_TILE_CTORS = frozenset(
    {"thread.tile_1d", "thread.tile_2d", "thread.tile_2d_strided", *TENSOR_CORE_TILES}
)
#: What an output with a tile may still be used for, beside its tile: reading these.
_READ_ATTRIBUTES = frozenset({"shape", "size", "ndim", "dtype"})


def check_output_tiles(
    fn: ast.FunctionDef,
    *,
    kind: Literal["kernel", "device"],
    params: Sequence[str],
    ref_name: Callable[[ast.expr], str | None],
    fail: Callable[[ast.AST, str, str], SafetyError],
) -> None:
    """Refuse every route to an output other than its one output-tile call site.

    Raises:
        SafetyError: ``rule="out-tile"``, at the other route's line, naming the tile's line.
    """
    calls: list[tuple[ast.Call, str]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = ref_name(node.func)
            if name in _OUT_TILE_CTORS:
                calls.append((node, name))
    if not calls:
        return
    calls.sort(key=lambda c: (c[0].lineno, c[0].col_offset))
    if kind != "kernel":
        call, name = calls[0]
        raise fail(
            call,
            f"{name}() is made in a kernel's own body, not in a @simtsafe.device helper: the "
            "kernel must see that its output is reached only through the tile; make the tile "
            "in the kernel and pass the helper values",
            "out-tile",
        )
    owners: dict[str, tuple[ast.Call, str]] = {}
    for call, name in calls:
        out = call.args[0] if call.args else None
        if not (isinstance(out, ast.Name) and out.id in params):
            got = ast.unparse(out) if out is not None else "nothing"
            raise fail(
                call,
                f"{name}() takes one of the kernel's output parameters by its name "
                f"(`{name}(out, ...)`), got `{got}`",
                "out-tile",
            )
        owners.setdefault(out.id, (call, name))
    parents = {id(child): node for node in ast.walk(fn) for child in ast.iter_child_nodes(node)}
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id in owners]
    uses.sort(key=lambda n: (n.lineno, n.col_offset))
    for node in uses:
        tile, name = owners[node.id]
        if tile.args[0] is node:
            continue
        parent = parents.get(id(node))
        if _allowed_beside_tile(node, parent, parents, ref_name):
            continue
        raise fail(node, _message(node, parent, tile, name, ref_name), "out-tile")


def _allowed_beside_tile(
    node: ast.Name,
    parent: ast.AST | None,
    parents: dict[int, ast.AST],
    ref_name: Callable[[ast.expr], str | None],
) -> bool:
    if (
        isinstance(parent, ast.Call)
        and parent.args
        and parent.args[0] is node
        and ref_name(parent.func) == "grid.read"
    ):
        return True
    if (
        isinstance(parent, ast.Attribute)
        and parent.value is node
        and parent.attr in _READ_ATTRIBUTES
        and isinstance(parent.ctx, ast.Load)
    ):
        grand = parents.get(id(parent))
        return not (isinstance(grand, ast.Call) and grand.func is parent)
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id == "len"
        and len(parent.args) == 1
        and parent.args[0] is node
        and not parent.keywords
    )


def _message(
    node: ast.Name,
    parent: ast.AST | None,
    tile: ast.Call,
    name: str,
    ref_name: Callable[[ast.expr], str | None],
) -> str:
    out = node.id
    head = f"output `{out}` is written through the output tile made at line {tile.lineno} ({name})"
    one_route = (
        f"write `{out}` only through its tile (index the tile with local indices), or give "
        "up the tile and use witnesses"
    )
    if isinstance(parent, ast.Subscript) and parent.value is node:
        if isinstance(parent.ctx, ast.Load):
            return (
                f"{head} and is also read by index here: the element may be in another "
                "thread's tile, written at the same time; read this thread's own elements "
                "back through the tile (`t[k]`), or give up the tile and use witnesses"
            )
        return (
            f"{head} and is also written by index here: a witness and a tile partition the "
            "output differently, so some elements get two writers (thread 1's "
            f"`{out}[thread.index_1d()]` is in thread 0's tile of 2); {one_route}"
        )
    if isinstance(parent, ast.Call) and ref_name(parent.func) in _OUT_TILE_CTORS:
        return (
            f"{head} and another output tile of it is made here: two tiles of one output "
            "(other sizes or kinds, or the same from two call sites) overlap between "
            f"threads; make one tile of `{out}` in one place and index it"
        )
    return (
        f"{head} and `{out}` is also used here as a value (bound to a name, rebound, passed "
        "to a function or a helper, stored): the tile must be the only route to the "
        f"output's elements; beside it only `{out}.shape`, `.size`, `.ndim`, `.dtype` and "
        f"`len({out})` may be used"
    )
