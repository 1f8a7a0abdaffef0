"""Host side: launch contracts, ``prepare`` and the checked launch.

``_requires`` + ``_contract`` (the ``LaunchContract`` model and its static
checks) -> ``_prepare`` (``PreparedLaunch``: contract, device and
compiled-function checks; limits in ``_limits``) -> ``_launch`` (per-launch
argument checks on ``_argfacts``, the generated checker of ``_fastcheck``,
the driver launch through ``simtsafe.lowering``).
"""
