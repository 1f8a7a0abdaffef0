"""Decoration: the ``@simtsafe.kernel`` / ``@simtsafe.device`` decorators and what they run.

The decorators (``_decorators``) read the annotations (``_params``), resolve
every name the function refers to against the allow-list (``_policy``),
check the source rules and rewrite it (``_rewrite``) into the function that
``simtsafe.lowering`` compiles. Imports only ``lowering`` and the shared
vocabulary; the host side (contracts, prepare) is reached lazily, at call
time, never when this package is imported.
"""
