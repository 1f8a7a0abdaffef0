"""Decoration-time analysis of kernel source: safety rules and the rewrite Numba compiles."""
