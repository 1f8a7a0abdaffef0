"""Host side: launch contracts, ``prepare`` and the checked launch.

``_requires`` + ``_contract`` (the ``LaunchContract`` model and its static
checks) -> ``_prepare`` (``PreparedLaunch``: contract, device and
compiled-function checks; limits in ``_limits``) -> ``_launch`` (per-launch
argument checks on ``_argfacts``, the generated checker of ``_fastcheck``,
the driver launch through ``simtsafe.lowering``; CuPy / PyTorch facts read
natively in ``_foreign``). The execution model around launches: the
stream-ordering ledger (``_streams``), handles, ``synchronize``, ``to_host``
and ``configure`` (``_handles``), CUDA graphs of checked launches
(``_graphs``). docs/execution.md describes it.
"""
