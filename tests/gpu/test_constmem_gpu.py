"""Constant arrays on a real GPU: the simulator's values (tests/sim/test_constmem_sim.py) --
the blur filter, a 2D lookup table read at indices in and out of range (0), a table read in
a helper, a collective steered by a constant read at a uniform index, and the values the
array had at the first compile."""

from __future__ import annotations

import pytest

from tests.sim.test_constmem_sim import (  # noqa: F401
    test_a_2d_lookup_table_reads_its_element_or_zero_out_of_range,
    test_a_constant_read_at_a_uniform_index_steers_a_collective,
    test_a_table_read_in_a_helper_and_made_in_one,
    test_an_out_of_range_uniform_index_reads_zero_and_skips_the_collective,
    test_the_blur_filter_in_constant_memory_matches_numpy,
    test_the_values_are_the_arrays_at_the_first_compile,
)

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("gpu")]
