"""Launch contracts: model validation, binding, static launch checks and their messages."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from simtsafe import DisjointSlice, In, thread
from simtsafe._errors import (
    BlockShapeMismatch,
    ContractDefinitionError,
    DomainMismatch,
    LaunchContractError,
    LaunchDimensionError,
    RequiresViolation,
    SharedMemoryError,
    TooManyThreads,
)
from simtsafe.host._contract import (
    MAX_DIM,
    BoundContract,
    LaunchConfig,
    LaunchContract,
    check_static,
    contract_json_schema,
    cover,
    launch_config_json_schema,
    normalize_dims,
)
from simtsafe.host._requires import ParamInfo

PARAMS = [
    ParamInfo("a", "array", 1),
    ParamInfo("out", "array", 1),
    ParamInfo("n", "int"),
    ParamInfo("alpha", "float"),
]


def invalid(fragment: str, **fields: Any) -> str:
    with pytest.raises(ValidationError) as info:
        LaunchContract(**fields)
    message = str(info.value)
    assert fragment in message, message
    return message


# --- LaunchContract: accepted ----------------------------------------------------------


def test_defaults() -> None:
    contract = LaunchContract()
    assert contract.domain == 1
    assert contract.block is None
    assert contract.max_threads is None
    assert contract.dynamic_shared is None
    assert contract.cooperative is False
    assert contract.requires == ()
    assert contract.covers is None


@pytest.mark.parametrize(
    ("domain", "given_block", "padded"),
    [
        (1, 256, (256, 1, 1)),
        (1, (256,), (256, 1, 1)),
        (2, [16, 16], (16, 16, 1)),
        (3, (8, 8, 4), (8, 8, 4)),
        (1, np.int64(128), (128, 1, 1)),
        (2, (np.int32(16), 8), (16, 8, 1)),
    ],
)
def test_block_is_padded(domain: int, given_block: Any, padded: tuple[int, int, int]) -> None:
    contract = LaunchContract(domain=domain, block=given_block)  # type: ignore[arg-type]
    assert contract.block == padded
    assert all(type(v) is int for v in padded)


def test_model_validate_from_json_dict() -> None:
    data = json.loads(
        """{"domain": 2, "block": [16, 16], "dynamic_shared": [0, 4096],
            "shared_alignment": 16, "min_compute_capability": [8, 0],
            "cooperative": true, "cluster": [2, 2], "requires": ["a.size == out.size"],
            "covers": "out"}"""
    )
    contract = LaunchContract.model_validate(data)
    assert contract.block == (16, 16, 1)
    assert contract.dynamic_shared == (0, 4096)
    assert contract.min_compute_capability == (8, 0)
    assert contract.cluster == (2, 2, 1)
    assert contract.requires == ("a.size == out.size",)
    assert contract.cooperative is True
    # Round trip through JSON gives the same frozen, hashable model.
    again = LaunchContract.model_validate_json(contract.model_dump_json())
    assert again == contract
    assert hash(again) == hash(contract)


def test_contract_is_frozen() -> None:
    contract = LaunchContract(block=256)
    with pytest.raises(ValidationError, match="frozen"):
        contract.block = (128, 1, 1)  # type: ignore[misc, unused-ignore]


@pytest.mark.parametrize("shared", [0, 1024, (0, 0), (128, 4096), [16, 16]])
def test_dynamic_shared_accepted(shared: Any) -> None:
    contract = LaunchContract(dynamic_shared=shared)
    assert contract.dynamic_shared == (tuple(shared) if isinstance(shared, list) else shared)


@pytest.mark.parametrize("align", [1, 2, 16, 1024])
def test_alignment_power_of_two_accepted(align: int) -> None:
    assert LaunchContract(dynamic_shared=(0, 4096), shared_alignment=align).shared_alignment == (
        align
    )


def test_max_threads_accepted() -> None:
    assert LaunchContract(max_threads=512).max_threads == 512


# --- LaunchContract: rejected ----------------------------------------------------------


@pytest.mark.parametrize("domain", [0, 4, True, "1", 1.0])
def test_bad_domain(domain: Any) -> None:
    invalid("domain must be 1, 2 or 3", domain=domain)


def test_block_zero() -> None:
    invalid("block.x is 0, but each dimension must be between 1 and 4294967295", block=0)


def test_block_too_many_axes() -> None:
    invalid("block takes 1 to 3 dimensions (x, y, z), got 4", domain=3, block=[1, 2, 3, 4])


@pytest.mark.parametrize("bad", [1.5, True, "16", [16, 2.0]])
def test_block_non_int(bad: Any) -> None:
    invalid("must be an int", domain=2, block=bad)


def test_block_beyond_domain() -> None:
    invalid("block (16, 2, 1) uses axis y but domain=1 allows only x", block=[16, 2])
    invalid("block (4, 4, 2) uses axis z but domain=2 allows only x, y", domain=2, block=(4, 4, 2))


def test_block_within_domain_twin() -> None:
    assert LaunchContract(domain=3, block=(4, 4, 2)).block == (4, 4, 2)


def test_cluster_beyond_domain_and_zero() -> None:
    invalid("cluster (2, 2, 1) uses axis y but domain=1", cluster=(2, 2))
    invalid("cluster.y is 0", domain=2, cluster=(2, 0))


def test_block_and_max_threads_exclusive() -> None:
    invalid(
        "give either block (exact shape) or max_threads (upper bound), not both",
        block=256,
        max_threads=256,
    )


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        (0, "max_threads must be >= 1"),
        (True, "max_threads must be an int"),
        (2.5, "max_threads must be an int"),
    ],
)
def test_bad_max_threads(bad: Any, fragment: str) -> None:
    invalid(fragment, max_threads=bad)


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        (-1, "dynamic_shared must be >= 0 bytes, got -1"),
        ((5, 3), "dynamic_shared range [5, 3] must satisfy 0 <= min <= max"),
        ((-1, 3), "must satisfy 0 <= min <= max"),
        ((1, 2, 3), "exact byte count (int) or an inclusive [min, max] range"),
        ((1.0, 2), "range must hold two ints"),
        ("64", "exact byte count"),
    ],
)
def test_bad_dynamic_shared(bad: Any, fragment: str) -> None:
    invalid(fragment, dynamic_shared=bad)


@pytest.mark.parametrize("align", [0, 3, 24, -4])
def test_alignment_not_power_of_two(align: int) -> None:
    invalid("shared_alignment must be a power of two", dynamic_shared=64, shared_alignment=align)


def test_alignment_without_dynamic_shared() -> None:
    invalid("shared_alignment is set but dynamic_shared is not", shared_alignment=16)


def test_alignment_unreachable() -> None:
    invalid(
        "dynamic_shared 100 allows no multiple of shared_alignment 16",
        dynamic_shared=100,
        shared_alignment=16,
    )
    invalid("allows no multiple", dynamic_shared=(1, 15), shared_alignment=16)
    assert LaunchContract(dynamic_shared=(1, 16), shared_alignment=16).dynamic_shared == (1, 16)


@pytest.mark.parametrize("cc", [8, (8,), (0, 0), (8, -1), (8.0, 0), "8.0"])
def test_bad_compute_capability(cc: Any) -> None:
    invalid("min_compute_capability must be (major, minor)", min_compute_capability=cc)


def test_cooperative_must_be_bool() -> None:
    invalid("valid boolean", cooperative=1)


def test_requires_single_string_refused() -> None:
    invalid("write requires=['a.size == 1']", requires="a.size == 1")


def test_requires_not_a_list() -> None:
    invalid("requires must be a list of relation strings", requires=3)


def test_requires_grammar_checked_at_construction() -> None:
    message = invalid("the operator '/' is not allowed", requires=["a.size / 2 == n"])
    assert "'a.size / 2 == n'" in message


def test_covers_must_be_identifier() -> None:
    invalid("covers must name an array parameter, got 'a.size'", covers="a.size")


def test_extra_field_forbidden() -> None:
    invalid("Extra inputs are not permitted", blocks=256)


# --- bind ------------------------------------------------------------------------------


def test_bind_compiles_relations_and_covers() -> None:
    contract = LaunchContract(requires=["a.size == out.size", "n <= out.size"], covers="out")
    bound = contract.bind(PARAMS, kernel="vecadd")
    assert isinstance(bound, BoundContract)
    assert bound.kernel == "vecadd"
    assert bound.covers == "out"
    assert [r.text for r in bound.relations] == ["a.size == out.size", "n <= out.size"]
    bound.check_requires({"a": (10,), "out": (10,), "n": 3})


def test_bind_unknown_relation_name() -> None:
    contract = LaunchContract(requires=["b.size == out.size"])
    with pytest.raises(ContractDefinitionError) as info:
        contract.bind(PARAMS, kernel="vecadd")
    message = str(info.value)
    assert "kernel 'vecadd'" in message
    assert "unknown name 'b'" in message
    assert "arrays a (ndim 1), out (ndim 1); integer scalars n" in message


@pytest.mark.parametrize(
    ("covers", "fragment"),
    [
        ("b", "'b', which is not a parameter"),
        ("n", "'n', which is an int scalar"),
        ("alpha", "'alpha', which is a float scalar"),
    ],
)
def test_bind_covers_must_be_array(covers: str, fragment: str) -> None:
    with pytest.raises(ContractDefinitionError) as info:
        LaunchContract(covers=covers).bind(PARAMS, kernel="vecadd")
    message = str(info.value)
    assert "kernel 'vecadd'" in message
    assert fragment in message
    assert "covers must name an array parameter. Available arrays: a (ndim 1), out (ndim 1)." in (
        message
    )
    assert info.value.actual == covers  # type: ignore[attr-defined]


def test_check_requires_violation_message() -> None:
    bound = LaunchContract(requires=["a.size == out.size"]).bind(PARAMS, kernel="vecadd")
    with pytest.raises(RequiresViolation) as info:
        bound.check_requires({"a": (1000,), "out": (1024,), "n": 0})
    assert str(info.value) == (
        "kernel 'vecadd' requires a.size == out.size by its launch contract, but "
        "a.size == out.size is 1000 == 1024. Pass arguments whose sizes satisfy it."
    )
    assert isinstance(info.value, LaunchContractError)


# --- requires over launch dimensions ---------------------------------------------------


def test_launch_only_relations_are_checked_once_at_prepare() -> None:
    contract = LaunchContract(
        requires=["a.size == out.size", "block.x * block.y >= 64", "grid.x * block.x >= out.size"]
    )
    bound = contract.bind(PARAMS, kernel="vecadd")
    assert [r.text for r in bound.per_launch] == [
        "a.size == out.size",
        "grid.x * block.x >= out.size",
    ]
    bound.check_launch((1, 1, 1), (64, 1, 1))
    with pytest.raises(RequiresViolation) as info:
        bound.check_launch((8, 1, 1), (32, 1, 1))
    exc = info.value
    assert str(exc) == (
        "kernel 'vecadd' requires block.x * block.y >= 64 by its launch contract, but with grid "
        "(8, 1, 1) and block (32, 1, 1), block.x * block.y >= 64 is 32 >= 64. Prepare with a "
        "grid and block that satisfy it."
    )
    assert exc.relation == "block.x * block.y >= 64"
    assert exc.fields["grid"] == (8, 1, 1) and exc.fields["block"] == (32, 1, 1)
    # The per-launch check leaves the launch-only relation to prepare.
    bound.check_requires({"a": (5,), "out": (5,), "grid.x": 1, "block.x": 8, "block.y": 1})


def test_mixed_relation_is_checked_per_launch_with_the_launch_dims() -> None:
    bound = LaunchContract(requires=["grid.x * block.x >= out.size"]).bind(PARAMS, kernel="k")
    bound.check_launch((1, 1, 1), (1, 1, 1))  # reads an argument: nothing to check at prepare
    env = {"a": (1,), "out": (1000,), "n": 0, "grid.x": 3, "block.x": 256}
    with pytest.raises(RequiresViolation) as info:
        bound.check_requires(env)
    assert str(info.value) == (
        "kernel 'k' requires grid.x * block.x >= out.size by its launch contract, but "
        "grid.x * block.x >= out.size is 768 >= 1000. Launch dimensions seen: block.x = 256, "
        "grid.x = 3. Pass arguments whose sizes satisfy it, or prepare a launch whose grid and "
        "block do."
    )
    bound.check_requires({**env, "grid.x": 4})


def test_literal_only_relation_is_a_prepare_check() -> None:
    bound = LaunchContract(requires=["2 * 3 == 7"]).bind(PARAMS, kernel="k")
    assert bound.per_launch == ()
    with pytest.raises(RequiresViolation, match="2 \\* 3 == 7 is 6 == 7"):
        bound.check_launch((1, 1, 1), (1, 1, 1))


# --- LaunchConfig and schemas ----------------------------------------------------------


def test_launch_config() -> None:
    config = LaunchConfig.model_validate({"grid": [4, 1, 1], "block": [256, 1, 1]})
    assert config.grid == (4, 1, 1)
    assert config.shared_mem == 0
    with pytest.raises(ValidationError):
        LaunchConfig(grid=(0, 1, 1), block=(1, 1, 1))
    with pytest.raises(ValidationError):
        LaunchConfig(grid=(1, 1, 1), block=(1, 1, 1), shared_mem=-1)
    with pytest.raises(ValidationError):
        LaunchConfig(grid=(1, 1, 1), block=(1, 1, 1), stream=0)  # type: ignore[call-arg]


def test_json_schemas() -> None:
    schema = contract_json_schema()
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(LaunchContract.model_fields)
    assert schema["properties"]["domain"]["enum"] == [1, 2, 3]
    json.dumps(schema)
    config = launch_config_json_schema()
    assert config["properties"]["grid"]["prefixItems"][0]["maximum"] == MAX_DIM
    json.dumps(config)


# --- cover -----------------------------------------------------------------------------


@given(st.integers(0, 2**70), st.integers(1, 2**40))
def test_cover_is_ceil_division(n: int, block: int) -> None:
    grid = cover(n, block)
    assert grid * block >= n
    assert (grid - 1) * block < n or grid == 0
    assert grid == math.ceil(n / block) or n > 2**52


def test_cover_examples() -> None:
    assert cover(0, 256) == 0
    assert cover(1000, 256) == 4
    assert cover(1024, 256) == 4
    assert cover(np.int64(1025), np.int32(256)) == 5


@pytest.mark.parametrize(
    ("n", "block", "exc", "fragment"),
    [
        (-1, 256, ValueError, "n must be >= 0, got -1"),
        (10, 0, ValueError, "block must be >= 1, got 0"),
        (10.0, 256, TypeError, "n must be an int, got float"),
        (True, 256, TypeError, "n must be an int, got bool"),
        (10, False, TypeError, "block must be an int, got bool"),
        (10, "256", TypeError, "block must be an int, got str"),
    ],
)
def test_cover_rejects(n: Any, block: Any, exc: type[Exception], fragment: str) -> None:
    with pytest.raises(exc, match=fragment.replace("(", r"\(")):
        cover(n, block)


# --- normalize_dims --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (4, (4, 1, 1)),
        ((4,), (4, 1, 1)),
        ([4, 2], (4, 2, 1)),
        ((4, 2, 3), (4, 2, 3)),
        (np.int64(7), (7, 1, 1)),
        ((np.uint32(3), np.int16(2)), (3, 2, 1)),
        (MAX_DIM, (MAX_DIM, 1, 1)),
    ],
)
def test_normalize_dims_accepts(value: Any, expected: tuple[int, int, int]) -> None:
    dims = normalize_dims(value, kernel="vecadd", what="grid")
    assert dims == expected
    assert all(type(v) is int for v in dims)


@pytest.mark.parametrize(
    ("value", "axis", "actual", "limit", "fragments"),
    [
        (0, "x", 0, 1, ["grid.x = 0", "must be >= 1", "cover(n, block)"]),
        ((4, -1), "y", -1, 1, ["grid.y = -1", "Launch with grid.y >= 1"]),
        (2**32, "x", 2**32, MAX_DIM, ["grid.x = 4294967296", "4294967295 (2**32 - 1)"]),
        ((1, 1, 1, 1), None, 4, 3, ["4 dimensions", "1 to 3 (x, y, z)"]),
        ((), None, 0, 3, ["0 dimensions"]),
        (True, None, True, None, ["must be an int or a tuple of 1 to 3 ints"]),
        (4.0, None, 4.0, None, ["(float)", "Launch with grid=n, (x, y) or (x, y, z)"]),
        ((4, 2.0), "y", 2.0, None, ["grid.y = 2.0 (float)", "CUDA dimensions are ints"]),
        ((4, False), "y", False, None, ["grid.y = False (bool)"]),
    ],
)
def test_normalize_dims_rejects(
    value: Any, axis: str | None, actual: Any, limit: int | None, fragments: list[str]
) -> None:
    with pytest.raises(LaunchDimensionError) as info:
        normalize_dims(value, kernel="vecadd", what="grid")
    error = info.value
    message = str(error)
    assert "kernel 'vecadd'" in message
    for fragment in fragments:
        assert fragment in message, message
    assert error.axis == axis  # type: ignore[attr-defined]
    assert error.actual == actual  # type: ignore[attr-defined]
    assert error.limit == limit  # type: ignore[attr-defined]
    assert error.kernel == "vecadd"


def test_normalize_block_message_names_block() -> None:
    with pytest.raises(LaunchDimensionError, match=r"block\.x = 0, but every block dimension"):
        normalize_dims(0, kernel="k", what="block")


# --- check_static ----------------------------------------------------------------------

ONE = (1, 1, 1)


def test_exact_block_message_matches_style_guide() -> None:
    contract = LaunchContract(block=256)
    with pytest.raises(BlockShapeMismatch) as info:
        check_static(contract, (4, 1, 1), (128, 1, 1), 0, kernel="vecadd")
    assert str(info.value) == (
        "kernel 'vecadd' requires block (256, 1, 1) by its launch contract, got (128, 1, 1). "
        "Launch with block=256, or change the contract (the kernel's witnesses then cover a "
        "different shape)."
    )
    assert info.value.actual == (128, 1, 1)  # type: ignore[attr-defined]
    assert info.value.limit == (256, 1, 1)  # type: ignore[attr-defined]
    check_static(contract, (4, 1, 1), (256, 1, 1), 0, kernel="vecadd")


def test_exact_block_2d_fix_uses_short_form() -> None:
    with pytest.raises(BlockShapeMismatch, match=r"Launch with block=\(16, 16\)"):
        check_static(LaunchContract(domain=2, block=(16, 16)), ONE, (16, 8, 1), 0, kernel="k")


@pytest.mark.parametrize(
    ("domain", "grid", "block", "what", "axis", "value"),
    [
        (1, (4, 2, 1), (256, 1, 1), "grid", "y", 2),
        (1, (4, 1, 1), (16, 1, 3), "block", "z", 3),
        (2, (4, 4, 5), (16, 16, 1), "grid", "z", 5),
        (2, (4, 4, 1), (8, 8, 2), "block", "z", 2),
    ],
)
def test_domain_mismatch(
    domain: int, grid: Any, block: Any, what: str, axis: str, value: int
) -> None:
    contract = LaunchContract(domain=domain)  # type: ignore[arg-type]
    with pytest.raises(DomainMismatch) as info:
        check_static(contract, grid, block, 0, kernel="vecadd")
    message = str(info.value)
    assert f"kernel 'vecadd' has a {domain}-D launch contract (domain={domain})" in message
    assert f"{what}.{axis} = {value}, limit 1" in message
    assert f"declare domain={'xyz'.index(axis) + 1} in the contract" in message
    assert info.value.axis == axis  # type: ignore[attr-defined]
    assert info.value.actual == value  # type: ignore[attr-defined]
    assert info.value.limit == 1  # type: ignore[attr-defined]
    # The twin: the same launch under domain 3 passes.
    check_static(LaunchContract(domain=3), grid, block, 0, kernel="vecadd")


def test_domain_checked_before_block() -> None:
    contract = LaunchContract(block=256)
    with pytest.raises(DomainMismatch):
        check_static(contract, (1, 2, 1), (128, 1, 1), 0, kernel="k")


def test_too_many_threads() -> None:
    contract = LaunchContract(domain=2, max_threads=256)
    with pytest.raises(TooManyThreads) as info:
        check_static(contract, ONE, (32, 16, 1), 0, kernel="vecadd")
    message = str(info.value)
    assert "kernel 'vecadd' allows at most 256 threads per block" in message
    assert "got block (32, 16, 1) = 512 threads" in message
    assert "raise max_threads in the contract" in message
    assert info.value.actual == 512  # type: ignore[attr-defined]
    assert info.value.limit == 256  # type: ignore[attr-defined]
    check_static(contract, ONE, (16, 16, 1), 0, kernel="vecadd")


def test_block_checked_before_shared_memory() -> None:
    with pytest.raises(BlockShapeMismatch):
        check_static(LaunchContract(block=256), ONE, (128, 1, 1), 64, kernel="k")


def test_no_dynamic_shared_declared() -> None:
    contract = LaunchContract()
    with pytest.raises(SharedMemoryError) as info:
        check_static(contract, ONE, ONE, 1024, kernel="vecadd")
    message = str(info.value)
    assert "kernel 'vecadd' got shared_mem=1024 bytes" in message
    assert "the contract declares no dynamic shared memory" in message
    assert "Launch with shared_mem=0, or declare dynamic_shared" in message
    assert info.value.limit == 0  # type: ignore[attr-defined]
    check_static(contract, ONE, ONE, 0, kernel="vecadd")


def test_exact_dynamic_shared() -> None:
    contract = LaunchContract(dynamic_shared=4096)
    with pytest.raises(SharedMemoryError) as info:
        check_static(contract, ONE, ONE, 2048, kernel="vecadd")
    message = str(info.value)
    assert "requires exactly 4096 bytes of dynamic shared memory" in message
    assert "got shared_mem=2048. Launch with shared_mem=4096" in message
    check_static(contract, ONE, ONE, 4096, kernel="vecadd")


@pytest.mark.parametrize("nbytes", [63, 4097])
def test_dynamic_shared_range(nbytes: int) -> None:
    contract = LaunchContract(dynamic_shared=(64, 4096))
    with pytest.raises(SharedMemoryError) as info:
        check_static(contract, ONE, ONE, nbytes, kernel="vecadd")
    message = str(info.value)
    assert (
        f"requires 64 to 4096 bytes of dynamic shared memory by its launch contract, got "
        f"shared_mem={nbytes}" in message
    )
    assert "Launch with shared_mem in [64, 4096]" in message
    assert info.value.limit == (64, 4096)  # type: ignore[attr-defined]
    check_static(contract, ONE, ONE, 64, kernel="vecadd")
    check_static(contract, ONE, ONE, 4096, kernel="vecadd")


def test_dynamic_shared_alignment() -> None:
    contract = LaunchContract(dynamic_shared=(0, 4096), shared_alignment=16)
    with pytest.raises(SharedMemoryError) as info:
        check_static(contract, ONE, ONE, 100, kernel="vecadd")
    message = str(info.value)
    assert "in multiples of 16 bytes" in message
    assert "got shared_mem=100. Launch with a multiple of 16 (e.g. 112)" in message
    check_static(contract, ONE, ONE, 112, kernel="vecadd")


@pytest.mark.parametrize("bad", [-1, 1.5, True, "64"])
def test_shared_mem_must_be_non_negative_int(bad: Any) -> None:
    with pytest.raises(SharedMemoryError, match="non-negative int number of bytes"):
        check_static(LaunchContract(dynamic_shared=(0, 64)), ONE, ONE, bad, kernel="k")


def test_blocks_per_sm_needs_a_block_size() -> None:
    with pytest.raises(
        ValidationError, match="blocks_per_sm=2 needs the block size it is computed for"
    ):
        LaunchContract(domain=1, blocks_per_sm=2)
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        LaunchContract(domain=1, block=128, blocks_per_sm=0)
    assert LaunchContract(domain=1, block=128, blocks_per_sm=4).blocks_per_sm == 4
    assert LaunchContract(domain=1, max_threads=512, blocks_per_sm=2).blocks_per_sm == 2


# --- tile_shared: shared tiles in the opt-in dynamic shared memory ----------------------


@pytest.mark.parametrize("nbytes", [16, 48 * 1024, 108544, 227 * 1024])
def test_tile_shared_accepted(nbytes: int) -> None:
    contract = LaunchContract(domain=2, block=(32, 8), tile_shared=nbytes)
    assert contract.tile_shared == nbytes
    assert LaunchContract.model_validate_json(contract.model_dump_json()) == contract


@pytest.mark.parametrize(
    ("nbytes", "fragment"),
    [
        (0, "positive multiple of 16 bytes, at most 232448"),
        (100, "got 100; declare the bytes of the kernel's shared tiles"),
        (228 * 1024, "227 KiB: no GPU gives a block more"),
        ("64k", "tile_shared must be an int (bytes), got str"),
    ],
)
def test_tile_shared_refused(nbytes: Any, fragment: str) -> None:
    with pytest.raises(ValidationError) as info:
        LaunchContract(tile_shared=nbytes)
    assert fragment in str(info.value)


def test_tile_shared_with_dynamic_shared_refused() -> None:
    with pytest.raises(ValidationError) as info:
        LaunchContract(tile_shared=1024, dynamic_shared=256)
    msg = str(info.value)
    assert "give either tile_shared" in msg and "not both" in msg, msg


def test_tile_shared_over_the_device_limit_names_kernel_value_limit_and_fix() -> None:
    # prepare's check against the live device (here an sm_86-like 99 KiB opt-in limit).
    from dataclasses import replace
    from types import SimpleNamespace

    from simtsafe import SharedMemoryError
    from simtsafe.host._limits import SIMULATOR_LIMITS, check_tile_window

    lim = replace(SIMULATOR_LIMITS, name="RTX 3090", max_shared_optin=99 * 1024)
    kernel: Any = SimpleNamespace(name="gemm", contract=LaunchContract(tile_shared=108544))
    with pytest.raises(SharedMemoryError) as info:
        check_tile_window(kernel, 1024, lim)
    msg = str(info.value)
    assert "kernel 'gemm'" in msg and "tile_shared=108544 B" in msg, msg
    assert "(+ 1024 B static shared memory)" in msg, msg
    assert "opt-in limit of 101376 B per block (RTX 3090)" in msg, msg
    assert "declare tile_shared <= 100352 B" in msg, msg
    assert (info.value.kernel, info.value.actual, info.value.limit) == ("gemm", 108544, 100352)
    check_tile_window(kernel, 0, replace(lim, max_shared_optin=227 * 1024))  # fits: no error
    # The largest window offered is one the contract accepts (a multiple of 16).
    with pytest.raises(SharedMemoryError) as info:
        check_tile_window(kernel, 1028, lim)
    assert "declare tile_shared <= 100336 B" in str(info.value), str(info.value)
    LaunchContract(tile_shared=info.value.limit)


def test_every_launch_path_carries_the_tile_window(monkeypatch: pytest.MonkeyPatch) -> None:
    # The driver's launch configuration (first launches, graphs, cooperative and cluster
    # launches) must carry the window's bytes, not the caller's shared_mem alone: the tiles
    # live at offsets up to tile_shared of the launch's dynamic shared memory.
    import simtsafe as ss
    import simtsafe.host._launch as launch

    seen: dict[str, Any] = {}

    def config(grid: Any, block: Any, shared_mem: int, cluster: Any, coop: bool) -> str:
        seen["shared_mem"] = shared_mem
        return "config"

    class Ledger:
        def state(self, *args: Any) -> None:
            return None

    monkeypatch.setattr(launch, "SIMULATOR", False)
    monkeypatch.setattr(launch, "launch_config", config)
    monkeypatch.setattr(launch, "core_stream", lambda s: s)
    monkeypatch.setattr(launch, "core_launcher", lambda: None)
    monkeypatch.setattr(launch, "several_devices", lambda: False)
    monkeypatch.setattr(launch, "stream_handle", lambda s: 0)
    monkeypatch.setattr(launch, "LEDGER", Ledger())

    for cooperative in (False, True):

        @ss.kernel(
            contract=ss.LaunchContract(
                domain=1, block=256, tile_shared=8192, cooperative=cooperative
            )
        )
        def k(out: DisjointSlice[np.float32], a: In[np.float32]) -> None:
            t = ss.shared.tile(2048, np.float32)
            for w in thread.block_stride(t):
                t[w] = a[w.index]
            ss.block.sync()
            out[thread.index_1d()] = t[0]

        plan = launch.LaunchPlan(k, (1, 1, 1), (256, 1, 1), 64, None, 0)
        assert plan.shared_mem == 8192 + 64
        assert seen["shared_mem"] == 8192 + 64, (cooperative, seen)
