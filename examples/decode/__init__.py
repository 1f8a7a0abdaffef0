"""Batch-1 greedy decode of a Qwen3-shaped transformer on simtsafe, every kernel Tier 1.

``run.py`` is the command line; ``run()`` is the entry of ``examples/run_all.py``.
"""
