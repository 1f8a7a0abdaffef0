"""Launch contracts: what a kernel promises about the geometry it is launched with.

A kernel's safety proof (its thread-index witnesses) holds only for the launch
shapes its author had in mind. :class:`LaunchContract` writes those shapes
down as a frozen pydantic model, so they can be read from JSON/TOML, exported
as JSON Schema, and checked before every launch. This module holds the
*static* checks -- the ones that need no device: dimension normalization,
domain rank, exact block, thread budget and dynamic shared memory. Device
limits, compute capability, clusters and cooperative residency are checked by
the launch layer, after these.

Data flow: ``LaunchContract`` (user, decoration time) --``bind``-->
``BoundContract`` (names checked against the kernel's parameters, relations
compiled) --> ``normalize_dims`` + ``check_static`` + ``BoundContract.check_launch``
in ``prepare``, ``BoundContract.check_requires`` per launch.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, SupportsIndex

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from .._errors import (
    BlockShapeMismatch,
    ContractDefinitionError,
    DomainMismatch,
    LaunchDimensionError,
    RequiresViolation,
    SharedMemoryError,
    TooManyThreads,
)
from ._requires import (
    Env,
    ParamInfo,
    Relation,
    check_relation_syntax,
    launch_env,
    parse_relation,
)

__all__ = [
    "MAX_DIM",
    "BoundContract",
    "Dim3",
    "LaunchConfig",
    "LaunchContract",
    "check_static",
    "contract_json_schema",
    "cover",
    "launch_config_json_schema",
    "normalize_dims",
]

#: A normalized CUDA launch dimension ``(x, y, z)``.
Dim3 = tuple[int, int, int]

#: No CUDA grid or block dimension can reach 2**32 (the driver takes unsigned int).
MAX_DIM = 2**32 - 1
#: The most shared memory any NVIDIA GPU gives one block (sm_90, sm_100: 227 KiB, opt-in).
MAX_TILE_SHARED = 227 * 1024
#: The most threads a CUDA block has (every compute capability simtsafe compiles for).
MAX_BLOCK_THREADS = 1024

_AXES = ("x", "y", "z")

# What the JSON Schema advertises for fields that are padded/normalized on input.
_DIMS_INPUT: Any = int | Annotated[list[int], Field(min_length=1, max_length=3)] | None
_SHARED_INPUT: Any = int | Annotated[list[int], Field(min_length=2, max_length=2)] | None


def _as_int(value: object) -> int | None:
    """Return ``value`` as a Python int if it is an integer (bool excluded), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


def _short(dims: Dim3) -> str:
    """Render a dimension the way a user would pass it: ``256`` or ``(16, 16)``."""
    trimmed = list(dims)
    while len(trimmed) > 1 and trimmed[-1] == 1:
        trimmed.pop()
    return str(trimmed[0]) if len(trimmed) == 1 else str(tuple(trimmed))


def _pad3(value: object, what: str) -> object:
    """Pydantic ``before`` helper: int or 1-3 ints -> ``(x, y, z)``; other input passes on."""
    if value is None:
        return None
    single = _as_int(value)
    if single is not None:
        return (single, 1, 1)
    if isinstance(value, (list, tuple)):
        if not 1 <= len(value) <= 3:
            raise ValueError(
                f"{what} takes 1 to 3 dimensions (x, y, z), got {len(value)}: {value!r}"
            )
        items = [_as_int(v) for v in value]
        for axis, (raw, item) in enumerate(zip(value, items, strict=True)):
            if item is None:
                raise ValueError(
                    f"{what}.{_AXES[axis]} must be an int, got {type(raw).__name__} {raw!r}"
                )
        return tuple(items) + (1,) * (3 - len(items))
    raise ValueError(
        f"{what} must be an int or a list of 1 to 3 ints, got {type(value).__name__} {value!r}"
    )


def _check_rank(dims: Dim3, domain: int, what: str) -> None:
    """Refuse axes beyond the domain (contract definition time)."""
    for axis in range(domain, 3):
        if dims[axis] != 1:
            raise ValueError(
                f"{what} {dims} uses axis {_AXES[axis]} but domain={domain} allows only "
                f"{', '.join(_AXES[:domain])}; set {what}.{_AXES[axis]} = 1 or raise the domain"
            )


class LaunchContract(BaseModel):
    """The launch shapes a kernel is written for; checked before every launch.

    Build it in Python or validate it from JSON/TOML (lists become tuples)::

        LaunchContract(domain=1, block=256, requires=["a.size == out.size"], covers="out")
        LaunchContract.model_validate({"domain": 2, "block": [16, 16]})

    Invalid contracts raise :class:`pydantic.ValidationError` (a ``ValueError``)
    whose text says which field is wrong and how to fix it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    domain: Literal[1, 2, 3] = Field(
        default=1, description="Number of grid/block axes the kernel indexes (1, 2 or 3)."
    )
    block: Dim3 | None = Field(
        default=None,
        description="Exact block shape (x, y, z); an int or shorter list is padded with 1s.",
    )
    max_threads: int | None = Field(
        default=None, ge=1, description="Largest number of threads per block the kernel allows."
    )
    dynamic_shared: int | tuple[int, int] | None = Field(
        default=None,
        description="Dynamic shared memory in bytes: exact, or an inclusive [min, max] range.",
    )
    shared_alignment: int | None = Field(
        default=None,
        description="Dynamic shared memory size must be a multiple of this power of two.",
    )
    tile_shared: int | None = Field(
        default=None,
        description=(
            "Bytes of opt-in shared memory that hold the kernel's shared.tile()s, for tiles "
            "over the 48 KiB a block may have statically (up to 227 KiB): the tiles are laid "
            "out in it at compile time, prepare checks it against the device and raises the "
            "function's limit. A multiple of 16; not with dynamic_shared."
        ),
    )
    min_compute_capability: tuple[int, int] | None = Field(
        default=None, description="Oldest device the kernel runs on, as (major, minor)."
    )
    cooperative: bool = Field(
        default=False,
        strict=True,
        description="The kernel needs a cooperative (grid-synced) launch.",
    )
    blocks_per_sm: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Blocks of the kernel that must be resident at once on each multiprocessor "
            "(.minnctapersm: the compiler limits registers for it; prepare checks that the "
            "compiled function reaches it). Needs block or max_threads."
        ),
    )
    cluster: Dim3 | None = Field(
        default=None, description="Thread-block cluster shape (x, y, z), padded like block."
    )
    vec_alignment: Literal["required", "any"] = Field(
        default="required",
        description=(
            "'required': an input the kernel reads in runs (simtsafe.vec.load) must have a data "
            "pointer and row pitch that are multiples of the run's bytes, else the launch is "
            "refused (such runs would all take the element path). 'any': those launches run, "
            "a misaligned run read element by element (correct, slower)."
        ),
    )
    requires: tuple[str, ...] = Field(
        default=(),
        description=(
            "Size relations between parameters and launch dimensions, e.g. 'a.size == out.size' "
            "or 'grid.x * block.x >= out.size'."
        ),
    )
    covers: str | None = Field(
        default=None,
        description="Array parameter every element of which must be owned by some thread.",
    )
    appends: tuple[tuple[str, str], ...] = Field(
        default=(),
        json_schema_extra={"default": {}},
        description=(
            "Append buffers and their counters, {buffer: counter}: each AppendBuffer parameter "
            "is claimed through the fetch-add of the Counter parameter named here."
        ),
    )

    tables: tuple[tuple[str, tuple[str, ...], str], ...] = Field(
        default=(),
        json_schema_extra={
            "default": {},
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "values": {
                        "anyOf": [
                            {"type": "string"},
                            {"type": "array", "items": {"type": "string"}},
                        ]
                    },
                    "failed": {"type": "string"},
                },
                "required": ["failed"],
                "additionalProperties": False,
            },
        },
        description=(
            "Hash tables, {keys: {'values': [...], 'failed': counter}}: each HashTable parameter "
            "(its keys), the HashValues parameters written at the slots its inserts win, and the "
            "Counter its failed inserts add to."
        ),
    )

    if TYPE_CHECKING:
        # What the validators accept (ints and short sequences are padded), so that
        # ``LaunchContract(block=256)`` type-checks without the pydantic mypy plugin.
        def __init__(
            self,
            *,
            domain: Literal[1, 2, 3] = 1,
            block: int | Sequence[int] | None = None,
            max_threads: int | None = None,
            dynamic_shared: int | Sequence[int] | None = None,
            shared_alignment: int | None = None,
            tile_shared: int | None = None,
            min_compute_capability: Sequence[int] | None = None,
            cooperative: bool = False,
            blocks_per_sm: int | None = None,
            cluster: int | Sequence[int] | None = None,
            vec_alignment: Literal["required", "any"] = "required",
            requires: Sequence[str] = (),
            covers: str | None = None,
            appends: Mapping[str, str] | None = None,
            tables: Mapping[str, Mapping[str, str | Sequence[str]]] | None = None,
        ) -> None: ...

    @field_validator("domain", mode="before")
    @classmethod
    def _domain(cls, value: Any) -> Any:
        number = _as_int(value)
        if number not in (1, 2, 3):
            raise ValueError(f"domain must be 1, 2 or 3 (grid/block axes used), got {value!r}")
        return number

    @field_validator("block", "cluster", mode="before", json_schema_input_type=_DIMS_INPUT)
    @classmethod
    def _dims(cls, value: Any, info: ValidationInfo) -> Any:
        return _pad3(value, info.field_name or "block")

    @field_validator("block", "cluster")
    @classmethod
    def _dims_positive(cls, value: Dim3 | None, info: ValidationInfo) -> Dim3 | None:
        if value is not None:
            for axis, n in zip(_AXES, value, strict=True):
                if not 1 <= n <= MAX_DIM:
                    raise ValueError(
                        f"{info.field_name}.{axis} is {n}, but each dimension must be "
                        f"between 1 and {MAX_DIM}; use {info.field_name}.{axis} >= 1"
                    )
        return value

    @field_validator("max_threads", "shared_alignment", mode="before")
    @classmethod
    def _strict_int(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return None
        number = _as_int(value)
        if number is None:
            raise ValueError(
                f"{info.field_name} must be an int, got {type(value).__name__} {value!r}"
            )
        if info.field_name == "max_threads" and number < 1:
            raise ValueError(f"max_threads must be >= 1 thread per block, got {number}")
        if info.field_name == "max_threads" and number > MAX_BLOCK_THREADS:
            # (the compiled bound, .maxntid and !range, is 32 bits: 2**32 + 64 was 64)
            raise ValueError(
                f"max_threads must be <= {MAX_BLOCK_THREADS}, the most threads a CUDA block "
                f"has, got {number}"
            )
        return number

    @field_validator("dynamic_shared", mode="before", json_schema_input_type=_SHARED_INPUT)
    @classmethod
    def _dynamic_shared(cls, value: Any) -> Any:
        if value is None:
            return None
        exact = _as_int(value)
        if exact is not None:
            if exact < 0:
                raise ValueError(f"dynamic_shared must be >= 0 bytes, got {exact}")
            return exact
        if isinstance(value, (list, tuple)) and len(value) == 2:
            lo, hi = (_as_int(v) for v in value)
            if lo is None or hi is None:
                raise ValueError(f"dynamic_shared range must hold two ints, got {value!r}")
            if lo < 0 or lo > hi:
                raise ValueError(
                    f"dynamic_shared range [{lo}, {hi}] must satisfy 0 <= min <= max; "
                    f"write [min, max] in bytes"
                )
            return (lo, hi)
        raise ValueError(
            "dynamic_shared must be an exact byte count (int) or an inclusive [min, max] "
            f"range, got {value!r}"
        )

    @field_validator("tile_shared", mode="before")
    @classmethod
    def _tile_shared(cls, value: Any) -> Any:
        if value is None:
            return None
        number = _as_int(value)
        if number is None:
            raise ValueError(
                f"tile_shared must be an int (bytes), got {type(value).__name__} {value!r}"
            )
        if not 0 < number <= MAX_TILE_SHARED or number % 16:
            raise ValueError(
                f"tile_shared must be a positive multiple of 16 bytes, at most {MAX_TILE_SHARED} "
                f"(227 KiB: no GPU gives a block more), got {number}; declare the bytes of the "
                "kernel's shared tiles, each rounded up to 16"
            )
        return number

    @field_validator("shared_alignment")
    @classmethod
    def _alignment(cls, value: int | None) -> int | None:
        if value is not None and (value < 1 or value & (value - 1)):
            raise ValueError(
                f"shared_alignment must be a power of two (1, 2, 4, ... bytes), got {value}"
            )
        return value

    @field_validator("min_compute_capability", mode="before")
    @classmethod
    def _capability(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, (list, tuple)) and len(value) == 2:
            major, minor = (_as_int(v) for v in value)
            if major is not None and minor is not None and major >= 1 and minor >= 0:
                return (major, minor)
        raise ValueError(
            f"min_compute_capability must be (major, minor) with major >= 1 and minor >= 0, "
            f"e.g. (8, 0), got {value!r}"
        )

    @field_validator("requires", mode="before", json_schema_input_type=list[str])
    @classmethod
    def _requires(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError(
                f"requires must be a list of relations, got the single str {value!r}; "
                f"write requires=[{value!r}]"
            )
        if not isinstance(value, (list, tuple)):
            raise ValueError(
                f"requires must be a list of relation strings, got {type(value).__name__}"
            )
        for relation in value:
            check_relation_syntax(relation)
        return tuple(value)

    @field_validator("appends", mode="before", json_schema_input_type=dict[str, str])
    @classmethod
    def _appends(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, Mapping):
            pairs = list(value.items())
        elif isinstance(value, (list, tuple)) and all(
            isinstance(p, (list, tuple)) and len(p) == 2 for p in value
        ):
            pairs = [tuple(p) for p in value]
        else:
            raise ValueError(
                "appends maps each AppendBuffer parameter to its Counter parameter, e.g. "
                f"appends={{'out': 'count'}}; got {type(value).__name__} {value!r}"
            )
        counters: dict[str, str] = {}
        for buffer, counter in pairs:
            for name in (buffer, counter):
                if not isinstance(name, str) or not name.isidentifier():
                    raise ValueError(
                        f"appends names parameters: {{buffer: counter}}, e.g. "
                        f"{{'out': 'count'}}; got {name!r}"
                    )
            if buffer == counter:
                raise ValueError(
                    f"appends pairs {buffer!r} with itself; name the Counter parameter that "
                    f"counts the AppendBuffer {buffer!r}"
                )
            if counter in counters:
                raise ValueError(
                    f"appends names the counter {counter!r} for both {counters[counter]!r} and "
                    f"{buffer!r}; give each AppendBuffer its own Counter (its value is that "
                    "buffer's item count)"
                )
            counters[counter] = buffer
        return tuple(pairs)

    @field_validator("tables", mode="before")
    @classmethod
    def _tables(cls, value: Any) -> Any:
        if value is None:
            return ()
        if isinstance(value, (list, tuple)):  # the stored form: (keys, values, failed) triples
            return tuple((k, tuple(v), f) for k, v, f in value)
        if not isinstance(value, Mapping):
            raise ValueError(
                "tables maps each HashTable parameter to its values and failure counter, e.g. "
                f"tables={{'keys': {{'values': ['vals'], 'failed': 'nfail'}}}}; got "
                f"{type(value).__name__} {value!r}"
            )
        out: list[tuple[str, tuple[str, ...], str]] = []
        for keys, spec in value.items():
            if (
                not isinstance(spec, Mapping)
                or set(spec) - {"values", "failed"}
                or "failed" not in spec
            ):
                raise ValueError(
                    f"tables[{keys!r}] must be {{'values': [<HashValues parameters>], 'failed': "
                    f"<Counter parameter>}} ('values' may be left out: a hash set); got {spec!r}"
                )
            values = spec.get("values", ())
            values = (values,) if isinstance(values, str) else tuple(values)
            names = (keys, *values, spec["failed"])
            for name in names:
                if not isinstance(name, str) or not name.isidentifier():
                    raise ValueError(f"tables names parameters; got {name!r} in tables[{keys!r}]")
            if len(set(names)) != len(names):
                raise ValueError(f"tables[{keys!r}] names a parameter twice: {names}")
            out.append((keys, values, spec["failed"]))
        return tuple(out)

    @field_serializer("tables")
    def _tables_out(
        self, value: tuple[tuple[str, tuple[str, ...], str], ...]
    ) -> dict[str, dict[str, Any]]:
        return {k: {"values": list(v), "failed": f} for k, v, f in value}

    @model_validator(mode="after")
    def _counters_once(self) -> LaunchContract:
        seen: dict[str, str] = {}
        owners = [(b, c) for b, c in self.appends] + [(k, f) for k, _, f in self.tables]
        for owner, counter in owners:
            if counter in seen:
                raise ValueError(
                    f"the counter {counter!r} is named for both {seen[counter]!r} and {owner!r}; "
                    "give each append buffer and each hash table its own Counter"
                )
            seen[counter] = owner
        values: dict[str, str] = {}
        for keys, vals, _ in self.tables:
            for v in vals:
                if v in values:
                    raise ValueError(
                        f"the values {v!r} are named for the hash tables {values[v]!r} and "
                        f"{keys!r}; a HashValues parameter belongs to one table"
                    )
                values[v] = keys
        return self

    @field_serializer("appends")
    def _appends_out(self, value: tuple[tuple[str, str], ...]) -> dict[str, str]:
        return dict(value)  # as written: {buffer: counter}

    @field_validator("covers")
    @classmethod
    def _covers(cls, value: str | None) -> str | None:
        if value is not None and not value.isidentifier():
            raise ValueError(f"covers must name an array parameter, got {value!r}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> LaunchContract:
        if self.block is not None and self.max_threads is not None:
            raise ValueError(
                f"give either block (exact shape) or max_threads (upper bound), not both: "
                f"got block={self.block} and max_threads={self.max_threads}"
            )
        if self.block is not None:
            _check_rank(self.block, self.domain, "block")
        if self.blocks_per_sm is not None and self.block is None and self.max_threads is None:
            raise ValueError(
                f"blocks_per_sm={self.blocks_per_sm} needs the block size it is computed for "
                "(the compiler divides the registers among blocks of that size); give block= "
                "or max_threads="
            )
        if self.cluster is not None:
            _check_rank(self.cluster, self.domain, "cluster")
        if self.tile_shared is not None and self.dynamic_shared is not None:
            raise ValueError(
                f"give either tile_shared (the kernel's shared tiles, {self.tile_shared} B) or "
                f"dynamic_shared (a launch-sized shared.dynamic_tile), not both: the tiles are "
                "laid out in the launch's dynamic shared memory, where the dynamic tile starts"
            )
        if self.shared_alignment is not None:
            if self.dynamic_shared is None:
                raise ValueError(
                    "shared_alignment is set but dynamic_shared is not; declare dynamic_shared "
                    "or drop shared_alignment"
                )
            if isinstance(self.dynamic_shared, int):
                lo = hi = self.dynamic_shared
            else:
                lo, hi = self.dynamic_shared
            align = self.shared_alignment
            if -(-lo // align) * align > hi:
                raise ValueError(
                    f"dynamic_shared {self.dynamic_shared} allows no multiple of "
                    f"shared_alignment {align}; make the size a multiple of {align} "
                    f"or change shared_alignment"
                )
        return self

    def bind(self, params: Sequence[ParamInfo], *, kernel: str) -> BoundContract:
        """Check the contract's names against a kernel's parameters.

        Args:
            params: The kernel's parameters, in signature order.
            kernel: The kernel's name, for error messages.

        Returns:
            The contract with its relations compiled and ``covers`` resolved.

        Raises:
            ContractDefinitionError: A relation names an unknown or unusable
                parameter, or ``covers`` is not an array parameter.
        """
        relations = tuple(parse_relation(text, params, kernel=kernel) for text in self.requires)
        if self.covers is not None:
            arrays = [p for p in params if p.kind == "array"]
            found = next((p for p in params if p.name == self.covers), None)
            if found is None or found.kind != "array":
                what = (
                    "is not a parameter"
                    if found is None
                    else f"is {'an' if found.kind == 'int' else 'a'} {found.kind} scalar"
                )
                listed = ", ".join(f"{p.name} (ndim {p.ndim})" for p in arrays) or "none"
                raise ContractDefinitionError(
                    f"kernel {kernel!r}: the launch contract covers {self.covers!r}, which "
                    f"{what}; covers must name an array parameter. Available arrays: {listed}.",
                    kernel=kernel,
                    actual=self.covers,
                    available=tuple(p.name for p in arrays),
                )
        relations += self._counter_relations(params, kernel)
        return BoundContract(contract=self, kernel=kernel, relations=relations, covers=self.covers)

    def _counter_relations(self, params: Sequence[ParamInfo], kernel: str) -> tuple[Relation, ...]:
        """``appends``' names checked; each counter holds exactly one element (per launch)."""
        arrays = {p.name for p in params if p.kind == "array"}
        out: list[Relation] = []
        for buffer, counter in self.appends:
            for name in (buffer, counter):
                if name not in arrays:
                    raise ContractDefinitionError(
                        f"kernel {kernel!r}: the launch contract's appends names {name!r}, which "
                        "is not an array parameter; appends maps an AppendBuffer parameter to "
                        f"its Counter parameter. Array parameters: "
                        f"{', '.join(sorted(arrays)) or 'none'}.",
                        kernel=kernel,
                        actual=name,
                        available=tuple(sorted(arrays)),
                    )
            # The counter is element 0 of its array; a launch checks it has exactly one.
            out.append(parse_relation(f"{counter}.size == 1", params, kernel=kernel))
        for keys, values, failed in self.tables:
            for name in (keys, *values, failed):
                if name not in arrays:
                    raise ContractDefinitionError(
                        f"kernel {kernel!r}: the launch contract's tables names {name!r}, which "
                        "is not an array parameter; tables maps a HashTable parameter to its "
                        "HashValues parameters and its failure Counter. Array parameters: "
                        f"{', '.join(sorted(arrays)) or 'none'}.",
                        kernel=kernel,
                        actual=name,
                        available=tuple(sorted(arrays)),
                    )
            out.append(parse_relation(f"{failed}.size == 1", params, kernel=kernel))
            for v in values:  # one value per slot: a write of the last slot lands
                out.append(parse_relation(f"{v}.size == {keys}.size", params, kernel=kernel))
        return tuple(out)


@dataclass(frozen=True)
class BoundContract:
    """A :class:`LaunchContract` checked against one kernel's parameters.

    Attributes:
        contract: The contract as written.
        kernel: The kernel it was bound to.
        relations: The compiled ``requires`` relations, in contract order.
        covers: The array parameter that every thread set must cover, if any.
    """

    contract: LaunchContract
    kernel: str
    relations: tuple[Relation, ...]
    covers: str | None

    @property
    def per_launch(self) -> tuple[Relation, ...]:
        """The relations that read an argument: checked at every launch, in contract order."""
        return tuple(r for r in self.relations if r.per_launch)

    def check_launch(self, grid: Dim3, block: Dim3) -> None:
        """Check the relations that read only the launch dimensions (once, in ``prepare``).

        Args:
            grid: The normalized grid.
            block: The normalized block.

        Raises:
            RequiresViolation: The first such relation that does not hold.
        """
        env = launch_env(grid, block)
        for relation in self.relations:
            if not relation.per_launch and not relation.holds(env):
                raise RequiresViolation(
                    f"kernel {self.kernel!r} requires {relation.text} by its launch contract, "
                    f"but with grid {grid} and block {block}, {relation.explain(env)}. Prepare "
                    "with a grid and block that satisfy it.",
                    kernel=self.kernel,
                    relation=relation.text,
                    actual=relation.explain(env),
                    grid=grid,
                    block=block,
                )

    def check_requires(self, env: Env) -> None:
        """Check the per-launch ``requires`` relations for one launch.

        Relations over launch dimensions only were checked by :meth:`check_launch`.

        Args:
            env: Array parameters mapped to their shape, integer scalars to their value,
                and (for relations that read them) the launch dimensions of
                :func:`~simtsafe.host._requires.launch_env`.

        Raises:
            RequiresViolation: The first relation that does not hold.
        """
        for relation in self.relations:
            if relation.per_launch and not relation.holds(env):
                self._check_counter(relation, env)
                fix = "Pass arguments whose sizes satisfy it"
                if relation.launch:
                    dims = {name: env[name] for name in sorted(relation.launch)}
                    seen = ", ".join(f"{name} = {value}" for name, value in dims.items())
                    fix = (
                        f"Launch dimensions seen: {seen}. Pass arguments whose sizes satisfy "
                        "it, or prepare a launch whose grid and block do"
                    )
                raise RequiresViolation(
                    f"kernel {self.kernel!r} requires {relation.text} by its launch contract, "
                    f"but {relation.explain(env)}. {fix}.",
                    kernel=self.kernel,
                    relation=relation.text,
                    actual=relation.explain(env),
                )

    def _check_counter(self, relation: Relation, env: Env) -> None:
        """The refusal of an implied relation: a counter of one element, values per slot."""

        def size(name: str) -> int:
            shape = env.get(name)
            return math.prod(shape) if isinstance(shape, tuple) else int(shape)  # type: ignore[arg-type]

        for keys, values, failed in self.contract.tables:
            if relation.text == f"{failed}.size == 1":
                raise RequiresViolation(
                    f"kernel {self.kernel!r}: argument {failed!r} is the failure Counter of the "
                    f"hash table {keys!r} (tables in its launch contract) and must hold exactly "
                    f"one element, got {size(failed)}. Pass a one-element uint64 device array "
                    "(simtsafe.counter() makes one)",
                    kernel=self.kernel,
                    relation=relation.text,
                    argument=failed,
                    actual=size(failed),
                    limit=1,
                )
            for v in values:
                if relation.text == f"{v}.size == {keys}.size":
                    raise RequiresViolation(
                        f"kernel {self.kernel!r}: argument {v!r} holds the values of the hash "
                        f"table {keys!r} (tables in its launch contract): one per slot, "
                        f"{keys}.size = {size(keys)}, got {size(v)}. Pass a values array as "
                        f"long as the keys array",
                        kernel=self.kernel,
                        relation=relation.text,
                        argument=v,
                        actual=size(v),
                        limit=size(keys),
                    )
        for buffer, counter in self.contract.appends:
            if relation.text == f"{counter}.size == 1":
                raise RequiresViolation(
                    f"kernel {self.kernel!r}: argument {counter!r} is the Counter of the "
                    f"AppendBuffer {buffer!r} (appends in its launch contract) and must hold "
                    f"exactly one element, got {size(counter)}. Pass a one-element uint64 "
                    "device array (simtsafe.counter() makes one)",
                    kernel=self.kernel,
                    relation=relation.text,
                    argument=counter,
                    actual=size(counter),
                    limit=1,
                )


class LaunchConfig(BaseModel):
    """A normalized launch geometry: grid and block as ``(x, y, z)``, shared bytes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    grid: tuple[
        Annotated[int, Field(ge=1, le=MAX_DIM)],
        Annotated[int, Field(ge=1, le=MAX_DIM)],
        Annotated[int, Field(ge=1, le=MAX_DIM)],
    ] = Field(description="Blocks per grid (x, y, z).")
    block: tuple[
        Annotated[int, Field(ge=1, le=MAX_DIM)],
        Annotated[int, Field(ge=1, le=MAX_DIM)],
        Annotated[int, Field(ge=1, le=MAX_DIM)],
    ] = Field(description="Threads per block (x, y, z).")
    shared_mem: int = Field(default=0, ge=0, description="Dynamic shared memory in bytes.")


def cover(n: SupportsIndex, block: SupportsIndex) -> int:
    """Return how many blocks of ``block`` threads cover ``n`` elements: ``ceil(n / block)``.

    Args:
        n: Number of elements, ``>= 0``.
        block: Threads per block, ``>= 1``.

    Returns:
        The smallest grid size ``g`` with ``g * block >= n`` (0 when ``n`` is 0).

    Raises:
        TypeError: ``n`` or ``block`` is not an int (bool and float are refused).
        ValueError: ``n < 0`` or ``block < 1``.
    """
    n_int, block_int = _as_int(n), _as_int(block)
    if n_int is None:
        raise TypeError(f"cover(n, block): n must be an int, got {type(n).__name__} {n!r}")
    if block_int is None:
        raise TypeError(
            f"cover(n, block): block must be an int, got {type(block).__name__} {block!r}"
        )
    if n_int < 0:
        raise ValueError(f"cover(n, block): n must be >= 0, got {n_int}")
    if block_int < 1:
        raise ValueError(f"cover(n, block): block must be >= 1, got {block_int}")
    return -(-n_int // block_int)


def normalize_dims(value: object, *, kernel: str, what: Literal["grid", "block"]) -> Dim3:
    """Turn a user's grid or block into ``(x, y, z)``.

    Only values that cannot be a CUDA dimension at all are refused here;
    device limits are checked later, against the live device.

    Args:
        value: An int, or a tuple/list of 1 to 3 ints (numpy integers accepted).
        kernel: The kernel's name, for error messages.
        what: ``"grid"`` or ``"block"``.

    Returns:
        The dimension padded with 1s to three axes.

    Raises:
        LaunchDimensionError: More than three axes, a non-int entry (bool and
            float are refused), or an entry below 1 or above ``2**32 - 1``.
            Fields: ``axis``, ``actual``, ``limit``.
    """
    single = _as_int(value)
    if single is not None:
        raw: tuple[object, ...] = (single,)
    elif isinstance(value, (tuple, list)):
        raw = tuple(value)
        if not 1 <= len(raw) <= 3:
            raise LaunchDimensionError(
                f"kernel {kernel!r} got {what}={value!r} with {len(raw)} dimensions; a CUDA "
                f"{what} has 1 to 3 (x, y, z). Launch with {what}=n, (x, y) or (x, y, z).",
                kernel=kernel,
                what=what,
                axis=None,
                actual=len(raw),
                limit=3,
            )
    else:
        raise LaunchDimensionError(
            f"kernel {kernel!r} got {what}={value!r} ({type(value).__name__}); {what} must be "
            f"an int or a tuple of 1 to 3 ints. Launch with {what}=n, (x, y) or (x, y, z).",
            kernel=kernel,
            what=what,
            axis=None,
            actual=value,
            limit=None,
        )
    dims: list[int] = []
    for axis, item in zip(_AXES, raw, strict=False):
        n = _as_int(item)
        if n is None:
            raise LaunchDimensionError(
                f"kernel {kernel!r} got {what}.{axis} = {item!r} ({type(item).__name__}); "
                f"CUDA dimensions are ints. Launch with an int {what}.{axis}"
                + (", e.g. cover(n, block) for a grid." if what == "grid" else "."),
                kernel=kernel,
                what=what,
                axis=axis,
                actual=item,
                limit=None,
            )
        if n < 1:
            raise LaunchDimensionError(
                f"kernel {kernel!r} got {what}.{axis} = {n}, but every {what} dimension must be "
                f">= 1. Launch with {what}.{axis} >= 1"
                + (" (use cover(n, block) to size a grid)." if what == "grid" else "."),
                kernel=kernel,
                what=what,
                axis=axis,
                actual=n,
                limit=1,
            )
        if n > MAX_DIM:
            raise LaunchDimensionError(
                f"kernel {kernel!r} got {what}.{axis} = {n}, above the largest CUDA dimension "
                f"{MAX_DIM} (2**32 - 1). Launch with a smaller {what}.{axis}, spreading the "
                f"work over more axes or a loop inside the kernel.",
                kernel=kernel,
                what=what,
                axis=axis,
                actual=n,
                limit=MAX_DIM,
            )
        dims.append(n)
    dims += [1] * (3 - len(dims))
    return (dims[0], dims[1], dims[2])


def check_static(
    contract: LaunchContract,
    grid: Dim3,
    block: Dim3,
    shared_mem: int,
    *,
    kernel: str,
) -> None:
    """Run the device-independent launch checks, in cuda-oxide order.

    Order: domain rank, exact block, thread budget, dynamic shared memory.

    Args:
        contract: The kernel's launch contract.
        grid: Normalized grid (see :func:`normalize_dims`).
        block: Normalized block.
        shared_mem: Dynamic shared memory in bytes.
        kernel: The kernel's name, for error messages.

    Raises:
        DomainMismatch: Grid or block uses an axis beyond the contract's domain.
        BlockShapeMismatch: The block differs from the contract's exact block.
        TooManyThreads: The block has more threads than ``max_threads``.
        SharedMemoryError: ``shared_mem`` is not a non-negative int, is not
            declared, or misses the exact size, range or alignment.
    """
    domain = contract.domain
    for what, dims in (("grid", grid), ("block", block)):
        for axis in range(domain, 3):
            if dims[axis] != 1:
                name = _AXES[axis]
                unused = " = ".join(f"{what}.{a}" for a in _AXES[domain:])
                raise DomainMismatch(
                    f"kernel {kernel!r} has a {domain}-D launch contract (domain={domain}), "
                    f"got {what} {dims} with {what}.{name} = {dims[axis]}, limit 1. Launch with "
                    f"{unused} = 1, or declare domain={axis + 1} in the contract (the kernel "
                    f"must then index axis {name}).",
                    kernel=kernel,
                    what=what,
                    axis=name,
                    actual=dims[axis],
                    limit=1,
                )

    if contract.block is not None and block != contract.block:
        raise BlockShapeMismatch(
            f"kernel {kernel!r} requires block {contract.block} by its launch contract, "
            f"got {block}. Launch with block={_short(contract.block)}, or change the contract "
            f"(the kernel's witnesses then cover a different shape).",
            kernel=kernel,
            actual=block,
            limit=contract.block,
        )

    if contract.max_threads is not None:
        threads = block[0] * block[1] * block[2]
        if threads > contract.max_threads:
            raise TooManyThreads(
                f"kernel {kernel!r} allows at most {contract.max_threads} threads per block by "
                f"its launch contract, got block {block} = {threads} threads. Launch with a "
                f"block of at most {contract.max_threads} threads, or raise max_threads in "
                f"the contract.",
                kernel=kernel,
                actual=threads,
                limit=contract.max_threads,
            )

    _check_shared(contract, shared_mem, kernel)


def _check_shared(contract: LaunchContract, shared_mem: object, kernel: str) -> None:
    """Dynamic shared memory against the contract (exact, range, alignment)."""
    nbytes = _as_int(shared_mem)
    if nbytes is None or nbytes < 0:
        raise SharedMemoryError(
            f"kernel {kernel!r} got shared_mem={shared_mem!r}; dynamic shared memory is a "
            f"non-negative int number of bytes. Launch with shared_mem=0 or a byte count.",
            kernel=kernel,
            actual=shared_mem,
            limit=0,
        )
    declared = contract.dynamic_shared
    if declared is None:
        if nbytes > 0:
            raise SharedMemoryError(
                f"kernel {kernel!r} got shared_mem={nbytes} bytes, but the contract declares "
                f"no dynamic shared memory (limit 0). Launch with shared_mem=0, or declare "
                f"dynamic_shared in the contract.",
                kernel=kernel,
                actual=nbytes,
                limit=0,
            )
        return
    if isinstance(declared, int):
        if nbytes != declared:
            raise SharedMemoryError(
                f"kernel {kernel!r} requires exactly {declared} bytes of dynamic shared memory "
                f"by its launch contract, got shared_mem={nbytes}. Launch with "
                f"shared_mem={declared}, or change dynamic_shared in the contract.",
                kernel=kernel,
                actual=nbytes,
                limit=declared,
            )
    else:
        lo, hi = declared
        if not lo <= nbytes <= hi:
            raise SharedMemoryError(
                f"kernel {kernel!r} requires {lo} to {hi} bytes of dynamic shared memory by its "
                f"launch contract, got shared_mem={nbytes}. Launch with shared_mem in "
                f"[{lo}, {hi}], or widen dynamic_shared in the contract.",
                kernel=kernel,
                actual=nbytes,
                limit=declared,
            )
    align = contract.shared_alignment
    if align is not None and nbytes % align:
        up = -(-nbytes // align) * align
        raise SharedMemoryError(
            f"kernel {kernel!r} requires dynamic shared memory in multiples of {align} bytes by "
            f"its launch contract, got shared_mem={nbytes}. Launch with a multiple of {align} "
            f"(e.g. {up}), or change shared_alignment in the contract.",
            kernel=kernel,
            actual=nbytes,
            limit=align,
        )


def contract_json_schema() -> dict[str, Any]:
    """Return the JSON Schema of :class:`LaunchContract` (as exported to ``contracts/``)."""
    return LaunchContract.model_json_schema()


def launch_config_json_schema() -> dict[str, Any]:
    """Return the JSON Schema of :class:`LaunchConfig`."""
    return LaunchConfig.model_json_schema()
